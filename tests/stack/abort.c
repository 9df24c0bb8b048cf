/* SPDX-License-Identifier: MIT */
/* abort.c — built for AArch64 and run under qemu-aarch64, which writes
 * a core when it aborts (a core with no NT_FILE note): `cfisem stack
 * --core CORE EXE` must give gdb-multiarch's frames
 * (tests/check_stack.c). */
#include <stdlib.h>

__attribute__((noinline)) static void descend(int n)
{
    if (n < 0)
        return;
    if (n == 0)
        abort();
    descend(n - 1);
    __asm__ volatile("");   /* not a tail call */
}

int main(void)
{
    descend(3);
    return 0;
}
