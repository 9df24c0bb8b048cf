/* SPDX-License-Identifier: MIT */
/* eh_elf_v1.c — see eh_elf_v1.h. */
#include "eh_elf_v1.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef struct engine_v1_context (*deref_entry)(struct engine_v1_context ctx,
                                                uintptr_t pc,
                                                uintptr_t (*deref)(uintptr_t));
typedef struct engine_v1_context (*direct_entry)(struct engine_v1_context ctx,
                                                 uintptr_t pc);

struct engine_v1 {
    void *handle;
    enum engine_v1_variant variant;
    deref_entry with_deref;
    direct_entry direct;
};

/* The call in progress on this thread: what deref reads from. */
struct v1_call {
    struct cfi_memory memory;
    bool faulted;
};
static _Thread_local struct v1_call *current_call;

static uintptr_t deref(uintptr_t addr)
{
    struct v1_call *call = current_call;
    uint64_t value = 0;
    if (!call)
        return 0;
    if (call->memory.read(call->memory.env, addr, 8, &value) != CFI_OK) {
        call->faulted = true;
        return 0;
    }
    return (uintptr_t)value;
}

enum cfi_status engine_v1_open(const char *path, enum engine_v1_variant variant,
                               struct engine_v1 **result, struct cfi_diag *diag)
{
    enum cfi_status regular = cfi_check_regular_file(path, diag);
    if (regular != CFI_OK)
        return regular;
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle)
        return cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET,
                        "cannot load the eh_elf (dlopen failed)");
    void *entry = dlsym(handle, "_eh_elf");
    struct engine_v1 *v1 = entry ? calloc(1, sizeof *v1) : NULL;
    if (!v1) {
        dlclose(handle);
        return entry ? cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory")
                     : cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                                "not a v1 eh_elf: no _eh_elf symbol");
    }
    v1->handle = handle;
    v1->variant = variant;
    /* POSIX: a dlsym result is a function's address. */
    memcpy(&v1->with_deref, &entry, sizeof entry);
    memcpy(&v1->direct, &entry, sizeof entry);
    *result = v1;
    return CFI_OK;
}

void engine_v1_close(struct engine_v1 *v1)
{
    if (!v1)
        return;
    dlclose(v1->handle);
    free(v1);
}

struct engine_v1_context engine_v1_context_of(const struct cfi_regs *callee)
{
    static const struct {
        unsigned reg;
        uint8_t flag;
    } carried[] = {{CFI_REG_RIP, ENGINE_V1_RIP}, {CFI_REG_RSP, ENGINE_V1_RSP},
                   {CFI_REG_RBP, ENGINE_V1_RBP}, {CFI_REG_RBX, ENGINE_V1_RBX}};
    struct engine_v1_context ctx = {0, 0, 0, 0, 0};
    uintptr_t *slot[] = {&ctx.rip, &ctx.rsp, &ctx.rbp, &ctx.rbx};
    for (size_t i = 0; i < 4; i++)
        if (callee->status[carried[i].reg] == CFI_REG_VALUE) {
            *slot[i] = (uintptr_t)callee->value[carried[i].reg];
            ctx.flags |= carried[i].flag;
        }
    return ctx;
}

struct engine_v1_context engine_v1_call(const struct engine_v1 *v1,
                                        struct engine_v1_context ctx,
                                        uint64_t pc, struct cfi_memory memory,
                                        bool *faulted)
{
    if (v1->variant == ENGINE_V1_DIRECT) {
        *faulted = false;
        return v1->direct(ctx, (uintptr_t)pc);
    }
    struct v1_call call = {memory, false};
    struct v1_call *outer = current_call;
    current_call = &call;
    struct engine_v1_context result = v1->with_deref(ctx, (uintptr_t)pc, deref);
    current_call = outer;
    *faulted = call.faulted;
    return result;
}
