/* explain.c — `cfisem explain`: one frame, and how semantics/ derived it.
 *
 * The question is the one `cfisem unwind --engine il` answers (same FDE
 * lookup, same translation, same evaluation: sem_unwind_fde_traced); a
 * trace sink keeps each event semantics/ reports while it computes. The
 * document is made from those events only. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engines/engines.h"
#include "explain.h"

static const char usage[] =
    "usage: cfisem explain FILE --pc ADDR [--caller]\n"
    "                      [--regs REG=VALUE[,REG=VALUE...]]\n"
    "                      [--mem-seed S | --mem DUMP@ADDR] [--fault B-E]...\n"
    "                      [--format text|markdown|latex|json|html]\n"
    "\n"
    "Shows how the semantics derives the unwinding of one frame of FILE at\n"
    "ADDR, in five sections:\n"
    "  1. the records: the FDE and its CIE (augmentation, factors, RA column);\n"
    "  2. the program: the CIE's then the FDE's instructions, one a line:\n"
    "     offset, bytes, the instruction, where it applies, the rule function\n"
    "     of semantics/translate.c and what it did to the row, the remember\n"
    "     stack's depth; a line marks where the lookup PC falls;\n"
    "  3. the row: its range, why it was chosen, each column's rule and the\n"
    "     instruction that set it (or CIE, or ABI default);\n"
    "  4. the evaluation (with --regs): the CFA, each register's rule, the\n"
    "     addresses read and what answered them, expressions traced one\n"
    "     operation a line with the stack after it;\n"
    "  5. the result, as `cfisem unwind --engine il` prints it.\n"
    "\n"
    "  --pc, --caller, --regs, --mem-seed, --mem, --fault as for unwind.\n"
    "  --format F   text (default; colour on a terminal unless NO_COLOR),\n"
    "               markdown, latex (a fragment to \\input), json (one\n"
    "               object; its schema is in the README), html (one page)\n"
    "\n"
    "Example:\n"
    "  cfisem explain /lib/x86_64-linux-gnu/libc.so.6 --pc 0x27290 \\\n"
    "      --regs rsp=0x7ffe1000\n"
    "\n"
    "Exit status: as unwind's: 0 unwound, 3 cannot unwind; without --regs,\n"
    "0 when the row is found and 3 when it is not (no FDE, malformed\n"
    "program); 2 bad input file, 64 usage error.\n";

struct options {
    const char *path;
    uint64_t pc;
    bool has_pc;
    bool caller;
    enum ex_format format;
    struct cli_state state;
};

static bool parse_format(const char *text, enum ex_format *format)
{
    static const char *const names[] = {
        [EX_TEXT] = "text", [EX_MARKDOWN] = "markdown", [EX_LATEX] = "latex",
        [EX_JSON] = "json", [EX_HTML] = "html",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(text, names[i])) {
            *format = (enum ex_format)i;
            return true;
        }
    return false;
}

static bool takes_value(const char *arg)
{
    static const char *const names[] = {"--pc", "--regs", "--mem-seed",
                                        "--mem", "--fault", "--format"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(arg, names[i]))
            return true;
    return false;
}

static int parse_value(const char *arg, char *value, struct options *o)
{
    if (!strcmp(arg, "--pc") && !(o->has_pc = cli_parse_u64(value, &o->pc)))
        return cli_usage_error("explain", "bad address", value);
    if (!strcmp(arg, "--regs") && !cli_state_regs(&o->state, value))
        return cli_usage_error("explain", "bad register list", value);
    if (!strcmp(arg, "--mem-seed") && !cli_parse_u64(value, &o->state.seed))
        return cli_usage_error("explain", "bad seed", value);
    if (!strcmp(arg, "--fault") && !cli_state_fault(&o->state, value))
        return cli_usage_error("explain", "expected --fault BEGIN-END, got",
                               value);
    if (!strcmp(arg, "--format") && !parse_format(value, &o->format))
        return cli_usage_error("explain", "unknown format", value);
    if (!strcmp(arg, "--mem")) {
        char copy[64];
        snprintf(copy, sizeof copy, "%s", value);
        if (!cli_state_dump(&o->state, value))
            return cli_usage_error("explain", "expected DUMP@ADDR, got", copy);
    }
    return CLI_OK;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (arg[0] != '-') {
            if (o->path)
                return cli_usage_error("explain", "more than one FILE:", arg);
            o->path = arg;
        } else if (!strcmp(arg, "--caller")) {
            o->caller = true;
        } else if (!takes_value(arg)) {
            return cli_usage_error("explain", "unknown option", arg);
        } else if (i + 1 >= argc) {
            return cli_usage_error("explain", "missing value for", arg);
        } else {
            int status = parse_value(arg, argv[++i], o);
            if (status != CLI_OK)
                return status;
        }
    }
    if (!o->path)
        return cli_usage_error("explain", "missing FILE", NULL);
    if (!o->has_pc)
        return cli_usage_error("explain", "missing --pc", NULL);
    if (o->state.callee.status[CFI_REG_RIP] != CFI_REG_VALUE)
        cfi_regs_set(&o->state.callee, CFI_REG_RIP, o->pc);
    return CLI_OK;
}

/* ------------------------------------------------------------------ */
/* Growing arrays                                                       */
/* ------------------------------------------------------------------ */

/* Room for one more element of `size` bytes in *items; false when out of
 * memory (then e->out_of_memory is set). */
static bool reserve(struct explanation *e, void **items, size_t count,
                    size_t *capacity, size_t size)
{
    if (count < *capacity)
        return true;
    size_t grown_capacity = *capacity ? *capacity * 2 : 16;
    void *grown = realloc(*items, grown_capacity * size);
    if (!grown) {
        e->out_of_memory = true;
        return false;
    }
    *items = grown;
    *capacity = grown_capacity;
    return true;
}

#define RESERVE(e, array, count, capacity)                                  \
    reserve((e), (void **)&(e)->array, (e)->count, &(e)->capacity,          \
            sizeof *(e)->array)

/* ------------------------------------------------------------------ */
/* Memory: the harness's reader, each read kept with what answered it   */
/* ------------------------------------------------------------------ */

struct traced_memory {
    struct explanation *e;
    struct cfi_memory inner;
};

static bool in_range(uint64_t addr, unsigned size, uint64_t begin,
                     uint64_t end)
{
    return addr < end && addr + size > begin;
}

/* The part of the memory model that holds `addr` (memory.h's order). */
static const char *read_source(const struct explanation *e, uint64_t addr,
                               unsigned size, enum cfi_status status)
{
    const struct cli_state *s = e->state;
    if (status != CFI_OK)
        return "fault";
    for (size_t i = 0; i < s->nfaults; i++)
        if (in_range(addr, size, s->faults[i].begin, s->faults[i].end))
            return "fault";
    if (cfi_file_segment(e->file, addr))
        return "file segment";
    if (s->dump_path &&
        in_range(addr, size, s->dump_addr, s->dump_addr + s->dump_len))
        return "dump";
    return "synthetic";
}

static enum cfi_status traced_read(void *env, uint64_t addr, unsigned size,
                                   uint64_t *value)
{
    struct traced_memory *m = env;
    struct explanation *e = m->e;
    enum cfi_status status = m->inner.read(m->inner.env, addr, size, value);
    if (RESERVE(e, reads, nreads, reads_capacity))
        e->reads[e->nreads++] = (struct ex_read){
            addr, size, status, status == CFI_OK ? *value : 0,
            read_source(e, addr, size, status)};
    return status;
}

/* ------------------------------------------------------------------ */
/* The trace sink                                                       */
/* ------------------------------------------------------------------ */

static bool same_cfa(const struct sem_cfa *a, const struct sem_cfa *b)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind == SEM_CFA_RULE_REG_OFFSET)
        return a->reg == b->reg && a->offset == b->offset;
    if (a->kind == SEM_CFA_RULE_EXPR)
        return a->expr.len == b->expr.len &&
               (a->expr.len == 0 ||
                !memcmp(a->expr.bytes, b->expr.bytes, a->expr.len));
    return true;
}

static bool same_rule(const struct sem_rule *a, const struct sem_rule *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case SEM_RULE_OFFSET:
    case SEM_RULE_VAL_OFFSET: return a->offset == b->offset;
    case SEM_RULE_REGISTER: return a->reg == b->reg;
    case SEM_RULE_EXPRESSION:
    case SEM_RULE_VAL_EXPRESSION:
        return a->expr.len == b->expr.len &&
               (a->expr.len == 0 ||
                !memcmp(a->expr.bytes, b->expr.bytes, a->expr.len));
    default: return true;
    }
}

/* The columns the event's instruction changed, into *insn. */
static bool record_changes(const struct sem_trace_insn *event,
                           struct ex_insn *insn)
{
    size_t n = !same_cfa(event->cfa_before, event->cfa_after);
    for (unsigned reg = 0; reg < CFI_NREGS; reg++)
        n += !same_rule(&event->rules_before[reg], &event->rules_after[reg]);
    insn->changed = n ? malloc(n * sizeof *insn->changed) : NULL;
    insn->rules = n ? calloc(n, sizeof *insn->rules) : NULL;
    if (n && (!insn->changed || !insn->rules))
        return false;
    if (!same_cfa(event->cfa_before, event->cfa_after)) {
        insn->cfa = *event->cfa_after;
        insn->changed[insn->nchanged++] = EX_CFA;
    }
    for (unsigned reg = 0; reg < CFI_NREGS; reg++)
        if (!same_rule(&event->rules_before[reg], &event->rules_after[reg])) {
            insn->rules[insn->nchanged] = event->rules_after[reg];
            insn->changed[insn->nchanged++] = reg;
        }
    return true;
}

static void on_insn(void *env, const struct sem_trace_insn *event)
{
    struct explanation *e = env;
    if (!RESERVE(e, insns, ninsns, insns_capacity))
        return;
    struct ex_insn *insn = &e->insns[e->ninsns];
    *insn = (struct ex_insn){
        .decode_error = event->insn == NULL, .in_cie = event->in_cie,
        .section_offset = event->section_offset, .bytes = event->bytes,
        .len = event->len, .rule = event->rule, .loc = event->loc,
        .loc_after = event->loc_after, .status = event->status,
        .depth_before = e->depth_now, .depth = event->depth,
    };
    if (event->insn)
        insn->insn = *event->insn;
    if (event->status != CFI_OK && event->diag)
        insn->diag = *event->diag;
    if (!record_changes(event, insn)) {
        e->out_of_memory = true;
        return;
    }
    for (size_t i = 0; i < insn->nchanged; i++)
        e->origin_now[insn->changed[i]] = (int)e->ninsns;
    e->depth_now = event->depth;
    e->ninsns++;
}

static void on_range(void *env, const struct sem_range *range)
{
    struct explanation *e = env;
    if (!RESERVE(e, ranges, nranges, ranges_capacity))
        return;
    struct ex_range *r = &e->ranges[e->nranges++];
    r->range = *range;
    r->emitted_at = e->ninsns;
    memcpy(r->origin, e->origin_now, sizeof r->origin);
}

static void on_lookup(void *env, const struct sem_trace_lookup *event)
{
    struct explanation *e = env;
    e->has_lookup = true;
    e->lookup = *event;
    e->row = NULL;
    for (size_t i = 0; event->range && i < e->nranges; i++)
        if (e->ranges[i].range.begin == event->range->begin) {
            e->row = &e->ranges[i].range;
            e->row_index = i;
        }
}

/* The operations since the last value belong to this one, and so do the
 * reads after its last operation (a saved register's load). */
static void claim(struct explanation *e, struct ex_value *v)
{
    v->present = true;
    v->first_op = e->ops_pending;
    v->nops = e->nops - e->ops_pending;
    v->first_read = e->reads_pending;
    if (v->nops) {
        const struct ex_op *last = &e->ops[e->nops - 1];
        v->first_read = last->first_read + last->nreads;
    }
    v->nreads = e->nreads - v->first_read;
    e->ops_pending = e->nops;
    e->reads_pending = e->nreads;
}

static void on_cfa(void *env, const struct sem_trace_cfa *event)
{
    struct explanation *e = env;
    struct ex_value *v = &e->cfa;
    claim(e, v);
    v->has_base = event->has_base;
    v->base = event->base;
    v->status = event->status;
    if (event->status != CFI_OK && event->diag)
        v->diag = *event->diag;
    v->value = event->value;
}

static void on_reg(void *env, const struct sem_trace_reg *event)
{
    struct explanation *e = env;
    if (event->reg >= CFI_NREGS)
        return;
    struct ex_value *v = &e->regs[event->reg];
    claim(e, v);
    v->rule = event->rule;
    v->abi_default = event->abi_default;
    v->has_address = event->has_address;
    v->address = event->address;
    v->status = event->status;
    if (event->status != CFI_OK && event->diag)
        v->diag = *event->diag;
    v->caller_status = event->caller_status;
    v->value = event->caller_value;
}

static void on_op(void *env, const struct sem_trace_op *event)
{
    struct explanation *e = env;
    if (!RESERVE(e, ops, nops, ops_capacity))
        return;
    struct ex_op *op = &e->ops[e->nops++];
    op->expr = event->expr;
    op->start = event->start;
    op->at = event->at;
    op->next = event->next;
    op->depth = event->depth <= CFI_EXPR_STACK_MAX ? event->depth
                                                    : CFI_EXPR_STACK_MAX;
    memcpy(op->stack, event->stack, op->depth * sizeof op->stack[0]);
    op->status = event->status;
    op->message = event->status != CFI_OK && event->diag
                      ? event->diag->message : NULL;
    /* The reads since the previous operation are this one's. */
    size_t first = op == e->ops ? e->reads_pending : op[-1].first_read +
                                                         op[-1].nreads;
    if (first < e->reads_pending)
        first = e->reads_pending;
    op->first_read = first;
    op->nreads = e->nreads - first;
}

/* ------------------------------------------------------------------ */
/* Running                                                              */
/* ------------------------------------------------------------------ */

static void explanation_free(struct explanation *e)
{
    for (size_t i = 0; i < e->ninsns; i++) {
        free(e->insns[i].changed);
        free(e->insns[i].rules);
    }
    free(e->insns);
    free(e->ranges);
    free(e->ops);
    free(e->reads);
}

/* Runs the question through semantics/, keeping the trace in *e. */
static void explain_frame(struct explanation *e, struct cfi_memory memory,
                          struct sem_arena *arena)
{
    for (size_t i = 0; i < EX_NCOLUMNS; i++)
        e->origin_now[i] = EX_ORIGIN_NONE;
    struct traced_memory traced = {e, memory};
    struct cfi_request request = {e->pc, e->caller, &e->state->callee,
                                  {traced_read, &traced}};
    e->lookup_pc = e->caller ? e->pc - 1 : e->pc;
    e->fde = cfi_file_lookup(e->file, e->lookup_pc);
    if (!e->fde) {
        e->frame.status = CFI_E_NO_FDE;
        e->frame.diag = (struct cfi_diag){CFI_E_NO_FDE,
                                          "no FDE covers the address",
                                          CFI_NO_OFFSET, -1};
        return;
    }
    struct sem_trace trace = {e, on_insn, on_range, on_lookup,
                              on_cfa, on_reg, on_op};
    sem_unwind_fde_traced(e->fde, &request, arena, &e->frame, &trace);
}

size_t ex_lookup_mark(const struct explanation *e,
                      const struct sem_range **range)
{
    *range = NULL;
    if (e->row) {
        *range = e->row;
        return e->ranges[e->row_index].emitted_at;
    }
    for (size_t i = 0; i < e->nranges; i++)
        if (e->ranges[i].range.begin <= e->lookup_pc &&
            e->lookup_pc < e->ranges[i].range.end) {
            *range = &e->ranges[i].range;
            return e->ranges[i].emitted_at;
        }
    const struct ex_insn *last = e->ninsns ? &e->insns[e->ninsns - 1] : NULL;
    if (last && last->status != CFI_OK && !last->in_cie &&
        last->loc <= e->lookup_pc)
        return e->ninsns - 1;
    return SIZE_MAX;
}

static bool wants_colour(enum ex_format format)
{
    const char *no_colour = getenv("NO_COLOR");
    return format == EX_TEXT && isatty(STDOUT_FILENO) &&
           !(no_colour && *no_colour);
}

static int exit_status(const struct explanation *e)
{
    if (e->state->has_regs && e->frame.status != CFI_OK)
        return cli_exit_of(e->frame.status, CLI_NO_UNWIND);
    if (e->state->has_regs)
        return CLI_OK;
    return e->row ? CLI_OK : CLI_NO_UNWIND;
}

static int print_explanation(const struct explanation *e, enum ex_format f)
{
    if (e->out_of_memory) {
        fprintf(stderr, "cfisem: out of memory\n");
        return CLI_BAD_INPUT;
    }
    if (e->frame.status == CFI_E_MALFORMED ||
        e->frame.status == CFI_E_UNSUPPORTED)
        cli_report_file_error(e->path, &e->frame.diag);
    if (f == EX_JSON) {
        ex_json(e, stdout);
    } else if (f == EX_HTML) {
        if (!ex_html(e, stdout)) {
            fprintf(stderr, "cfisem: out of memory\n");
            return CLI_BAD_INPUT;
        }
    } else {
        struct ex_renderer *r = ex_renderer_new(stdout, f, wants_colour(f));
        if (!r) {
            fprintf(stderr, "cfisem: out of memory\n");
            return CLI_BAD_INPUT;
        }
        ex_document(e, r);
        if (!ex_renderer_end(r)) {
            fprintf(stderr, "cfisem: out of memory\n");
            return CLI_BAD_INPUT;
        }
    }
    return exit_status(e);
}

static int explain_file(struct options *o, const struct cfi_file *file)
{
    struct diff_memory *memory;
    int result = cli_state_memory(&o->state, file, &memory);
    if (result != CLI_OK)
        return result;
    struct sem_arena *arena = sem_arena_new();
    struct explanation *e = calloc(1, sizeof *e);
    if (!arena || !e) {
        fprintf(stderr, "cfisem: out of memory\n");
        result = CLI_BAD_INPUT;
    } else {
        e->path = o->path;
        e->file = file;
        e->pc = o->pc;
        e->caller = o->caller;
        e->state = &o->state;
        explain_frame(e, diff_memory_reader(memory), arena);
        result = print_explanation(e, o->format);
        explanation_free(e);
    }
    free(e);
    sem_arena_free(arena);
    diff_memory_free(memory);
    return result;
}

int cli_explain(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    struct options *o = calloc(1, sizeof *o);
    if (!o)
        return CLI_BAD_INPUT;
    int result = parse_options(argc, argv, o);
    if (result == CLI_OK) {
        struct cfi_file *file;
        struct cfi_diag diag;
        if (cfi_file_open(o->path, &file, &diag) != CFI_OK) {
            cli_report_file_error(o->path, &diag);
            result = CLI_BAD_INPUT;
        } else {
            result = explain_file(o, file);
            cfi_file_close(file);
        }
    }
    free(o);
    return result;
}
