/* SPDX-License-Identifier: MIT */
/* oracle_libdw.c — elfutils libdw's CFI API on a (mutated) ELF image.
 *
 * libdw and libdwarf export 34 dwarf_* names that clash, and a program
 * that links both has one library's calls bound to the other's functions.
 * libdw is therefore never linked: it is loaded with dlopen, RTLD_LOCAL,
 * and RTLD_DEEPBIND (its own names first) except under AddressSanitizer,
 * whose runtime refuses RTLD_DEEPBIND. That is safe as long as the
 * harness exports no dwarf_* name (libdwarf is linked statically and the
 * harness is not linked with -rdynamic; fuzz/README.md says how to check).
 *
 * The image is given to libelf from memory (elf_memory). Then:
 * dwarf_getcfi_elf (.eh_frame, found through .eh_frame_hdr or the section
 * headers), and dwarf_begin_elf + dwarf_getcfi (.debug_frame); at every
 * PC of fuzz_elf_pcs: dwarf_cfi_addrframe, dwarf_frame_info,
 * dwarf_frame_cfa, dwarf_frame_register for registers 0-16. */
#include "internal.h"

#include <dlfcn.h>
#include <elfutils/libdw.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifdef UNDER_ASAN
#define LIBDW_DLOPEN_FLAGS (RTLD_NOW | RTLD_LOCAL)
#else
#define LIBDW_DLOPEN_FLAGS (RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND)
#endif

enum { MAX_PCS = 48 };

/* The entry points used, resolved once. */
struct libdw_api {
    Dwarf_CFI *(*getcfi_elf)(Elf *elf);
    int (*cfi_addrframe)(Dwarf_CFI *cfi, Dwarf_Addr address,
                         Dwarf_Frame **frame);
    int (*frame_info)(Dwarf_Frame *frame, Dwarf_Addr *start, Dwarf_Addr *end,
                      bool *signalp);
    int (*frame_cfa)(Dwarf_Frame *frame, Dwarf_Op **ops, size_t *nops);
    int (*frame_register)(Dwarf_Frame *frame, int regno, Dwarf_Op ops_mem[3],
                          Dwarf_Op **ops, size_t *nops);
    int (*cfi_end)(Dwarf_CFI *cfi);
    Dwarf *(*begin_elf)(Elf *elf, Dwarf_Cmd cmd, Elf_Scn *scngrp);
    Dwarf_CFI *(*getcfi)(Dwarf *dwarf);
    int (*end)(Dwarf *dwarf);
};

enum fuzz_result fuzz_oracle_libdw_load(struct fuzz_context *context)
{
    if (context->libdw_api)
        return FUZZ_OK;
    void *handle = dlopen("libdw.so.1", LIBDW_DLOPEN_FLAGS);
    struct libdw_api *api = calloc(1, sizeof *api);
    if (!handle || !api) {
        if (handle)
            dlclose(handle);
        free(api);
        return FUZZ_SETUP;
    }
    *(void **)&api->getcfi_elf = dlsym(handle, "dwarf_getcfi_elf");
    *(void **)&api->cfi_addrframe = dlsym(handle, "dwarf_cfi_addrframe");
    *(void **)&api->frame_info = dlsym(handle, "dwarf_frame_info");
    *(void **)&api->frame_cfa = dlsym(handle, "dwarf_frame_cfa");
    *(void **)&api->frame_register = dlsym(handle, "dwarf_frame_register");
    *(void **)&api->cfi_end = dlsym(handle, "dwarf_cfi_end");
    *(void **)&api->begin_elf = dlsym(handle, "dwarf_begin_elf");
    *(void **)&api->getcfi = dlsym(handle, "dwarf_getcfi");
    *(void **)&api->end = dlsym(handle, "dwarf_end");
    if (!api->getcfi_elf || !api->cfi_addrframe || !api->frame_info ||
        !api->frame_cfa || !api->frame_register || !api->cfi_end ||
        !api->begin_elf || !api->getcfi || !api->end) {
        dlclose(handle);
        free(api);
        return FUZZ_SETUP;
    }
    elf_version(EV_CURRENT);
    context->libdw = handle;
    context->libdw_api = api;
    return FUZZ_OK;
}

/* Reads every operation libdw hands back (a bad pointer shows up under
 * ASan in this, instrumented, code). */
static void note_ops(const Dwarf_Op *ops, size_t nops)
{
    fuzz_note(FUZZ_NOTE_LIBDW_RULE, nops);
    for (size_t i = 0; ops && i < nops && i < 64; i++)
        fuzz_note(FUZZ_NOTE_LIBDW_RULE, ops[i].atom & 0x0f);
}

static void query(const struct libdw_api *api, Dwarf_CFI *cfi, uint64_t pc)
{
    Dwarf_Frame *frame = NULL;
    int res = api->cfi_addrframe(cfi, pc, &frame);
    fuzz_note(FUZZ_NOTE_LIBDW_FRAME, res == 0 ? 0 : 1);
    if (res != 0 || !frame)
        return;
    Dwarf_Addr start = 0, end = 0;
    bool signal = false;
    api->frame_info(frame, &start, &end, &signal);
    fuzz_note(FUZZ_NOTE_LIBDW_FRAME, 2 + signal);
    Dwarf_Op *ops = NULL;
    size_t nops = 0;
    res = api->frame_cfa(frame, &ops, &nops);
    fuzz_note(FUZZ_NOTE_LIBDW_FRAME, res == 0 ? 4 : 5);
    if (res == 0)
        note_ops(ops, nops);
    for (int reg = 0; reg < CFI_NGPRS; reg++) {
        Dwarf_Op ops_mem[3];
        ops = NULL;
        nops = 0;
        res = api->frame_register(frame, reg, ops_mem, &ops, &nops);
        fuzz_note(FUZZ_NOTE_LIBDW_FRAME, res == 0 ? 6 : 7);
        if (res == 0)
            note_ops(ops, nops);
    }
    free(frame);
}

enum fuzz_result fuzz_oracle_libdw(struct fuzz_context *context,
                                   const uint8_t *image, size_t size)
{
    if (fuzz_oracle_libdw_load(context) != FUZZ_OK)
        return FUZZ_SETUP;
    const struct libdw_api *api = context->libdw_api;
    uint64_t pcs[MAX_PCS];
    size_t npcs = fuzz_elf_pcs(image, size, pcs, MAX_PCS);
    /* elf_memory may write to the image (ELF_C_READ_MMAP_PRIVATE): a
     * copy, 8-byte aligned (ELF structures are read in place only when
     * aligned), ending at a guard page. */
    struct fuzz_guarded copy;
    if (!fuzz_guarded_copy(&copy, image, size, 8))
        return FUZZ_SETUP;
    Elf *elf = elf_memory((char *)copy.bytes, size);
    if (elf) {
        Dwarf_CFI *cfi = api->getcfi_elf(elf);
        fuzz_note(FUZZ_NOTE_LIBDW_FRAME, cfi ? 8 : 9);
        for (size_t i = 0; cfi && i < npcs; i++)
            query(api, cfi, pcs[i]);
        if (cfi)
            api->cfi_end(cfi);
        Dwarf *dwarf = api->begin_elf(elf, DWARF_C_READ, NULL);
        fuzz_note(FUZZ_NOTE_LIBDW_FRAME, dwarf ? 10 : 11);
        Dwarf_CFI *debug_cfi = dwarf ? api->getcfi(dwarf) : NULL;
        for (size_t i = 0; debug_cfi && i < npcs; i++)
            query(api, debug_cfi, pcs[i]);
        if (dwarf)
            api->end(dwarf);
        elf_end(elf);
    }
    fuzz_guarded_free(&copy);
    return FUZZ_OK;
}
