/* SPDX-License-Identifier: MIT */
/* LLVM libunwind: a register whose rule is DW_CFA_val_offset aborts the
 * process in unw_step.
 *
 *   cc repro.c /usr/lib/llvm-14/lib/libunwind.so.1 -o repro && ./repro
 *
 * g's row at g_body: cfa = rsp+8, rbx = val_offset(-16), i.e. the
 * caller's rbx is the value cfa-16 (DWARF 5 §6.4.2.3, DW_CFA_val_offset).
 * LLVM parses it (kRegisterOffsetFromCFA), and getSavedRegister
 * (DwarfInstructions.hpp) has no case for it ("FIX ME"):
 * _LIBUNWIND_ABORT "unsupported restore location for register", SIGABRT.
 * The same for DW_CFA_val_offset_sf. */
#include <stdint.h>
#include <stdio.h>

int unw_getcontext(void *context);
int unw_init_local(void *cursor, void *context);
int unw_step(void *cursor);
int unw_set_reg(void *cursor, int reg, uint64_t value);

extern char g_body[];

__asm__(".text\n\t.globl g\n\t.type g, @function\ng:\n\t.cfi_startproc\n"
        "\t.cfi_val_offset 3, -16\n"
        "\t.globl g_body\ng_body:\n\tnop\n\tnop\n\tret\n\t.cfi_endproc\n");

int main(void)
{
    static uint64_t stack[4] = {0x1111, 0x2222, 0, 0};
    uint64_t context[64], cursor[128];
    unw_getcontext(context);
    unw_init_local(cursor, context);
    unw_set_reg(cursor, 7, (uint64_t)(uintptr_t)stack);
    unw_set_reg(cursor, -1 /* UNW_REG_IP */, (uint64_t)(uintptr_t)g_body + 1);
    printf("unw_step ...\n");
    fflush(stdout);
    int step = unw_step(cursor);
    printf("unw_step returned %d (a step, or an error code: no abort)\n",
           step);
    return 0;
}
