/* libunwind.c — see libunwind.h. */
#define UNW_REMOTE_ONLY
#include "libunwind.h"
#include "scan.h"

#include <dwarf.h>
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
    struct sem_file_il *il;    /* the rows, for the checks before a step */
    struct cfi_frame model;    /* diff_libunwind_model's answer */
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
    bool partial_word_fault;   /* an aligned word read failed on some of
                                  its bytes only */
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

/* Some of the 8 bytes at addr are readable. */
static bool partly_readable(struct cfi_memory memory, uint64_t addr)
{
    for (unsigned i = 0; i < 8; i++) {
        uint64_t byte;
        if (memory.read(memory.env, addr + i, 1, &byte) == CFI_OK)
            return true;
    }
    return false;
}

/* Expressions read memory through dwarf_readu8..64, which in remote mode
 * ask for the aligned word that holds each byte: a state whose fault
 * covers part of that word only (the harness's faults are byte ranges,
 * a real address space's are pages) asks libunwind a question its
 * word-sized accessor cannot express. Such a fault is recorded, and a
 * memory error it causes makes the request not comparable. */
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
        env->partial_word_fault |=
            (addr & 7) == 0 && partly_readable(memory, addr);
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
/* Programs outside libunwind's register set                            */
/* ------------------------------------------------------------------ */

/* libunwind holds DWARF registers 0..16 only. Its run_cfi_program
 * (dwarf/Gparser.c) fails on any instruction whose register operand is
 * above 16 (read_regnum: -UNW_EBADREG; restore, restore_extended:
 * -UNW_EINVAL), so it cannot be asked about an FDE whose program names
 * one: such requests are not comparable, wherever the instruction lies
 * (the FDE is outside its register set, not only the rows after it).
 * One operand is never checked: the source register of DW_CFA_register,
 * which apply_reg_state reads out of bounds
 * (diff/findings/libunwind-register-oob); it gets its own reason. */
enum scan_finding {
    SCAN_NOTHING,
    SCAN_HIGH_REGISTER,     /* an operand names a register above 16 */
    SCAN_REGISTER_SOURCE,   /* DW_CFA_register from a register above 16 */
    SCAN_BACKWARD_JUMP,     /* an expression's skip or bra jumps back */
    SCAN_PAST_END,          /* an operand runs past the program's end */
};

/* A reader over a program, decoding as run_cfi_program does: the same
 * operand shapes, an opcode it has no case for skipped alone (its switch
 * has no default), the end where it stops with an error. */
struct scan {
    struct diff_scan bytes;
    uint8_t pointer_size;      /* of DW_CFA_set_loc, from the 'R' format */
    enum scan_finding finding; /* the worst found so far */
};

static void scan_found(struct scan *s, enum scan_finding finding)
{
    if (finding > s->finding)
        s->finding = finding;
}

/* An operand the program's bytes do not hold: libunwind reads on past the
 * FDE (dwarf/Gparser.c has no bound there; diff/findings/
 * libunwind-register-past-end.so). */
static bool scan_leb(struct scan *s, uint64_t *value)
{
    if (diff_scan_leb(&s->bytes, DIFF_LEB_OVERLONG_DROPPED, value))
        return true;
    scan_found(s, SCAN_PAST_END);
    return false;
}

static bool scan_skip(struct scan *s, uint64_t n)
{
    if (diff_scan_skip(&s->bytes, n))
        return true;
    scan_found(s, SCAN_PAST_END);
    return false;
}

/* An expression block of n bytes: a skip or bra whose 2-byte operand is
 * negative jumps back, and dwarf/Gexpr.c runs it with no step limit
 * (diff/findings/libunwind-expression-loop.S). The bytes are not decoded
 * operation by operation: a 0x2f or 0x28 byte inside another operand
 * counts too, which only refuses more. */
static bool scan_expression(struct scan *s, uint64_t n)
{
    const uint8_t *block = s->bytes.p;
    if (!scan_skip(s, n))
        return false;
    for (uint64_t i = 0; i + 2 < n; i++)
        if ((block[i] == DW_OP_skip || block[i] == DW_OP_bra) &&
            (int16_t)(block[i + 1] | block[i + 2] << 8) < 0)
            scan_found(s, SCAN_BACKWARD_JUMP);
    return true;
}

/* A register operand. */
static void scan_register(struct scan *s, uint64_t reg)
{
    if (reg >= LIBUNWIND_NREGS)
        scan_found(s, SCAN_HIGH_REGISTER);
}

/* A register operand read as a ULEB128. */
static bool scan_register_leb(struct scan *s)
{
    uint64_t reg;
    if (!scan_leb(s, &reg))
        return false;
    scan_register(s, reg);
    return true;
}

/* Operands of an opcode below 0x40: a register first or not, then LEB128s,
 * a block or fixed bytes. Returns false where libunwind stops (an error
 * other than a register's, or the bytes end). */
static bool scan_operands(struct scan *s, uint8_t op)
{
    uint64_t a;
    switch (op) {
    case DW_CFA_advance_loc1: return scan_skip(s, 1);
    case DW_CFA_advance_loc2: return scan_skip(s, 2);
    case DW_CFA_advance_loc4: return scan_skip(s, 4);
    case DW_CFA_set_loc:
        return s->pointer_size && scan_skip(s, s->pointer_size);
    case DW_CFA_def_cfa_offset: case DW_CFA_def_cfa_offset_sf:
    case DW_CFA_GNU_args_size:
        return scan_leb(s, &a);
    case DW_CFA_restore_extended: case DW_CFA_undefined:
    case DW_CFA_same_value: case DW_CFA_def_cfa_register:
        return scan_register_leb(s);
    case DW_CFA_offset_extended: case DW_CFA_def_cfa:
    case DW_CFA_offset_extended_sf: case DW_CFA_def_cfa_sf:
    case DW_CFA_GNU_negative_offset_extended:
        return scan_register_leb(s) && scan_leb(s, &a);
    case DW_CFA_register:
        if (!scan_register_leb(s) || !scan_leb(s, &a))
            return false;
        if (a >= LIBUNWIND_NREGS)
            scan_found(s, SCAN_REGISTER_SOURCE);
        return true;
    case DW_CFA_def_cfa_expression:
        return scan_leb(s, &a) && scan_expression(s, a);
    case DW_CFA_expression: case DW_CFA_val_expression:
        return scan_register_leb(s) && scan_leb(s, &a) &&
               scan_expression(s, a);
    case DW_CFA_lo_user: case DW_CFA_MIPS_advance_loc8:
    case DW_CFA_GNU_window_save: case DW_CFA_high_user:
        return false;
    default:
        return true; /* nop, remember/restore_state, and unknown opcodes */
    }
}

static void scan_program(struct scan *s, const uint8_t *bytes, size_t len)
{
    s->bytes = (struct diff_scan){bytes, bytes + len};
    while (s->bytes.p < s->bytes.end) {
        uint8_t op = *s->bytes.p++;
        uint64_t offset;
        switch (op & 0xc0) {
        case DW_CFA_advance_loc:
            break;
        case DW_CFA_offset: /* register in the low six bits */
            scan_register(s, op & 0x3f);
            if (!scan_leb(s, &offset))
                return;
            break;
        case DW_CFA_restore:
            scan_register(s, op & 0x3f);
            break;
        default:
            if (!scan_operands(s, op))
                return;
        }
    }
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

/* What the CIE's and the FDE's programs name outside libunwind's set. */
static enum scan_finding scan_fde(const struct cfi_fde *fde)
{
    struct scan s = {{NULL, NULL}, pointer_size(fde->cie->fde_encoding),
                     SCAN_NOTHING};
    scan_program(&s, fde->cie->instructions, fde->cie->instructions_len);
    scan_program(&s, fde->instructions, fde->instructions_len);
    return s.finding;
}

/* ------------------------------------------------------------------ */
/* A model of libunwind's step                                          */
/* ------------------------------------------------------------------ */

/* DWARF expressions as dwarf/Gexpr.c evaluates them: cfi.h's rules
 * (operations, stack bound, jumps, errors) plus the quirks selected. */
struct lu_machine {
    const uint8_t *p, *end;
    const uint8_t *begin;
    uint64_t stack[CFI_EXPR_STACK_MAX];
    unsigned depth;
    unsigned steps;
    unsigned quirks;
    const struct cfi_regs *callee;
    struct cfi_memory memory;
    enum cfi_status status;   /* the error, when an operation fails */
    int reg;                  /* CFI_E_REG_UNKNOWN: the register read */
    bool traps;
};

static bool lu_fail(struct lu_machine *m, enum cfi_status status)
{
    m->status = status;
    return false;
}

static bool lu_push(struct lu_machine *m, uint64_t value)
{
    if (m->depth == CFI_EXPR_STACK_MAX)
        return lu_fail(m, CFI_E_EXPR_STACK);
    m->stack[m->depth++] = value;
    return true;
}

static bool lu_pop(struct lu_machine *m, uint64_t *value)
{
    if (m->depth == 0)
        return lu_fail(m, CFI_E_EXPR);
    *value = m->stack[--m->depth];
    return true;
}

static bool lu_fixed(struct lu_machine *m, unsigned size, uint64_t *value)
{
    if ((size_t)(m->end - m->p) < size)
        return lu_fail(m, CFI_E_EXPR);
    *value = cfi_load_le(m->p, size);
    m->p += size;
    return true;
}

static bool lu_leb(struct lu_machine *m, bool is_signed, uint64_t *value)
{
    *value = 0;
    for (unsigned shift = 0; m->p < m->end; shift += 7) {
        uint8_t byte = *m->p++;
        if (shift < 64)
            *value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            if (is_signed && shift + 7 < 64 && (byte & 0x40))
                *value |= ~(uint64_t)0 << (shift + 7);
            return true;
        }
    }
    return lu_fail(m, CFI_E_EXPR);
}

/* `size` bytes at `addr`, zero-extended: cfi.h reads 1, 2, 4 or 8 bytes
 * at once, other sizes byte by byte; libunwind's remote reads take each
 * byte from the aligned word that holds it. */
static bool lu_read(struct lu_machine *m, uint64_t addr, unsigned size,
                    uint64_t *value)
{
    struct cfi_memory mem = m->memory;
    *value = 0;
    if (m->quirks & DIFF_LU_WORD_READS) {
        for (unsigned i = 0; i < size; i++) {
            uint64_t at = addr + i, word;
            if (mem.read(mem.env, at & ~(uint64_t)7, 8, &word) != CFI_OK)
                return lu_fail(m, CFI_E_MEMORY);
            *value |= ((word >> (8 * (at & 7))) & 0xff) << (8 * i);
        }
        return true;
    }
    if (size == 1 || size == 2 || size == 4 || size == 8)
        return mem.read(mem.env, addr, size, value) == CFI_OK ||
               lu_fail(m, CFI_E_MEMORY);
    for (unsigned i = 0; i < size; i++) {
        uint64_t byte;
        if (mem.read(mem.env, addr + i, 1, &byte) != CFI_OK)
            return lu_fail(m, CFI_E_MEMORY);
        *value |= byte << (8 * i);
    }
    return true;
}

static bool lu_deref_size(struct lu_machine *m, uint64_t size)
{
    uint64_t addr, value;
    if (!lu_pop(m, &addr))
        return false;
    if (size == 0 || size > 8)
        return lu_fail(m, CFI_E_EXPR);
    bool quirk = m->quirks & DIFF_LU_DEREF_SIZE;
    unsigned read = !quirk || size == 1 || size == 2 ? (unsigned)size
                  : size <= 4 ? 4 : 8;
    if (!lu_read(m, addr, read, &value))
        return false;
    if (quirk && size == 3)
        value &= 0xffffff;
    else if (quirk && size > 4 && size < 8)
        value &= ~(uint64_t)0 << (8 * size);
    return lu_push(m, value);
}

static bool lu_register(struct lu_machine *m, uint64_t reg, uint64_t *value)
{
    if (reg >= CFI_NREGS)
        return lu_fail(m, CFI_E_EXPR);
    if (m->callee->status[reg] != CFI_REG_VALUE) {
        m->reg = (int)reg;
        return lu_fail(m, CFI_E_REG_UNKNOWN);
    }
    *value = m->callee->value[reg];
    return true;
}

static uint64_t lu_shift(const struct lu_machine *m, uint8_t op, uint64_t a,
                         uint64_t count)
{
    if (m->quirks & DIFF_LU_SHIFT_COUNT)
        count &= 63;
    if (op == 0x26) /* shra */
        return count >= 64 ? ((int64_t)a < 0 ? UINT64_MAX : 0)
                           : (uint64_t)((int64_t)a >> count);
    if (count >= 64)
        return 0;
    return op == 0x24 ? a << count : a >> count; /* shl, shr */
}

/* div (0x1b) and mod (0x1d): b is the divisor, on top. */
static bool lu_divide(struct lu_machine *m, uint8_t op, uint64_t a,
                      uint64_t b)
{
    if (b == 0)
        return (m->quirks & DIFF_LU_DIV_BY_ZERO) ? lu_push(m, 0)
                                                 : lu_fail(m, CFI_E_EXPR);
    if (op == 0x1d)
        return lu_push(m, a % b);
    if ((int64_t)a == INT64_MIN && (int64_t)b == -1) {
        if (m->quirks & DIFF_LU_DIV_TRAP) {
            m->traps = true;
            return lu_fail(m, CFI_E_UNSUPPORTED);
        }
        return lu_push(m, a);
    }
    return lu_push(m, (uint64_t)((int64_t)a / (int64_t)b));
}

/* The binary operations: a (second) op b (top). */
static bool lu_binary(struct lu_machine *m, uint8_t op)
{
    uint64_t a, b;
    if (!lu_pop(m, &b) || !lu_pop(m, &a))
        return false;
    int64_t sa = (int64_t)a, sb = (int64_t)b;
    switch (op) {
    case 0x1a: return lu_push(m, a & b);                     /* and */
    case 0x1b: case 0x1d: return lu_divide(m, op, a, b);     /* div, mod */
    case 0x1c: return lu_push(m, a - b);                     /* minus */
    case 0x1e: return lu_push(m, a * b);                     /* mul */
    case 0x21: return lu_push(m, a | b);                     /* or */
    case 0x22: return lu_push(m, a + b);                     /* plus */
    case 0x24: case 0x25: case 0x26:                   /* shl, shr, shra */
        return lu_push(m, lu_shift(m, op, a, b));
    case 0x27: return lu_push(m, a ^ b);                     /* xor */
    case 0x29: return lu_push(m, sa == sb);                  /* eq */
    case 0x2a: return lu_push(m, sa >= sb);                  /* ge */
    case 0x2b: return lu_push(m, sa > sb);                   /* gt */
    case 0x2c: return lu_push(m, sa <= sb);                  /* le */
    case 0x2d: return lu_push(m, sa < sb);                   /* lt */
    default: return lu_push(m, sa != sb);                    /* 0x2e ne */
    }
}

static bool lu_is_binary(uint8_t op)
{
    return op == 0x1a || op == 0x1b || op == 0x1c || op == 0x1d ||
           op == 0x1e || op == 0x21 || op == 0x22 ||
           (op >= 0x24 && op <= 0x27) || (op >= 0x29 && op <= 0x2e);
}

/* dup, drop, over, pick, swap, rot. */
static bool lu_stack_op(struct lu_machine *m, uint8_t op, uint64_t index)
{
    uint64_t a, b, c;
    switch (op) {
    case 0x12: /* dup */
        index = 0;
        /* fall through */
    case 0x14: case 0x15: /* over, pick */
        if (op == 0x14)
            index = 1;
        if (index >= m->depth)
            return lu_fail(m, CFI_E_EXPR);
        return lu_push(m, m->stack[m->depth - 1 - index]);
    case 0x13: /* drop */
        return lu_pop(m, &a);
    case 0x16: /* swap */
        return lu_pop(m, &b) && lu_pop(m, &a) && lu_push(m, b) &&
               lu_push(m, a);
    default: /* 0x17 rot: a b c (c on top) becomes c a b */
        return lu_pop(m, &c) && lu_pop(m, &b) && lu_pop(m, &a) &&
               lu_push(m, c) && lu_push(m, a) && lu_push(m, b);
    }
}

/* skip (0x2f) and bra (0x28): a jump from the end of the operand. */
static bool lu_jump(struct lu_machine *m, uint64_t operand)
{
    int64_t target = (m->p - m->begin) + (int16_t)operand;
    if (target < 0 || target > m->end - m->begin)
        return lu_fail(m, CFI_E_EXPR);
    m->p = m->begin + target;
    return true;
}

/* Operations with an operand, and those that read registers or memory. */
static bool lu_operand_op(struct lu_machine *m, uint8_t op)
{
    static const uint8_t fixed[256] = {
        [0x03] = 8, [0x08] = 1, [0x09] = 1, [0x0a] = 2, [0x0b] = 2,
        [0x0c] = 4, [0x0d] = 4, [0x0e] = 8, [0x0f] = 8, [0x15] = 1,
        [0x28] = 2, [0x2f] = 2, [0x94] = 1};
    uint64_t operand = 0, offset, value;
    if (fixed[op] && !lu_fixed(m, fixed[op], &operand))
        return false;
    if (op >= 0x70 && op <= 0x8f) /* breg0..31 */
        return lu_leb(m, true, &offset) &&
               lu_register(m, op - 0x70u, &value) &&
               lu_push(m, value + offset);
    switch (op) {
    case 0x03: case 0x08: case 0x0a: case 0x0c: case 0x0e: case 0x0f:
        return lu_push(m, operand);   /* addr, const1u .. const8s */
    case 0x09: return lu_push(m, (uint64_t)(int64_t)(int8_t)operand);
    case 0x0b: return lu_push(m, (uint64_t)(int64_t)(int16_t)operand);
    case 0x0d: return lu_push(m, (uint64_t)(int64_t)(int32_t)operand);
    case 0x10: /* constu */
        return lu_leb(m, false, &operand) && lu_push(m, operand);
    case 0x11: /* consts */
        return lu_leb(m, true, &operand) && lu_push(m, operand);
    case 0x23: /* plus_uconst */
        return lu_leb(m, false, &operand) && lu_pop(m, &value) &&
               lu_push(m, value + operand);
    case 0x92: /* bregx */
        return lu_leb(m, false, &operand) && lu_leb(m, true, &offset) &&
               lu_register(m, operand, &value) && lu_push(m, value + offset);
    case 0x06: /* deref */
        return lu_pop(m, &value) && lu_read(m, value, 8, &value) &&
               lu_push(m, value);
    case 0x94: return lu_deref_size(m, operand);
    case 0x15: return lu_stack_op(m, op, operand);
    case 0x2f: return lu_jump(m, operand);
    case 0x28: /* bra */
        return lu_pop(m, &value) && (value == 0 || lu_jump(m, operand));
    default:
        return lu_fail(m, CFI_E_EXPR); /* not allowed in CFI (cfi.h) */
    }
}

static bool lu_step(struct lu_machine *m)
{
    uint8_t op = *m->p++;
    uint64_t a;
    if (op >= 0x30 && op <= 0x4f) /* lit0..31 */
        return lu_push(m, op - 0x30u);
    if (lu_is_binary(op))
        return lu_binary(m, op);
    switch (op) {
    case 0x12: case 0x13: case 0x14: case 0x16: case 0x17:
        return lu_stack_op(m, op, 0);
    case 0x19: /* abs */
        return lu_pop(m, &a) && lu_push(m, (int64_t)a < 0 ? -a : a);
    case 0x1f: return lu_pop(m, &a) && lu_push(m, -a); /* neg */
    case 0x20: return lu_pop(m, &a) && lu_push(m, ~a); /* not */
    case 0x96: return true; /* nop */
    default: return lu_operand_op(m, op);
    }
}

/* Evaluates `expr`, `initial` pushed first when has_initial. */
static bool lu_eval(const struct sem_expr *expr, bool has_initial,
                    uint64_t initial, const struct cfi_request *request,
                    unsigned quirks, struct lu_machine *m, uint64_t *result)
{
    memset(m, 0, sizeof *m);
    m->begin = m->p = expr->bytes;
    m->end = expr->bytes + expr->len;
    m->quirks = quirks;
    m->callee = request->callee;
    m->memory = request->memory;
    m->reg = -1;
    if (has_initial && !lu_push(m, initial))
        return false;
    while (m->p < m->end) {
        if (++m->steps > CFI_EXPR_STEP_LIMIT)
            return lu_fail(m, CFI_E_STEP_LIMIT);
        if (!lu_step(m))
            return false;
    }
    return lu_pop(m, result);
}

/* The model's frame fails with `status` (reg for CFI_E_REG_UNKNOWN). */
static void model_fail(struct cfi_frame *frame, enum cfi_status status,
                       int reg)
{
    frame->status = status;
    frame->diag = (struct cfi_diag){status, "libunwind model", CFI_NO_OFFSET,
                                    reg};
}

static bool model_cfa(const struct sem_row *row,
                      const struct cfi_request *request, unsigned quirks,
                      struct cfi_frame *frame, bool *traps)
{
    const struct sem_cfa *cfa = &row->cfa;
    const struct cfi_regs *callee = request->callee;
    if (cfa->kind == SEM_CFA_RULE_REG_OFFSET) {
        if (cfa->reg >= CFI_NREGS ||
            callee->status[cfa->reg] != CFI_REG_VALUE) {
            model_fail(frame, CFI_E_REG_UNKNOWN, (int)cfa->reg);
            return false;
        }
        frame->cfa = callee->value[cfa->reg] + (uint64_t)cfa->offset;
        return true;
    }
    if (cfa->kind != SEM_CFA_RULE_EXPR) {
        model_fail(frame, CFI_E_MALFORMED, -1);
        return false;
    }
    struct lu_machine m;
    if (lu_eval(&cfa->expr, quirks & DIFF_LU_CFA_ZERO_PUSHED, 0, request,
                quirks, &m, &frame->cfa))
        return true;
    *traps = m.traps;
    model_fail(frame, m.status, m.reg);
    return false;
}

/* Where a caller register is found: at an address, as a value, in a
 * callee register, or nowhere (undefined). */
enum lu_where { LU_NOWHERE, LU_ADDRESS, LU_VALUE, LU_CALLEE };

struct lu_location {
    enum lu_where where;
    uint64_t at;    /* the address, the value, or the callee register */
};

/* The location of a register with no rule. */
static struct lu_location model_default(unsigned reg, uint64_t cfa,
                                        unsigned quirks)
{
    if (reg == CFI_REG_RSP)
        return (quirks & DIFF_LU_RSP_IS_CFA)
            ? (struct lu_location){LU_CALLEE, reg}
            : (struct lu_location){LU_VALUE, cfa};
    if ((quirks & DIFF_LU_NO_RULE_SAME) ||
        cfi_abi_default(reg) == CFI_DEFAULT_SAME_VALUE)
        return (struct lu_location){LU_CALLEE, reg};
    return (struct lu_location){LU_NOWHERE, 0};
}

/* The location of register `reg` (0..16) after apply_reg_state, given
 * those of the registers below it: false when evaluating its expression
 * fails (the frame says why). */
static bool model_location(const struct sem_row *row, unsigned reg,
                           const struct cfi_request *request, unsigned quirks,
                           struct cfi_frame *frame, bool *traps,
                           struct lu_location *locs)
{
    struct sem_rule rule = sem_row_rule(row, reg);
    struct lu_location *loc = &locs[reg];
    struct lu_machine m;
    uint64_t value;
    switch (rule.kind) {
    case SEM_RULE_UNSPECIFIED:
        *loc = model_default(reg, frame->cfa, quirks);
        return true;
    case SEM_RULE_SAME_VALUE:
        *loc = (struct lu_location){LU_CALLEE, reg};
        return true;
    case SEM_RULE_UNDEFINED:
        *loc = (struct lu_location){LU_NOWHERE, 0};
        return true;
    case SEM_RULE_REGISTER:
        /* m's new location is the callee's m unless m has a rule. */
        if ((quirks & DIFF_LU_REGISTER_NEW_LOCATION) && rule.reg < reg &&
            sem_row_rule(row, rule.reg).kind != SEM_RULE_UNSPECIFIED &&
            sem_row_rule(row, rule.reg).kind != SEM_RULE_SAME_VALUE)
            *loc = locs[rule.reg];
        else
            *loc = (struct lu_location){LU_CALLEE, rule.reg};
        return true;
    case SEM_RULE_OFFSET:
        *loc = (struct lu_location){LU_ADDRESS,
                                    frame->cfa + (uint64_t)rule.offset};
        break;
    case SEM_RULE_EXPRESSION: case SEM_RULE_VAL_EXPRESSION:
        if (!lu_eval(&rule.expr, true, frame->cfa, request, quirks, &m,
                     &value)) {
            *traps = m.traps;
            model_fail(frame, m.status, m.reg);
            return false;
        }
        *loc = (struct lu_location){
            rule.kind == SEM_RULE_EXPRESSION ? LU_ADDRESS : LU_VALUE, value};
        break;
    default: /* val_offset: libunwind has no case for it */
        model_fail(frame, CFI_E_UNSUPPORTED, -1);
        return false;
    }
    if (loc->where == LU_ADDRESS && loc->at == 0 &&
        (quirks & DIFF_LU_NULL_ADDRESS))
        loc->where = LU_NOWHERE;
    return true;
}

/* Caller register `reg` read from `loc` (rsp is the CFA when
 * DIFF_LU_RSP_IS_CFA, its location unread). False on a memory fault, or
 * for the IP (`is_ip`) an unknown callee register when
 * DIFF_LU_IP_NEEDS_VALUE; the frame says which. */
static bool model_read(const struct lu_location *loc, unsigned reg,
                       bool is_ip, const struct cfi_request *request,
                       unsigned quirks, struct cfi_frame *frame)
{
    struct cfi_regs *caller = &frame->caller;
    uint64_t value;
    if (reg == CFI_REG_RSP && !is_ip && (quirks & DIFF_LU_RSP_IS_CFA)) {
        cfi_regs_set(caller, reg, frame->cfa);
        return true;
    }
    switch (loc->where) {
    case LU_NOWHERE:
        caller->status[reg] = CFI_REG_UNDEFINED;
        return true;
    case LU_VALUE:
        cfi_regs_set(caller, reg, loc->at);
        return true;
    case LU_CALLEE:
        if (is_ip && (quirks & DIFF_LU_IP_NEEDS_VALUE) &&
            request->callee->status[loc->at] != CFI_REG_VALUE) {
            model_fail(frame, CFI_E_REG_UNKNOWN, (int)loc->at);
            return false;
        }
        caller->status[reg] = request->callee->status[loc->at];
        caller->value[reg] = request->callee->value[loc->at];
        return true;
    default:
        if (request->memory.read(request->memory.env, loc->at, 8, &value) !=
            CFI_OK) {
            model_fail(frame, CFI_E_MEMORY, (int)reg);
            return false;
        }
        cfi_regs_set(caller, reg, value);
        return true;
    }
}

/* The caller's rip: the return address column's location, read as the
 * IP (DIFF_LU_RIP_IS_IP: column 16's own location is then not read when
 * the column is another), or cfi.h's step 6 over the values read. */
static bool model_rip(const struct lu_location *locs, unsigned ra,
                      const struct cfi_request *request, unsigned quirks,
                      struct cfi_frame *frame)
{
    if (quirks & DIFF_LU_RIP_IS_IP)
        return model_read(&locs[ra], CFI_REG_RIP, true, request, quirks,
                          frame);
    struct cfi_regs *caller = &frame->caller;
    if (ra != CFI_REG_RIP) {
        caller->status[CFI_REG_RIP] = caller->status[ra];
        caller->value[CFI_REG_RIP] = caller->value[ra];
    }
    return true;
}

void diff_libunwind_model(const struct sem_row *row, unsigned ra_column,
                          const struct cfi_request *request, unsigned quirks,
                          struct cfi_frame *frame, bool *traps)
{
    memset(frame, 0, sizeof *frame);
    memset(frame->caller.status, CFI_REG_UNDEFINED,
           sizeof frame->caller.status);
    *traps = false;
    unsigned ra = ra_column < LIBUNWIND_NREGS ? ra_column : CFI_REG_RIP;
    bool first = quirks & DIFF_LU_EXPRESSIONS_FIRST;
    bool ip = quirks & DIFF_LU_RIP_IS_IP;
    if (!model_cfa(row, request, quirks, frame, traps))
        return;
    struct lu_location locs[LIBUNWIND_NREGS];
    /* cfi.h: each register in turn, its rule to its end; libunwind
     * (DIFF_LU_EXPRESSIONS_FIRST): every location, then the IP, then
     * the registers read back. */
    for (unsigned reg = 0; reg < LIBUNWIND_NREGS; reg++) {
        if (!model_location(row, reg, request, quirks, frame, traps, locs))
            return;
        if (first || (ip && reg == CFI_REG_RIP && ra != CFI_REG_RIP))
            continue;
        if (!model_read(&locs[reg], reg, ip && reg == CFI_REG_RIP, request,
                        quirks, frame))
            return;
    }
    if (ip && (first || ra != CFI_REG_RIP) &&
        !model_rip(locs, ra, request, quirks, frame))
        return;
    for (unsigned reg = 0; first && reg < LIBUNWIND_NREGS; reg++)
        if (!(ip && reg == CFI_REG_RIP) &&
            !model_read(&locs[reg], reg, false, request, quirks, frame))
            return;
    if (!ip)
        model_rip(locs, ra, request, quirks, frame);
    if ((quirks & DIFF_LU_UNDEFINED_RBP_ENDS) &&
        locs[CFI_REG_RBP].where == LU_NOWHERE)
        frame->caller.status[CFI_REG_RIP] = CFI_REG_UNDEFINED;
    frame->status = CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Answers                                                              */
/* ------------------------------------------------------------------ */

/* A fresh answer: libunwind speaks for registers 0..16 only. */
static void answer_reset(struct diff_answer *answer)
{
    diff_answer_reset(answer);
    for (unsigned reg = LIBUNWIND_NREGS; reg < CFI_NREGS; reg++)
        answer->reg_comparable[reg] = false;
}

static const char partial_word_reason[] =
    "libunwind: reads whole aligned words, and the state's fault covers "
    "part of one";

/* unw_init_remote or unw_step failed with `code`. */
static enum cfi_status step_failed(const struct step_env *env, int code,
                                   struct diff_answer *answer)
{
    if (env->unknown_reg >= 0)
        return diff_answer_error(
            answer, CFI_E_REG_UNKNOWN,
            "libunwind: reads a register whose value is unknown",
            env->unknown_reg);
    if (env->memory_fault && env->partial_word_fault)
        return diff_answer_not_comparable(answer, partial_word_reason);
    if (env->memory_fault)
        return diff_answer_error(answer, CFI_E_MEMORY, unw_strerror(code), -1);
    switch (code) {
    case -UNW_EBADREG:
        return diff_answer_not_comparable(answer,
                              "libunwind: a rule names a register above 16");
    case -UNW_EBADFRAME:
        return diff_answer_not_comparable(
            answer, "libunwind: caller's rip and CFA equal the callee's");
    case -UNW_ENOINFO:
        return diff_answer_error(answer, CFI_E_NO_FDE, unw_strerror(code), -1);
    case -UNW_ENOMEM:
        return diff_answer_error(answer, CFI_E_NOMEM, unw_strerror(code), -1);
    default:
        return diff_answer_error(answer, CFI_E_MALFORMED, unw_strerror(code),
                                 -1);
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
            return diff_answer_error(
                answer, CFI_E_MEMORY,
                "libunwind: saved register is in unreadable memory", (int)reg);
    unw_word_t cfa = 0;
    unw_get_reg(cursor, UNW_X86_64_CFA, &cfa);
    frame->cfa = cfa;
    frame->signal_frame = unw_is_signal_frame(cursor) > 0;
    frame->status = CFI_OK;
    return CFI_OK;
}

/* The IL's row of `fde` at `pc`, or NULL. */
static const struct sem_row *row_at(const struct diff_libunwind *lu,
                                    const struct cfi_fde *fde, uint64_t pc)
{
    size_t index = (size_t)(fde - lu->file->fdes);
    if (lu->il->status[index] != CFI_OK)
        return NULL;
    const struct sem_range *range = sem_fde_il_find(&lu->il->fdes[index], pc);
    return range ? range->row : NULL;
}

static bool expr_holds(const struct sem_expr *expr, uint8_t byte)
{
    return expr->len > 0 && memchr(expr->bytes, byte, expr->len) != NULL;
}

/* An expression libunwind evaluates for this row holds `byte` (perhaps
 * as an operand). The check is cheap, so that timing the adapter
 * (bench/unwind_speed.c) still times libunwind. */
static bool row_expr_holds(const struct sem_row *row, uint8_t byte)
{
    if (row->cfa.kind == SEM_CFA_RULE_EXPR && expr_holds(&row->cfa.expr, byte))
        return true;
    for (uint32_t i = 0; i < row->nrules; i++) {
        const struct sem_reg_rule *rule = &row->rules[i];
        if (rule->reg < LIBUNWIND_NREGS &&
            (rule->rule.kind == SEM_RULE_EXPRESSION ||
             rule->rule.kind == SEM_RULE_VAL_EXPRESSION) &&
            expr_holds(&rule->rule.expr, byte))
            return true;
    }
    return false;
}

/* Only DW_OP_div can trap, and only DW_OP_skip and DW_OP_bra can jump
 * back. */
static bool row_needs_model(const struct sem_row *row)
{
    return row_expr_holds(row, DW_OP_div) || row_expr_holds(row, DW_OP_skip) ||
           row_expr_holds(row, DW_OP_bra);
}

/* What libunwind cannot be asked about this row, or NULL.
 *
 * A caller frame is given to libunwind with rip = PC-1 (its first frame
 * is looked up at the exact rip), and its DW_OP_breg16, same_value and
 * register rules read rip from the cursor: in a caller frame whose row
 * reads rip (the PLT's CFA expression), libunwind is not asked the same
 * question.
 *
 * Refused for safety, where the row's expressions, as libunwind
 * evaluates them (diff_libunwind_model), divide INT64_MIN by -1:
 * dwarf/Gexpr.c's signed division traps (SIGFPE;
 * diff/findings/libunwind-div-trap); or jump back without end:
 * dwarf/Gexpr.c has no step limit, and loops forever where cfi.h stops
 * at CFI_EXPR_STEP_LIMIT (diff/findings/libunwind-expression-loop). */
static const char *row_refused(struct diff_libunwind *lu,
                               const struct cfi_fde *fde,
                               const struct sem_row *row,
                               const struct cfi_request *request)
{
    if (request->caller_frame && sem_row_reads_register(row, CFI_REG_RIP))
        return "libunwind: a caller frame whose row reads rip (its cursor "
               "is given PC-1 as rip)";
    if (!row_needs_model(row))
        return NULL;
    bool traps = false;
    diff_libunwind_model(row, (unsigned)fde->cie->ra_column, request,
                         DIFF_LU_QUIRKS_ALL, &lu->model, &traps);
    if (traps)
        return "libunwind: DW_OP_div of INT64_MIN by -1 (SIGFPE in "
               "libunwind)";
    if (lu->model.status == CFI_E_STEP_LIMIT)
        return "libunwind: a DWARF expression that does not end (libunwind "
               "has no step limit and loops forever)";
    return NULL;
}

enum cfi_status diff_libunwind_answer(void *self,
                                      const struct cfi_request *request,
                                      struct diff_answer *answer)
{
    struct diff_libunwind *lu = self;
    answer_reset(answer);
    uint64_t pc = cfi_lookup_pc(request->pc, request->caller_frame);
    const char *overlap = diff_overlap_reason(lu->file, pc);
    if (overlap)
        return diff_answer_not_comparable(answer, overlap);
    const struct cfi_fde *fde = cfi_file_lookup_in(lu->file, CFI_EH_FRAME, pc);
    enum scan_finding finding = fde ? scan_fde(fde) : SCAN_NOTHING;
    if (finding == SCAN_REGISTER_SOURCE)
        return diff_answer_not_comparable(answer,
                              "libunwind: DW_CFA_register from a register "
                              "above 16 (out-of-bounds read in libunwind)");
    if (finding == SCAN_BACKWARD_JUMP)
        return diff_answer_not_comparable(
            answer, "libunwind: a DWARF expression that jumps back, as "
                    "libunwind decodes the program (it has no step limit)");
    if (finding == SCAN_PAST_END)
        return diff_answer_not_comparable(
            answer, "libunwind: an operand past the end of the program "
                    "(libunwind reads on)");
    if (finding == SCAN_HIGH_REGISTER)
        return diff_answer_not_comparable(answer,
                              "libunwind: the CFI names a register above 16, "
                              "outside libunwind's register set");
    const struct sem_row *row = fde ? row_at(lu, fde, pc) : NULL;
    const char *refused = row ? row_refused(lu, fde, row, request) : NULL;
    if (refused)
        return diff_answer_not_comparable(answer, refused);
    struct step_env env = {lu, request, pc, false, false, 0, -1, false, false};
    unw_cursor_t cursor;
    int code = unw_init_remote(&cursor, lu->space, &env);
    env.initialised = true;
    if (code < 0)
        return step_failed(&env, code, answer);
    code = unw_step(&cursor);
    /* Without an FDE, x86-64 unw_step guesses from rbp or the code
     * bytes: that is no CFI answer. */
    if (env.searched && env.search_result == -UNW_ENOINFO)
        return diff_answer_error(answer, CFI_E_NO_FDE,
                                 "libunwind: no FDE covers the address", -1);
    if (code < 0)
        return step_failed(&env, code, answer);
    enum cfi_status status = read_back(&cursor, &env, answer);
    if (status == CFI_OK && code == 0) /* end of stack: no return address */
        answer->frame.caller.status[CFI_REG_RIP] = CFI_REG_UNDEFINED;
    return status;
}
