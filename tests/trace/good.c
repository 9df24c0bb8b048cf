/* good.c — code whose CFI the compiler writes: recursion, callee-saved
 * registers under pressure, a variable-length array (a frame pointer even
 * when it is omitted elsewhere), calls through a pointer, a tail call.
 * Freestanding: start.S calls main. */
typedef unsigned long u64;

__attribute__((noinline)) static u64 leaf(u64 x)
{
    return x * 2654435761u + 1;
}

__attribute__((noinline)) static u64 pressure(u64 a, u64 b, u64 c)
{
    u64 x = leaf(a), y = leaf(b), z = leaf(c);
    u64 u = leaf(x ^ y), v = leaf(y ^ z), w = leaf(z ^ x);
    return x + y + z + u + v + w + leaf(u + v + w);
}

__attribute__((noinline)) static u64 recurse(u64 n)
{
    if (n == 0)
        return 1;
    return leaf(n) + recurse(n - 1) * 3;
}

__attribute__((noinline)) static u64 vla(unsigned n)
{
    volatile u64 buffer[n + 1];
    for (unsigned i = 0; i <= n; i++)
        buffer[i] = leaf(i);
    return buffer[n / 2];
}

__attribute__((noinline)) static u64 tail(u64 x)
{
    /* At -O1 and above, the call of leaf is a jump. */
    return leaf(x + 3);
}

static u64 (*volatile through)(u64) = leaf;

int main(void);
int main(void)
{
    u64 sum = 0;
    for (u64 i = 0; i < 4; i++)
        sum += pressure(i, i + 1, i + 2) + recurse(i + 3) + vla((unsigned)i + 2) +
               tail(i) + through(i);
    return (int)(sum & 1);
}
