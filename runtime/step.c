/* step.c — cursors: their start, one step up the stack, backtraces.
 *
 * A step has three phases: find the object of the lookup PC (PC-1 for a
 * return address, libunwind#54), unwind one frame with its eh_elf (or
 * the interpreter), then check that the caller's frame is a frame: its
 * PC defined (else the clean end of the stack), its stack pointer above
 * the callee's unless the callee is a signal frame (whose interrupted
 * context may be anywhere, e.g. on another stack). */
#define _GNU_SOURCE /* REG_RIP and the other gregs indices */
#include "internal.h"

#include <string.h>

_Static_assert(sizeof(struct rt_cursor) <= sizeof(struct cfisem_cursor),
               "struct cfisem_cursor too small for the cursor");
_Static_assert(_Alignof(struct rt_cursor) <= _Alignof(struct cfisem_cursor),
               "struct cfisem_cursor under-aligned");

#define RIP_BIT (1u << CFISEM_REG_RIP)
#define RSP_BIT (1u << CFISEM_REG_RSP)
#define ALL_REGS ((1u << CFISEM_NREGS) - 1)

static struct rt_cursor *private_of(struct cfisem_cursor *cursor)
{
    return (struct rt_cursor *)(void *)cursor->opaque;
}

static const struct rt_cursor *const_private_of(
    const struct cfisem_cursor *cursor)
{
    return (const struct rt_cursor *)(const void *)cursor->opaque;
}

const char *cfisem_strerror(int result)
{
    switch (result) {
    case 1: return "stepped";
    case CFISEM_OK: return "ok (or the end of the stack)";
    case CFISEM_E_NO_OBJECT: return "the PC lies in no loaded object";
    case CFISEM_E_NO_CFI: return "no FDE covers the PC";
    case CFISEM_E_MEMORY: return "a memory read failed";
    case CFISEM_E_BAD_FRAME: return "the CFI gave no valid caller frame";
    case CFISEM_E_ARGUMENT: return "bad argument";
    case CFISEM_E_NOT_READY: return "the object table is not ready";
    default: return "unknown result";
    }
}

static int start(struct rt_cursor *c, const uint64_t *regs, uint32_t known,
                 bool caller_frame)
{
    if ((known & (RIP_BIT | RSP_BIT)) != (RIP_BIT | RSP_BIT))
        return CFISEM_E_ARGUMENT;
    memset(c, 0, sizeof *c);
    for (unsigned r = 0; r < CFISEM_NREGS; r++)
        c->regs.value[r] = (known & (1u << r)) ? regs[r] : 0;
    c->regs.known = known & ALL_REGS;
    c->caller_frame = caller_frame;
    return CFISEM_OK;
}

int cfisem_init_local(struct cfisem_cursor *cursor,
                      const struct cfisem_context *context)
{
    if (!cursor || !context)
        return CFISEM_E_ARGUMENT;
    struct rt_cursor *c = private_of(cursor);
    int result = start(c, context->regs, context->known, true);
    if (result == CFISEM_OK)
        rt_stack_extent(c->regs.value[CFISEM_REG_RSP], &c->stack_lo,
                        &c->stack_hi);
    return result;
}

/* ucontext_t's gregs in DWARF order (x86-64 <sys/ucontext.h>). */
static const int greg_of_dwarf[CFISEM_NREGS] = {
    REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
    REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
    REG_RIP,
};

int cfisem_init_ucontext(struct cfisem_cursor *cursor,
                         const ucontext_t *context)
{
    if (!cursor || !context)
        return CFISEM_E_ARGUMENT;
    uint64_t regs[CFISEM_NREGS];
    for (unsigned r = 0; r < CFISEM_NREGS; r++)
        regs[r] = (uint64_t)context->uc_mcontext.gregs[greg_of_dwarf[r]];
    struct rt_cursor *c = private_of(cursor);
    int result = start(c, regs, ALL_REGS, false);
    if (result == CFISEM_OK)
        rt_stack_extent(c->regs.value[CFISEM_REG_RSP], &c->stack_lo,
                        &c->stack_hi);
    return result;
}

int cfisem_init_remote(struct cfisem_cursor *cursor,
                       const uint64_t regs[CFISEM_NREGS], uint32_t known,
                       int pc_is_exact, cfisem_read_fn *read, void *data)
{
    if (!cursor || !regs || !read)
        return CFISEM_E_ARGUMENT;
    struct rt_cursor *c = private_of(cursor);
    int result = start(c, regs, known, !pc_is_exact);
    c->read = read;
    c->read_data = data;
    return result;
}

/* Phase 2 with the eh_elf: frame->caller and frame->signal_frame. */
static int step_eh_elf(struct rt_cursor *c, uint64_t lookup_pc,
                       struct eh_elf_frame *frame)
{
    struct eh_elf_env env = {
        .read_memory = c->read ? c->read : rt_read_local,
        .read_register = NULL,
        .data = c->read ? c->read_data : (void *)c,
    };
    int error = c->object.unwind(lookup_pc - c->object.bias, &c->regs, &env,
                                 frame);
    if (error == EH_ELF_E_NO_FDE)
        return CFISEM_E_NO_CFI;
    if (error == EH_ELF_E_MEMORY)
        return CFISEM_E_MEMORY;
    if (error != EH_ELF_OK)
        return CFISEM_E_BAD_FRAME;
    return CFISEM_OK;
}

/* Phase 2: frame->caller and frame->signal_frame, by either engine. */
static int unwind_frame(struct rt_cursor *c, uint64_t lookup_pc,
                        struct eh_elf_frame *frame)
{
    if (!(lookup_pc >= c->object.start && lookup_pc < c->object.end) &&
        !rt_find_object(lookup_pc, &c->object))
        return CFISEM_E_NO_OBJECT;
    if (c->object.unwind && !c->interp_only) {
        c->frames_eh_elf++;
        return step_eh_elf(c, lookup_pc, frame);
    }
    c->frames_interp++;
    rt_count_interp();
    return rt_step_interp(c, lookup_pc, &frame->caller, &frame->signal_frame);
}

int cfisem_step(struct cfisem_cursor *cursor)
{
    struct rt_cursor *c = private_of(cursor);
    if (!(c->regs.known & RIP_BIT) || c->regs.value[CFISEM_REG_RIP] == 0)
        return 0;
    uint64_t pc = c->regs.value[CFISEM_REG_RIP];
    uint64_t lookup_pc = c->caller_frame ? pc - 1 : pc;
    struct eh_elf_frame frame;
    frame.signal_frame = 0;
    int result = unwind_frame(c, lookup_pc, &frame);
    const struct eh_elf_regs *caller = &frame.caller;
    bool signal_frame = frame.signal_frame != 0;
    if (result == CFISEM_OK && (caller->undefined & RIP_BIT))
        return 0; /* the clean end of the stack */
    if (result == CFISEM_OK &&
        (!(caller->known & RIP_BIT) || !(caller->known & RSP_BIT) ||
         (!signal_frame && caller->value[CFISEM_REG_RSP] <=
                               c->regs.value[CFISEM_REG_RSP])))
        result = CFISEM_E_BAD_FRAME;
    if (result != CFISEM_OK) {
        rt_count_failure();
        return result;
    }
    c->regs = *caller;
    c->caller_frame = !signal_frame;
    return 1;
}

int cfisem_get_reg(const struct cfisem_cursor *cursor, unsigned r,
                   uint64_t *value)
{
    const struct rt_cursor *c = const_private_of(cursor);
    if (r >= CFISEM_NREGS || !(c->regs.known & (1u << r)))
        return CFISEM_E_ARGUMENT;
    *value = c->regs.value[r];
    return CFISEM_OK;
}

int cfisem_set_engine(struct cfisem_cursor *cursor, enum cfisem_engine engine)
{
    if (!cursor ||
        (engine != CFISEM_ENGINE_AUTO && engine != CFISEM_ENGINE_INTERP))
        return CFISEM_E_ARGUMENT;
    private_of(cursor)->interp_only = engine == CFISEM_ENGINE_INTERP;
    return CFISEM_OK;
}

void cfisem_cursor_stats(const struct cfisem_cursor *cursor,
                         struct cfisem_cursor_stats *stats)
{
    const struct rt_cursor *c = const_private_of(cursor);
    stats->frames_eh_elf = c->frames_eh_elf;
    stats->frames_interp = c->frames_interp;
}

int cfisem_backtrace(void **pcs, int max)
{
    struct cfisem_context context;
    cfisem_getcontext(&context);
    struct cfisem_cursor cursor;
    if (!pcs || max <= 0 || cfisem_init_local(&cursor, &context) != CFISEM_OK)
        return 0;
    int n = 0;
    const struct rt_cursor *c = const_private_of(&cursor);
    while (n < max && cfisem_step(&cursor) == 1)
        pcs[n++] = (void *)(uintptr_t)c->regs.value[CFISEM_REG_RIP];
    return n;
}
