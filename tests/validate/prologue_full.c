/* prologue_full.c — an eh_elf of cfisem's full ABI (compile/eh_elf.h)
 * written by hand for corpus/cases/prologue.so, for the tests of
 * `cfisem validate` and `cfisem diff --eh-elf` (tests/check_diff.c).
 * -DWRONG puts the CFA of [0x1004,0x1009) at rbp+24 instead of rbp+16;
 * -DABORT calls abort() at [0x1009,0x100f); -DSEGV writes through a null
 * pointer there; -DUNSUPPORTED answers EH_ELF_E_UNSUPPORTED at
 * [0x1004,0x1009) (a generator's declared limitation).
 * Built with -I for the source tree (it includes compile/eh_elf.h), and
 * -DOBJECT_ID=... the stamp of prologue.so (tests/support.h
 * test_object_id_flag). */
#include "compile/eh_elf.h"

#include <stdlib.h>

const char eh_elf_ident[] = EH_ELF_IDENT_FULL;
const uint32_t eh_elf_abi_version = EH_ELF_ABI_VERSION;
const struct eh_elf_object_id eh_elf_object_id = OBJECT_ID;

#ifdef WRONG
#define F1_BODY_CFA 24
#else
#define F1_BODY_CFA 16
#endif

/* One row of prologue.so: CFA = reg + offset; rbx, rbp, r14, r15 saved at
 * CFA + their offset when not 0; rip at CFA - 8. */
struct row {
    uint64_t begin, end;
    unsigned cfa_reg;
    int64_t cfa_offset;
    int64_t rbx, rbp, r14, r15;
};

static const struct row rows[] = {
    {0x1000, 0x1001, 7, 8, 0, 0, 0, 0},
    {0x1001, 0x1004, 7, 16, 0, -16, 0, 0},
    {0x1004, 0x1009, 6, F1_BODY_CFA, 0, -16, 0, 0},
    {0x1009, 0x100f, 6, 16, -24, -16, 0, 0},
    {0x100f, 0x1010, 6, 16, 0, -16, 0, 0},
    {0x1010, 0x1011, 7, 8, 0, 0, 0, 0},
    {0x1011, 0x1013, 7, 8, 0, 0, 0, 0},
    {0x1013, 0x1015, 7, 16, 0, 0, 0, -16},
    {0x1015, 0x1016, 7, 24, 0, 0, -24, -16},
    {0x1016, 0x101a, 7, 32, -32, 0, -24, -16},
    {0x101a, 0x101f, 7, 96, -32, 0, -24, -16},
    {0x101f, 0x1020, 7, 32, -32, 0, -24, -16},
    {0x1020, 0x1022, 7, 24, -32, 0, -24, -16},
    {0x1022, 0x1024, 7, 16, -32, 0, -24, -16},
    {0x1024, 0x1025, 7, 8, -32, 0, -24, -16},
};

static int fail(struct eh_elf_frame *frame, uint32_t error, int reg)
{
    frame->error = error;
    frame->error_reg = reg;
    frame->error_offset = UINT64_MAX;
    return (int)error;
}

/* The callee's register as it is (value, undefined or unknown). */
static void keep(struct eh_elf_regs *caller, const struct eh_elf_regs *callee,
                 unsigned reg)
{
    caller->known |= callee->known & (1u << reg);
    caller->undefined |= callee->undefined & (1u << reg);
    caller->value[reg] = callee->value[reg];
}

int eh_elf_unwind(uint64_t pc, const struct eh_elf_regs *callee,
                  const struct eh_elf_env *env, struct eh_elf_frame *frame)
{
    const struct row *row = 0;
    for (unsigned i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (pc >= rows[i].begin && pc < rows[i].end)
            row = &rows[i];
    frame->signal_frame = 0;
    frame->reserved = 0;
    if (!row)
        return fail(frame, EH_ELF_E_NO_FDE, -1);
#ifdef ABORT
    if (row->begin == 0x1009)
        abort();
#endif
#ifdef SEGV
    if (row->begin == 0x1009)
        *(volatile int *)(uintptr_t)frame->reserved = 0;
#endif
#ifdef UNSUPPORTED
    if (row->begin == 0x1004)
        return fail(frame, EH_ELF_E_UNSUPPORTED, -1);
#endif
    if (!(callee->known & (1u << row->cfa_reg)))
        return fail(frame, EH_ELF_E_REG_UNKNOWN, (int)row->cfa_reg);
    uint64_t cfa = callee->value[row->cfa_reg] + (uint64_t)row->cfa_offset;
    struct eh_elf_regs caller = {{0}, 0, 0};
    /* Registers in increasing number: rbx 3, rbp 6, r14, r15, rip 16. */
    const struct { unsigned reg; int64_t at; } saved[] = {
        {3, row->rbx}, {6, row->rbp}, {14, row->r14}, {15, row->r15},
        {16, -8}};
    for (unsigned reg = 0; reg < EH_ELF_NREGS; reg++) {
        int64_t at = 0;
        for (unsigned i = 0; i < 5; i++)
            if (saved[i].reg == reg)
                at = saved[i].at;
        if (at) {
            uint64_t value;
            if (env->read_memory(env->data, cfa + (uint64_t)at, 8, &value))
                return fail(frame, EH_ELF_E_MEMORY, -1);
            caller.value[reg] = value;
            caller.known |= 1u << reg;
        } else if (reg == 7) {
            caller.value[reg] = cfa;
            caller.known |= 1u << reg;
        } else if (reg == 3 || reg == 6 || (reg >= 12 && reg <= 15)) {
            keep(&caller, callee, reg);
        } else {
            caller.undefined |= 1u << reg;
        }
    }
    frame->error = EH_ELF_OK;
    frame->error_reg = -1;
    frame->error_offset = UINT64_MAX;
    frame->cfa = cfa;
    frame->caller = caller;
    return EH_ELF_OK;
}
