/* SPDX-License-Identifier: MIT */
/* libunwind_access.c — see libunwind_access.h. */
#include "libunwind_access.h"

#include <stdlib.h>

#include "engines/libunwind_model.h"

/* Exported by libunwind-x86_64 but not declared by its public headers. */
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as,
                                              unw_word_t ip,
                                              unw_dyn_info_t *di,
                                              unw_proc_info_t *pi,
                                              int need_unwind_info, void *arg);

static int find_proc_info(unw_addr_space_t space, unw_word_t ip,
                          unw_proc_info_t *info, int need_unwind_info,
                          void *arg)
{
    struct engine_libunwind_env *env = arg;
    unw_dyn_info_t table = env->table;
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
 * word-sized accessor cannot express. Such a fault is recorded; the
 * adapter makes a memory error it causes not comparable. */
static int access_mem(unw_addr_space_t space, unw_word_t addr,
                      unw_word_t *value, int write, void *arg)
{
    (void)space;
    struct engine_libunwind_env *env = arg;
    if (write)
        return -UNW_EREADONLYREG;
    uint64_t v;
    struct cfi_memory memory = env->memory;
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
    struct engine_libunwind_env *env = arg;
    if (write || reg < 0 || reg >= ENGINE_LU_NREGS)
        return -UNW_EBADREG;
    if (reg == CFI_REG_RIP && !env->initialised) {
        *value = env->lookup_pc;
        return 0;
    }
    const struct cfi_regs *callee = env->callee;
    if (callee->status[reg] != CFI_REG_VALUE) {
        if (env->unknown_reg < 0)
            env->unknown_reg = reg;
        return ENGINE_LIBUNWIND_UNKNOWN_REGISTER;
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

unw_accessors_t engine_libunwind_accessors(void)
{
    return (unw_accessors_t){
        .find_proc_info = find_proc_info,
        .put_unwind_info = put_unwind_info,
        .get_dyn_info_list_addr = get_dyn_info_list_addr,
        .access_mem = access_mem,
        .access_reg = access_reg,
        .access_fpreg = access_fpreg,
        .resume = resume,
        .get_proc_name = get_proc_name,
    };
}

unw_dyn_info_t engine_libunwind_table(uint64_t hdr_addr, uint64_t count,
                                      uint64_t begin, uint64_t end)
{
    unw_dyn_info_t table = {0};
    table.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    table.start_ip = begin;
    table.end_ip = end;
    table.u.rti.segbase = hdr_addr;
    table.u.rti.table_data = hdr_addr + 12;
    table.u.rti.table_len = count * 8 / sizeof(unw_word_t);
    return table;
}

void engine_libunwind_env_start(struct engine_libunwind_env *env,
                                unw_dyn_info_t table, struct cfi_memory memory,
                                const struct cfi_regs *callee,
                                uint64_t lookup_pc)
{
    *env = (struct engine_libunwind_env){
        .table = table, .memory = memory, .callee = callee,
        .lookup_pc = lookup_pc, .unknown_reg = -1,
    };
}

int engine_libunwind_init_remote(unw_cursor_t *cursor, unw_addr_space_t space,
                                 struct engine_libunwind_env *env)
{
    int code = unw_init_remote(cursor, space, env);
    env->initialised = true;
    return code;
}
