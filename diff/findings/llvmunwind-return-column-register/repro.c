/* SPDX-License-Identifier: MIT */
/* LLVM libunwind: the register that is the CIE's return address column
 * is not restored; it keeps the callee's value.
 *
 *   cc repro.c /usr/lib/llvm-14/lib/libunwind.so.1 -o repro && ./repro
 *
 * g's CIE names rbx (3) as the return address column; at g_body the row
 * is cfa = rsp+16, rbx = [cfa-16]. A frame at g_body with rsp = stack
 * (stack[0] = 0x1111) and rbx = 0x3333 is unwound. DWARF 5 §6.4.1: the
 * return address column is a column of the table like any other: the
 * caller's rbx is [cfa-16] = 0x1111, and so is the return address. LLVM
 * (DwarfInstructions.hpp, stepWithDwarf) reads that column into the
 * return address only ("else if (i == returnAddressRegister)"), so the
 * caller's rbx stays 0x3333. The IP is set to g_body + 1: LLVM's row is
 * the one in effect before its IP (parseInstructions stops when
 * codeOffset reaches the IP's offset). */
#include <stdint.h>
#include <stdio.h>

int unw_getcontext(void *context);
int unw_init_local(void *cursor, void *context);
int unw_step(void *cursor);
int unw_get_reg(void *cursor, int reg, uint64_t *value);
int unw_set_reg(void *cursor, int reg, uint64_t value);

extern char g_body[];

__asm__(".text\n\t.globl g\n\t.type g, @function\ng:\n\t.cfi_startproc\n"
        "\t.cfi_return_column 3\n"
        "\tpush %rbx\n\t.cfi_adjust_cfa_offset 8\n\t.cfi_offset 3, -16\n"
        "\t.globl g_body\ng_body:\n\tnop\n\tnop\n"
        "\tpop %rbx\n\tret\n\t.cfi_endproc\n");

int main(void)
{
    static uint64_t stack[4] = {0x1111, 0x2222, 0, 0};
    uint64_t context[64], cursor[128], rbx, ip;
    unw_getcontext(context);
    unw_init_local(cursor, context);
    unw_set_reg(cursor, 3, 0x3333);
    unw_set_reg(cursor, 7, (uint64_t)(uintptr_t)stack);
    unw_set_reg(cursor, -1 /* UNW_REG_IP */, (uint64_t)(uintptr_t)g_body + 1);
    int step = unw_step(cursor);
    unw_get_reg(cursor, 3, &rbx);
    unw_get_reg(cursor, -1, &ip);
    printf("unw_step %d: caller's ip %#llx (want 0x1111), rbx %#llx "
           "(want 0x1111)\n", step, (unsigned long long)ip,
           (unsigned long long)rbx);
    return rbx != 0x1111;
}
