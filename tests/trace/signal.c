/* signal.c — a signal delivered three calls deep, its handler calls a
 * function and leaves by siglongjmp; then a second signal whose handler
 * returns (through __restore_rt and sigreturn). Exits 0 when both ran. */
#include <setjmp.h>
#include <signal.h>
#include <string.h>

static sigjmp_buf env;
static volatile int jumped, returned;

__attribute__((noinline)) static int work(int x)
{
    __asm__ volatile("" ::: "memory");
    return x * 3 + 1;
}

static void jump_handler(int sig)
{
    (void)sig;
    jumped += work(1) > 0;
    siglongjmp(env, 1);
}

static void return_handler(int sig)
{
    (void)sig;
    returned += work(2) > 0;
}

__attribute__((noinline)) static int deep(int n, int sig)
{
    if (n == 0)
        return raise(sig);
    return deep(n - 1, sig) + work(n);
}

static void install(int sig, void (*handler)(int))
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    sigaction(sig, &action, NULL);
}

int main(void)
{
    install(SIGUSR1, jump_handler);
    install(SIGUSR2, return_handler);
    if (sigsetjmp(env, 1) == 0)
        deep(3, SIGUSR1);
    deep(2, SIGUSR2);
    return jumped == 1 && returned == 1 ? 0 : 1;
}
