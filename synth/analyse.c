/* SPDX-License-Identifier: MIT */
/* analyse.c — one FDE: decode its range, find each instruction's
 * successors (jump tables included), and run the abstract interpretation
 * to its fixpoint. */
#include <stdlib.h>
#include <string.h>

#include "analyse.h"

struct fde_work {
    const struct synth_machine *machine;
    const struct cfi_file *file;
    const struct cfi_fde *fde;
    struct synth_insn *insns;
    size_t n;
    struct synth_fde *out;
    size_t *worklist;
    bool *listed;
    bool *resolved;       /* indirect jumps whose table was found */
    bool *noreturn;       /* calls taken not to return */
    bool *jumped_to;      /* reached by an edge other than a fall-through */
    uint64_t next;        /* the fall-through of the instruction at hand */
    uint64_t *data_refs;  /* collect_data_refs */
    size_t ndata_refs;
    size_t nnoreturn;
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
    if (addr != w->next)
        w->jumped_to[i] = true;
    if (w->nsucc < sizeof w->succ / sizeof w->succ[0]) {
        w->succ[w->nsucc] = (size_t)i;
        w->succ_pop[w->nsucc] = 0;
        w->succ_weak[w->nsucc++] = weak;
    }
}

/* What a table index was loaded from, followed back from the load of
 * the table entry: a register, or a memory operand (glibc's
 * `cmpb $0xc,0x8(%rdx); ja; movzbl 0x8(%rdx),%ecx`). */
struct index_source {
    int reg;               /* -1: memory */
    int8_t base, index;
    int64_t disp;
};

static bool same_source(const struct synth_insn *cmp,
                        const struct index_source *src)
{
    if (src->reg >= 0)
        return cmp->dst == src->reg;
    return cmp->dst < 0 && !cmp->mem_rip && cmp->mem_base == src->base &&
           cmp->mem_index == src->index && cmp->disp == src->disp;
}

/* A compare at `cmp` decides the conditional jump that follows it before
 * `load`: no instruction in between sets the flags again. */
static bool compare_decides(const struct fde_work *w, size_t cmp, size_t load)
{
    for (size_t k = cmp + 1; k < load; k++) {
        if (w->insns[k].op == SYNTH_OP_JCC)
            return true;
        if (w->insns[k].sets_flags)
            return false;
    }
    return false;
}

/* One step back: the source of the index before instruction `in`;
 * false when `in` makes the index from something not followed. */
static bool follow_source(const struct synth_insn *in,
                          struct index_source *src)
{
    int written = src->reg >= 0 ? src->reg : src->base;
    if (written < 0 || !((in->writes >> written) & 1))
        return true;
    if (src->reg < 0)
        return false; /* the memory operand's base changed */
    if (in->src >= 0) {
        src->reg = in->src;
        return true;
    }
    if (!in->is_mem_copy || in->mem_rip)
        return false;
    *src = (struct index_source){-1, in->mem_base, in->mem_index, in->disp};
    return true;
}

/* The bound of a jump table read at `load` with index register `index`:
 * `cmp index, N` followed by a conditional jump, shortly before: N+1
 * entries. The index is followed back through copies (`mov %esi,%eax`,
 * `movzbl %dl,%edx`) and a load from memory compared in place; any other
 * write of it ends the search, and a compare of something else is not a
 * bound (gcc's `cmp $0xef,%cl; ja` bounds cl, while the index is cl >>
 * 4). 0 when not found. */
static size_t table_bound(const struct fde_work *w, size_t load, int index)
{
    struct index_source src = {index, -1, -1, 0};
    for (size_t back = 1; back <= 24 && back <= load && index >= 0; back++) {
        size_t at = load - back;
        const struct synth_insn *in = &w->insns[at];
        if (in->is_cmp_imm && same_source(in, &src) && in->imm >= 0 &&
            in->imm < SYNTH_MAX_TABLE && compare_decides(w, at, load))
            return (size_t)in->imm + 1;
        if (in->op == SYNTH_OP_RET || !follow_source(in, &src))
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
        if (in->op == SYNTH_OP_RET ||
            (reg >= 0 && reg < 32 && (in->writes >> reg) & 1))
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

/* The data the FDE's code addresses (lea rip-relative, a non-PIC table's
 * displacement), sorted: a table without a bound ends, at the latest,
 * where the next of them begins (clang lays the tables of one function
 * out one after the other, and a table read past its end reads the next
 * one's entries against the wrong base). */
static int by_address(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

static enum cfi_status collect_data_refs(struct fde_work *w)
{
    w->data_refs = calloc(w->n ? w->n : 1, sizeof *w->data_refs);
    if (!w->data_refs)
        return CFI_E_NOMEM;
    for (size_t i = 0; i < w->n; i++) {
        const struct synth_insn *in = &w->insns[i];
        if (in->is_lea && in->mem_rip)
            w->data_refs[w->ndata_refs++] = in->target;
        else if (in->op == SYNTH_OP_JMP_INDIRECT && in->mem_base < 0 &&
                 in->mem_index >= 0 && !in->mem_rip)
            w->data_refs[w->ndata_refs++] = (uint64_t)in->disp;
    }
    qsort(w->data_refs, w->ndata_refs, sizeof *w->data_refs, by_address);
    return CFI_OK;
}

/* Entries of `size` bytes at `table` before the next data the code
 * addresses (SYNTH_MAX_TABLE at most). */
static size_t entries_before_next(const struct fde_work *w, uint64_t table,
                                  unsigned size)
{
    size_t lo = 0, hi = w->ndata_refs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->data_refs[mid] <= table)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == w->ndata_refs)
        return SYNTH_MAX_TABLE;
    uint64_t n = (w->data_refs[lo] - table) / size;
    return n < SYNTH_MAX_TABLE ? (size_t)n : SYNTH_MAX_TABLE;
}

static bool follow_table(struct fde_work *w, size_t load, int index,
                         uint64_t table, bool rel, uint64_t base)
{
    size_t bound = table_bound(w, load, index), found = 0;
    size_t limit = bound ? bound : entries_before_next(w, table, rel ? 4 : 8);
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

static bool is_table_load_to(const struct synth_insn *in, int dst, int unused)
{
    (void)unused;
    return in->is_table_load && in->dst == dst && in->mem_base >= 0 &&
           in->mem_index >= 0;
}

/* The address in `reg` before `from`: an adr or adrp (is_lea, mem_rip)
 * and the immediates added to it since (`add T, T, #:lo12:X`). */
static bool address_value(const struct fde_work *w, size_t from, int reg,
                          uint64_t *value)
{
    uint64_t added = 0;
    for (size_t back = 1; back <= 64 && back <= from; back++) {
        const struct synth_insn *in = &w->insns[from - back];
        if (in->op == SYNTH_OP_RET || reg < 0 || reg >= 32)
            return false;
        if (!((in->writes >> reg) & 1))
            continue;
        if (in->is_lea && in->mem_rip && in->dst == reg) {
            *value = in->target + added;
            return true;
        }
        if (!in->is_add_imm || in->dst != reg)
            return false;
        added += (uint64_t)in->imm;
        reg = in->src;
    }
    return false;
}

/* Entry i of an AArch64 table: `size` bytes, zero-extended as the load
 * reads them, then sign-extended from `sign_bits` (0: not) and shifted
 * by the add that makes the target from `base`. */
static bool table_entry_a64(const struct fde_work *w,
                            const struct synth_insn *load,
                            const struct synth_insn *add, uint64_t table,
                            uint64_t base, size_t i, uint64_t *target)
{
    unsigned size = load->mem_scale;
    const uint8_t *p = synth_file_bytes(w->file, table + i * size, size);
    if (!p || add->add_shift > 4)
        return false;
    uint64_t v = cfi_load_le(p, size);
    unsigned bits = add->add_ext;
    if (bits && bits < 64 && (v >> (bits - 1)) & 1)
        v |= ~(uint64_t)0 << bits;
    *target = base + (v << add->add_shift);
    return true;
}

/* The bound of a table whose index was copied from a register before
 * that register was compared (GCC on AArch64: `mov w2, w0; cmp w0, #7;
 * b.hi; ...; ldrb w1, [x1, w2, uxtw]`): from the copy on, both hold the
 * index until one is written again. 0 when not found. */
static size_t table_bound_copy(const struct fde_work *w, size_t load,
                               int index)
{
    long copy = -1;
    for (size_t back = 1; back <= 24 && back <= load && index >= 0; back++) {
        const struct synth_insn *in = &w->insns[load - back];
        if (in->op == SYNTH_OP_RET)
            return 0;
        if (index < 32 && (in->writes >> index) & 1) {
            copy = in->src >= 0 ? (long)(load - back) : -1;
            break;
        }
    }
    if (copy < 0)
        return 0;
    int other = w->insns[copy].src;
    for (size_t k = (size_t)copy + 1; k < load; k++) {
        const struct synth_insn *in = &w->insns[k];
        if (in->is_cmp_imm && in->dst >= 0 &&
            (in->dst == other || in->dst == index) &&
            in->imm >= 0 && in->imm < SYNTH_MAX_TABLE &&
            compare_decides(w, k, load))
            return (size_t)in->imm + 1;
        if (other >= 0 && other < 32 && (in->writes >> other) & 1)
            other = -1;
    }
    return 0;
}

static bool straight(enum synth_op op);

/* Where the search back for a table's bound and addresses starts: the
 * load itself, or, when nothing falls through into it (GCC puts the
 * table's code after an unconditional branch, entered by the `b.ls` of
 * the bound), just after the one branch that jumps to it. */
static size_t table_anchor(const struct fde_work *w, size_t load)
{
    if (load == 0 || straight(w->insns[load - 1].op) ||
        w->insns[load - 1].op == SYNTH_OP_CALL ||
        w->insns[load - 1].op == SYNTH_OP_JCC)
        return load;
    long from = -1;
    for (size_t k = 0; k < w->n; k++) {
        const struct synth_insn *in = &w->insns[k];
        if ((in->op != SYNTH_OP_JCC && in->op != SYNTH_OP_JMP) ||
            in->target != w->insns[load].addr)
            continue;
        if (from >= 0)
            return load; /* more than one way in */
        from = (long)k;
    }
    return from >= 0 ? (size_t)from + 1 : load;
}

/* AArch64, GCC: adrp T; add T, T, #lo12; ldrb E, [T, I, uxtw] (ldrh,
 * ldr w with the index scaled); adr B, L; add R, B, E, sxtb #2; br R.
 * The bound is required (`cmp I, #N; b.hi`): GCC always emits it. */
static bool jump_table_a64(struct fde_work *w, size_t add)
{
    const struct synth_insn *a = &w->insns[add];
    long load = find_back(w, add, 16, is_table_load_to, a->mem_index, 0);
    if (load < 0)
        return false;
    const struct synth_insn *l = &w->insns[load];
    size_t from = table_anchor(w, (size_t)load);
    uint64_t table, base;
    size_t bound = table_bound(w, from, l->mem_index), found = 0;
    if (!bound)
        bound = table_bound_copy(w, from, l->mem_index);
    if (!bound || !address_value(w, from, l->mem_base, &table) ||
        !address_value(w, add, a->mem_base, &base))
        return false;
    for (size_t i = 0; i < bound; i++) {
        uint64_t target;
        if (!table_entry_a64(w, l, a, table, base, i, &target))
            return false;
        add_succ(w, target, false);
        found++;
    }
    return found > 0;
}

/* gcc and clang, PIC: lea B,[rip+T]; movsxd R,[B+I*4]; add R,S; jmp R,
 * with S = B (a switch) or S another label (computed gotos, as in
 * vfprintf). Non-PIC: jmp [T+I*8]. AArch64's shape (a table load, which
 * only its decoder marks) above. */
static bool jump_table(struct fde_work *w, size_t jmp)
{
    const struct synth_insn *j = &w->insns[jmp];
    if (j->mem_base < 0 && j->mem_index >= 0 && j->mem_scale == 8 &&
        !j->mem_rip)
        return follow_table(w, jmp, j->mem_index, (uint64_t)j->disp, false,
                            0);
    if (j->dst < 0 || j->mem_base >= 0)
        return false;
    long add = find_back(w, jmp, 16, is_add_to, j->dst, 0);
    if (add < 0)
        return false;
    if (find_back(w, (size_t)add, 16, is_table_load_to,
                  w->insns[add].mem_index, 0) >= 0)
        return jump_table_a64(w, (size_t)add);
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
    return follow_table(w, (size_t)mov, w->insns[mov].mem_index,
                        table + (uint64_t)w->insns[mov].disp, true, base);
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
    w->next = next;
    switch (in->op) {
    case SYNTH_OP_RET: case SYNTH_OP_STOP: return;
    case SYNTH_OP_JMP: add_succ(w, in->target, false); return;
    case SYNTH_OP_JCC:
        add_succ(w, in->target, false);
        add_succ(w, next, false);
        return;
    case SYNTH_OP_CALL:
        if (!w->noreturn[i])
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
        else if (!s->rsp_known || s->h != w->machine->entry_height)
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

/* One edge into successor k of instruction i, with state s after it. */
static void propagate(struct fde_work *w, size_t i, size_t k,
                      const struct synth_state *s, long *lost_call)
{
    struct synth_state e = *s;
    const struct synth_state *from = &w->out->states[i];
    /* the edge's weakness, inherited only through padding (a nop between
     * a call that does not return and the next block) */
    e.weak = w->succ_weak[k] ||
             (from->weak && w->insns[i].op == SYNTH_OP_PADDING);
    e.weak_call = w->succ_weak[k] ? (uint32_t)i : from->weak_call;
    e.h -= w->succ_pop[k];
    if (synth_merge(&w->out->states[w->succ[k]], &e, lost_call))
        enlist(w, w->succ[k]);
}

/* One round of the fixpoint from the entry state. A call whose
 * fall-through loses to a jump ends the round (*lost_call, when
 * `restart`); without `restart` such calls are only counted. False when
 * the visit limit was reached. */
static bool fixpoint_round(struct fde_work *w, size_t entry, bool restart,
                           long *lost_call)
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
        synth_transfer(w->machine, &s, &w->insns[i]);
        successors(w, i, &st[i]);
        for (size_t k = 0; k < w->nsucc; k++) {
            long lost = -1;
            propagate(w, i, k, &s, &lost);
            if (lost >= 0 && restart && !w->noreturn[lost]) {
                *lost_call = lost;
                return true;
            }
            w->out->noreturn_calls += lost >= 0;
        }
    }
    return true;
}

/* Back to the entry state alone, for another round. */
static void reset(struct fde_work *w, size_t entry,
                  const struct synth_state *start)
{
    memset(w->out->states, 0, w->n * sizeof *w->out->states);
    memset(w->listed, 0, w->n * sizeof *w->listed);
    w->nlisted = 0;
    w->unresolved_jump = w->mid_insn_target = false;
    w->out->noreturn_calls = w->nnoreturn;
    w->out->states[entry] = *start;
}

/* The fixpoint. A call taken not to return loses its fall-through edge
 * and the analysis starts again (at most SYNTH_MAX_RESTARTS times), so
 * that no state that came only through that edge survives (a loop entered
 * by it would keep it). False when the visit limit was reached. */
static bool fixpoint(struct fde_work *w, size_t entry)
{
    const struct synth_state start = w->out->states[entry];
    for (unsigned round = 0;; round++) {
        long lost = -1;
        if (!fixpoint_round(w, entry, round < SYNTH_MAX_RESTARTS, &lost))
            return false;
        if (lost < 0)
            return true;
        w->noreturn[lost] = true;
        w->nnoreturn++;
        reset(w, entry, &start);
    }
}

/* The ABI entry state, or the IL's first row for an FDE entered with its
 * frame built. False when that row cannot be taken. */
static bool entry_state(const struct synth_machine *m,
                        const struct sem_fde_il *il, size_t first,
                        struct synth_state *s, bool *mid_frame)
{
    memset(s, 0, sizeof *s);
    s->reached = true;
    s->rsp_known = true;
    s->h = m->entry_height;
    for (int k = 0; k < m->nsaved; k++)
        s->regs[k].in_reg = true;
    *mid_frame = false;
    if (!il || il->nranges == 0)
        return true;
    const struct sem_row *row = il->ranges[first].row;
    bool abi = row->cfa.kind == SEM_CFA_RULE_REG_OFFSET &&
               row->cfa.reg == m->sp && row->cfa.offset == m->entry_height;
    s->ra_sign = synth_row_ra_sign(m, il->fde->cie, row);
    abi = abi && s->ra_sign == SYNTH_RA_NOT_SIGNED;
    if (s->ra_sign == SYNTH_RA_CONFLICT)
        return false;
    for (int k = 0; k < m->nsaved; k++) {
        struct sem_rule r = sem_row_rule(row, m->saved[k]);
        /* the return-address register undefined: the outermost frame
         * (AArch64's _start), compared as such */
        bool outermost = r.kind == SEM_RULE_UNDEFINED &&
                         m->saved[k] == m->arch->ra_column;
        if (r.kind == SEM_RULE_OFFSET) {
            s->regs[k] = (struct synth_reg_state){false, true, true, false,
                                                  r.offset};
            abi = false;
        } else if (r.kind != SEM_RULE_UNSPECIFIED &&
                   r.kind != SEM_RULE_SAME_VALUE && !outermost) {
            return false;
        }
    }
    if (abi)
        return true;
    *mid_frame = true;
    if (row->cfa.kind != SEM_CFA_RULE_REG_OFFSET)
        return false;
    if (row->cfa.reg == m->sp) {
        s->h = row->cfa.offset;
    } else if (row->cfa.reg == m->fp) {
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
    bool abi = c0->kind == SEM_CFA_RULE_REG_OFFSET &&
               c0->reg == w->machine->sp &&
               c0->offset == w->machine->entry_height;
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

/* Whether the instruction only runs on into the next one. */
static bool straight(enum synth_op op)
{
    switch (op) {
    case SYNTH_OP_JMP: case SYNTH_OP_JMP_INDIRECT: case SYNTH_OP_JCC:
    case SYNTH_OP_CALL: case SYNTH_OP_RET: case SYNTH_OP_STOP:
        return false;
    default:
        return true;
    }
}

/* The fall-through of a call that runs, entered by nothing else, straight
 * into a trap (GCC after a call it knows does not return: `call
 * fancy_abort; mov 0x0,%rax; ud2`) is dead code: its state is only the
 * call's, and the CFI there need not describe it (a difference there is
 * a limit, after_noreturn). */
static void mark_dead_after_calls(struct fde_work *w)
{
    for (size_t c = 0; c + 1 < w->n; c++) {
        if (w->insns[c].op != SYNTH_OP_CALL || w->noreturn[c] ||
            !w->out->states[c + 1].weak)
            continue;
        size_t k = c + 1;
        while (k < w->n && straight(w->insns[k].op) && !w->jumped_to[k])
            k++;
        if (k == w->n || w->insns[k].op != SYNTH_OP_STOP || w->jumped_to[k])
            continue;
        for (size_t j = c + 1; j <= k; j++)
            w->out->dead[j] = true;
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
    w->noreturn = calloc(max ? max : 1, sizeof *w->noreturn);
    w->jumped_to = calloc(max ? max : 1, sizeof *w->jumped_to);
    o->states = calloc(max + 1, sizeof *o->states);
    o->limits = calloc(max + 1, sizeof *o->limits);
    o->dead = calloc(max + 1, sizeof *o->dead);
    o->addrs = calloc(max + 2, sizeof *o->addrs);
    if (!w->insns || !w->worklist || !w->listed || !w->resolved ||
        !w->noreturn || !w->jumped_to ||
        !o->states || !o->limits || !o->dead || !o->addrs)
        return CFI_E_NOMEM;
    return CFI_OK;
}

/* The instruction on the straight line before `at` (16 at most) that
 * last wrote `reg`, or -1. */
static long last_write(const struct fde_work *w, size_t at, int reg)
{
    for (size_t back = 1; back <= 16 && back <= at; back++) {
        const struct synth_insn *in = &w->insns[at - back];
        if (reg >= 0 && reg < 32 && (in->writes >> reg) & 1)
            return (long)(at - back);
        if (in->op == SYNTH_OP_RET || in->op == SYNTH_OP_JMP ||
            in->op == SYNTH_OP_CALL)
            return -1;
    }
    return -1;
}

/* A syscall whose number, set by `mov $N,%eax` on the straight line
 * before it, is clone (56) with a new stack (rsi not zeroed: fork's
 * clone keeps the stack) or clone3 (435): the child returns from it on
 * the stack it was given (sanitizers' internal_clone, in inline asm). */
static void mark_clones(struct fde_work *w)
{
    for (size_t i = 0; i < w->n; i++) {
        if (w->insns[i].op != SYNTH_OP_SYSCALL)
            continue;
        long nr = last_write(w, i, w->machine->syscall_nr);
        if (nr < 0 || !w->insns[nr].is_mov_imm)
            continue;
        long stack = last_write(w, i, w->machine->syscall_stack);
        bool same_stack = stack >= 0 && w->insns[stack].is_zeroing;
        if ((w->insns[nr].imm == w->machine->clone_nr && !same_stack) ||
            w->insns[nr].imm == w->machine->clone3_nr)
            w->insns[i].op = SYNTH_OP_CLONE;
    }
}

/* sp moved by a register set on the straight line before by a move of
 * an immediate (`mov x12, #0x36d0; sub sp, sp, x12`): an adjustment by
 * that immediate. */
static void mark_sp_by_register(struct fde_work *w)
{
    for (size_t i = 0; i < w->n; i++) {
        struct synth_insn *in = &w->insns[i];
        if (in->op != SYNTH_OP_RSP_UNKNOWN || !in->sp_by_reg || in->base < 0)
            continue;
        long set = last_write(w, i, in->base);
        if (set < 0 || !w->insns[set].is_mov_imm)
            continue;
        in->op = SYNTH_OP_ADD_RSP;
        in->imm = in->sp_by_reg * w->insns[set].imm;
    }
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

/* The reached direct calls and jumps that leave the range. */
static enum cfi_status collect_exits(struct fde_work *w)
{
    struct synth_fde *o = w->out;
    for (size_t i = 0; i < w->n; i++) {
        const struct synth_insn *in = &w->insns[i];
        bool jump = in->op == SYNTH_OP_JMP || in->op == SYNTH_OP_JCC;
        bool call = in->op == SYNTH_OP_CALL && in->target != 0;
        if (!o->states[i].reached || (!jump && !call) ||
            (in->target >= w->fde->pc_begin && in->target < w->fde->pc_end))
            continue;
        struct synth_exit *grown =
            realloc(o->exits, (o->nexits + 1) * sizeof *grown);
        if (!grown)
            return CFI_E_NOMEM;
        o->exits = grown;
        struct synth_exit *x = &o->exits[o->nexits++];
        x->target = in->target;
        x->is_call = call;
        x->state = o->states[i];
        synth_transfer(w->machine, &x->state, in);
        x->state.weak = false;
    }
    return CFI_OK;
}

/* The entry state given (code no FDE covers), or the IL's. */
static bool start_state(const struct synth_machine *m,
                        const struct sem_fde_il *il, size_t entry,
                        const struct synth_state *given,
                        struct synth_state *s, bool *mid_frame)
{
    if (!given)
        return entry_state(m, il, entry, s, mid_frame);
    *s = *given;
    s->reached = true;
    *mid_frame = s->h != m->entry_height || !s->rsp_known;
    return true;
}

static enum cfi_status run(struct synth_decoder *decoder, struct fde_work *w,
                           const struct sem_fde_il *il,
                           const struct synth_state *given)
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
    if (collect_data_refs(w) != CFI_OK)
        return CFI_E_NOMEM;
    mark_clones(w);
    mark_sp_by_register(w);
    w->npads = synth_landing_pads(w->file, fde, w->pads, SYNTH_MAX_PADS);
    if (w->npads)
        w->nargs = synth_args_sizes(fde, w->args, SYNTH_MAX_PADS);
    o->landing_pads = w->npads;
    if (w->n == 0)
        return CFI_OK;
    size_t entry = landing_pad_first(w, il);
    if (!start_state(w->machine, il, entry, given, &o->states[entry],
                     &o->entered_mid_frame)) {
        set_all(o, SYNTH_REASON_ENTRY_UNKNOWN);
        return CFI_OK;
    }
    if (!fixpoint(w, entry)) {
        set_all(o, SYNTH_REASON_FIXPOINT_LIMIT);
        return CFI_OK;
    }
    set_limits(w);
    mark_dead_after_calls(w);
    return collect_exits(w);
}

/* Code no FDE covers ends after the last instruction reached. */
static void cut_after_reached(struct synth_fde *o)
{
    size_t n = 0;
    for (size_t i = 0; i < o->ninsns; i++)
        if (o->states[i].reached)
            n = i + 1;
    o->ninsns = n;
}

static void free_work(struct fde_work *w)
{
    free(w->insns);
    free(w->worklist);
    free(w->listed);
    free(w->resolved);
    free(w->noreturn);
    free(w->jumped_to);
    free(w->data_refs);
    free(w);
}

static enum cfi_status analyse(struct synth_decoder *decoder,
                               const struct cfi_file *file,
                               const struct cfi_fde *fde,
                               const struct sem_fde_il *il,
                               const struct synth_state *given,
                               struct synth_fde *out)
{
    struct fde_work *w = calloc(1, sizeof *w);
    if (!w)
        return CFI_E_NOMEM;
    w->machine = synth_decoder_machine(decoder);
    out->machine = *w->machine;
    w->file = file;
    w->fde = fde;
    w->out = out;
    enum cfi_status status = run(decoder, w, il, given);
    if (status == CFI_OK && out->no_fde)
        cut_after_reached(out);
    out->code_end = out->ninsns ? out->addrs[out->ninsns] : fde->pc_begin;
    if (status == CFI_OK)
        status = synth_compare(out, il);
    free_work(w);
    return status;
}

enum cfi_status synth_analyse_fde(struct synth_decoder *decoder,
                                  const struct cfi_file *file,
                                  const struct cfi_fde *fde,
                                  const struct sem_fde_il *il,
                                  struct synth_fde *out)
{
    memset(out, 0, sizeof *out);
    out->fde = fde;
    return analyse(decoder, file, fde, il, NULL, out);
}

enum cfi_status synth_analyse_code(struct synth_decoder *decoder,
                                   const struct cfi_file *file,
                                   const struct cfi_fde *range,
                                   const struct synth_state *entry,
                                   struct synth_fde *out)
{
    memset(out, 0, sizeof *out);
    out->fde = range;
    out->no_fde = true;
    out->outermost = file->entry != 0 && range->pc_begin == file->entry;
    struct synth_state abi;
    if (!entry) {
        entry_state(synth_decoder_machine(decoder), NULL, 0, &abi,
                    &out->entered_mid_frame);
        entry = &abi;
    }
    return analyse(decoder, file, range, NULL, entry, out);
}

void synth_fde_free(struct synth_fde *fde)
{
    free(fde->addrs);
    free(fde->states);
    free(fde->limits);
    free(fde->dead);
    free(fde->ranges);
    free(fde->exits);
    memset(fde, 0, sizeof *fde);
}
