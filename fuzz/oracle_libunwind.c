/* SPDX-License-Identifier: MIT */
/* oracle_libunwind.c — libunwind's remote unwinder over a (mutated) ELF
 * image.
 *
 * The image's PT_LOAD segments are mapped into the harness's memory model
 * (synthetic memory elsewhere); libunwind finds .eh_frame_hdr through
 * PT_GNU_EH_FRAME and reads the table, the FDEs and the stack only
 * through our accessors, as perf drives it. At each PC of fuzz_elf_pcs,
 * up to three unw_step calls from a register state derived from the PC.
 * The image never goes through cfi/: libunwind sees what our loader would
 * reject. The accessors are the libunwind adapter's
 * (engines/libunwind_access.h); only the search table is found here again,
 * from the raw program headers. */
#include "internal.h"

#include <elf.h>

#include "engines/libunwind_access.h"
#include "engines/engines.h"

enum { MAX_PCS = 32, MAX_STEPS = 3, MAX_SEGMENTS = 16 };

/* Maps the loadable segments and finds the search table. False when the
 * image has no .eh_frame_hdr libunwind's remote table can read. */
static bool prepare(const uint8_t *image, size_t size,
                    struct engine_memory *memory, unw_dyn_info_t *table)
{
    size_t phnum = fuzz_elf_phnum(image, size), mapped = 0;
    struct fuzz_phdr phdr, hdr = {0};
    uint64_t begin = UINT64_MAX, end = 0;
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
        if (engine_memory_map_bytes(memory, phdr.vaddr, image + phdr.offset,
                                    len) == CFI_OK)
            mapped++;
        if (phdr.executable && phdr.vaddr < begin)
            begin = phdr.vaddr;
        if (phdr.executable && phdr.vaddr + phdr.memsz > end)
            end = phdr.vaddr + phdr.memsz;
    }
    if (hdr.type != PT_GNU_EH_FRAME || hdr.offset > size ||
        size - hdr.offset < 12)
        return false;
    const uint8_t *bytes = image + hdr.offset;
    if (bytes[0] != 1 || bytes[2] != CFI_PE_UDATA4 ||
        bytes[3] != (CFI_PE_DATAREL | CFI_PE_SDATA4))
        return false;
    *table = engine_libunwind_table(hdr.vaddr, cfi_load_le(bytes + 8, 4), begin,
                                    end);
    return true;
}

/* Up to MAX_STEPS steps from a register state derived from `pc`, with
 * every register 0..16 given (no read is refused as unknown). */
static void unwind_from(unw_addr_space_t space, unw_dyn_info_t table,
                        struct cfi_memory memory, uint64_t pc)
{
    struct cfi_regs callee;
    fuzz_make_regs(pc, (1u << CFI_NGPRS) - 1, false, false, pc, &callee);
    struct engine_libunwind_env env;
    engine_libunwind_env_start(&env, table, memory, &callee, pc);
    unw_cursor_t cursor;
    int code = engine_libunwind_init_remote(&cursor, space, &env);
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
    unw_accessors_t accessors = engine_libunwind_accessors();
    struct engine_memory *memory = engine_memory_new(true, size);
    if (!memory)
        return;
    unw_dyn_info_t table;
    bool usable = prepare(image, size, memory, &table);
    fuzz_note(FUZZ_NOTE_LIBUNWIND_STEP, usable ? 14 : 15);
    unw_addr_space_t space = usable ? unw_create_addr_space(&accessors, 0)
                                    : NULL;
    if (space) {
        unw_set_caching_policy(space, UNW_CACHE_NONE);
        uint64_t pcs[MAX_PCS];
        size_t npcs = fuzz_elf_pcs(image, size, pcs, MAX_PCS);
        for (size_t i = 0; i < npcs; i++)
            unwind_from(space, table, engine_memory_reader(memory), pcs[i]);
        unw_destroy_addr_space(space);
    }
    engine_memory_free(memory);
}
