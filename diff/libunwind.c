/* libunwind.c — see libunwind.h. */
#define UNW_REMOTE_ONLY
#include "libunwind.h"

#include <libunwind.h>
#include <stdlib.h>
#include <string.h>

/* Exported by libunwind-x86_64 but not declared by its public headers. */
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as,
                                              unw_word_t ip,
                                              unw_dyn_info_t *di,
                                              unw_proc_info_t *pi,
                                              int need_unwind_info, void *arg);

struct diff_libunwind {
    unw_addr_space_t space;
    unw_dyn_info_t table;      /* .eh_frame_hdr's search table */
};

/* What the accessors see during one step. */
struct step_env {
    const struct diff_libunwind *libunwind;
    const struct cfi_request *request;
    uint64_t rip;              /* the callee's rip as given to libunwind */
};

static int find_proc_info(unw_addr_space_t space, unw_word_t ip,
                          unw_proc_info_t *info, int need_unwind_info,
                          void *arg)
{
    struct step_env *env = arg;
    unw_dyn_info_t table = env->libunwind->table;
    if (ip < table.start_ip || ip >= table.end_ip)
        return -UNW_ENOINFO;
    return _Ux86_64_dwarf_search_unwind_table(space, ip, &table, info,
                                              need_unwind_info, arg);
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
    (void)space;
    (void)addr;
    (void)arg;
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
    if (memory.read(memory.env, addr, 8, &v) != CFI_OK)
        return -UNW_EINVAL;
    *value = v;
    return 0;
}

static int access_reg(unw_addr_space_t space, unw_regnum_t reg,
                      unw_word_t *value, int write, void *arg)
{
    (void)space;
    struct step_env *env = arg;
    if (write || reg < 0 || reg >= CFI_NGPRS)
        return -UNW_EBADREG;
    if (reg == CFI_REG_RIP) {
        *value = env->rip;
        return 0;
    }
    const struct cfi_regs *callee = env->request->callee;
    if (callee->status[reg] != CFI_REG_VALUE)
        return -UNW_EBADREG;
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

enum cfi_status diff_libunwind_new(const struct cfi_file *file, bool cache,
                                   struct diff_libunwind **result)
{
    uint64_t count;
    if (!file->eh_frame_hdr_addr || !read_header(file, &count))
        return CFI_E_UNSUPPORTED;
    struct diff_libunwind *lu = calloc(1, sizeof *lu);
    if (!lu)
        return CFI_E_NOMEM;
    lu->table.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    text_range(file, &lu->table.start_ip, &lu->table.end_ip);
    lu->table.u.rti.segbase = file->eh_frame_hdr_addr;
    lu->table.u.rti.table_data = file->eh_frame_hdr_addr + 12;
    lu->table.u.rti.table_len = count * 8 / sizeof(unw_word_t);
    lu->space = unw_create_addr_space(&accessors, 0);
    if (!lu->space) {
        free(lu);
        return CFI_E_NOMEM;
    }
    unw_set_caching_policy(lu->space, cache ? UNW_CACHE_GLOBAL : UNW_CACHE_NONE);
    *result = lu;
    return CFI_OK;
}

void diff_libunwind_free(struct diff_libunwind *lu)
{
    if (!lu)
        return;
    unw_destroy_addr_space(lu->space);
    free(lu);
}

static enum cfi_status step_failed(struct cfi_frame *frame, int code)
{
    enum cfi_status status = code == -UNW_ENOINFO ? CFI_E_NO_FDE
                           : code == -UNW_EINVAL ? CFI_E_MEMORY
                                                 : CFI_E_MALFORMED;
    frame->status = status;
    frame->diag = (struct cfi_diag){status, unw_strerror(code), CFI_NO_OFFSET,
                                    -1};
    return status;
}

/* The caller's registers after a successful step. */
static void read_back(unw_cursor_t *cursor, struct cfi_frame *frame)
{
    memset(frame->caller.status, CFI_REG_UNDEFINED, sizeof frame->caller.status);
    memset(frame->caller.value, 0, sizeof frame->caller.value);
    for (int reg = 0; reg < CFI_NGPRS; reg++) {
        unw_word_t value;
        if (unw_get_reg(cursor, reg, &value) == 0)
            cfi_regs_set(&frame->caller, (unsigned)reg, value);
    }
    unw_word_t cfa = 0;
    unw_get_reg(cursor, UNW_X86_64_CFA, &cfa);
    frame->cfa = cfa;
}

enum cfi_status diff_libunwind_unwind(struct diff_libunwind *lu,
                                      const struct cfi_request *request,
                                      struct cfi_frame *frame)
{
    /* A remote cursor's first frame is looked up at its exact PC: a caller
     * frame is given as PC-1 (its rip reads as PC-1 too). */
    struct step_env env = {lu, request,
                           request->caller_frame ? request->pc - 1 : request->pc};
    unw_cursor_t cursor;
    memset(frame, 0, offsetof(struct cfi_frame, caller));
    frame->diag.reg = -1;
    int code = unw_init_remote(&cursor, lu->space, &env);
    if (code < 0)
        return step_failed(frame, code);
    code = unw_step(&cursor);
    if (code < 0)
        return step_failed(frame, code);
    frame->status = CFI_OK;
    read_back(&cursor, frame);
    if (code == 0)   /* the return address is undefined: end of stack */
        frame->caller.status[CFI_REG_RIP] = CFI_REG_UNDEFINED;
    return CFI_OK;
}
