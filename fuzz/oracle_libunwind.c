/* oracle_libunwind.c — libunwind's remote unwinder over a (mutated) ELF
 * image.
 *
 * The image's PT_LOAD segments are mapped into the harness's memory model
 * (synthetic memory elsewhere); libunwind finds .eh_frame_hdr through
 * PT_GNU_EH_FRAME and reads the table, the FDEs and the stack only
 * through our accessors, as perf drives it. At each PC of fuzz_elf_pcs,
 * up to three unw_step calls from a register state derived from the PC.
 * The image never goes through cfi/: libunwind sees what our loader would
 * reject. The setup is the one of diff/libunwind.c, written again here so
 * that it reads the raw image. */
#define UNW_REMOTE_ONLY
#include "internal.h"

#include <elf.h>
#include <libunwind.h>
#include <stdlib.h>
#include <string.h>

#include "diff/memory.h"

/* Exported by libunwind-x86_64 but not declared by its public headers. */
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as,
                                              unw_word_t ip,
                                              unw_dyn_info_t *di,
                                              unw_proc_info_t *pi,
                                              int need_unwind_info, void *arg);

enum { MAX_PCS = 32, MAX_STEPS = 3, MAX_SEGMENTS = 16 };

/* What the accessors see. */
struct image_env {
    unw_dyn_info_t table;
    struct cfi_memory memory;
    const struct cfi_regs *callee;
};

static int find_proc_info(unw_addr_space_t space, unw_word_t ip,
                          unw_proc_info_t *info, int need_unwind_info,
                          void *arg)
{
    struct image_env *env = arg;
    unw_dyn_info_t table = env->table;
    if (ip < table.start_ip || ip >= table.end_ip)
        return -UNW_ENOINFO;
    return _Ux86_64_dwarf_search_unwind_table(space, ip, &table, info,
                                              need_unwind_info, arg);
}

static void put_unwind_info(unw_addr_space_t space, unw_proc_info_t *info,
                            void *arg)
{
    (void)space, (void)arg;
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
    struct image_env *env = arg;
    if (write)
        return -UNW_EREADONLYREG;
    uint64_t v;
    if (env->memory.read(env->memory.env, addr, 8, &v) != CFI_OK)
        return -UNW_EINVAL;
    *value = v;
    return 0;
}

static int access_reg(unw_addr_space_t space, unw_regnum_t reg,
                      unw_word_t *value, int write, void *arg)
{
    (void)space;
    struct image_env *env = arg;
    if (write || reg < 0 || reg >= CFI_NGPRS ||
        env->callee->status[reg] != CFI_REG_VALUE)
        return -UNW_EBADREG;
    *value = env->callee->value[reg];
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

/* Maps the loadable segments and finds the search table. False when the
 * image has no .eh_frame_hdr libunwind's remote table can read. */
static bool prepare(const uint8_t *image, size_t size,
                    struct diff_memory *memory, unw_dyn_info_t *table)
{
    size_t phnum = fuzz_elf_phnum(image, size), mapped = 0;
    struct fuzz_phdr phdr, hdr = {0};
    table->start_ip = UINT64_MAX;
    table->end_ip = 0;
    for (size_t i = 0; i < phnum; i++) {
        if (!fuzz_elf_phdr(image, size, i, &phdr))
            continue;
        if (phdr.type == PT_GNU_EH_FRAME)
            hdr = phdr;
        if (phdr.type != PT_LOAD || mapped >= MAX_SEGMENTS ||
            phdr.offset > size)
            continue;
        uint64_t len = phdr.filesz < size - phdr.offset ? phdr.filesz
                                                        : size - phdr.offset;
        if (diff_memory_map_bytes(memory, phdr.vaddr, image + phdr.offset,
                                  len) == CFI_OK)
            mapped++;
        if (phdr.executable && phdr.vaddr < table->start_ip)
            table->start_ip = phdr.vaddr;
        if (phdr.executable && phdr.vaddr + phdr.memsz > table->end_ip)
            table->end_ip = phdr.vaddr + phdr.memsz;
    }
    if (hdr.type != PT_GNU_EH_FRAME || hdr.offset > size ||
        size - hdr.offset < 12)
        return false;
    const uint8_t *bytes = image + hdr.offset;
    if (bytes[0] != 1 || bytes[2] != CFI_PE_UDATA4 ||
        bytes[3] != (CFI_PE_DATAREL | CFI_PE_SDATA4))
        return false;
    table->format = UNW_INFO_FORMAT_REMOTE_TABLE;
    table->u.rti.segbase = hdr.vaddr;
    table->u.rti.table_data = hdr.vaddr + 12;
    uint64_t count = cfi_load_le(bytes + 8, 4);
    table->u.rti.table_len = count * 8 / sizeof(unw_word_t);
    return true;
}

static void unwind_from(unw_addr_space_t space, struct image_env *env,
                        uint64_t pc)
{
    struct cfi_regs callee;
    fuzz_make_regs(pc, (1u << CFI_NGPRS) - 1, false, false, pc, &callee);
    env->callee = &callee;
    unw_cursor_t cursor;
    int code = unw_init_remote(&cursor, space, env);
    fuzz_note(FUZZ_NOTE_LIBUNWIND_STEP, (uint64_t)-code);
    for (int step = 0; code >= 0 && step < MAX_STEPS; step++) {
        code = unw_step(&cursor);
        fuzz_note(FUZZ_NOTE_LIBUNWIND_STEP,
                  code < 0 ? (uint64_t)-code : 8u + (unsigned)code);
        if (code <= 0)
            break;
        unsigned readable = 0;
        for (int reg = 0; reg < CFI_NGPRS; reg++) {
            unw_word_t value;
            readable += unw_get_reg(&cursor, reg, &value) == 0;
        }
        fuzz_note(FUZZ_NOTE_LIBUNWIND_REGS, readable);
    }
}

void fuzz_oracle_libunwind(const uint8_t *image, size_t size)
{
    /* libunwind copies the accessors into the address space. */
    unw_accessors_t accessors = {
        .find_proc_info = find_proc_info,
        .put_unwind_info = put_unwind_info,
        .get_dyn_info_list_addr = get_dyn_info_list_addr,
        .access_mem = access_mem,
        .access_reg = access_reg,
        .access_fpreg = access_fpreg,
        .resume = resume,
        .get_proc_name = get_proc_name,
    };
    struct diff_memory *memory = diff_memory_new(true, size);
    if (!memory)
        return;
    struct image_env env = {.memory = diff_memory_reader(memory)};
    bool usable = prepare(image, size, memory, &env.table);
    fuzz_note(FUZZ_NOTE_LIBUNWIND_STEP, usable ? 14 : 15);
    unw_addr_space_t space = usable ? unw_create_addr_space(&accessors, 0)
                                    : NULL;
    if (space) {
        unw_set_caching_policy(space, UNW_CACHE_NONE);
        uint64_t pcs[MAX_PCS];
        size_t npcs = fuzz_elf_pcs(image, size, pcs, MAX_PCS);
        for (size_t i = 0; i < npcs; i++)
            unwind_from(space, &env, pcs[i]);
        unw_destroy_addr_space(space);
    }
    diff_memory_free(memory);
}
