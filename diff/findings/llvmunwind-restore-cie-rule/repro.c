/* SPDX-License-Identifier: MIT */
/* LLVM libunwind: DW_CFA_restore of a register whose rule the CIE gave
 * brings back "unused" (the state before the CIE's program), not the
 * CIE's rule.
 *
 *   cc repro.c /usr/lib/llvm-14/lib/libunwind.so.1 -o repro && ./repro
 *
 * f's CIE says rip = [cfa-8]; f's FDE moves it to [cfa-16], then
 * restores it before calling bt. DWARF 5 §6.4.2.3: DW_CFA_restore sets
 * the rule to the one the CIE's initial instructions assign: the frame
 * after f is main. LLVM's parser records a register's "initial state"
 * the first time an instruction changes it, and the CIE's own
 * DW_CFA_offset is such a change: what restore brings back is the rule
 * before the CIE ran (kRegisterUnused), and the return address column
 * then keeps f's own IP: f appears again and again, main never. Exit 1
 * while the bug is present. (No header: libunwind-14-dev conflicts with
 * nongnu libunwind's.) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int unw_getcontext(void *context);
int unw_init_local(void *cursor, void *context);
int unw_step(void *cursor);
int unw_get_reg(void *cursor, int reg, uint64_t *value);

void bt(void);
void f(void);

__asm__(".text\n\t.globl f\n\t.type f, @function\nf:\n\t.cfi_startproc\n"
        "\tsub $8, %rsp\n\t.cfi_adjust_cfa_offset 8\n"
        "\t.cfi_offset 16, -16\n\tnop\n"
        "\t.cfi_restore 16\n"
        "\tcall bt\n"
        "\tadd $8, %rsp\n\t.cfi_adjust_cfa_offset -8\n"
        "\tret\n\t.cfi_endproc\n");

/* Ends the program: 1 when a frame repeats its caller's ip (the bug). */
void bt(void)
{
    uint64_t context[64], cursor[128], ip, last = 0;
    int repeats = 0;
    unw_getcontext(context);
    unw_init_local(cursor, context);
    for (int n = 0; n < 5; n++) {
        unw_get_reg(cursor, -1 /* UNW_REG_IP */, &ip);
        printf("frame %d: ip %p\n", n, (void *)ip);
        repeats += n > 0 && ip == last;
        last = ip;
        if (unw_step(cursor) <= 0)
            break;
    }
    printf("%s\n", repeats ? "BUG: f's caller is f again, main never comes"
                           : "f's caller is main");
    exit(repeats != 0);
}

int main(void)
{
    printf("f at %p, main at %p\n", (void *)f, (void *)main);
    f();
    return 0;
}
