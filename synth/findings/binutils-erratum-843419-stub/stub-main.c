/* stub-main.c: asks libgcc's unwinder (_Unwind_Find_FDE, what
 * _Unwind_Backtrace and C++ exceptions use) for the FDE at f's branch
 * to its erratum 843419 stub and at the stub itself. Exit status 1 when
 * the stub has no FDE. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct dwarf_eh_bases {
    void *tbase;
    void *dbase;
    void *func;
};
extern const void *_Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases);
extern long f(long x0, long x1, long *x2);

static const char *fde_at(const uint8_t *pc)
{
    struct dwarf_eh_bases bases;
    return _Unwind_Find_FDE((void *)pc, &bases) ? "an FDE" : "no FDE";
}

int main(void)
{
    long slot = 0;
    long value = f(0, 0, &slot);
    const uint8_t *branch = (const uint8_t *)f + 8;
    uint32_t insn;
    memcpy(&insn, branch, sizeof insn);
    if (insn >> 26 != 0x05) {
        printf("f+8 is not a branch: ld made no stub\n");
        return 2;
    }
    int32_t words = (int32_t)(insn << 6) >> 6;
    const uint8_t *stub = branch + (intptr_t)words * 4;
    printf("f returned %ld (the load the stub made)\n", value);
    printf("f+8   %p (b to the stub): %s\n", (void *)branch, fde_at(branch));
    printf("stub  %p: %s\n", (void *)stub, fde_at(stub));
    return strcmp(fde_at(stub), "an FDE") == 0 ? 0 : 1;
}
