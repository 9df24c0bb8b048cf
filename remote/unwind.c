/* SPDX-License-Identifier: MIT */
/* unwind.c — remote_unwind: a stack, frame by frame, through engines/. */
#include "remote/internal.h"

#include <string.h>

void remote_regs_from_mask(struct cfi_regs *regs, const uint64_t *values,
                           uint64_t known)
{
    _Static_assert(CFI_NREGS >= 64, "registers 0..63 exist");
    memset(regs->status, CFI_REG_UNKNOWN, sizeof regs->status);
    memset(regs->value, 0, 64 * sizeof *regs->value);
    for (unsigned reg = 0; reg < 64 && known >> reg; reg++)
        if (known >> reg & 1) {
            regs->value[reg] = values[reg];
            regs->status[reg] = CFI_REG_VALUE;
        }
}

/* The caller's reader, behind cfi.h's: the engines see CFI_E_MEMORY,
 * and the walk remembers which failure it was. */
struct walk_memory {
    remote_read_fn read;
    void *data;
    enum remote_read_result failure;
    const struct cfi_file *file;   /* the object of the frame asked */
};

/* The bytes of `file` at link-time address addr, when a segment holds
 * all of them in the file. */
static bool from_image(const struct cfi_file *file, uint64_t addr,
                       unsigned size, uint64_t *value)
{
    const struct cfi_segment *seg = file ? cfi_file_segment(file, addr)
                                         : NULL;
    if (!seg || !seg->bytes || addr - seg->vaddr >= seg->filesz
        || size > seg->filesz - (addr - seg->vaddr))
        return false;
    *value = cfi_load_le(seg->bytes + (addr - seg->vaddr), size);
    return true;
}

static enum cfi_status walk_read(void *env, uint64_t addr, unsigned size,
                                 uint64_t *value)
{
    struct walk_memory *memory = env;
    enum remote_read_result result = memory->read(memory->data, addr, size,
                                                  value);
    if (result == REMOTE_READ_OK)
        return CFI_OK;
    /* An outside library reads the object's frame sections through
     * memory, at the link-time addresses it was told (libunwind's remote
     * unw_step): served from the file when the process has nothing
     * there. */
    if (from_image(memory->file, addr, size, value))
        return CFI_OK;
    memory->failure = result;
    return CFI_E_MEMORY;
}

/* The reader of a second look at a frame whose first answer failed on
 * memory: a read that fails gives `fill` (masked to its size) instead,
 * and is counted. */
struct lenient_memory {
    struct walk_memory *inner;
    uint64_t fill;
    unsigned failed;
};

static enum cfi_status lenient_read(void *env, uint64_t addr, unsigned size,
                                    uint64_t *value)
{
    struct lenient_memory *memory = env;
    if (walk_read(memory->inner, addr, size, value) == CFI_OK)
        return CFI_OK;
    memory->failed++;
    *value = size >= 8 ? memory->fill
                       : memory->fill & (((uint64_t)1 << (8 * size)) - 1);
    return CFI_OK;
}

/* The mapping of the walk's last frame, its object and the engine
 * opened for it: the next frame is most often in the same object. */
struct walk_hit {
    const struct remote_mapping *mapping; /* NULL: none yet */
    struct remote_object *object;
    struct engine_instance *engine;
    uint64_t bias;
};

/* One walk's state besides the frames. */
struct walk {
    struct remote_space *space;
    enum engine_id engine;
    struct walk_memory memory;
    struct remote_stop *stop;
    struct walk_hit hit;
};

static void stop_at(struct walk *walk, enum remote_stop_reason reason,
                    uint64_t pc, const char *object,
                    const struct cfi_diag *diag)
{
    *walk->stop = (struct remote_stop){reason, pc, object,
                                       {CFI_OK, NULL, CFI_NO_OFFSET, -1}};
    if (diag)
        walk->stop->diag = *diag;
}

/* The engine for an object: the one asked for, or the space's choice
 * with compiled falling back to interp. NULL after stop_at. */
static struct engine_instance *engine_of(struct walk *walk,
                                         struct remote_object *object,
                                         uint64_t pc)
{
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    struct remote_options *options = &walk->space->options;
    enum engine_id id = walk->engine;
    bool fallback = id == ENGINE_COUNT && options->fallback_interp;
    if (id == ENGINE_COUNT)
        id = options->engine;
    struct engine_instance *engine = remote_object_engine(walk->space,
                                                          object, id, &diag);
    if (!engine && fallback && id == ENGINE_compiled)
        engine = remote_object_engine(walk->space, object, ENGINE_interp,
                                      &diag);
    if (!engine) {
        enum remote_stop_reason reason =
            diag.status == CFI_E_NO_CFI ? REMOTE_STOP_NO_CFI
                                        : REMOTE_STOP_CFI_ERROR;
        stop_at(walk, reason, pc, object->path, &diag);
    }
    return engine;
}

static enum remote_stop_reason reason_of(const struct walk *walk,
                                         enum cfi_status status)
{
    switch (status) {
    case CFI_E_NO_FDE:
    case CFI_E_NO_CFI:
        return REMOTE_STOP_NO_CFI;
    case CFI_E_MEMORY:
        return walk->memory.failure == REMOTE_READ_STACK_COPY_EXHAUSTED
                   ? REMOTE_STOP_STACK_COPY_EXHAUSTED
                   : REMOTE_STOP_MEMORY;
    default:
        return REMOTE_STOP_CFI_ERROR;
    }
}

/* The object of the mapping that holds `lookup`, the frame's lookup PC,
 * opened, of the space's architecture, with the mapping's load bias, and
 * its engine, into walk->hit. False after stop_at. */
static bool object_of(struct walk *walk, const struct remote_frame *frame,
                      uint64_t lookup)
{
    walk->hit.mapping = NULL;
    struct remote_mapping *mapping =
        remote_find_mapping(walk->space, lookup);
    if (!mapping) {
        stop_at(walk, REMOTE_STOP_NO_OBJECT, frame->pc, NULL, NULL);
        return false;
    }
    struct remote_object *object = mapping->object;
    if (!remote_object_open(object)) {
        stop_at(walk, REMOTE_STOP_NO_FILE, frame->pc, object->path,
                &object->open_diag);
        return false;
    }
    if (object->file->arch != walk->space->arch) {
        struct cfi_diag diag = {CFI_E_UNSUPPORTED,
                                "the object is of another architecture",
                                CFI_NO_OFFSET, -1};
        stop_at(walk, REMOTE_STOP_CFI_ERROR, frame->pc, object->path, &diag);
        return false;
    }
    uint64_t bias;
    if (!remote_mapping_bias(mapping, &bias)) {
        struct cfi_diag diag = {CFI_E_MALFORMED,
                                "no loadable segment holds the mapping's "
                                "file offset", CFI_NO_OFFSET, -1};
        stop_at(walk, REMOTE_STOP_NO_FILE, frame->pc, object->path, &diag);
        return false;
    }
    struct engine_instance *engine = engine_of(walk, object, frame->pc);
    if (!engine)
        return false;
    walk->hit = (struct walk_hit){mapping, object, engine, bias};
    return true;
}

/* Asks `engine` again, every failed read answered with `fill`. */
static bool ask_filled(struct walk *walk, struct engine_instance *engine,
                       struct cfi_request request, uint64_t fill,
                       struct engine_answer *answer)
{
    struct lenient_memory memory = {&walk->memory, fill, 0};
    request.memory = (struct cfi_memory){lenient_read, &memory};
    engine_answer_reset(answer);
    engine->unwind(engine->self, &request, answer);
    return answer->comparable && answer->frame.status == CFI_OK &&
           memory.failed > 0;
}

/* A frame whose answer failed on memory, when the reads that failed
 * fed only registers that neither the CFA nor the caller's PC and sp
 * need (a callee-saved register's slot below a perf sample's stack
 * copy, for one): the frame is asked twice more, every failed read
 * answered with all zeros, then all ones; when the CFA, the signal flag
 * and the caller's PC and sp are the same both times, the caller's
 * registers are the first answer's, each register that differs between
 * the two made unknown and counted in frame->lost. Unwinders that read
 * a saved register only when they need it (libunwind, libdw) go on in
 * the same way. A register whose value is the same for both fills but
 * would differ for another comes out as a value: no rule of real code
 * does that (an offset rule gives the word read). True when the walk
 * goes on, with *caller set. */
static bool without_unreadable(struct walk *walk,
                               struct engine_instance *engine,
                               const struct cfi_request *request,
                               struct remote_frame *frame,
                               struct cfi_regs *caller)
{
    enum remote_read_result failure = walk->memory.failure;
    struct engine_answer zeros, ones;
    bool ok = ask_filled(walk, engine, *request, 0, &zeros) &&
              ask_filled(walk, engine, *request, ~(uint64_t)0, &ones);
    walk->memory.failure = failure;
    const struct cfi_arch *arch = walk->space->arch;
    const struct cfi_regs *a = &zeros.frame.caller, *b = &ones.frame.caller;
    if (!ok || zeros.frame.cfa != ones.frame.cfa ||
        zeros.frame.signal_frame != ones.frame.signal_frame)
        return false;
    for (unsigned i = 0; i < 2; i++) {
        unsigned reg = i ? arch->sp : arch->pc;
        if (reg < CFI_NREGS && (a->status[reg] != b->status[reg] ||
                                a->value[reg] != b->value[reg]))
            return false;
    }
    *caller = *a;
    frame->lost = 0;
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        if (a->status[reg] == b->status[reg] &&
            (a->status[reg] != CFI_REG_VALUE || a->value[reg] == b->value[reg]))
            continue;
        caller->status[reg] = CFI_REG_UNKNOWN;
        caller->value[reg] = 0;
        if (reg < 64)
            frame->lost |= (uint64_t)1 << reg;
    }
    frame->cfa = zeros.frame.cfa;
    frame->signal_frame = zeros.frame.signal_frame;
    return true;
}

/* Unwinds `frame`, whose registers are *callee, into *answer (the
 * caller's registers are answer->frame.caller). *callee is the walk's
 * own: its PC register is set to the request's PC, as engine.h's engines
 * read it (an outside library takes the PC from it). Nothing is copied
 * or cleared here: an engine fills its answer (engine.h). False after
 * stop_at when the walk ends at this frame. */
static bool step(struct walk *walk, struct remote_frame *frame,
                 struct cfi_regs *callee, struct engine_answer *answer)
{
    uint64_t lookup = cfi_lookup_pc(frame->pc, !frame->exact);
    const struct remote_mapping *last = walk->hit.mapping;
    if ((!last || lookup < last->start || lookup >= last->end)
        && !object_of(walk, frame, lookup))
        return false;
    struct remote_object *object = walk->hit.object;
    struct engine_instance *engine = walk->hit.engine;
    uint64_t bias = walk->hit.bias;
    frame->engine = engine->id;
    if (walk->space->arch->pc < CFI_NREGS)
        cfi_regs_set(callee, walk->space->arch->pc, frame->pc - bias);
    struct cfi_request request = {
        frame->pc - bias, !frame->exact, callee,
        {walk_read, &walk->memory}, 0};
    walk->memory.file = object->file;
    walk->memory.failure = REMOTE_READ_OK;
    engine->unwind(engine->self, &request, answer);
    if (!answer->comparable) {
        struct cfi_diag diag = {CFI_E_UNSUPPORTED,
                                answer->not_comparable_reason,
                                CFI_NO_OFFSET, -1};
        stop_at(walk, REMOTE_STOP_NOT_COMPARABLE, frame->pc, object->path,
                &diag);
        return false;
    }
    if (answer->frame.status == CFI_E_MEMORY &&
        without_unreadable(walk, engine, &request, frame,
                           &answer->frame.caller))
        return true;
    if (answer->frame.status != CFI_OK) {
        stop_at(walk, reason_of(walk, answer->frame.status), frame->pc,
                object->path, &answer->frame.diag);
        return false;
    }
    frame->cfa = answer->frame.cfa;
    frame->signal_frame = answer->frame.signal_frame;
    return true;
}

/* The register `reg` of regs when a value. */
static bool reg_value(const struct cfi_regs *regs, unsigned reg,
                      uint64_t *value)
{
    if (reg >= CFI_NREGS || regs->status[reg] != CFI_REG_VALUE)
        return false;
    *value = regs->value[reg];
    return true;
}

/* A caller whose CFA does not lie above its callee's, or the same frame
 * again: the stack grows down, and a frame's CFA is above the return
 * address its call pushed. A signal frame may sit on another stack
 * (sigaltstack): its CFA and its caller's are not compared. */
static bool is_loop(const struct remote_frame *callee,
                    const struct remote_frame *caller)
{
    if (callee->pc == caller->pc && callee->cfa == caller->cfa)
        return true;
    if (callee->signal_frame || caller->signal_frame)
        return false;
    return caller->cfa <= callee->cfa;
}

size_t remote_unwind(struct remote_space *space, const struct cfi_regs *regs,
                     bool pc_is_exact, remote_read_fn read, void *data,
                     enum engine_id engine, struct remote_frame *frames,
                     size_t max_frames, struct remote_stop *stop)
{
    struct walk walk = {space, engine, {read, data, REMOTE_READ_OK, NULL},
                        stop, {NULL, NULL, NULL, 0}};
    const struct cfi_arch *arch = space->arch;
    /* A frame's registers are one answer's caller, and its caller's the
     * other's: the two take turns, never copied. */
    struct engine_answer answers[2];
    struct cfi_regs *current = &answers[0].frame.caller;
    unsigned turn = 0;
    /* The caller's registers are the architecture's (remote.h): only
     * they are copied, the others start unknown. */
    unsigned nregs = arch->nreported < CFI_NREGS ? arch->nreported
                                                 : CFI_NREGS;
    memcpy(current->value, regs->value, nregs * sizeof *regs->value);
    memcpy(current->status, regs->status, nregs);
    memset(current->status + nregs, CFI_REG_UNKNOWN, CFI_NREGS - nregs);
    bool exact = pc_is_exact;
    size_t n = 0;
    uint64_t pc;
    if (!reg_value(current, arch->pc, &pc) || pc == 0) {
        stop_at(&walk, REMOTE_STOP_OUTERMOST, 0, NULL, NULL);
        return 0;
    }
    for (;;) {
        if (n == max_frames) {
            stop_at(&walk, REMOTE_STOP_MAX_FRAMES, pc, NULL, NULL);
            return n;
        }
        struct remote_frame *frame = &frames[n++];
        uint64_t sp = 0;
        reg_value(current, arch->sp, &sp);
        *frame = (struct remote_frame){pc, sp, 0, exact, false,
                                       ENGINE_COUNT, 0};
        turn ^= 1;
        if (!step(&walk, frame, current, &answers[turn]))
            return n;
        current = &answers[turn].frame.caller;
        /* DWARF 5 §6.4.4: an undefined return address column marks the
         * outermost frame; a PC of 0 ends a stack by convention (glibc's
         * thread starts clear it, and the x86-64 psABI clears rbp). */
        if (!reg_value(current, arch->pc, &pc) || pc == 0) {
            if (current->status[arch->pc] == CFI_REG_UNKNOWN) {
                struct cfi_diag diag = {CFI_E_REG_UNKNOWN,
                                        "the caller's PC is unknown",
                                        CFI_NO_OFFSET, (int)arch->pc};
                stop_at(&walk, REMOTE_STOP_CFI_ERROR, frame->pc, NULL,
                        &diag);
                return n;
            }
            stop_at(&walk, REMOTE_STOP_OUTERMOST, frame->pc, NULL, NULL);
            return n;
        }
        exact = frame->signal_frame;
        if (n >= 2 && is_loop(&frames[n - 2], frame)) {
            stop_at(&walk, REMOTE_STOP_LOOP, frame->pc, NULL, NULL);
            return n;
        }
    }
}
