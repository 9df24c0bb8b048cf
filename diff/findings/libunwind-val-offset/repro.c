/* SPDX-License-Identifier: MIT */
/* libunwind 1.6.2: DW_CFA_val_offset is dropped; its operands run as
 * instructions.
 *
 *   cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so \
 *       libunwind-val-offset.S
 *   cc repro.c -o repro -lunwind && ./repro ./x.so
 *
 * f's FDE holds 14 0c 04 at 0x1001: DW_CFA_val_offset r12, 4 (x -8 =
 * -32). DWARF 5 §6.4.2.3: the caller's r12 is the value CFA-32, the CFA
 * stays rsp+8. run_cfi_program (src/dwarf/Gparser.c) has no case for
 * 0x14 and no default: it drops the byte and runs 0c 04 .. as
 * DW_CFA_def_cfa rsi, 0 (the next byte is padding). The program loads
 * x.so, builds a context whose rip is f+1 over a small stack (rsi
 * pointing into it, so the wrong CFA reads), steps once and compares.
 * Exit 1 while the bug is present. */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>

static uint64_t stack[8] = {0x4000, 0x1111, 0x2222, 0x3333};

/* A value as stack+N when it points near the stack, else in hex. */
static const char *where(unw_word_t v, char *buf)
{
    long d = (long)(v - (uintptr_t)stack);
    if (d > -4096 && d < 4096)
        sprintf(buf, "stack%+ld", d);
    else
        sprintf(buf, "0x%lx", (unsigned long)v);
    return buf;
}

int main(int argc, char **argv)
{
    void *h = dlopen(argc > 1 ? argv[1] : "./x.so", RTLD_NOW);
    struct link_map *map;
    if (!h || dlinfo(h, RTLD_DI_LINKMAP, &map) != 0) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    unw_context_t uc;
    unw_getcontext(&uc);
    greg_t *g = uc.uc_mcontext.gregs;
    g[REG_RIP] = map->l_addr + 0x1001;
    g[REG_RSP] = (uintptr_t)stack;
    g[REG_RSI] = (uintptr_t)&stack[4]; /* readable, to show the result */
    g[REG_R12] = 0x1212;
    unw_cursor_t c;
    unw_init_local2(&c, &uc, UNW_INIT_SIGNAL_FRAME); /* look up rip itself */
    int step = unw_step(&c);
    unw_word_t r12 = 0, sp = 0, ip = 0;
    unw_get_reg(&c, UNW_X86_64_R12, &r12);
    unw_get_reg(&c, UNW_REG_SP, &sp);
    unw_get_reg(&c, UNW_REG_IP, &ip);
    printf("unw_step: %d (stack = the 64 bytes at rsp)\n", step);
    char b[32];
    printf("caller's rsp: %s, DWARF: stack+8 (CFA = rsp+8)\n", where(sp, b));
    printf("caller's r12: %s, DWARF: stack-24 (the value CFA-32)\n",
           where(r12, b));
    printf("caller's rip: 0x%lx, DWARF: 0x4000 ([CFA-8])\n",
           (unsigned long)ip);
    uintptr_t cfa = (uintptr_t)stack + 8;
    int ok = step > 0 && sp == cfa && r12 == cfa - 32 && ip == 0x4000;
    printf("%s\n", ok ? "as DWARF says" : "BUG: not what DWARF says");
    return !ok;
}
