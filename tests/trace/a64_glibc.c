/* SPDX-License-Identifier: MIT */
/* a64_glibc.c — a static glibc program for tracing under qemu-aarch64:
 * stdio (whose locks are exclusive sequences) and an atomic counter. */
#include <stdio.h>

static int counter;

int main(void)
{
    for (int i = 0; i < 3; i++)
        __atomic_fetch_add(&counter, 1, __ATOMIC_SEQ_CST);
    printf("%d\n", counter);
    return counter == 3 ? 0 : 1;
}
