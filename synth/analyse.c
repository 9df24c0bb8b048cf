/* analyse.c — one FDE: decode its range, find each instruction's
 * successors (jump tables included), and run the abstract interpretation
 * to its fixpoint. */
#include <stdlib.h>
#include <string.h>

#include "analyse.h"

struct fde_work {
    const struct cfi_file *file;
    const struct cfi_fde *fde;
    struct synth_insn *insns;
    size_t n;
    struct synth_fde *out;
    size_t *worklist;
    bool *listed;
    bool *resolved;       /* indirect jumps whose table was found */
    size_t nlisted;
    struct synth_pad pads[SYNTH_MAX_PADS];
    size_t npads;
    struct synth_args args[SYNTH_MAX_PADS];
    size_t nargs;
    bool unresolved_jump;
    bool mid_insn_target;
    /* successors of the instruction being processed */
    size_t succ[SYNTH_MAX_TABLE + 2];
    bool succ_weak[SYNTH_MAX_TABLE + 2];
    int64_t succ_pop[SYNTH_MAX_TABLE + 2]; /* bytes the unwinder pops */
    size_t nsucc;
};

static void add_succ(struct fde_work *w, uint64_t addr, bool weak)
{
    if (addr < w->fde->pc_begin || addr >= w->fde->pc_end)
        return; /* leaves the FDE: a tail call, or a jump to a cold part */
    long i = synth_insn_index(w->insns, w->n, addr);
    if (i < 0) {
        w->mid_insn_target = true;
        return;
    }
    if (w->nsucc < sizeof w->succ / sizeof w->succ[0]) {
        w->succ[w->nsucc] = (size_t)i;
        w->succ_pop[w->nsucc] = 0;
        w->succ_weak[w->nsucc++] = weak;
    }
}

/* The bound of a jump table: `cmp reg, N` followed by a conditional
 * jump, shortly before: N+1 entries. 0 when not found. */
static size_t table_bound(const struct fde_work *w, size_t jmp)
{
    for (size_t back = 1; back <= 24 && back < jmp; back++) {
        const struct synth_insn *in = &w->insns[jmp - back];
        if (in->is_cmp_imm && in->imm >= 0 && in->imm < SYNTH_MAX_TABLE &&
            w->insns[jmp - back + 1].op == SYNTH_OP_JCC)
            return (size_t)in->imm + 1;
        if (in->op == SYNTH_OP_RET)
            break;
    }
    return 0;
}

/* The instruction before `from` (at most `window` back, on the straight
 * line of the code) that matches and writes `reg`; -1 when another
 * instruction writes reg first. */
static long find_back(const struct fde_work *w, size_t from, size_t window,
                      bool (*match)(const struct synth_insn *, int, int),
                      int reg, int b)
{
    for (size_t back = 1; back <= window && back <= from; back++) {
        const struct synth_insn *in = &w->insns[from - back];
        if (match(in, reg, b))
            return (long)(from - back);
        if (in->op == SYNTH_OP_RET || (reg >= 0 && (in->writes >> reg) & 1))
            break;
    }
    return -1;
}

static bool is_add_to(const struct synth_insn *in, int dst, int unused)
{
    (void)unused;
    return in->is_add_reg && in->dst == dst;
}
static bool is_movsxd_to(const struct synth_insn *in, int dst, int unused)
{
    (void)unused;
    return in->is_movsxd && in->dst == dst && in->mem_scale == 4 &&
           in->mem_base >= 0;
}
static bool is_lea_rip_to(const struct synth_insn *in, int dst, int unused)
{
    (void)unused;
    return in->is_lea && in->mem_rip && in->dst == dst;
}

/* Reads entry i of a table: int32 added to `base`, or an absolute u64. */
static bool table_entry(const struct fde_work *w, uint64_t table, bool rel,
                        uint64_t base, size_t i, uint64_t *target)
{
    unsigned size = rel ? 4 : 8;
    const uint8_t *p = synth_file_bytes(w->file, table + i * size, size);
    if (!p)
        return false;
    uint64_t v = cfi_load_le(p, size);
    *target = rel ? base + (uint64_t)(int64_t)(int32_t)(uint32_t)v : v;
    return true;
}

static bool follow_table(struct fde_work *w, size_t jmp, uint64_t table,
                         bool rel, uint64_t base)
{
    size_t bound = table_bound(w, jmp), found = 0;
    size_t limit = bound ? bound : SYNTH_MAX_TABLE;
    for (size_t i = 0; i < limit; i++) {
        uint64_t target;
        if (!table_entry(w, table, rel, base, i, &target))
            break;
        bool inside = target >= w->fde->pc_begin && target < w->fde->pc_end;
        if (!bound && (!inside ||
                       synth_insn_index(w->insns, w->n, target) < 0))
            break; /* no bound: the table ends at the first bad entry */
        add_succ(w, target, false);
        found++;
    }
    return found > 0;
}

/* The address a `lea reg,[rip+X]` before `from` put in reg. */
static bool lea_value(const struct fde_work *w, size_t from, int reg,
                      uint64_t *value)
{
    long lea = find_back(w, from, 64, is_lea_rip_to, reg, 0);
    if (lea < 0)
        return false;
    *value = w->insns[lea].target;
    return true;
}

/* gcc and clang, PIC: lea B,[rip+T]; movsxd R,[B+I*4]; add R,S; jmp R,
 * with S = B (a switch) or S another label (computed gotos, as in
 * vfprintf). Non-PIC: jmp [T+I*8]. */
static bool jump_table(struct fde_work *w, size_t jmp)
{
    const struct synth_insn *j = &w->insns[jmp];
    if (j->mem_base < 0 && j->mem_index >= 0 && j->mem_scale == 8 &&
        !j->mem_rip)
        return follow_table(w, jmp, (uint64_t)j->disp, false, 0);
    if (j->dst < 0 || j->mem_base >= 0)
        return false;
    long add = find_back(w, jmp, 16, is_add_to, j->dst, 0);
    if (add < 0)
        return false;
    int other = w->insns[add].mem_base;
    int loaded = j->dst, base_reg = other;
    long mov = find_back(w, (size_t)add, 16, is_movsxd_to, loaded, 0);
    if (mov < 0) { /* add S,R form: the loaded value is in the other one */
        loaded = other;
        base_reg = j->dst;
        mov = find_back(w, (size_t)add, 16, is_movsxd_to, loaded, 0);
    }
    uint64_t table, base;
    if (mov < 0 ||
        !lea_value(w, (size_t)mov, w->insns[mov].mem_base, &table) ||
        !lea_value(w, (size_t)add, base_reg, &base))
        return false;
    return follow_table(w, jmp, table + (uint64_t)w->insns[mov].disp, true,
                        base);
}

/* The GNU_args_size in effect at addr. */
static int64_t args_size_at(const struct fde_work *w, uint64_t addr)
{
    int64_t size = 0;
    for (size_t k = 0; k < w->nargs && w->args[k].from <= addr; k++)
        size = (int64_t)w->args[k].size;
    return size;
}

static void successors(struct fde_work *w, size_t i,
                       const struct synth_state *s)
{
    const struct synth_insn *in = &w->insns[i];
    uint64_t next = in->addr + in->len;
    w->nsucc = 0;
    switch (in->op) {
    case SYNTH_OP_RET: case SYNTH_OP_STOP: return;
    case SYNTH_OP_JMP: add_succ(w, in->target, false); return;
    case SYNTH_OP_JCC:
        add_succ(w, in->target, false);
        add_succ(w, next, false);
        return;
    case SYNTH_OP_CALL:
        add_succ(w, next, true);
        /* the unwinder lands here with the stack as it is at the call */
        for (size_t k = 0; k < w->npads; k++)
            if (in->addr >= w->pads[k].begin && in->addr < w->pads[k].end) {
                size_t before = w->nsucc;
                add_succ(w, w->pads[k].pad, false);
                if (w->nsucc > before)
                    w->succ_pop[before] = args_size_at(w, in->addr);
            }
        return;
    case SYNTH_OP_JMP_INDIRECT:
        if (jump_table(w, i) && !w->resolved[i]) {
            w->resolved[i] = true;
            w->out->jump_tables++;
        }
        else if (!s->rsp_known || s->h != 8)
            w->unresolved_jump = true; /* not a tail call: targets lost */
        return;
    default:
        add_succ(w, next, false);
        return;
    }
}

static void enlist(struct fde_work *w, size_t i)
{
    if (!w->listed[i]) {
        w->listed[i] = true;
        w->worklist[w->nlisted++] = i;
    }
}

/* The fixpoint: false when the visit limit was reached. */
static bool fixpoint(struct fde_work *w, size_t entry)
{
    size_t budget = w->n * SYNTH_VISITS_PER_INSN;
    struct synth_state *st = w->out->states;
    enlist(w, entry);
    while (w->nlisted > 0) {
        if (budget-- == 0)
            return false;
        size_t i = w->worklist[--w->nlisted];
        w->listed[i] = false;
        struct synth_state s = st[i];
        synth_transfer(&s, &w->insns[i]);
        successors(w, i, &st[i]);
        for (size_t k = 0; k < w->nsucc; k++) {
            struct synth_state e = s;
            /* the edge's weakness, inherited only through padding (a nop
             * between a call that does not return and the next block) */
            e.weak = w->succ_weak[k] ||
                     (st[i].weak && w->insns[i].op == SYNTH_OP_PADDING);
            e.h -= w->succ_pop[k];
            bool weak_lost = false;
            if (synth_merge(&st[w->succ[k]], &e, &weak_lost))
                enlist(w, w->succ[k]);
            w->out->noreturn_calls += weak_lost;
        }
    }
    return true;
}

/* The ABI entry state, or the IL's first row for an FDE entered with its
 * frame built. False when that row cannot be taken. */
static bool entry_state(const struct sem_fde_il *il, size_t first,
                        struct synth_state *s, bool *mid_frame)
{
    memset(s, 0, sizeof *s);
    s->reached = true;
    s->rsp_known = true;
    s->h = 8;
    for (int k = 0; k < SYNTH_NSAVED; k++)
        s->regs[k].in_reg = true;
    *mid_frame = false;
    if (!il || il->nranges == 0)
        return true;
    const struct sem_row *row = il->ranges[first].row;
    bool abi = row->cfa.kind == SEM_CFA_RULE_REG_OFFSET &&
               row->cfa.reg == CFI_REG_RSP && row->cfa.offset == 8;
    for (int k = 0; k < SYNTH_NSAVED; k++) {
        struct sem_rule r = sem_row_rule(row, synth_saved_regs[k]);
        if (r.kind == SEM_RULE_OFFSET) {
            s->regs[k] = (struct synth_reg_state){false, true, true, false,
                                                  r.offset};
            abi = false;
        } else if (r.kind != SEM_RULE_UNSPECIFIED &&
                   r.kind != SEM_RULE_SAME_VALUE) {
            return false;
        }
    }
    if (abi)
        return true;
    *mid_frame = true;
    if (row->cfa.kind != SEM_CFA_RULE_REG_OFFSET)
        return false;
    if (row->cfa.reg == CFI_REG_RSP) {
        s->h = row->cfa.offset;
    } else if (row->cfa.reg == CFI_REG_RBP) {
        s->rsp_known = false;
        s->rsp_reason = SYNTH_REASON_ENTRY_UNKNOWN;
        s->rbp_known = true;
        s->f = row->cfa.offset;
    } else {
        return false;
    }
    return true;
}

/* GCC starts a cold partition whose first instruction is a landing pad
 * with a nop (a landing pad at offset 0 would read as "none"): the nop is
 * never executed, and the row after it is the one the unwinder lands
 * with. Returns 1 (the entry is the second instruction, the second IL
 * range) then, else 0. */
static size_t landing_pad_first(const struct fde_work *w,
                                const struct sem_fde_il *il)
{
    if (w->n < 2 || !il || il->nranges < 2 ||
        w->insns[0].op != SYNTH_OP_PADDING ||
        il->ranges[1].begin != w->insns[1].addr)
        return 0;
    const struct sem_cfa *c0 = &il->ranges[0].row->cfa;
    bool abi = c0->kind == SEM_CFA_RULE_REG_OFFSET && c0->reg == CFI_REG_RSP &&
               c0->offset == 8;
    return abi ? 1 : 0;
}

/* The reason each instruction is not compared, or NONE. */
static void set_limits(struct fde_work *w)
{
    struct synth_fde *o = w->out;
    for (size_t i = 0; i < w->n; i++) {
        const struct synth_state *s = &o->states[i];
        enum synth_op op = w->insns[i].op;
        if (!s->reached)
            o->limits[i] = op == SYNTH_OP_PADDING || op == SYNTH_OP_STOP
                               ? SYNTH_REASON_NONE
                           : w->unresolved_jump  ? SYNTH_REASON_INDIRECT_JUMP
                           : w->mid_insn_target  ? SYNTH_REASON_MID_INSN_TARGET
                                                 : SYNTH_REASON_UNREACHED;
        else if (!s->rsp_known && !s->rbp_known && s->naux == 0)
            o->limits[i] = s->rsp_reason == SYNTH_REASON_NONE
                               ? SYNTH_REASON_RSP_UNKNOWN
                               : s->rsp_reason;
        else
            o->limits[i] = SYNTH_REASON_NONE;
    }
}

static void set_all(struct synth_fde *o, enum synth_reason reason)
{
    for (size_t i = 0; i < o->ninsns; i++) {
        o->limits[i] = reason;
        o->states[i].reached = false;
    }
}

static enum cfi_status allocate(struct fde_work *w, size_t max)
{
    struct synth_fde *o = w->out;
    w->insns = calloc(max ? max : 1, sizeof *w->insns);
    w->worklist = calloc(max ? max : 1, sizeof *w->worklist);
    w->listed = calloc(max ? max : 1, sizeof *w->listed);
    w->resolved = calloc(max ? max : 1, sizeof *w->resolved);
    o->states = calloc(max + 1, sizeof *o->states);
    o->limits = calloc(max + 1, sizeof *o->limits);
    o->addrs = calloc(max + 2, sizeof *o->addrs);
    if (!w->insns || !w->worklist || !w->listed || !w->resolved ||
        !o->states ||
        !o->limits || !o->addrs)
        return CFI_E_NOMEM;
    return CFI_OK;
}

/* Decodes the range; an undecodable tail becomes one pseudo-instruction
 * reaching to the FDE's end. */
static enum cfi_status decode_fde(struct synth_decoder *decoder,
                                  struct fde_work *w, size_t max,
                                  const uint8_t *bytes)
{
    uint64_t stopped;
    synth_decode(decoder, bytes, w->fde->pc_begin, w->fde->pc_end, w->insns,
                 max, &w->n, &stopped);
    struct synth_fde *o = w->out;
    o->ninsns = w->n;
    for (size_t i = 0; i < w->n; i++)
        o->addrs[i] = w->insns[i].addr;
    o->addrs[w->n] = stopped;
    if (stopped < w->fde->pc_end) {
        o->limits[w->n] = SYNTH_REASON_UNDECODABLE;
        o->ninsns++;
        o->addrs[o->ninsns] = w->fde->pc_end;
    }
    return CFI_OK;
}

static enum cfi_status run(struct synth_decoder *decoder, struct fde_work *w,
                           const struct sem_fde_il *il)
{
    const struct cfi_fde *fde = w->fde;
    struct synth_fde *o = w->out;
    uint64_t len = fde->pc_end > fde->pc_begin ? fde->pc_end - fde->pc_begin
                                               : 0;
    size_t max = len > SYNTH_MAX_INSNS ? SYNTH_MAX_INSNS : (size_t)len;
    if (allocate(w, max) != CFI_OK)
        return CFI_E_NOMEM;
    const uint8_t *bytes = synth_file_bytes(w->file, fde->pc_begin, len);
    if (len == 0)
        return CFI_OK;
    if (!bytes || len > SYNTH_MAX_INSNS) {
        o->ninsns = 1;
        o->addrs[0] = fde->pc_begin;
        o->addrs[1] = fde->pc_end;
        o->limits[0] = bytes ? SYNTH_REASON_TOO_LARGE : SYNTH_REASON_NOT_MAPPED;
        return CFI_OK;
    }
    decode_fde(decoder, w, max, bytes);
    w->npads = synth_landing_pads(w->file, fde, w->pads, SYNTH_MAX_PADS);
    if (w->npads)
        w->nargs = synth_args_sizes(fde, w->args, SYNTH_MAX_PADS);
    o->landing_pads = w->npads;
    if (w->n == 0)
        return CFI_OK;
    size_t entry = landing_pad_first(w, il);
    if (!entry_state(il, entry, &o->states[entry], &o->entered_mid_frame)) {
        set_all(o, SYNTH_REASON_ENTRY_UNKNOWN);
        return CFI_OK;
    }
    if (!fixpoint(w, entry)) {
        set_all(o, SYNTH_REASON_FIXPOINT_LIMIT);
        return CFI_OK;
    }
    set_limits(w);
    return CFI_OK;
}

enum cfi_status synth_analyse_fde(struct synth_decoder *decoder,
                                  const struct cfi_file *file,
                                  const struct cfi_fde *fde,
                                  const struct sem_fde_il *il,
                                  struct synth_fde *out)
{
    memset(out, 0, sizeof *out);
    out->fde = fde;
    struct fde_work *w = calloc(1, sizeof *w);
    if (!w)
        return CFI_E_NOMEM;
    w->file = file;
    w->fde = fde;
    w->out = out;
    enum cfi_status status = run(decoder, w, il);
    if (status == CFI_OK)
        status = synth_compare(out, il);
    free(w->insns);
    free(w->worklist);
    free(w->listed);
    free(w->resolved);
    free(w);
    return status;
}

void synth_fde_free(struct synth_fde *fde)
{
    free(fde->addrs);
    free(fde->states);
    free(fde->limits);
    free(fde->ranges);
    memset(fde, 0, sizeof *fde);
}
