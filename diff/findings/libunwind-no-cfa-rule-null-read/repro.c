/* SPDX-License-Identifier: MIT */
/* libunwind 1.6.2: a row with no CFA rule makes unw_step read a DWARF
 * expression at address 0 (SIGSEGV in a local unwinder).
 *
 *   cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so \
 *       libunwind-no-cfa-rule-null-read.S
 *   cc repro.c -o repro -lunwind && ./repro ./x.so
 *
 * f's CIE defines no CFA rule (`.cfi_startproc simple`), only rip at
 * CFA-8. DWARF 5 §6.4.1: every row has a CFA rule; without one the
 * caller's frame cannot be computed, and unw_step should fail with an
 * error. dwarf/Gparser.c setup_fde starts every column, the CFA's
 * included, at DWARF_WHERE_SAME with value 0; apply_reg_state takes a
 * CFA column that is not DWARF_WHERE_REG for DWARF_WHERE_EXPR (the
 * assert is compiled out) and evaluates the "expression" at address
 * val = 0: its length is read from address 0. The step runs in a child
 * under a 5 s alarm; the parent reports how it ended. Exit 1 while the
 * bug is present. */
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
#define EXPECTED "unw_step < 0 (no CFA rule: no caller frame)"

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
    printf("unw_step: %d (%s)\n", step, step < 0 ? unw_strerror(step) : "");
    return step < 0 ? 0 : 1;
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
