/* a64_signal.c — signals under qemu-aarch64, with no libc: SIGUSR1 to a
 * plain handler, SIGUSR2 to an SA_SIGINFO handler (it reads the
 * siginfo and the ucontext), each sent by the program to itself from
 * two calls deep; both handlers call a function and return through the
 * sigreturn trampoline (no SA_RESTORER: qemu's own). Exits 0 when both
 * ran, each once, with the right signal. */
enum {
    NR_RT_SIGACTION = 134, NR_KILL = 129, NR_GETPID = 172,
    SIG_USR1 = 10, SIG_USR2 = 12, FLAG_SIGINFO = 4
};

/* Linux's struct sigaction on arm64 (the system call's). */
struct kernel_sigaction {
    void *handler;
    unsigned long flags;
    void *restorer;
    unsigned long mask;
};

long a64_syscall(long nr, long a, long b, long c, long d);
int main(void);

static volatile int plain_ran, info_ran;

__attribute__((noinline)) static int work(int x)
{
    __asm__ volatile("" ::: "memory");
    return x * 3 + 1;
}

static void plain(int sig)
{
    plain_ran += sig == SIG_USR1 && work(sig) > 0;
}

/* info->si_signo is the siginfo's first int; uc is not NULL. */
static void with_info(int sig, void *info, void *uc)
{
    info_ran += sig == SIG_USR2 && *(int *)info == sig && uc &&
                work(sig) > 0;
}

static int install(int sig, void *handler, unsigned long flags)
{
    struct kernel_sigaction act = {handler, flags, 0, 0};
    return (int)a64_syscall(NR_RT_SIGACTION, sig, (long)&act, 0, 8);
}

__attribute__((noinline)) static int send(int sig)
{
    long pid = a64_syscall(NR_GETPID, 0, 0, 0, 0);
    return (int)a64_syscall(NR_KILL, pid, sig, 0, 0) + work(sig);
}

__attribute__((noinline)) static int deep(int sig)
{
    return send(sig) + 1;
}

int main(void)
{
    if (install(SIG_USR1, (void *)plain, 0) ||
        install(SIG_USR2, (void *)with_info, FLAG_SIGINFO))
        return 2;
    int sum = deep(SIG_USR1) + deep(SIG_USR2);
    return plain_ran == 1 && info_ran == 1 && sum == 2 + 31 + 37 ? 0 : 1;
}
