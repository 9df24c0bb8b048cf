/* vdso.c — one clock_gettime, which glibc answers in the vDSO. */
#include <time.h>

int main(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec < 0;
}
