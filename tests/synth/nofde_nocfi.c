/* nofde_nocfi.c — with_cfi() for the program with no CFI at all. */
long saves(long a, long b, long c);

long __attribute__((noinline)) with_cfi(long n)
{
    return saves(n, 4, 5);
}
