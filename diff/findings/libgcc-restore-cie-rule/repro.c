/* SPDX-License-Identifier: MIT */
/* libgcc: DW_CFA_restore of a register whose rule the CIE gave makes it
 * "unsaved" (same value) instead of bringing back the CIE's rule.
 *
 *   cc repro.c -o repro && ./repro
 *
 * f's CIE says rip = [cfa-8]; f's FDE moves it to [cfa-16], then
 * restores it before calling bt. DWARF 5 §6.4.2.3: DW_CFA_restore sets
 * the rule to the one the CIE's initial instructions assign, [cfa-8]:
 * the frame after f is main. libgcc (unwind-dw2.c, execute_cfa_program)
 * sets REG_UNSAVED, so f's caller's IP is f's own rip (the address bt
 * returns to): f appears again and again, main never. Exit 1 while the
 * bug is present. */
#include <stdio.h>
#include <stdlib.h>
#include <unwind.h>

void bt(void);
void f(void);

__asm__(".text\n\t.globl f\n\t.type f, @function\nf:\n\t.cfi_startproc\n"
        "\tsub $8, %rsp\n\t.cfi_adjust_cfa_offset 8\n"
        "\t.cfi_offset 16, -16\n\tnop\n"
        "\t.cfi_restore 16\n"
        "\tcall bt\n"
        "\tadd $8, %rsp\n\t.cfi_adjust_cfa_offset -8\n"
        "\tret\n\t.cfi_endproc\n");

struct walk {
    int n, repeats;
    _Unwind_Ptr last;
};

static _Unwind_Reason_Code trace(struct _Unwind_Context *context, void *p)
{
    struct walk *w = p;
    _Unwind_Ptr ip = _Unwind_GetIP(context);
    printf("frame %d: ip %p\n", w->n, (void *)ip);
    w->repeats += w->n > 0 && ip == w->last;
    w->last = ip;
    return ++w->n < 5 ? _URC_NO_REASON : _URC_END_OF_STACK;
}

/* Ends the program: 1 when a frame repeats its caller's ip (the bug). */
void bt(void)
{
    struct walk w = {0, 0, 0};
    _Unwind_Backtrace(trace, &w);
    printf("%s\n", w.repeats ? "BUG: f's caller is f again, main never comes"
                             : "f's caller is main");
    exit(w.repeats != 0);
}

int main(void)
{
    printf("f at %p, main at %p\n", (void *)f, (void *)main);
    f();
    return 0;
}
