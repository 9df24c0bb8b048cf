/* crash.c — dies of SIGSEGV three calls deep. */
__attribute__((noinline)) static void fault(volatile int *p)
{
    *p = 1;
}

__attribute__((noinline)) static void middle(volatile int *p)
{
    fault(p);
    __asm__ volatile("" ::: "memory");
}

int main(void);
int main(void)
{
    middle((volatile int *)0);
    return 0;
}
