/* SPDX-License-Identifier: MIT */
/* load.c — opening an eh_elf, and unwinding with it (cg_unwind).
 *
 * Before dlopen runs any code of the file, its dynamic symbols are read:
 * a shared object that defines neither eh_elf_ident nor _eh_elf is not an
 * eh_elf, and one opened for a file must carry that file's stamp
 * (eh_elf_object_id). Then the ident names the flavour and
 * eh_elf_abi_version must be ours, and eh_elf_machine (when defined:
 * absent, x86-64) the host's. An eh_elf of AArch64, which this process
 * cannot load, is run by the eh_elf runner under qemu-aarch64
 * (remote.c), which checks the same. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* The error classes of eh_elf.h are cfi.h's, number for number. */
_Static_assert((int)EH_ELF_E_NO_FDE == (int)CFI_E_NO_FDE &&
                   (int)EH_ELF_E_MALFORMED == (int)CFI_E_MALFORMED &&
                   (int)EH_ELF_E_UNSUPPORTED == (int)CFI_E_UNSUPPORTED &&
                   (int)EH_ELF_E_MEMORY == (int)CFI_E_MEMORY &&
                   (int)EH_ELF_E_EXPR == (int)CFI_E_EXPR &&
                   (int)EH_ELF_E_EXPR_STACK == (int)CFI_E_EXPR_STACK &&
                   (int)EH_ELF_E_STEP_LIMIT == (int)CFI_E_STEP_LIMIT &&
                   (int)EH_ELF_E_REG_UNKNOWN == (int)CFI_E_REG_UNKNOWN,
               "eh_elf.h error numbers are cfi.h's");
_Static_assert(EH_ELF_NREGS == CFI_NGPRS && EH_ELF_DWARF_REGS == CFI_NREGS &&
                   EH_ELF_EXPR_STACK_MAX == CFI_EXPR_STACK_MAX &&
                   EH_ELF_EXPR_STEP_LIMIT == CFI_EXPR_STEP_LIMIT,
               "eh_elf.h limits are cfi.h's");

static enum cfi_status fail(struct cfi_diag *diag, enum cfi_status status,
                            const char *message)
{
    return cfi_fail(diag, status, CFI_NO_OFFSET, message);
}

/* dlsym, with no stale error left behind. POSIX lets dlsym's result be
 * converted to a function pointer. */
static void *symbol(void *handle, const char *name)
{
    dlerror();
    return dlsym(handle, name);
}

static enum cfi_status check_ident(struct cg_eh_elf *eh, struct cfi_diag *diag)
{
    const char *ident = symbol(eh->handle, "eh_elf_ident");
    const uint32_t *version = symbol(eh->handle, "eh_elf_abi_version");
    if (!ident) { /* the 2018-2019 tools: _eh_elf only */
        eh->abi = CG_ABI_V1;
        eh->unwind_v1 = (eh_elf_v1_fn *)symbol(eh->handle, "_eh_elf");
        return eh->unwind_v1 ? CFI_OK
                             : fail(diag, CFI_E_UNSUPPORTED,
                                    "not an eh_elf: no eh_elf_ident symbol");
    }
    if (!strcmp(ident, EH_ELF_IDENT_FULL))
        eh->abi = CG_ABI_FULL;
    else if (!strcmp(ident, EH_ELF_IDENT_V1))
        eh->abi = CG_ABI_V1;
    else
        return fail(diag, CFI_E_UNSUPPORTED,
                    "not an eh_elf of cfisem: unknown eh_elf_ident");
    if (!version)
        return fail(diag, CFI_E_UNSUPPORTED,
                    "eh_elf has no eh_elf_abi_version symbol");
    if (*version < EH_ELF_ABI_VERSION_MIN && *version >= 2)
        return fail(diag, CFI_E_UNSUPPORTED,
                    "eh_elf of ABI version 2 or 3: it carries no stamp of "
                    "the file it was built from, and cannot be checked "
                    "(rebuild it)");
    if (*version < EH_ELF_ABI_VERSION_MIN || *version > EH_ELF_ABI_VERSION)
        return fail(diag, CFI_E_UNSUPPORTED,
                    "eh_elf built for another ABI version (rebuild it)");
    const uint16_t *machine = symbol(eh->handle, "eh_elf_machine");
    if ((machine ? *machine : EH_ELF_MACHINE_X86_64) != EH_ELF_MACHINE)
        return fail(diag, CFI_E_UNSUPPORTED,
                    "eh_elf of another machine (eh_elf_machine)");
    if (eh->abi == CG_ABI_FULL)
        eh->unwind = (eh_elf_unwind_fn *)symbol(eh->handle, "eh_elf_unwind");
    else
        eh->unwind_v1 = (eh_elf_v1_fn *)symbol(eh->handle, "_eh_elf");
    if (!eh->unwind && !eh->unwind_v1)
        return fail(diag, CFI_E_UNSUPPORTED, "eh_elf has no entry point");
    return CFI_OK;
}

/* The file's dynamic symbols say whether it is an eh_elf at all. */
static enum cfi_status check_symbols(const char *path, struct cfi_diag *diag)
{
    if (access(path, R_OK) != 0)
        return fail(diag, CFI_E_IO, "cannot open file");
    bool ident = false, v1 = false;
    enum cfi_status status = cg_elf_has_symbol(path, "eh_elf_ident", &ident,
                                               diag);
    if (status == CFI_OK && !ident)
        status = cg_elf_has_symbol(path, "_eh_elf", &v1, diag);
    if (status != CFI_OK)
        return status == CFI_E_NOT_ELF
                   ? fail(diag, CFI_E_UNSUPPORTED,
                          "not an eh_elf: not a 64-bit ELF shared object")
                   : status;
    if (!ident && !v1)
        return fail(diag, CFI_E_UNSUPPORTED,
                    "not an eh_elf: defines neither eh_elf_ident nor _eh_elf");
    return CFI_OK;
}

/* An eh_elf of AArch64 on this host: the runner's (remote.c). */
static enum cfi_status load_remote(const char *path, struct cg_eh_elf **result,
                                   struct cfi_diag *diag)
{
    struct cg_eh_elf *eh = calloc(1, sizeof *eh);
    if (!eh)
        return fail(diag, CFI_E_NOMEM, "out of memory");
    eh->abi = CG_ABI_FULL; /* the runner refuses any other */
    enum cfi_status status = cg_remote_open(path, &eh->remote, diag);
    if (status != CFI_OK) {
        free(eh);
        return status;
    }
    *result = eh;
    return CFI_OK;
}

enum cfi_status cg_load(const char *path, struct cg_eh_elf **result,
                        struct cfi_diag *diag)
{
    enum cfi_status status = check_symbols(path, diag);
    unsigned machine = 0;
    if (status == CFI_OK)
        status = cg_elf_machine(path, &machine, diag);
    if (status != CFI_OK)
        return status;
    if (machine != EH_ELF_MACHINE) {
        if (machine == EH_ELF_MACHINE_AARCH64)
            return load_remote(path, result, diag);
        return fail(diag, CFI_E_UNSUPPORTED,
                    "eh_elf of a machine cfisem cannot run (ELF e_machine)");
    }
    struct cg_eh_elf *eh = calloc(1, sizeof *eh);
    size_t len = strlen(path);
    char *local = malloc(len + 3); /* dlopen searches a name without '/' */
    if (!eh || !local) {
        free(eh);
        free(local);
        return fail(diag, CFI_E_NOMEM, "out of memory");
    }
    snprintf(local, len + 3, "%s%s", strchr(path, '/') ? "" : "./", path);
    eh->handle = dlopen(local, RTLD_NOW | RTLD_LOCAL);
    free(local);
    if (!eh->handle)
        status = fail(diag, CFI_E_IO,
                      "cannot load the shared object (wrong machine?)");
    else
        status = check_ident(eh, diag);
    if (status != CFI_OK) {
        cg_unload(eh);
        return status;
    }
    *result = eh;
    return CFI_OK;
}

void cg_unload(struct cg_eh_elf *eh)
{
    if (!eh)
        return;
    if (eh->handle)
        dlclose(eh->handle);
    cg_remote_close(eh->remote);
    free(eh);
}

bool cg_eh_elf_is_remote(const char *path)
{
    unsigned machine = 0;
    struct cfi_diag ignored;
    return cg_elf_machine(path, &machine, &ignored) == CFI_OK &&
           machine == EH_ELF_MACHINE_AARCH64 &&
           machine != EH_ELF_MACHINE;
}

enum cg_abi cg_eh_elf_abi(const struct cg_eh_elf *eh)
{
    return eh->abi;
}

eh_elf_unwind_fn *cg_eh_elf_entry(const struct cg_eh_elf *eh)
{
    return eh->unwind;
}

enum cfi_status cg_check_stamp(const char *path,
                               const struct eh_elf_object_id *object,
                               struct cg_stale *stale, struct cfi_diag *diag)
{
    struct cg_stale local;
    if (!stale)
        stale = &local;
    *stale = (struct cg_stale){.object = *object};
    bool ident = false, found = false;
    enum cfi_status status = check_symbols(path, diag);
    if (status == CFI_OK)
        status = cg_elf_has_symbol(path, "eh_elf_ident", &ident, diag);
    if (status != CFI_OK || !ident) /* the 2018-2019 tools: no stamp */
        return status;
    stale->ours = true;
    status = cg_eh_elf_stamp(path, &stale->built_from, &found, diag);
    if (status != CFI_OK)
        return status;
    stale->stamped = found;
    if (!found)
        return fail(diag, CFI_E_UNSUPPORTED,
                    "eh_elf without stamp (ABI version 2 or 3): it cannot be "
                    "checked against its file (rebuild it)");
    if (!cg_object_id_equal(&stale->built_from, object))
        return fail(diag, CFI_E_UNSUPPORTED,
                    "eh_elf built from another file (rebuild it)");
    return CFI_OK;
}

enum cfi_status cg_load_for(const char *path,
                            const struct eh_elf_object_id *object,
                            struct cg_eh_elf **eh, struct cg_stale *stale,
                            struct cfi_diag *diag)
{
    enum cfi_status status = cg_check_stamp(path, object, stale, diag);
    return status == CFI_OK ? cg_load(path, eh, diag) : status;
}

void cg_stale_text(const struct cg_stale *stale, const char *object_path,
                   char *buf, size_t size)
{
    char built[2 * EH_ELF_OBJECT_ID_MAX + 32];
    char object[2 * EH_ELF_OBJECT_ID_MAX + 32];
    cg_object_id_text(&stale->built_from, built, sizeof built);
    cg_object_id_text(&stale->object, object, sizeof object);
    if (!stale->stamped)
        snprintf(buf, size, "carries no stamp of the file it was built from "
                 "(ABI version 2 or 3): rebuild it for %s (%s)", object_path,
                 object);
    else
        snprintf(buf, size, "built from %s, not from %s (%s)", built,
                 object_path, object);
}
