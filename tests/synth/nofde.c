/* nofde.c — functions built without CFI (-fno-asynchronous-unwind-tables
 * -fno-unwind-tables), for `cfisem synth --no-fde-code`: leaves, saved
 * registers across calls, a frame pointer, a variable frame (alloca), a
 * jump table, recursion. Driven by nofde_start.S (no CFI either), or by
 * nofde_cfi.c (with CFI) in the mixed build. No libc: it runs under
 * `cfisem trace` with the synthesised CFI. */
long with_cfi(long n);

static long __attribute__((noinline)) leaf(long a)
{
    return a * 3 + 1;
}

long __attribute__((noinline)) saves(long a, long b, long c)
{
    long x = leaf(a), y = leaf(b), z = leaf(c);
    return x * y + z + leaf(x + y + z);
}

long __attribute__((noinline, optimize("no-omit-frame-pointer")))
framed(long n)
{
    volatile long buf[16];
    for (long i = 0; i < 16; i++)
        buf[i] = leaf(i + n);
    return buf[n & 15];
}

long __attribute__((noinline)) variable(long n)
{
    long count = (n & 31) + 1;
    volatile long *p = __builtin_alloca(count * sizeof *p);
    for (long i = 0; i < count; i++)
        p[i] = leaf(i);
    return p[n % count];
}

long __attribute__((noinline)) choose(long k, long v)
{
    switch (k) {
    case 0: return leaf(v);
    case 1: return v * 7;
    case 2: return leaf(v + 2) * 2;
    case 3: return v - 9;
    case 4: return leaf(v) + leaf(v + 1);
    case 5: return v << 3;
    case 6: return saves(v, 1, 2);
    case 7: return -v;
    default: return 0;
    }
}

long __attribute__((noinline)) rec(long n)
{
    return n <= 1 ? 1 : n + rec(n - 1) * leaf(n);
}

long start_c(void)
{
    long s = 0;
    for (long i = 0; i < 10; i++)
        s += saves(i, i + 1, i + 2) + framed(i) + variable(i) +
             choose(i, i) + rec(i % 5) + with_cfi(i);
    return s;
}
