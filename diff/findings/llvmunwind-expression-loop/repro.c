/* SPDX-License-Identifier: MIT */
/* LLVM libunwind: a DWARF expression whose DW_OP_skip jumps onto itself
 * never ends; unw_step hangs.
 *
 *   cc repro.c /usr/lib/llvm-14/lib/libunwind.so.1 -o repro && ./repro
 *
 * g's row gives rbx the rule val_expression(DW_OP_skip -3). DWARF 5
 * §2.5.1.5 lets skip jump back; an expression must still end, and a
 * consumer of untrusted CFI has to bound it (cfi.h stops at 10,000
 * operations). evaluateExpression (DwarfInstructions.hpp) has no bound:
 * unw_step never returns; the alarm ends the program after 2 s. */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

int unw_getcontext(void *context);
int unw_init_local(void *cursor, void *context);
int unw_step(void *cursor);
int unw_set_reg(void *cursor, int reg, uint64_t value);

extern char g_body[];

__asm__(".text\n\t.globl g\n\t.type g, @function\ng:\n\t.cfi_startproc\n"
        "\t.cfi_escape 0x16, 0x03, 0x03, 0x2f, 0xfd, 0xff\n"
        "\t.globl g_body\ng_body:\n\tnop\n\tnop\n\tret\n\t.cfi_endproc\n");

int main(void)
{
    static uint64_t stack[4] = {0x1111, 0x2222, 0, 0};
    uint64_t context[64], cursor[128];
    unw_getcontext(context);
    unw_init_local(cursor, context);
    unw_set_reg(cursor, 7, (uint64_t)(uintptr_t)stack);
    unw_set_reg(cursor, -1 /* UNW_REG_IP */, (uint64_t)(uintptr_t)g_body + 1);
    alarm(2);
    printf("unw_step ...\n");
    fflush(stdout);
    printf("unw_step returned %d\n", unw_step(cursor));
    return 0;
}
