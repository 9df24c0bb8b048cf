/* SPDX-License-Identifier: MIT */
/* unwind.c — cg_unwind: one frame with a loaded eh_elf, under the same
 * contract as sem_unwind and interp_unwind (cfi.h). */
#include <string.h>

#include "internal.h"

/* cfi.h step 1: a return address is looked up at PC-1. */
static uint64_t lookup_pc(const struct cfi_request *request)
{
    return cfi_lookup_pc(request->pc, request->caller_frame);
}

static const char *message_of(enum cfi_status status)
{
    switch (status) {
    case CFI_E_NO_FDE: return "no FDE covers the address";
    case CFI_E_MALFORMED: return "malformed CFI (eh_elf)";
    case CFI_E_UNSUPPORTED: return "unsupported CFI (eh_elf)";
    case CFI_E_MEMORY: return "memory fault (eh_elf)";
    case CFI_E_EXPR: return "expression fault (eh_elf)";
    case CFI_E_EXPR_STACK: return "expression stack overflow (eh_elf)";
    case CFI_E_STEP_LIMIT: return "expression step limit reached (eh_elf)";
    case CFI_E_REG_UNKNOWN: return "register value unknown (eh_elf)";
    default: return "the eh_elf returned an unknown error";
    }
}

/* ------------------------------------------------------------------ */
/* Full ABI                                                              */
/* ------------------------------------------------------------------ */

static int read_memory(void *data, uint64_t addr, unsigned size,
                       uint64_t *value)
{
    const struct cfi_request *request = data;
    return request->memory.read(request->memory.env, addr, size, value) !=
           CFI_OK;
}

static int read_register(void *data, unsigned reg, uint64_t *value)
{
    const struct cfi_request *request = data;
    if (reg >= CFI_NREGS)
        return EH_ELF_REG_UNKNOWN;
    *value = request->callee->value[reg];
    switch (request->callee->status[reg]) {
    case CFI_REG_VALUE: return EH_ELF_REG_VALUE;
    case CFI_REG_UNDEFINED: return EH_ELF_REG_UNDEFINED;
    default: return EH_ELF_REG_UNKNOWN;
    }
}

/* Register statuses travel as one byte per register in a cfi_regs and
 * one bit per register in eh_elf_regs; these convert eight at a time. */
#define ONES 0x0101010101010101ull
#define LOW7 0x7f7f7f7f7f7f7f7full
#define HIGH 0x8080808080808080ull

/* The high bit of each byte of w that is not zero. */
static uint64_t nonzero_bytes(uint64_t w)
{
    return (((w & LOW7) + LOW7) | w) & HIGH;
}

/* Bit k set when bytes[k] == value, for k < 8. (An eh_elf runs on an
 * x86-64 host: the bytes load little-endian.) */
static uint32_t bytes_equal(const uint8_t *bytes, uint8_t value)
{
    uint64_t w;
    memcpy(&w, bytes, sizeof w);
    uint64_t zero = ~nonzero_bytes(w ^ (value * ONES)) & HIGH;
    return (uint32_t)(((zero >> 7) * 0x0102040810204080ull) >> 56);
}

/* Byte k is bit k of `bits` (0 or 1), for k < 8. */
static uint64_t bits_to_bytes(uint32_t bits)
{
    uint64_t spread = ((bits & 0xff) * ONES) & 0x8040201008040201ull;
    return nonzero_bytes(spread) >> 7;
}

static void store_le(uint8_t *bytes, uint64_t w)
{
    memcpy(bytes, &w, sizeof w);
}

static uint32_t status_bits(const uint8_t *status, uint8_t value)
{
    return bytes_equal(status, value) | bytes_equal(status + 8, value) << 8 |
           (uint32_t)(status[16] == value) << 16;
}

static void callee_regs(const struct cfi_regs *callee, struct eh_elf_regs *in)
{
    memcpy(in->value, callee->value, sizeof in->value);
    in->known = status_bits(callee->status, CFI_REG_VALUE);
    in->undefined = status_bits(callee->status, CFI_REG_UNDEFINED);
}

/* An error result, every field set: a consumer that copies the frame
 * whole (validate's child) must not read an indeterminate bool. */
static void frame_error(struct cfi_frame *frame, enum cfi_status status,
                        int reg, uint64_t offset)
{
    frame->status = status;
    frame->diag = (struct cfi_diag){status, message_of(status), offset, reg};
    frame->cfa = 0;
    frame->signal_frame = false;
    frame->ra_b_key = false;
    memset(frame->caller.value, 0, sizeof frame->caller.value);
    memset(frame->caller.status, CFI_REG_UNDEFINED, sizeof frame->caller.status);
}

enum cfi_status cg_frame_error(struct cfi_frame *frame, uint32_t error,
                               int32_t error_reg, uint64_t error_offset)
{
    enum cfi_status status = error >= EH_ELF_E_NO_FDE &&
                                     error <= EH_ELF_E_REG_UNKNOWN
                                 ? (enum cfi_status)error
                                 : CFI_E_UNSUPPORTED;
    frame_error(frame, status, status == CFI_E_REG_UNKNOWN ? error_reg : -1,
                error_offset == UINT64_MAX ? CFI_NO_OFFSET : error_offset);
    return status;
}

/* The caller's registers: 0-16 from the eh_elf (the value of one that
 * holds none is 0: the eh_elf leaves it unspecified), the others
 * undefined (their values are left as they are: only a value's is
 * meaningful). */
static void caller_regs(const struct eh_elf_regs *out, struct cfi_regs *caller)
{
    _Static_assert(CFI_REG_UNKNOWN == 0 && CFI_REG_VALUE == 1 &&
                       CFI_REG_UNDEFINED == 2, "status = known + 2 undefined");
    uint32_t known = out->known, undefined = out->undefined & ~known;
    for (unsigned r = 0; r < EH_ELF_NREGS; r++)
        caller->value[r] = known >> r & 1u ? out->value[r] : 0;
    for (unsigned k = 0; k < 2; k++)
        store_le(caller->status + 8 * k,
                 bits_to_bytes(known >> (8 * k)) |
                     bits_to_bytes(undefined >> (8 * k)) << 1);
    caller->status[16] = (uint8_t)((known >> 16 & 1) | (undefined >> 16 & 1) << 1);
    memset(caller->status + EH_ELF_NREGS, CFI_REG_UNDEFINED,
           sizeof caller->status - EH_ELF_NREGS);
}

static enum cfi_status unwind_full(const struct cg_eh_elf *eh,
                                   const struct cfi_request *request,
                                   struct cfi_frame *frame)
{
    struct eh_elf_regs in;
    struct eh_elf_frame out;
    struct eh_elf_env env = {read_memory, read_register, (void *)request,
                             0, 0}; /* every read through read_memory */
    callee_regs(request->callee, &in);
    int error = eh->unwind(lookup_pc(request), &in, &env, &out);
    if (error != EH_ELF_OK)
        return cg_frame_error(frame, (uint32_t)error, out.error_reg,
                              out.error_offset);
    frame->status = CFI_OK;
    frame->diag = (struct cfi_diag){CFI_OK, NULL, CFI_NO_OFFSET, -1};
    frame->cfa = out.cfa;
    frame->signal_frame = out.signal_frame != 0;
    frame->ra_b_key = false;
    caller_regs(&out.caller, &frame->caller);
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* v1 ABI                                                                */
/* ------------------------------------------------------------------ */

/* The v1 ABI's deref takes an address and nothing else, and cannot fail:
 * the memory of the request being served and whether a read failed live
 * here, one per thread. This is compile/'s only mutable static state;
 * the v1 ABI leaves no other way. */
struct v1_call {
    const struct cfi_memory *memory;
    bool fault;
};
static _Thread_local struct v1_call *v1_current;

static uintptr_t v1_deref(uintptr_t addr)
{
    struct v1_call *call = v1_current;
    uint64_t value = 0;
    if (!call)
        return 0;
    if (call->memory->read(call->memory->env, addr, 8, &value) != CFI_OK) {
        call->fault = true;
        return 0;
    }
    return (uintptr_t)value;
}

static void v1_put(struct cfi_regs *caller, unsigned reg, bool defined,
                   uint64_t value)
{
    caller->status[reg] = defined ? CFI_REG_VALUE : CFI_REG_UNKNOWN;
    caller->value[reg] = defined ? value : 0;
}

static enum cfi_status unwind_v1(const struct cg_eh_elf *eh,
                                 const struct cfi_request *request,
                                 struct cfi_frame *frame)
{
    const struct cfi_regs *callee = request->callee;
    unwind_context_t in = {0, 0, 0, 0, 0};
    static const struct { unsigned reg, flag; } regs[] = {
        {CFI_REG_RIP, UNWF_RIP}, {CFI_REG_RSP, UNWF_RSP},
        {CFI_REG_RBP, UNWF_RBP}, {CFI_REG_RBX, UNWF_RBX}};
    uintptr_t *fields[] = {&in.rip, &in.rsp, &in.rbp, &in.rbx};
    for (unsigned k = 0; k < 4; k++)
        if (callee->status[regs[k].reg] == CFI_REG_VALUE) {
            *fields[k] = callee->value[regs[k].reg];
            in.flags |= (uint8_t)(1u << regs[k].flag);
        }
    struct v1_call call = {&request->memory, false}, *outer = v1_current;
    v1_current = &call;
    unwind_context_t out = eh->unwind_v1(in, lookup_pc(request), v1_deref);
    v1_current = outer;
    if (call.fault || out.flags >> UNWF_ERROR & 1u) {
        enum cfi_status status = call.fault ? CFI_E_MEMORY : CFI_E_UNSUPPORTED;
        frame_error(frame, status, -1, CFI_NO_OFFSET);
        if (!call.fault)
            frame->diag.message = "the eh_elf failed (v1 has no error classes)";
        return status;
    }
    frame->status = CFI_OK;
    frame->diag = (struct cfi_diag){CFI_OK, NULL, CFI_NO_OFFSET, -1};
    frame->cfa = out.rsp;
    frame->signal_frame = false;
    memset(frame->caller.value, 0, sizeof frame->caller.value);
    memset(frame->caller.status, CFI_REG_UNKNOWN, sizeof frame->caller.status);
    v1_put(&frame->caller, CFI_REG_RIP, out.flags >> UNWF_RIP & 1u, out.rip);
    v1_put(&frame->caller, CFI_REG_RSP, out.flags >> UNWF_RSP & 1u, out.rsp);
    v1_put(&frame->caller, CFI_REG_RBP, out.flags >> UNWF_RBP & 1u, out.rbp);
    v1_put(&frame->caller, CFI_REG_RBX, out.flags >> UNWF_RBX & 1u, out.rbx);
    return CFI_OK;
}

enum cfi_status cg_unwind(const struct cg_eh_elf *eh,
                          const struct cfi_request *request,
                          struct cfi_frame *frame)
{
    if (eh->remote)
        return cg_remote_unwind(eh->remote, request, frame);
    if (eh->abi == CG_ABI_V1)
        return unwind_v1(eh, request, frame);
    return unwind_full(eh, request, frame);
}
