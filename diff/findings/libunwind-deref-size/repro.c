/* SPDX-License-Identifier: MIT */
/* libunwind 1.6.2: DW_OP_deref_size 5 (6, 7) keeps the wrong bytes.
 *
 *   cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so \
 *       libunwind-deref-size.S
 *   cc repro.c -o repro -lunwind && ./repro ./x.so
 *
 * f's row at 0x1000: rbx = val_expression(DW_OP_breg7 16;
 * DW_OP_deref_size 5). DWARF 5 §2.5.1.3: deref_size n reads n bytes,
 * zero-extended: the 5 low bytes of the word at rsp+16. dwarf/Gexpr.c
 * reads 8 bytes and masks them with tmp2 &= (~0) << (8 * operand1),
 * which clears the 5 low bytes and keeps the 3 high ones. The program
 * loads x.so, builds a context whose rip is f over a small stack, steps
 * once and compares. Exit 1 while the bug is present. */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>

static uint64_t stack[8] = {0x4000, 0x1111, 0x0755f79f0f5d165e, 0x3333};

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
    g[REG_RIP] = map->l_addr + 0x1000;
    g[REG_RSP] = (uintptr_t)stack;
    g[REG_RBX] = 0x3b3b;
    unw_cursor_t c;
    unw_init_local2(&c, &uc, UNW_INIT_SIGNAL_FRAME); /* look up rip itself */
    int step = unw_step(&c);
    unw_word_t rbx = 0;
    unw_get_reg(&c, UNW_X86_64_RBX, &rbx);
    uint64_t want = stack[2] & 0xffffffffff;
    printf("unw_step: %d; the word at rsp+16: 0x%016lx\n", step,
           (unsigned long)stack[2]);
    printf("caller's rbx: 0x%016lx, DWARF: 0x%016lx (its 5 low bytes)\n",
           (unsigned long)rbx, (unsigned long)want);
    int ok = step > 0 && rbx == want;
    printf("%s\n", ok ? "as DWARF says" : "BUG: not what DWARF says");
    return !ok;
}
