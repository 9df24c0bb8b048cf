/* prologue_v1.c — an eh_elf of the v1 ABI written by hand for
 * corpus/cases/prologue.so (its IL: cfisem il prologue.so), for the tests
 * of `cfisem validate` (tests/check_diff.c). Built four ways:
 *   -DDIRECT   the variant without deref: raw pointers (v1-direct);
 *   -DWRONG    the CFA of [0x1004,0x1009) off by 8 (rbp+24, not rbp+16):
 *              validate must report exactly that range;
 *   -DSTRAY    at 0x1009 the CFA is read through a null pointer (the
 *              direct variant must survive it and report the crash).
 * Registers without a rule (rbp, rbx) are left unset: the ABI default. */
#include <stdint.h>

typedef struct {
    uint8_t flags;
    uintptr_t rip, rsp, rbp, rbx;
} unwind_context_t;
typedef uintptr_t (*deref_func_t)(uintptr_t);

enum { RIP = 1 << 0, RSP = 1 << 1, RBP = 1 << 2, RBX = 1 << 3, ERROR = 1 << 7 };

#ifdef WRONG
#define F1_BODY_CFA 24
#else
#define F1_BODY_CFA 16
#endif

#ifdef DIRECT
#define READ(addr) (*(const uintptr_t *)(addr))
unwind_context_t _eh_elf(unwind_context_t ctx, uintptr_t pc);
unwind_context_t _eh_elf(unwind_context_t ctx, uintptr_t pc)
#else
#define READ(addr) deref(addr)
unwind_context_t _eh_elf(unwind_context_t ctx, uintptr_t pc,
                         deref_func_t deref);
unwind_context_t _eh_elf(unwind_context_t ctx, uintptr_t pc,
                         deref_func_t deref)
#endif
{
    unwind_context_t out = {0, 0, 0, 0, 0};
    uintptr_t cfa;
    int rbp_at = 0, rbx_at = 0;   /* offsets from the CFA, 0: no rule */
    if (pc < 0x1000 || pc >= 0x1025) {
        out.flags = ERROR;
        return out;
    }
    if (pc < 0x1001) {
        cfa = ctx.rsp + 8;
    } else if (pc < 0x1004) {
        cfa = ctx.rsp + 16, rbp_at = -16;
    } else if (pc < 0x1009) {
        cfa = ctx.rbp + F1_BODY_CFA, rbp_at = -16;
    } else if (pc < 0x100f) {
#ifdef STRAY
        cfa = READ((uintptr_t)0);
#else
        cfa = ctx.rbp + 16;
#endif
        rbp_at = -16, rbx_at = -24;
    } else if (pc < 0x1010) {
        cfa = ctx.rbp + 16, rbp_at = -16;
    } else if (pc < 0x1013) {
        cfa = ctx.rsp + 8;           /* 0x1010 (f1) and 0x1011 (f2) */
    } else if (pc < 0x1015) {
        cfa = ctx.rsp + 16;
    } else if (pc < 0x1016) {
        cfa = ctx.rsp + 24;
    } else if (pc < 0x101a) {
        cfa = ctx.rsp + 32, rbx_at = -32;
    } else if (pc < 0x101f) {
        cfa = ctx.rsp + 96, rbx_at = -32;
    } else if (pc < 0x1020) {
        cfa = ctx.rsp + 32, rbx_at = -32;
    } else if (pc < 0x1022) {
        cfa = ctx.rsp + 24, rbx_at = -32;
    } else if (pc < 0x1024) {
        cfa = ctx.rsp + 16, rbx_at = -32;
    } else {
        cfa = ctx.rsp + 8, rbx_at = -32;
    }
    out.rsp = cfa;
    out.rip = READ(cfa - 8);
    out.flags = RSP | RIP;
    if (rbp_at) {
        out.rbp = READ(cfa + rbp_at);
        out.flags |= RBP;
    }
    if (rbx_at) {
        out.rbx = READ(cfa + rbx_at);
        out.flags |= RBX;
    }
    return out;
}
