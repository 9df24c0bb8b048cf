/* SPDX-License-Identifier: MIT */
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

/* ------------------------------------------------------------------ */
/* Walks                                                                 */
/* ------------------------------------------------------------------ */

static void walk_start(struct rt_walk *w, cfisem_read_fn *read, void *data)
{
    memset(w, 0, sizeof *w);
    w->env.read_memory = read ? read : rt_read_local;
    w->env.data = data;
    w->remote = read != NULL;
    w->row_cache = 1;
}

static void walk_start_local(struct rt_walk *w, uint64_t sp)
{
    walk_start(w, NULL, NULL);
    rt_stack_extent(sp, &w->stack_lo, &w->stack_hi);
    rt_direct_window(w);
}

static bool inside(const struct rt_object *object, uint64_t pc)
{
    return pc >= object->start && pc < object->end;
}

/* The walk's object becomes the one holding pc: the one before it, or
 * one found in the table, which takes the place of the one before. */
static bool switch_object(struct rt_walk *w, uint64_t pc)
{
    struct rt_object *other = &w->objects[(w->current & 1) ^ 1];
    if (!inside(other, pc) && !rt_find_object(pc, other))
        return false;
    w->current ^= 1;
    return true;
}

static int eh_elf_result(int error)
{
    if (error == EH_ELF_OK)
        return CFISEM_OK;
    if (error == EH_ELF_E_NO_FDE)
        return CFISEM_E_NO_CFI;
    if (error == EH_ELF_E_MEMORY)
        return CFISEM_E_MEMORY;
    return CFISEM_E_BAD_FRAME;
}

/* Phase 2 off the common path: the lookup PC in another object than the
 * last step's, or no eh_elf (the interpreter). */
static int unwind_other(struct rt_walk *w, const struct eh_elf_regs *callee,
                        bool caller_frame, uint64_t lookup_pc,
                        struct eh_elf_frame *frame)
{
    if (!inside(rt_walk_object(w), lookup_pc) &&
        !switch_object(w, lookup_pc))
        return CFISEM_E_NO_OBJECT;
    const struct rt_object *object = rt_walk_object(w);
    if (object->unwind && !w->interp_only) {
        w->frames_eh_elf++;
        return eh_elf_result(object->unwind(lookup_pc - object->bias, callee,
                                            &w->env, frame));
    }
    w->frames_interp++;
    return rt_step_interp(w, callee, caller_frame, lookup_pc, frame);
}

/* Phase 3 off the common path: the end of the stack, or a failure. */
static int end_of_step(int result, const struct eh_elf_frame *frame)
{
    if (result == CFISEM_OK && (frame->caller.undefined & RIP_BIT) &&
        !(frame->caller.known & RIP_BIT))
        return 0; /* the clean end of the stack */
    rt_count_failure();
    return result == CFISEM_OK ? CFISEM_E_BAD_FRAME : result;
}

/* Phase 3: a frame further up, its PC and stack pointer known (a known
 * register is never undefined), the stack pointer above the callee's
 * unless the callee is a signal frame (its interrupted context may be
 * anywhere); 1, else end_of_step's. Only `known` is read here: the
 * eh_elf has just stored it and `undefined` apart, and one load of both
 * would wait for the two stores to reach the cache. */
static inline int step_result(int result, const struct eh_elf_regs *callee,
                              const struct eh_elf_frame *frame)
{
    const struct eh_elf_regs *caller = &frame->caller;
    if (result == CFISEM_OK &&
        (caller->known & (RIP_BIT | RSP_BIT)) == (RIP_BIT | RSP_BIT) &&
        (frame->signal_frame ||
         caller->value[CFISEM_REG_RSP] > callee->value[CFISEM_REG_RSP]))
        return 1;
    return end_of_step(result, frame);
}

/* One step: the caller of the frame `callee` (whose PC is a return
 * address when caller_frame) into frame->caller. 1: a frame; 0: the end
 * of the stack; negative: an error. The common path (the same object as
 * the last step's, with an eh_elf) is written to be inlined in walk_up
 * and cfisem_step; the rest is in the two functions above. */
static inline int walk_step(struct rt_walk *w,
                            const struct eh_elf_regs *callee,
                            bool caller_frame, struct eh_elf_frame *frame)
{
    if (!(callee->known & RIP_BIT) || callee->value[CFISEM_REG_RIP] == 0)
        return 0;
    uint64_t pc = callee->value[CFISEM_REG_RIP];
    /* 1. The object of the lookup PC: PC-1 for a return address, as a
     * call may be the last instruction of its function (libunwind#54). */
    uint64_t lookup_pc = cfi_lookup_pc(pc, caller_frame);
    /* 2. One frame, by the object's eh_elf or the interpreter. */
    int result;
    const struct rt_object *object = rt_walk_object(w);
    if (inside(object, lookup_pc) && object->unwind && !w->interp_only) {
        w->frames_eh_elf++;
        result = eh_elf_result(object->unwind(lookup_pc - object->bias,
                                              callee, &w->env, frame));
    } else {
        result = unwind_other(w, callee, caller_frame, lookup_pc, frame);
    }
    /* 3. */
    return step_result(result, callee, frame);
}

/* The interpreter's frames go to cfisem_stats in batches: an atomic add
 * per frame would cost as much as a tenth of the frame. A walk adds
 * them when it ends (a step gives 0 or an error, cfisem_backtrace
 * returns) and every INTERP_BATCH frames meanwhile. */
enum { INTERP_BATCH = 32 };

static void count_interp(struct rt_walk *w)
{
    if (w->frames_interp != w->interp_counted)
        rt_count_interp(w->frames_interp - w->interp_counted);
    w->interp_counted = w->frames_interp;
}

/* The object a backtrace's common step calls, kept in locals: the walk
 * escapes to the eh_elfs (env.data), so its fields would be loaded
 * again after every call. span 0: none (the walk's current object has
 * no eh_elf, or the walk is the interpreter's): every step goes the
 * long way. */
struct fast_object {
    uint64_t start;
    uint64_t span;
    uint64_t bias;
    eh_elf_unwind_fn *unwind;
};

static void fast_object_of(const struct rt_walk *w, struct fast_object *f)
{
    const struct rt_object *object = rt_walk_object(w);
    f->start = object->start;
    f->bias = object->bias;
    f->unwind = object->unwind;
    f->span = object->unwind && !w->interp_only ? object->end - object->start
                                                 : 0;
}

/* One step of a backtrace: walk_step's, the current object's eh_elf
 * called from f (a frame no cursor counts). */
static inline int backtrace_step(struct rt_walk *w, struct fast_object *f,
                                 const struct eh_elf_regs *callee,
                                 bool caller_frame, uint64_t pc,
                                 struct eh_elf_frame *frame)
{
    uint64_t lookup_pc = cfi_lookup_pc(pc, caller_frame);
    int result;
    if (lookup_pc - f->start < f->span) {
        result = eh_elf_result(
            f->unwind(lookup_pc - f->bias, callee, &w->env, frame));
    } else {
        result = unwind_other(w, callee, caller_frame, lookup_pc, frame);
        fast_object_of(w, f);
    }
    return step_result(result, callee, frame);
}

/* Steps up a local walk from the frame `callee` (whose PC is a return
 * address when caller_frame) at most max times, the frames taking turns
 * in frames[0] and frames[1], so that no step copies a register file;
 * each caller's PC goes to pcs[]. Returns the number of steps made. A
 * step sets the frame's signal_frame (the eh_elf, or the interpreter)
 * when it succeeds, and the caller's PC is known then. */
static int walk_up(struct rt_walk *w, const struct eh_elf_regs *callee,
                   bool caller_frame, struct eh_elf_frame frames[2],
                   void **pcs, int max)
{
    w->env.data = w;
    struct fast_object f;
    fast_object_of(w, &f);
    struct eh_elf_frame *next = &frames[0], *other = &frames[1];
    const struct eh_elf_regs *regs = callee;
    if (!(regs->known & RIP_BIT))
        return 0;
    uint64_t pc = regs->value[CFISEM_REG_RIP];
    int n = 0;
    while (n < max && pc != 0 &&
           backtrace_step(w, &f, regs, caller_frame, pc, next) == 1) {
        caller_frame = !next->signal_frame;
        regs = &next->caller;
        pc = regs->value[CFISEM_REG_RIP];
        pcs[n++] = (void *)(uintptr_t)pc;
        struct eh_elf_frame *done = next;
        next = other;
        other = done;
    }
    return n;
}

/* ------------------------------------------------------------------ */
/* Cursors                                                               */
/* ------------------------------------------------------------------ */

static int start(struct rt_cursor *c, const uint64_t *regs, uint32_t known,
                 bool caller_frame, cfisem_read_fn *read, void *data)
{
    if ((known & (RIP_BIT | RSP_BIT)) != (RIP_BIT | RSP_BIT))
        return CFISEM_E_ARGUMENT;
    rt_copy_values(c->regs.value, regs, known);
    c->regs.known = known & ALL_REGS;
    c->regs.undefined = 0;
    c->caller_frame = caller_frame;
    if (read)
        walk_start(&c->walk, read, data);
    else
        walk_start_local(&c->walk, c->regs.value[CFISEM_REG_RSP]);
    return CFISEM_OK;
}

int cfisem_init_local(struct cfisem_cursor *cursor,
                      const struct cfisem_context *context)
{
    if (!cursor || !context)
        return CFISEM_E_ARGUMENT;
    return start(private_of(cursor), context->regs, context->known, true,
                 NULL, NULL);
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
    return start(private_of(cursor), regs, ALL_REGS, false, NULL, NULL);
}

int cfisem_init_remote(struct cfisem_cursor *cursor,
                       const uint64_t regs[CFISEM_NREGS], uint32_t known,
                       int pc_is_exact, cfisem_read_fn *read, void *data)
{
    if (!cursor || !regs || !read)
        return CFISEM_E_ARGUMENT;
    return start(private_of(cursor), regs, known, !pc_is_exact, read, data);
}

int cfisem_step(struct cfisem_cursor *cursor)
{
    struct rt_cursor *c = private_of(cursor);
    struct rt_walk *w = &c->walk;
    if (!w->remote)
        w->env.data = w; /* the cursor may have been copied */
    struct eh_elf_frame frame;
    int result = walk_step(w, &c->regs, c->caller_frame != 0, &frame);
    if (result == 1) {
        c->regs = frame.caller;
        c->caller_frame = !frame.signal_frame;
    }
    if (w->frames_interp - w->interp_counted >= INTERP_BATCH || result != 1)
        count_interp(w);
    return result;
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
    if (!cursor || (engine != CFISEM_ENGINE_AUTO &&
                    engine != CFISEM_ENGINE_INTERP &&
                    engine != CFISEM_ENGINE_INTERP_NO_CACHE))
        return CFISEM_E_ARGUMENT;
    struct rt_walk *w = &private_of(cursor)->walk;
    w->interp_only = engine != CFISEM_ENGINE_AUTO;
    w->row_cache = engine != CFISEM_ENGINE_INTERP_NO_CACHE;
    return CFISEM_OK;
}

void cfisem_cursor_stats(const struct cfisem_cursor *cursor,
                         struct cfisem_cursor_stats *stats)
{
    const struct rt_cursor *c = const_private_of(cursor);
    stats->frames_eh_elf = c->walk.frames_eh_elf;
    stats->frames_interp = c->walk.frames_interp;
}

/* ------------------------------------------------------------------ */
/* Backtraces                                                            */
/* ------------------------------------------------------------------ */

/* The cursor's loop without a cursor. */
int cfisem_backtrace(void **pcs, int max)
{
    struct cfisem_context context;
    cfisem_getcontext(&context);
    if (!pcs || max <= 0)
        return 0;
    struct eh_elf_regs regs;
    /* (the values of the registers it does not set are unspecified) */
    memcpy(regs.value, context.regs, sizeof regs.value);
    regs.known = context.known & ALL_REGS;
    regs.undefined = 0;
    struct rt_walk walk;
    walk_start_local(&walk, context.regs[CFISEM_REG_RSP]);
    struct eh_elf_frame frames[2];
    int n = walk_up(&walk, &regs, true, frames, pcs, max);
    count_interp(&walk);
    return n;
}
