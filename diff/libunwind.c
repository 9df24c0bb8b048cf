/* libunwind.c — see libunwind.h. */
#define UNW_REMOTE_ONLY
#include "libunwind.h"

#include <libunwind.h>
#include <stdlib.h>
#include <string.h>

#include "semantics/sem.h"

/* Exported by libunwind-x86_64 but not declared by its public headers. */
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as,
                                              unw_word_t ip,
                                              unw_dyn_info_t *di,
                                              unw_proc_info_t *pi,
                                              int need_unwind_info, void *arg);

/* libunwind's x86-64 register set: DWARF registers 0..16. */
enum { LIBUNWIND_NREGS = 17 };

struct diff_libunwind {
    const struct cfi_file *file;
    unw_addr_space_t space;
    unw_dyn_info_t table;      /* .eh_frame_hdr's search table */
    struct sem_file_il *il;    /* to see which rows read rip */
};

/* What the accessors see and record during one request. */
struct step_env {
    const struct diff_libunwind *libunwind;
    const struct cfi_request *request;
    uint64_t lookup_pc;        /* the rip unw_init_remote reads */
    bool initialised;          /* later rip reads get the callee's rip */
    bool searched;             /* the first FDE search happened */
    int search_result;         /* ... and what it returned */
    int unknown_reg;           /* first unknown callee register read, -1 */
    bool memory_fault;
};

/* Our accessors' code for "the callee register is unknown": not one
 * libunwind itself returns for a CFI problem, so it is told apart. */
#define UNKNOWN_REGISTER (-UNW_EUNSPEC)

static int find_proc_info(unw_addr_space_t space, unw_word_t ip,
                          unw_proc_info_t *info, int need_unwind_info,
                          void *arg)
{
    struct step_env *env = arg;
    unw_dyn_info_t table = env->libunwind->table;
    int result = -UNW_ENOINFO;
    if (ip >= table.start_ip && ip < table.end_ip)
        result = _Ux86_64_dwarf_search_unwind_table(space, ip, &table, info,
                                                    need_unwind_info, arg);
    if (!env->searched) {
        env->searched = true;
        env->search_result = result;
    }
    return result;
}

static void put_unwind_info(unw_addr_space_t space, unw_proc_info_t *info,
                            void *arg)
{
    (void)space;
    (void)arg;
    /* The remote-table search allocates the unwind info with malloc. */
    free(info->unwind_info);
    info->unwind_info = NULL;
}

static int get_dyn_info_list_addr(unw_addr_space_t space, unw_word_t *addr,
                                  void *arg)
{
    (void)space, (void)addr, (void)arg;
    return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t space, unw_word_t addr,
                      unw_word_t *value, int write, void *arg)
{
    (void)space;
    struct step_env *env = arg;
    if (write)
        return -UNW_EREADONLYREG;
    uint64_t v;
    struct cfi_memory memory = env->request->memory;
    if (memory.read(memory.env, addr, 8, &v) != CFI_OK) {
        env->memory_fault = true;
        return -UNW_EINVAL;
    }
    *value = v;
    return 0;
}

static int access_reg(unw_addr_space_t space, unw_regnum_t reg,
                      unw_word_t *value, int write, void *arg)
{
    (void)space;
    struct step_env *env = arg;
    if (write || reg < 0 || reg >= LIBUNWIND_NREGS)
        return -UNW_EBADREG;
    if (reg == CFI_REG_RIP && !env->initialised) {
        *value = env->lookup_pc;
        return 0;
    }
    const struct cfi_regs *callee = env->request->callee;
    if (callee->status[reg] != CFI_REG_VALUE) {
        if (env->unknown_reg < 0)
            env->unknown_reg = reg;
        return UNKNOWN_REGISTER;
    }
    *value = callee->value[reg];
    return 0;
}

static int access_fpreg(unw_addr_space_t space, unw_regnum_t reg,
                        unw_fpreg_t *value, int write, void *arg)
{
    (void)space, (void)reg, (void)value, (void)write, (void)arg;
    return -UNW_EBADREG;
}

static int resume(unw_addr_space_t space, unw_cursor_t *cursor, void *arg)
{
    (void)space, (void)cursor, (void)arg;
    return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t space, unw_word_t addr, char *buf,
                         size_t len, unw_word_t *offset, void *arg)
{
    (void)space, (void)addr, (void)buf, (void)len, (void)offset, (void)arg;
    return -UNW_ENOINFO;
}

static unw_accessors_t accessors = {
    .find_proc_info = find_proc_info,
    .put_unwind_info = put_unwind_info,
    .get_dyn_info_list_addr = get_dyn_info_list_addr,
    .access_mem = access_mem,
    .access_reg = access_reg,
    .access_fpreg = access_fpreg,
    .resume = resume,
    .get_proc_name = get_proc_name,
};

/* ------------------------------------------------------------------ */
/* Opening                                                              */
/* ------------------------------------------------------------------ */

/* .eh_frame_hdr: version 1, eh_frame_ptr, fde_count (udata4), then a
 * table of (initial location, FDE address) pairs, datarel|sdata4. */
static bool read_header(const struct cfi_file *file, uint64_t *count)
{
    const struct cfi_segment *segment =
        cfi_file_segment(file, file->eh_frame_hdr_addr);
    if (!segment || file->eh_frame_hdr_size < 12)
        return false;
    uint64_t at = file->eh_frame_hdr_addr - segment->vaddr;
    if (at + 12 > segment->filesz)
        return false;
    const uint8_t *hdr = segment->bytes + at;
    if (hdr[0] != 1 || (hdr[1] & 0x0f) != CFI_PE_SDATA4 ||
        hdr[2] != CFI_PE_UDATA4 || hdr[3] != (CFI_PE_DATAREL | CFI_PE_SDATA4))
        return false;
    *count = cfi_load_le(hdr + 8, 4);
    return 12 + *count * 8 <= file->eh_frame_hdr_size;
}

/* The text range the table may cover: all executable segments. */
static void text_range(const struct cfi_file *file, uint64_t *begin,
                       uint64_t *end)
{
    *begin = UINT64_MAX;
    *end = 0;
    for (size_t i = 0; i < file->nsegments; i++) {
        const struct cfi_segment *s = &file->segments[i];
        if (!s->executable)
            continue;
        if (s->vaddr < *begin)
            *begin = s->vaddr;
        if (s->vaddr + s->memsz > *end)
            *end = s->vaddr + s->memsz;
    }
}

enum cfi_status diff_libunwind_open(const struct cfi_file *file, void **self,
                                    struct cfi_diag *diag)
{
    *self = NULL;
    uint64_t count;
    if (!file->eh_frame_hdr_addr || !read_header(file, &count))
        return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                        "libunwind: no usable .eh_frame_hdr");
    struct diff_libunwind *lu = calloc(1, sizeof *lu);
    if (!lu)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    lu->file = file;
    lu->table.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    text_range(file, &lu->table.start_ip, &lu->table.end_ip);
    lu->table.u.rti.segbase = file->eh_frame_hdr_addr;
    lu->table.u.rti.table_data = file->eh_frame_hdr_addr + 12;
    lu->table.u.rti.table_len = count * 8 / sizeof(unw_word_t);
    lu->space = unw_create_addr_space(&accessors, 0);
    if (!lu->space) {
        free(lu);
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    }
    unw_set_caching_policy(lu->space, UNW_CACHE_GLOBAL);
    if (sem_file_il_build(file, &lu->il) != CFI_OK) {
        diff_libunwind_close(lu);
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    }
    *self = lu;
    return CFI_OK;
}

void diff_libunwind_set_caching(void *self, bool global_cache)
{
    struct diff_libunwind *lu = self;
    unw_set_caching_policy(lu->space,
                           global_cache ? UNW_CACHE_GLOBAL : UNW_CACHE_NONE);
}

void diff_libunwind_close(void *self)
{
    struct diff_libunwind *lu = self;
    if (!lu)
        return;
    if (lu->space)
        unw_destroy_addr_space(lu->space);
    sem_file_il_free(lu->il);
    free(lu);
}

/* ------------------------------------------------------------------ */
/* The safety check: DW_CFA_register from a register above 16           */
/* ------------------------------------------------------------------ */

/* A reader over a program, decoding as libunwind's run_cfi_program does
 * (dwarf/Gparser.c): the same operand shapes, an opcode it has no case
 * for skipped alone (its switch has no default), an error where it stops. */
struct scan {
    const uint8_t *p, *end;
    uint8_t pointer_size;      /* of DW_CFA_set_loc, from the 'R' format */
};

static bool scan_leb(struct scan *s, uint64_t *value)
{
    *value = 0;
    for (unsigned shift = 0; s->p < s->end; shift += 7) {
        uint8_t byte = *s->p++;
        if (shift < 64)
            *value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return true;
    }
    return false;
}

static bool scan_skip(struct scan *s, uint64_t n)
{
    if (n > (uint64_t)(s->end - s->p))
        return false;
    s->p += n;
    return true;
}

/* Operands of an opcode: how many LEB128s, then a block or fixed bytes.
 * Returns false where libunwind stops (an error, or the bytes end). */
static bool scan_operands(struct scan *s, uint8_t op, bool *hazard)
{
    uint64_t a, b;
    switch (op) {
    case 0x02: return scan_skip(s, 1);
    case 0x03: return scan_skip(s, 2);
    case 0x04: return scan_skip(s, 4);
    case 0x01: return s->pointer_size && scan_skip(s, s->pointer_size);
    case 0x06: case 0x07: case 0x08: case 0x0d: case 0x0e: case 0x13:
    case 0x2e:
        return scan_leb(s, &a);
    case 0x05: case 0x0c: case 0x11: case 0x12: case 0x2f:
        return scan_leb(s, &a) && scan_leb(s, &b);
    case 0x09:
        if (!scan_leb(s, &a) || a >= LIBUNWIND_NREGS || !scan_leb(s, &b))
            return false;
        *hazard |= b >= LIBUNWIND_NREGS;
        return true;
    case 0x0f:
        return scan_leb(s, &a) && scan_skip(s, a);
    case 0x10: case 0x16:
        return scan_leb(s, &a) && scan_leb(s, &b) && scan_skip(s, b);
    case 0x1c: case 0x1d: case 0x2d: case 0x3f:
        return false;
    default:
        return true; /* nop, remember/restore_state, and unknown opcodes */
    }
}

static bool scan_program(const uint8_t *bytes, size_t len, uint8_t size)
{
    struct scan s = {bytes, bytes + len, size};
    bool hazard = false;
    while (s.p < s.end && !hazard) {
        uint8_t op = *s.p++;
        if ((op & 0xc0) == 0x80) {
            uint64_t offset;
            if (!scan_leb(&s, &offset))
                break;
        } else if ((op & 0xc0) == 0 && !scan_operands(&s, op, &hazard)) {
            break;
        }
    }
    return hazard;
}

/* The size of a DW_CFA_set_loc operand in the CIE's 'R' format, 0 when
 * it has none (libunwind then fails on it). */
static uint8_t pointer_size(uint8_t encoding)
{
    switch (encoding & 0x0f) {
    case CFI_PE_ABSPTR: case CFI_PE_UDATA8: case CFI_PE_SDATA8: return 8;
    case CFI_PE_UDATA2: case CFI_PE_SDATA2: return 2;
    case CFI_PE_UDATA4: case CFI_PE_SDATA4: return 4;
    default: return 0;
    }
}

static bool register_source_hazard(const struct cfi_fde *fde)
{
    uint8_t size = pointer_size(fde->cie->fde_encoding);
    return scan_program(fde->cie->instructions, fde->cie->instructions_len,
                        size) ||
           scan_program(fde->instructions, fde->instructions_len, size);
}

/* ------------------------------------------------------------------ */
/* Answers                                                              */
/* ------------------------------------------------------------------ */

static void answer_reset(struct diff_answer *answer)
{
    memset(&answer->frame, 0, sizeof answer->frame);
    answer->frame.diag = (struct cfi_diag){CFI_OK, NULL, CFI_NO_OFFSET, -1};
    answer->comparable = true;
    answer->not_comparable_reason = NULL;
    answer->cfa_comparable = true;
    for (unsigned reg = 0; reg < CFI_NREGS; reg++)
        answer->reg_comparable[reg] = reg < LIBUNWIND_NREGS;
}

static enum cfi_status answer_error(struct diff_answer *answer,
                                    enum cfi_status status,
                                    const char *message, int reg)
{
    answer->frame.status = status;
    answer->frame.diag = (struct cfi_diag){status, message, CFI_NO_OFFSET, reg};
    return status;
}

static enum cfi_status not_comparable(struct diff_answer *answer,
                                      const char *reason)
{
    answer->comparable = false;
    answer->not_comparable_reason = reason;
    return answer_error(answer, CFI_E_UNSUPPORTED, reason, -1);
}

/* unw_init_remote or unw_step failed with `code`. */
static enum cfi_status step_failed(const struct step_env *env, int code,
                                   struct diff_answer *answer)
{
    if (env->unknown_reg >= 0)
        return answer_error(answer, CFI_E_REG_UNKNOWN,
                            "libunwind: reads a register whose value is unknown",
                            env->unknown_reg);
    if (env->memory_fault)
        return answer_error(answer, CFI_E_MEMORY, unw_strerror(code), -1);
    switch (code) {
    case -UNW_EBADREG:
        return not_comparable(answer,
                              "libunwind: a rule names a register above 16");
    case -UNW_EBADFRAME:
        return not_comparable(
            answer, "libunwind: caller's rip and CFA equal the callee's");
    case -UNW_ENOINFO:
        return answer_error(answer, CFI_E_NO_FDE, unw_strerror(code), -1);
    case -UNW_ENOMEM:
        return answer_error(answer, CFI_E_NOMEM, unw_strerror(code), -1);
    default:
        return answer_error(answer, CFI_E_MALFORMED, unw_strerror(code), -1);
    }
}

/* One caller register after the step: a value, undefined (no location),
 * unknown (its location is a callee register we did not give), or a
 * memory fault. */
static bool read_register(unw_cursor_t *cursor, struct step_env *env,
                          unsigned reg, struct cfi_frame *frame)
{
    env->unknown_reg = -1;
    env->memory_fault = false;
    unw_word_t value;
    if (unw_get_reg(cursor, (unw_regnum_t)reg, &value) == 0)
        cfi_regs_set(&frame->caller, reg, value);
    else if (env->memory_fault)
        return false;
    else if (env->unknown_reg >= 0)
        frame->caller.status[reg] = CFI_REG_UNKNOWN;
    return true;
}

/* The caller's registers after a successful step, 0..16 in order (a
 * memory fault ends it, as in cfi.h step 5). */
static enum cfi_status read_back(unw_cursor_t *cursor, struct step_env *env,
                                 struct diff_answer *answer)
{
    struct cfi_frame *frame = &answer->frame;
    memset(frame->caller.status, CFI_REG_UNDEFINED, sizeof frame->caller.status);
    for (unsigned reg = 0; reg < LIBUNWIND_NREGS; reg++)
        if (!read_register(cursor, env, reg, frame))
            return answer_error(answer, CFI_E_MEMORY,
                                "libunwind: saved register is in unreadable "
                                "memory", (int)reg);
    unw_word_t cfa = 0;
    unw_get_reg(cursor, UNW_X86_64_CFA, &cfa);
    frame->cfa = cfa;
    frame->signal_frame = unw_is_signal_frame(cursor) > 0;
    frame->status = CFI_OK;
    return CFI_OK;
}

/* A caller frame is given to libunwind with rip = PC-1 (its first frame
 * is looked up at the exact rip), and its DW_OP_breg16, same_value and
 * register rules read rip from the cursor: in a caller frame whose row
 * reads rip (the PLT's CFA expression), libunwind is not asked the same
 * question. */
static bool caller_row_reads_rip(const struct diff_libunwind *lu,
                                 const struct cfi_fde *fde, uint64_t pc)
{
    size_t index = (size_t)(fde - lu->file->fdes);
    if (lu->il->status[index] != CFI_OK)
        return false;
    const struct sem_range *range = sem_fde_il_find(&lu->il->fdes[index], pc);
    return range && sem_row_reads_register(range->row, CFI_REG_RIP);
}

enum cfi_status diff_libunwind_answer(void *self,
                                      const struct cfi_request *request,
                                      struct diff_answer *answer)
{
    struct diff_libunwind *lu = self;
    answer_reset(answer);
    uint64_t pc = request->caller_frame ? request->pc - 1 : request->pc;
    const struct cfi_fde *fde = cfi_file_lookup_in(lu->file, CFI_EH_FRAME, pc);
    if (fde && register_source_hazard(fde))
        return not_comparable(answer,
                              "libunwind: DW_CFA_register from a register "
                              "above 16 (out-of-bounds read in libunwind)");
    if (fde && request->caller_frame && caller_row_reads_rip(lu, fde, pc))
        return not_comparable(answer,
                              "libunwind: a caller frame whose row reads rip "
                              "(its cursor is given PC-1 as rip)");
    struct step_env env = {lu, request, pc, false, false, 0, -1, false};
    unw_cursor_t cursor;
    int code = unw_init_remote(&cursor, lu->space, &env);
    env.initialised = true;
    if (code < 0)
        return step_failed(&env, code, answer);
    code = unw_step(&cursor);
    /* Without an FDE, x86-64 unw_step guesses from rbp or the code
     * bytes: that is no CFI answer. */
    if (env.searched && env.search_result == -UNW_ENOINFO)
        return answer_error(answer, CFI_E_NO_FDE,
                            "libunwind: no FDE covers the address", -1);
    if (code < 0)
        return step_failed(&env, code, answer);
    enum cfi_status status = read_back(&cursor, &env, answer);
    if (status == CFI_OK && code == 0) /* end of stack: no return address */
        answer->frame.caller.status[CFI_REG_RIP] = CFI_REG_UNDEFINED;
    return status;
}
