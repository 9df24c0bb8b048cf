/* SPDX-License-Identifier: MIT */
/* libunwind 1.6.2: a DWARF expression that reads a register libunwind
 * does not hold (DW_OP_breg26: xmm9) reads rax instead.
 *
 *   cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so \
 *       libunwind-expression-register-rax.S
 *   cc repro.c -o repro -lunwind && ./repro ./x.so
 *
 * f's row at 0x1000: rbx = val_expression(DW_OP_breg26 0). DWARF 5
 * §2.5.1.2: breg26 pushes the contents of register 26 plus the offset;
 * libunwind holds registers 0..16 only, so it cannot give that value and
 * should fail. dwarf/Gexpr.c reads the register through
 * dwarf_to_unw_regnum, which maps every number at or above
 * DWARF_REGNUM_MAP_LENGTH (17) to 0: rax. The program sets rax to a
 * marker and checks whether the caller's rbx is that marker. Exit 1
 * while the bug is present. */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>

#define MARKER 0x5a5a0000cafe0001ull

static uint64_t stack[8] = {0x4000, 0x1111, 0x2222, 0x3333};

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
    g[REG_RAX] = (greg_t)MARKER;
    g[REG_RBX] = 0x3b3b;
    unw_cursor_t c;
    unw_init_local2(&c, &uc, UNW_INIT_SIGNAL_FRAME); /* look up rip itself */
    int step = unw_step(&c);
    unw_word_t rbx = 0;
    int got = step > 0 ? unw_get_reg(&c, UNW_X86_64_RBX, &rbx) : step;
    printf("DWARF: the caller's rbx is xmm9's value (register 26), which "
           "libunwind does not hold: an error\n");
    printf("unw_step: %d; unw_get_reg(rbx): %d, rbx = 0x%016lx; callee's "
           "rax = 0x%016llx\n", step, got, (unsigned long)rbx, MARKER);
    int bug = step > 0 && got == 0 && rbx == MARKER;
    printf("%s\n", bug ? "BUG: rbx is rax's value" : "as DWARF says");
    return bug;
}
