/* spin.c — never ends: a loop that calls. */
__attribute__((noinline)) static unsigned long step(unsigned long x)
{
    __asm__ volatile("" ::: "memory");
    return x + 1;
}

int main(void);
int main(void)
{
    unsigned long x = 0;
    for (;;)
        x = step(x);
}
