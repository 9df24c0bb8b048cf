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
#include <sys/auxv.h>

_Static_assert(sizeof(struct rt_cursor) <= sizeof(struct cfisem_cursor),
               "struct cfisem_cursor too small for the cursor");
_Static_assert(_Alignof(struct rt_cursor) <= _Alignof(struct cfisem_cursor),
               "struct cfisem_cursor under-aligned");

#define RIP_BIT RT_BIT(RT_PC)
#define RSP_BIT RT_BIT(RT_SP)
#define ALL_REGS RT_ALL_REGS

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
    /* (a remote walk has no window; the frame cache's rows are
     * x86-64's; an assignment, which the compiler writes as stores,
     * where memset's became a string instruction) */
    *w = (struct rt_walk){
        .env = {.read_memory = read ? read : rt_read_local, .data = data},
        .remote = read != NULL,
        .row_cache = 1,
        .frame_cache = read == NULL && RT_FRAME_CACHE,
    };
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
    unsigned k = (w->current & 1) ^ 1;
    struct rt_object *other = &w->objects[k];
    if (!inside(other, pc) && !rt_find_object(pc, other, &w->entries[k]))
        return false;
    w->current ^= 1;
    return true;
}

bool rt_walk_validate(struct rt_walk *w, uint64_t pc, uint16_t entry)
{
    unsigned k = (w->current & 1) ^ 1;
    if (!rt_entry_object(entry, pc, &w->objects[k]))
        return false;
    w->entries[k] = entry;
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

/* AArch64: the frame at the sigreturn trampoline, which has no CFI
 * that gives the interrupted registers (sigframe.c): when the PC is in
 * no object, or in the vDSO. */
static bool at_sigreturn(struct rt_walk *w, const struct eh_elf_regs *callee,
                         bool in_object, struct eh_elf_frame *frame)
{
#if defined(__aarch64__)
    uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
    if (in_object && (vdso == 0 || rt_walk_object(w)->start != vdso))
        return false;
    return rt_sigreturn_frame(w, callee, frame);
#else
    (void)w, (void)callee, (void)in_object, (void)frame;
    return false;
#endif
}

/* Phase 2 off the common path: the lookup PC in another object than the
 * last step's, or no eh_elf (the interpreter). */
static int unwind_other(struct rt_walk *w, const struct eh_elf_regs *callee,
                        bool caller_frame, uint64_t lookup_pc,
                        struct eh_elf_frame *frame)
{
    if (!inside(rt_walk_object(w), lookup_pc) &&
        !switch_object(w, lookup_pc))
        return at_sigreturn(w, callee, false, frame) ? CFISEM_OK
                                                     : CFISEM_E_NO_OBJECT;
    const struct rt_object *object = rt_walk_object(w);
    if (!object->unwind && at_sigreturn(w, callee, true, frame))
        return CFISEM_OK;
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

/* The caller's stack pointer is above the callee's. On AArch64, where
 * a call pushes nothing, a frame whose PC is exact (interrupted, not at
 * a call) may be a leaf function's without a frame of its own, whose
 * caller's stack pointer is its own: equal is a frame there. (A frame
 * at a call has saved x30 on the stack below its CFA.) */
static inline bool sp_grows(uint64_t caller_sp, uint64_t callee_sp,
                            bool caller_frame)
{
#if defined(__aarch64__)
    return caller_sp > callee_sp || (!caller_frame && caller_sp == callee_sp);
#else
    (void)caller_frame;
    return caller_sp > callee_sp;
#endif
}

/* Phase 3: a frame further up, its PC and stack pointer known (a known
 * register is never undefined), the stack pointer above the callee's
 * (sp_grows) unless the callee is a signal frame (its interrupted
 * context may be anywhere); 1, else end_of_step's. Only `known` is read
 * here: the eh_elf has just stored it and `undefined` apart, and one
 * load of both would wait for the two stores to reach the cache. */
static inline int step_result(int result, const struct eh_elf_regs *callee,
                              bool caller_frame,
                              const struct eh_elf_frame *frame)
{
    const struct eh_elf_regs *caller = &frame->caller;
    if (result == CFISEM_OK &&
        (caller->known & (RIP_BIT | RSP_BIT)) == (RIP_BIT | RSP_BIT) &&
        (frame->signal_frame ||
         sp_grows(caller->value[RT_SP], callee->value[RT_SP], caller_frame)))
        return 1;
    return end_of_step(result, frame);
}

/* The frame cache's part of a step at lookup_pc: true when a row kept
 * for it was replayed on *regs, in place (the callee's registers become
 * the caller's, not a signal frame). *learn is set when no row is kept
 * for it: the step then learns one from the eh_elf's frame (learn_row).
 * A row of an object that may be unloaded is replayed only when the
 * walk found its entry valid (here, by rt_find_object, when it is not
 * one of the walk's two objects). */
static inline bool replay_row(struct rt_walk *w, struct eh_elf_regs *regs,
                              uint64_t lookup_pc, bool *learn)
{
    uint16_t entry;
    uint32_t valid = w->entries[0] | (uint32_t)w->entries[1] << 16;
    int done = rt_frame_replay(lookup_pc, regs, &w->env, valid, &entry);
    if (done == RT_REPLAYED)
        return true;
    *learn = done == RT_NO_ROW;
    if (done != RT_VALIDATE || !switch_object(w, lookup_pc) ||
        entry != w->entries[w->current & 1])
        return false;
    valid = w->entries[0] | (uint32_t)w->entries[1] << 16;
    return rt_frame_replay(lookup_pc, regs, &w->env, valid, &entry) ==
           RT_REPLAYED;
}

/* Phase 3 of a replayed step (step_result's): the registers in place. */
static inline int replayed_result(const struct eh_elf_regs *caller,
                                  uint64_t callee_sp)
{
    if ((caller->known & (RIP_BIT | RSP_BIT)) == (RIP_BIT | RSP_BIT) &&
        caller->value[RT_SP] > callee_sp)
        return 1;
    if ((caller->undefined & RIP_BIT) && !(caller->known & RIP_BIT))
        return 0; /* the clean end of the stack */
    rt_count_failure();
    return CFISEM_E_BAD_FRAME;
}

/* After the eh_elf of the walk's object unwound the frame at lookup_pc
 * (with no row kept for it): learns its row. */
static void learn_row(const struct rt_walk *w, int result, uint64_t lookup_pc,
                      const struct eh_elf_regs *callee,
                      const struct eh_elf_frame *frame)
{
    const struct rt_object *object = rt_walk_object(w);
    uint16_t entry = w->entries[w->current & 1];
    if (result == CFISEM_OK && entry != 0 && object->unwind &&
        !w->interp_only && inside(object, lookup_pc))
        rt_frame_learn(w, entry, lookup_pc, callee, frame);
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
    if (!(callee->known & RIP_BIT) || callee->value[RT_PC] == 0)
        return 0;
    uint64_t pc = callee->value[RT_PC];
    /* 1. The object of the lookup PC: PC-1 for a return address, as a
     * call may be the last instruction of its function (libunwind#54). */
    uint64_t lookup_pc = cfi_lookup_pc(pc, caller_frame);
    /* 2. One frame, by the frame cache, the object's eh_elf or the
     * interpreter. */
    bool learn = false;
    if (w->frame_cache && !w->interp_only) {
        frame->caller = *callee;
        frame->signal_frame = 0;
        if (replay_row(w, &frame->caller, lookup_pc, &learn)) {
            w->frames_eh_elf++;
            return replayed_result(&frame->caller,
                                   callee->value[RT_SP]);
        }
    }
    int result;
    const struct rt_object *object = rt_walk_object(w);
    if (inside(object, lookup_pc) && object->unwind && !w->interp_only) {
        w->frames_eh_elf++;
        result = eh_elf_result(object->unwind(lookup_pc - object->bias,
                                              callee, &w->env, frame));
    } else {
        result = unwind_other(w, callee, caller_frame, lookup_pc, frame);
    }
    if (learn)
        learn_row(w, result, lookup_pc, callee, frame);
    /* 3. */
    return step_result(result, callee, caller_frame, frame);
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
                                 bool caller_frame, uint64_t lookup_pc,
                                 bool learn, struct eh_elf_frame *frame)
{
    int result;
    if (lookup_pc - f->start < f->span) {
        result = eh_elf_result(
            f->unwind(lookup_pc - f->bias, callee, &w->env, frame));
    } else {
        result = unwind_other(w, callee, caller_frame, lookup_pc, frame);
        fast_object_of(w, f);
    }
    if (learn)
        learn_row(w, result, lookup_pc, callee, frame);
    return step_result(result, callee, caller_frame, frame);
}

/* The frame cache's part of a backtrace: rows replayed up the stack
 * from regs (rt_frame_walk), the objects of rows that may be unloaded
 * found valid on the way (rt_walk_validate). false: the walk ends there
 * (the end of the stack, a frame that is none, max PCs, or PC 0); true:
 * the next step is the eh_elf's (or the interpreter's), *learn set when
 * it is to learn the row of its PC. */
static bool cache_walk(struct rt_walk *w, struct eh_elf_regs *regs,
                       bool *caller_frame, void **pcs, int *n, int max,
                       struct fast_object *f, bool *learn)
{
    int stop, before = *n;
    *n = rt_frame_walk(w, regs, *caller_frame, pcs, *n, max, &stop);
    if (*n != before)
        *caller_frame = true;
    if (stop == RT_NO_ROW || stop == RT_VALIDATE)
        *learn = true; /* (VALIDATE: the row may be of an object gone) */
    if (stop == RT_BAD_FRAME)
        rt_count_failure();
    if (stop != RT_NO_ROW && stop != RT_NOT_REPLAYED && stop != RT_VALIDATE)
        return false;
    fast_object_of(w, f); /* (the walk may have switched objects) */
    return true;
}

/* Steps up a local walk from the frame frames[1].caller (whose PC is a
 * return address when caller_frame) at most max times; each caller's PC
 * goes to pcs[]. Returns the number of steps made. The registers are kept in
 * frames[0] or frames[1]: the frame cache's rows update them in place,
 * an eh_elf writes the caller's into the other one (so that no step
 * copies a register file). A step sets the frame's signal_frame (the
 * eh_elf, or the interpreter) when it succeeds, and the caller's PC is
 * known then. */
static int walk_up(struct rt_walk *w, bool caller_frame,
                   struct eh_elf_frame frames[2], void **pcs, int max)
{
    w->env.data = w;
    struct fast_object f = {0};
    if (!w->frame_cache) /* (else cache_walk sets it) */
        fast_object_of(w, &f);
    struct eh_elf_frame *next = &frames[0], *other = &frames[1];
    struct eh_elf_regs *regs = &other->caller;
    if (!(regs->known & RIP_BIT))
        return 0;
    uint64_t pc = regs->value[RT_PC];
    int n = 0;
    while (n < max && pc != 0) {
        bool learn = false;
        if (w->frame_cache) {
            if (!cache_walk(w, regs, &caller_frame, pcs, &n, max, &f,
                            &learn))
                break;
            pc = regs->value[RT_PC];
        }
        uint64_t lookup_pc = cfi_lookup_pc(pc, caller_frame);
        if (backtrace_step(w, &f, regs, caller_frame, lookup_pc, learn,
                           next) != 1)
            break;
        caller_frame = !next->signal_frame;
        regs = &next->caller;
        pc = regs->value[RT_PC];
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

static int start(struct rt_cursor *c, const uint64_t *regs,
                 eh_elf_mask_t known,
                 bool caller_frame, cfisem_read_fn *read, void *data)
{
    if ((known & (RIP_BIT | RSP_BIT)) != (RIP_BIT | RSP_BIT))
        return CFISEM_E_ARGUMENT;
    rt_copy_values(c->regs.value, regs, known);
    c->regs.known = known & ALL_REGS;
    c->regs.undefined = 0;
    if (read)
        walk_start(&c->walk, read, data);
    else
        walk_start_local(&c->walk, c->regs.value[RT_SP]);
    c->walk.caller_frame = caller_frame;
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

#if defined(__aarch64__)
/* The sigcontext's x0-x30, sp and pc are DWARF registers 0-32. */
int cfisem_init_ucontext(struct cfisem_cursor *cursor,
                         const ucontext_t *context)
{
    if (!cursor || !context)
        return CFISEM_E_ARGUMENT;
    uint64_t regs[CFISEM_NREGS];
    memset(regs, 0, sizeof regs);
    for (unsigned r = 0; r < 31; r++)
        regs[r] = context->uc_mcontext.regs[r];
    regs[RT_SP] = context->uc_mcontext.sp;
    regs[RT_PC] = context->uc_mcontext.pc;
    return start(private_of(cursor), regs, RT_BIT(RT_PC + 1) - 1, false,
                 NULL, NULL);
}
#else
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
#endif

int cfisem_init_remote(struct cfisem_cursor *cursor,
                       const uint64_t regs[CFISEM_NREGS],
                       cfisem_regmask_t known,
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
    int result = walk_step(w, &c->regs, w->caller_frame != 0, &frame);
    if (result == 1) {
        c->regs = frame.caller;
        w->caller_frame = !frame.signal_frame;
    }
    if (w->frames_interp - w->interp_counted >= INTERP_BATCH || result != 1)
        count_interp(w);
    return result;
}

int cfisem_get_reg(const struct cfisem_cursor *cursor, unsigned r,
                   uint64_t *value)
{
    const struct rt_cursor *c = const_private_of(cursor);
    if (r >= CFISEM_NREGS || !(c->regs.known & RT_BIT(r)))
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
    w->frame_cache = engine == CFISEM_ENGINE_AUTO && !w->remote &&
                     RT_FRAME_CACHE;
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
    struct eh_elf_frame frames[2];
    struct eh_elf_regs *regs = &frames[1].caller;
    rt_getregs(regs); /* (the values of the others are unspecified) */
    if (!pcs || max <= 0)
        return 0;
    struct rt_walk walk;
    walk_start_local(&walk, regs->value[RT_SP]);
    int n = walk_up(&walk, true, frames, pcs, max);
    count_interp(&walk);
    return n;
}
