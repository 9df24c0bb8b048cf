/* SPDX-License-Identifier: MIT */
/* busy.c — a process for `cfisem stack` that is always running, nearly
 * always inside the vDSO (clock_gettime), which is in no file
 * (tests/check_stack.c). */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    struct timespec now;
    for (;;)
        clock_gettime(CLOCK_MONOTONIC, &now);
}
