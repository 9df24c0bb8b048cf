/* SPDX-License-Identifier: MIT */
/* libgcc: a DWARF expression whose DW_OP_skip jumps onto itself never
 * ends; _Unwind_Backtrace hangs.
 *
 *   cc repro.c -o repro && ./repro
 *
 * f's row gives rbx the rule val_expression(DW_OP_skip -3): the skip's
 * target is the skip itself. DWARF 5 §2.5.1.5 lets skip jump back; an
 * expression must still end, and a consumer of untrusted CFI has to
 * bound it (cfi.h stops at 10,000 operations). libgcc's execute_stack_op
 * (unwind-dw2.c) has no bound: the backtrace never returns; the alarm
 * ends the program after 2 s ("Alarm clock"). */
#include <stdio.h>
#include <unistd.h>
#include <unwind.h>

void bt(void);
void f(void);

__asm__(".text\n\t.globl f\n\t.type f, @function\nf:\n\t.cfi_startproc\n"
        "\tsub $8, %rsp\n\t.cfi_adjust_cfa_offset 8\n"
        "\t.cfi_escape 0x16, 0x03, 0x03, 0x2f, 0xfd, 0xff\n"
        "\tcall bt\n"
        "\tadd $8, %rsp\n\t.cfi_adjust_cfa_offset -8\n"
        "\tret\n\t.cfi_endproc\n");

static _Unwind_Reason_Code trace(struct _Unwind_Context *context, void *n)
{
    (void)context;
    return ++*(int *)n < 5 ? _URC_NO_REASON : _URC_END_OF_STACK;
}

void bt(void)
{
    int n = 0;
    _Unwind_Backtrace(trace, &n);
    printf("the backtrace returned after %d frames\n", n);
}

int main(void)
{
    alarm(2);
    printf("tracing through f ...\n");
    fflush(stdout);
    f();
    return 0;
}
