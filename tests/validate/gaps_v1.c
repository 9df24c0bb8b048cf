/* gaps_v1.c — an eh_elf of the v1 ABI written by hand for gaps.so
 * (tests/validate/gaps.S), for the tests of `cfisem validate`
 * (tests/check_diff.c). By default it answers what the reference
 * expects: the error flag in the gaps, at rip=rdi and at rbp=rsi (v1
 * cannot carry them), a clear rip flag where the return address column is rcx (no
 * rule: undefined). Each macro plants one fault of a real generator:
 *   -DDIRECT        the variant without deref (v1-direct);
 *   -DPLT_SHORT     the PLT's CFA 8 bytes short (no +8 of breg7 8);
 *   -DGAP_PREVIOUS  a gap answered with the previous FDE's last row;
 *   -DVFORK_CLEAR   rip=rdi answered with a clear rip flag (undefined);
 *   -DRA_16         the return address column ignored: rip=[cfa-8];
 *   -DRBP_CLEAR     rbp=rsi answered with a clear rbp flag ("the
 *                   callee's value");
 *   -DUNSUPPORTED   the error flag at [0x1001,0x1002) (a limitation);
 *   -DABORT         an assertion fails in the gaps (as a per-function
 *                   layout does outside every FDE);
 *   -DSEGV          a write through a null pointer at 0x1008;
 *   -DHANG          an endless loop at 0x1002. */
#include <assert.h>
#include <stdint.h>

typedef struct {
    uint8_t flags;
    uintptr_t rip, rsp, rbp, rbx;
} unwind_context_t;
typedef uintptr_t (*deref_func_t)(uintptr_t);

enum { RIP = 1 << 0, RSP = 1 << 1, RBP = 1 << 2, RBX = 1 << 3, ERROR = 1 << 7 };

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
    unwind_context_t out = {ERROR, 0, 0, 0, 0};
    uintptr_t cfa = ctx.rsp + 8;
    int rip_at = -8, rbp_at = 0;   /* offsets from the CFA; 0: flag clear */
    int gap = (pc >= 0x1003 && pc < 0x1008) || (pc >= 0x100d && pc < 0x1010);
#ifdef ABORT
    assert(!gap && "no FDE covers the address");
#endif
    if (pc < 0x1000 || pc >= 0x1022)
        return out;
    if (gap) {
#ifndef GAP_PREVIOUS
        return out;
#endif
        rip_at = pc < 0x1008 ? -8 : 0;      /* f1's last row, f3's */
    } else if (pc == 0x1001) {
#ifdef UNSUPPORTED
        return out;
#endif
        cfa = ctx.rsp + 16, rbp_at = -16;
    } else if (pc == 0x1002) {
#ifdef HANG
        for (volatile int forever = 1; forever;)
            ;
#endif
    } else if (pc == 0x1008) {
#ifdef SEGV
        *(volatile int *)0 = 0;
#endif
    } else if (pc >= 0x1009 && pc < 0x100b) {
#ifndef VFORK_CLEAR
        return out;
#endif
        cfa = ctx.rsp, rip_at = 0;
    } else if (pc >= 0x100b && pc < 0x100d) {
#ifndef RA_16
        rip_at = 0;
#endif
    } else if (pc >= 0x1020) {
#ifndef RBP_CLEAR
        return out;
#endif
    } else if (pc >= 0x1010) {
        cfa = ctx.rsp + ((ctx.rip & 15) >= 11 ? 16 : 8);
#ifdef PLT_SHORT
        cfa -= 8;
#endif
    }
    out.flags = RSP;
    out.rsp = cfa;
    if (rip_at) {
        out.rip = READ(cfa + rip_at);
        out.flags |= RIP;
    }
    if (rbp_at) {
        out.rbp = READ(cfa + rbp_at);
        out.flags |= RBP;
    }
    return out;
}
