/* SPDX-License-Identifier: MIT */
/* libunwind 1.6.2: DW_OP_div of INT64_MIN by -1 kills the process
 * (SIGFPE) in unw_step.
 *
 *   cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so \
 *       libunwind-div-trap.S
 *   cc repro.c -o repro -lunwind && ./repro ./x.so
 *
 * f's row at 0x1000: rbx = val_expression(DW_OP_const8u
 * 0x8000000000000000; DW_OP_lit1; DW_OP_neg; DW_OP_div). DWARF 5
 * §2.5.1.4: div is signed division on the generic type; the only
 * quotient that fits is INT64_MIN (wrapping, as the other operations
 * do). dwarf/Gexpr.c computes sword (tmp2) / sword (tmp1), a C signed
 * overflow, and x86-64's idiv traps. The step runs in a child under a
 * 5 s alarm; the parent reports how it ended. Exit 1 while the bug is
 * present. */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PC 0x1000
#define EXPECTED "unw_step > 0, caller's rbx = 0x8000000000000000"

static uint64_t stack[8] = {0x4000, 0x1111, 0x2222, 0x3333};

static int step_once(uintptr_t base)
{
    unw_context_t uc;
    unw_getcontext(&uc);
    greg_t *g = uc.uc_mcontext.gregs;
    g[REG_RIP] = base + PC;
    g[REG_RSP] = (uintptr_t)stack;
    unw_cursor_t c;
    unw_init_local2(&c, &uc, UNW_INIT_SIGNAL_FRAME); /* look up rip itself */
    int step = unw_step(&c);
    unw_word_t rbx = 0;
    unw_get_reg(&c, UNW_X86_64_RBX, &rbx);
    printf("unw_step: %d, caller's rbx = 0x%lx\n", step, (unsigned long)rbx);
    return step > 0 && rbx == 0x8000000000000000 ? 0 : 1;
}

int main(int argc, char **argv)
{
    void *h = dlopen(argc > 1 ? argv[1] : "./x.so", RTLD_NOW);
    struct link_map *map;
    if (!h || dlinfo(h, RTLD_DI_LINKMAP, &map) != 0) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    printf("DWARF: %s\n", EXPECTED);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(5);
        int r = step_once(map->l_addr);
        fflush(stdout);
        _exit(r);
    }
    int status;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        printf("BUG: unw_step %s (signal %d, %s)\n",
               sig == SIGALRM ? "did not return within 5 s"
                              : "killed the process",
               sig, strsignal(sig));
        return 1;
    }
    printf("%s\n", WEXITSTATUS(status) ? "BUG: not what DWARF says"
                                       : "as DWARF says");
    return WEXITSTATUS(status) != 0;
}
