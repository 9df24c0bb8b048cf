/* llvm-late-adjustment-main.c — calls late() (llvm-late-adjustment.c):
 *   clang -O2 -c -o late.o llvm-late-adjustment.c
 *   gcc -O0 -o late_run llvm-late-adjustment-main.c late.o
 *   cfisem trace --engines il -- ./late_run */
#include <stdio.h>
long late(long a);
int c(void) { return 1; }
long g(long a, long b, long c2, long d, long e, long f, long x, long y,
       long z)
{
    return a + b + c2 + d + e + f + x + y + z;
}
long h(long a, long b, long c2, long d, long e, long f, long x, long y,
       long z)
{
    return a - b - c2 - d - e - f - x - y - z;
}
int main(void)
{
    printf("%ld\n", late(2));
    return 0;
}
