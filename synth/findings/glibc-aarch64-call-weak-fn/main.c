/* main.c: any program linked with glibc's crt files holds call_weak_fn
 * (crti.o), which _init calls. This one asks libgcc's unwinder
 * (_Unwind_Find_FDE, what _Unwind_Backtrace and C++ exceptions use) for
 * the FDE at _init's call and at call_weak_fn's first instruction. Exit
 * status 1 when call_weak_fn has no FDE. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct dwarf_eh_bases {
    void *tbase;
    void *dbase;
    void *func;
};
extern const void *_Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases);
extern void _init(void);

static int has_fde(const uint8_t *pc)
{
    struct dwarf_eh_bases bases;
    return _Unwind_Find_FDE((void *)pc, &bases) != NULL;
}

int main(void)
{
    const uint8_t *init = (const uint8_t *)_init;
    for (int i = 0; i < 8; i++) {
        uint32_t insn;
        memcpy(&insn, init + 4 * i, sizeof insn);
        if (insn >> 26 != 0x25) /* bl */
            continue;
        int32_t words = (int32_t)(insn << 6) >> 6;
        const uint8_t *callee = init + 4 * i + (intptr_t)words * 4;
        printf("_init+%d (bl call_weak_fn) %p: %s\n", 4 * i,
               (void *)(init + 4 * i),
               has_fde(init + 4 * i) ? "an FDE" : "no FDE");
        printf("call_weak_fn %p: %s\n", (void *)callee,
               has_fde(callee) ? "an FDE" : "no FDE");
        return has_fde(callee) ? 0 : 1;
    }
    printf("_init calls nothing in its first 8 instructions\n");
    return 2;
}
