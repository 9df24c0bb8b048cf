/* nofde_cfi.c — built with CFI, calling into nofde.c's functions built
 * without: the mixed program, where --no-fde-code adds the functions with
 * no FDE and leaves the FDEs' tables as they are. */
long saves(long a, long b, long c);
long rec(long n);

long __attribute__((noinline)) with_cfi(long n)
{
    return saves(n, 2, 3) + rec(n % 3);
}
