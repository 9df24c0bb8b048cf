/* validate.c — see validate.h. The in-process ABIs (full, v1) and what
 * every ABI shares: the addresses, the verdicts and their merging into
 * wrong ranges. v1-direct's child processes are in validate_direct.c, the
 * reports in validate_report.c. */
#include "validate_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compile/cg.h"
#include "diff/memory.h"

/* Addresses of one FDE checked at most (a malformed range cannot make
 * the run endless). */
#define FDE_ADDRESSES_MAX ((uint64_t)1 << 20)

static const char *const abi_names[] = {"full", "v1", "v1-direct"};

const char *diff_abi_name(enum diff_abi abi)
{
    return (unsigned)abi < 3 ? abi_names[abi] : "?";
}

bool diff_abi_parse(const char *text, enum diff_abi *abi)
{
    for (unsigned i = 0; i < 3; i++)
        if (!strcmp(text, abi_names[i])) {
            *abi = (enum diff_abi)i;
            return true;
        }
    return false;
}

void diff_validate_config_default(struct diff_validate_config *config)
{
    *config = (struct diff_validate_config){DIFF_ABI_FULL, 4, 1, 100,
                                            NULL, NULL, NULL, 0};
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

void validate_progress(struct validator *v, uint64_t done)
{
    double now = now_seconds();
    if (!v->config->progress || now - v->last_progress < 0.5)
        return;
    v->last_progress = now;
    v->config->progress(v->config->progress_env, done, v->total,
                        now - v->started);
}

/* ------------------------------------------------------------------ */
/* Addresses                                                            */
/* ------------------------------------------------------------------ */

struct address_list {
    struct check_address *at;
    size_t count, capacity;
};

static bool list_push(struct address_list *list, size_t fde, uint64_t pc)
{
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? list->capacity * 2 : 1024;
        struct check_address *grown =
            realloc(list->at, capacity * sizeof *grown);
        if (!grown)
            return false;
        list->at = grown;
        list->capacity = capacity;
    }
    list->at[list->count++] = (struct check_address){fde, pc};
    return true;
}

/* The addresses FDE i answers for, then its gap when no FDE covers it;
 * or only those of config->only_pcs it covers. */
static bool fde_addresses(const struct cfi_file *file, size_t i,
                          const struct diff_validate_config *config,
                          struct address_list *list)
{
    const struct cfi_fde *fde = &file->fdes[i];
    if (config->only_pcs) {
        for (size_t p = 0; p < config->nonly_pcs; p++)
            if (cfi_file_lookup(file, config->only_pcs[p]) == fde &&
                !list_push(list, i, config->only_pcs[p]))
                return false;
        return true;
    }
    if (fde->pc_end <= fde->pc_begin)
        return list_push(list, i, fde->pc_begin);
    uint64_t end = fde->pc_end - fde->pc_begin > FDE_ADDRESSES_MAX
                       ? fde->pc_begin + FDE_ADDRESSES_MAX : fde->pc_end;
    for (uint64_t pc = fde->pc_begin; pc < end; pc++)
        if (cfi_file_lookup(file, pc) == fde && !list_push(list, i, pc))
            return false;
    if (!cfi_file_lookup(file, fde->pc_end))
        return list_push(list, i, fde->pc_end);
    return true;
}

static uint64_t count_addresses(const struct cfi_file *file,
                                const struct diff_validate_config *config)
{
    if (config->only_pcs)
        return config->nonly_pcs;
    uint64_t total = 0;
    for (size_t i = 0; i < file->nfdes; i++) {
        const struct cfi_fde *fde = &file->fdes[i];
        uint64_t n = fde->pc_end > fde->pc_begin ? fde->pc_end - fde->pc_begin
                                                 : 1;
        total += n > FDE_ADDRESSES_MAX ? FDE_ADDRESSES_MAX : n;
    }
    return total;
}

/* ------------------------------------------------------------------ */
/* Verdicts and wrong ranges                                            */
/* ------------------------------------------------------------------ */

uint32_t validate_kind(const struct diff_outcome *outcome, bool crashed)
{
    if (crashed)
        return DIFF_KIND_CRASH;
    uint32_t kind = 0;
    for (unsigned i = 0; i < outcome->nkept; i++) {
        const struct diff_item_found *item = &outcome->items[i];
        if (item->item == DIFF_ITEM_STATUS)
            kind |= DIFF_KIND_STATUS;
        else if (item->item == DIFF_ITEM_CFA)
            kind |= DIFF_KIND_CFA;
        else if (item->reg < CFI_NGPRS)
            kind |= DIFF_KIND_REG0 << item->reg;
    }
    return kind;
}

void validate_add_kind(struct diff_wrong_range *wrong,
                       const struct cfi_frame *expected,
                       const struct cfi_frame *got,
                       const struct diff_outcome *outcome, bool crashed)
{
    if (wrong->wrong_requests++ > 0)
        return;
    wrong->kind = validate_kind(outcome, crashed);
    if (wrong->kind & DIFF_KIND_STATUS) {
        wrong->expected_status = expected->status;
        wrong->got_status = got->status;
    }
}

static char *row_text(const struct sem_range *range)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        return NULL;
    sem_print_range_text(out, range);
    fclose(out);
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
        text[--len] = 0;
    return text;
}

void validate_first_wrong(struct validator *v, const struct check_address *at,
                          const struct diff_question *q,
                          const struct cfi_frame *expected,
                          const struct cfi_frame *got,
                          const struct diff_outcome *outcome, bool crashed,
                          struct diff_wrong_range *wrong)
{
    const struct cfi_fde *fde = &v->file->fdes[at->fde];
    wrong->has_fde = true;
    wrong->fde_section = fde->section;
    wrong->fde_offset = fde->offset;
    wrong->fde_begin = fde->pc_begin;
    wrong->fde_end = fde->pc_end;
    wrong->begin = at->pc;
    wrong->end = at->pc + 1;
    wrong->state = q->state;
    wrong->expected = *expected;
    wrong->got = *got;
    wrong->outcome = *outcome;
    wrong->crashed = crashed;
    wrong->row_text = q->range ? row_text(q->range) : NULL;
}

static enum cfi_status close_range(struct validator *v)
{
    if (!v->open)
        return CFI_OK;
    v->open = false;
    struct diff_validation *result = v->result;
    result->ranges_total++;
    if (result->nranges >= v->config->keep) {
        free(v->current.row_text);
        return CFI_OK;
    }
    if (result->nranges % 16 == 0) {
        struct diff_wrong_range *grown = realloc(
            result->ranges, (result->nranges + 16) * sizeof *grown);
        if (!grown) {
            free(v->current.row_text);
            return CFI_E_NOMEM;
        }
        result->ranges = grown;
    }
    result->ranges[result->nranges++] = v->current;
    return CFI_OK;
}

enum cfi_status validate_merge(struct validator *v,
                               const struct check_address *at,
                               struct diff_wrong_range *wrong)
{
    if (!wrong->wrong_requests)
        return close_range(v);
    v->result->wrong_addresses++;
    v->result->wrong_requests += wrong->wrong_requests;
    struct diff_wrong_range *c = &v->current;
    bool same_kind = c->kind == wrong->kind &&
                     (!(c->kind & DIFF_KIND_STATUS) ||
                      (c->expected_status == wrong->expected_status &&
                       c->got_status == wrong->got_status));
    if (v->open && c->end == at->pc && c->fde_offset == wrong->fde_offset &&
        c->fde_section == wrong->fde_section && same_kind) {
        c->end = at->pc + 1;
        c->wrong_requests += wrong->wrong_requests;
        free(wrong->row_text);
        return CFI_OK;
    }
    enum cfi_status status = close_range(v);
    v->current = *wrong;
    v->open = true;
    return status;
}

/* ------------------------------------------------------------------ */
/* The in-process ABIs                                                  */
/* ------------------------------------------------------------------ */

/* The eh_elf's answer to the question in v->question, in v->got, and
 * the comparison. */
static void ask_v1(struct validator *v, struct diff_outcome *outcome)
{
    struct diff_question *q = &v->question;
    struct diff_v1_context ctx = diff_v1_context_of(&q->state.callee);
    bool faulted;
    diff_question_rewind(q);
    struct diff_v1_context got = diff_v1_call(v->v1, ctx, q->request.pc,
                                              q->request.memory, &faulted);
    struct v1_view expected;
    validate_v1_view(v->expected, &q->state.callee, &expected);
    validate_v1_compare(&expected, &got, faulted, false, outcome);
    validate_v1_frame(&got, faulted, false, &q->state.callee, v->got);
}

static void ask_full(struct validator *v, struct diff_outcome *outcome)
{
    struct diff_question *q = &v->question;
    struct diff_answer *answer = v->answer;
    diff_question_rewind(q);
    cg_unwind(v->full, &q->request, &answer->frame);
    diff_answer_all_comparable(answer);
    for (unsigned reg = CFI_NGPRS; reg < CFI_NREGS; reg++)
        answer->reg_comparable[reg] = false;
    struct diff_mismatch context = {
        .engine = DIFF_ENGINE_compiled, .file = v->file, .fde = q->fde,
        .row = q->range ? q->range->row : NULL, .translation = q->translation,
        .request = &q->request, .expected = v->expected};
    diff_compare(&context, answer, outcome);
}

static enum cfi_status check_address(struct validator *v,
                                     const struct check_address *at)
{
    struct diff_wrong_range wrong;
    memset(&wrong, 0, sizeof wrong);
    for (unsigned k = 0; k < v->config->nstates; k++) {
        struct diff_question *q = &v->question;
        diff_question_make(q, v->il, &v->states, (struct diff_pc){at->pc, false},
                           k, diff_memory_reader(v->memories[k]),
                           v->reference, v->expected);
        v->result->requests++;
        v->result->reference[v->expected->status]++;
        struct diff_outcome outcome;
        if (v->v1)
            ask_v1(v, &outcome);
        else
            ask_full(v, &outcome);
        if (outcome.nitems == 0)
            continue;
        if (!wrong.wrong_requests)
            validate_first_wrong(v, at, q, v->expected, v->got, &outcome,
                                 false, &wrong);
        validate_add_kind(&wrong, v->expected, v->got, &outcome, false);
    }
    return validate_merge(v, at, &wrong);
}

static enum cfi_status run_in_process(struct validator *v)
{
    struct address_list list = {NULL, 0, 0};
    enum cfi_status status = CFI_OK;
    uint64_t done = 0;
    for (size_t i = 0; i < v->file->nfdes && status == CFI_OK; i++) {
        list.count = 0;
        if (!fde_addresses(v->file, i, v->config, &list)) {
            status = CFI_E_NOMEM;
            break;
        }
        for (size_t a = 0; a < list.count && status == CFI_OK; a++)
            status = check_address(v, &list.at[a]);
        v->result->addresses += list.count;
        done += list.count;
        validate_progress(v, done);
    }
    free(list.at);
    return status == CFI_OK ? close_range(v) : status;
}

/* ------------------------------------------------------------------ */
/* v1: the reference restricted, the comparison                         */
/* ------------------------------------------------------------------ */

static enum cfi_status frame_fail(struct cfi_frame *frame,
                                  enum cfi_status status,
                                  const struct cfi_diag *diag,
                                  const char *message)
{
    frame->status = status;
    frame->diag = diag ? *diag
                       : (struct cfi_diag){status, message, CFI_NO_OFFSET, -1};
    return status;
}

enum cfi_status validate_v1_reference(const struct sem_file_il *il,
                                      const struct cfi_request *request,
                                      struct cfi_frame *frame)
{
    uint64_t lookup = request->caller_frame ? request->pc - 1 : request->pc;
    const struct cfi_fde *fde = cfi_file_lookup(il->file, lookup);
    if (!fde)
        return frame_fail(frame, CFI_E_NO_FDE, NULL,
                          "no FDE covers the address");
    size_t index = (size_t)(fde - il->file->fdes);
    if (il->status[index] != CFI_OK)
        return frame_fail(frame, il->status[index], &il->diags[index], NULL);
    const struct sem_range *range = sem_fde_il_find(&il->fdes[index], lookup);
    if (!range)
        return frame_fail(frame, CFI_E_NO_FDE, NULL,
                          "no FDE covers the address");
    static const unsigned carried[] = {CFI_REG_RBX, CFI_REG_RBP, CFI_REG_RIP};
    struct sem_reg_rule rules[3];
    uint32_t n = 0;
    for (size_t i = 0; i < 3; i++) {
        struct sem_rule rule = sem_row_rule(range->row, carried[i]);
        if (rule.kind != SEM_RULE_UNSPECIFIED)
            rules[n++] = (struct sem_reg_rule){carried[i], rule};
    }
    struct sem_row row = {range->row->cfa, n, rules};
    return sem_eval_row(&row, request->callee, request->memory, frame);
}

static const unsigned v1_regs[V1_NREGS] = {CFI_REG_RIP, CFI_REG_RBP,
                                           CFI_REG_RBX};
static const uint8_t v1_flags[V1_NREGS] = {DIFF_V1_RIP, DIFF_V1_RBP,
                                           DIFF_V1_RBX};

void validate_v1_view(const struct cfi_frame *frame,
                      const struct cfi_regs *callee, struct v1_view *view)
{
    memset(view, 0, sizeof *view);
    view->status = frame->status;
    view->cfa = frame->cfa;
    for (unsigned i = 0; i < V1_NREGS; i++) {
        unsigned reg = v1_regs[i];
        if (frame->status == CFI_OK) {
            view->reg_status[i] = frame->caller.status[reg];
            view->reg_value[i] = frame->caller.value[reg];
        }
        view->callee_status[i] = callee->status[reg];
        view->callee_value[i] = callee->value[reg];
    }
}

static void add_item(struct diff_outcome *outcome, enum diff_item item,
                     unsigned reg)
{
    if (outcome->nkept < DIFF_ITEMS_KEPT)
        outcome->items[outcome->nkept++] =
            (struct diff_item_found){item, reg, NULL};
    outcome->nitems++;
    outcome->nnew++;
}

/* rip: a clear flag is undefined. rbp, rbx: a clear flag is "kept", which
 * agrees with an expected callee value, undefined or unknown. */
static bool v1_reg_agrees(const struct v1_view *e, unsigned i, bool flag,
                          uint64_t value)
{
    if (flag)
        return e->reg_status[i] == CFI_REG_VALUE && e->reg_value[i] == value;
    if (e->reg_status[i] != CFI_REG_VALUE)
        return true;
    return i != V1_RIP && e->callee_status[i] == CFI_REG_VALUE &&
           e->callee_value[i] == e->reg_value[i];
}

void validate_v1_compare(const struct v1_view *expected,
                         const struct diff_v1_context *got, bool faulted,
                         bool crashed, struct diff_outcome *outcome)
{
    memset(outcome, 0, sizeof *outcome);
    bool got_error = crashed || faulted || (got->flags & DIFF_V1_ERROR);
    if (crashed || got_error != (expected->status != CFI_OK)) {
        add_item(outcome, DIFF_ITEM_STATUS, 0);
    } else if (!got_error) {
        if (!(got->flags & DIFF_V1_RSP) || got->rsp != expected->cfa)
            add_item(outcome, DIFF_ITEM_CFA, 0);
        const uintptr_t values[V1_NREGS] = {got->rip, got->rbp, got->rbx};
        for (unsigned i = 0; i < V1_NREGS; i++)
            if (!v1_reg_agrees(expected, i, (got->flags & v1_flags[i]) != 0,
                               values[i]))
                add_item(outcome, DIFF_ITEM_REG, v1_regs[i]);
    }
    outcome->verdict = outcome->nitems ? DIFF_VERDICT_DIFFER
                                       : DIFF_VERDICT_AGREE;
}

void validate_v1_frame(const struct diff_v1_context *got, bool faulted,
                       bool crashed, const struct cfi_regs *callee,
                       struct cfi_frame *frame)
{
    memset(frame, 0, sizeof *frame);
    frame->diag = (struct cfi_diag){CFI_OK, NULL, CFI_NO_OFFSET, -1};
    if (crashed || faulted || (got->flags & DIFF_V1_ERROR)) {
        frame->status = faulted ? CFI_E_MEMORY : CFI_E_UNSUPPORTED;
        frame->diag.status = frame->status;
        frame->diag.message =
            crashed ? "crashed: the eh_elf read memory outside the stack"
            : faulted ? "a read of the eh_elf's deref faulted"
                      : "the eh_elf set its error flag";
        return;
    }
    memset(frame->caller.status, CFI_REG_UNDEFINED, sizeof frame->caller.status);
    frame->cfa = got->rsp;
    if (got->flags & DIFF_V1_RSP)
        cfi_regs_set(&frame->caller, CFI_REG_RSP, got->rsp);
    const uintptr_t values[V1_NREGS] = {got->rip, got->rbp, got->rbx};
    for (unsigned i = 0; i < V1_NREGS; i++) {
        unsigned reg = v1_regs[i];
        if (got->flags & v1_flags[i]) {
            cfi_regs_set(&frame->caller, reg, values[i]);
        } else if (i != V1_RIP) {   /* kept: the callee's, as it is */
            frame->caller.status[reg] = callee->status[reg];
            frame->caller.value[reg] = callee->value[reg];
        }
    }
}

/* ------------------------------------------------------------------ */
/* The run                                                              */
/* ------------------------------------------------------------------ */

static enum cfi_status open_eh_elf(struct validator *v, const char *path,
                                   struct cfi_diag *diag)
{
    enum diff_abi abi = v->config->abi;
    if (abi != DIFF_ABI_FULL)
        return diff_v1_open(path, abi == DIFF_ABI_V1 ? DIFF_V1_DEREF
                                                     : DIFF_V1_DIRECT,
                            &v->v1, diag);
    enum cfi_status status = cg_load(path, &v->full, diag);
    if (status == CFI_OK && cg_eh_elf_abi(v->full) != CG_ABI_FULL) {
        cg_unload(v->full);
        v->full = NULL;
        return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                        "a v1 eh_elf: validate it with --abi v1");
    }
    return status;
}

static bool make_memories(struct validator *v)
{
    unsigned n = v->config->nstates;
    v->memories = calloc(n, sizeof *v->memories);
    for (unsigned k = 0; v->memories && k < n; k++)
        if (!(v->memories[k] = diff_state_memory(&v->states, k, v->file,
                                                 NULL, 0)))
            return false;
    return v->memories != NULL;
}

static void validator_close(struct validator *v)
{
    for (unsigned k = 0; v->memories && k < v->config->nstates; k++)
        diff_memory_free(v->memories[k]);
    free(v->memories);
    free(v->expected);
    free(v->answer);
    diff_v1_close(v->v1);
    if (v->full)
        cg_unload(v->full);
    if (v->open)
        free(v->current.row_text);
}

static enum cfi_status validate_file(struct validator *v)
{
    diff_state_config_default(&v->states, v->config->seed);
    v->reference = sem_unwind;
    if (v->config->abi != DIFF_ABI_FULL) {
        v->reference = validate_v1_reference;
        v->states.regs = DIFF_REGS_V1;
    }
    v->expected = malloc(sizeof *v->expected);
    v->answer = malloc(sizeof *v->answer);
    if (!v->expected || !v->answer || !make_memories(v))
        return CFI_E_NOMEM;
    v->got = &v->answer->frame;
    v->result->nfdes = v->file->nfdes;
    v->total = count_addresses(v->file, v->config);
    if (v->config->abi != DIFF_ABI_V1_DIRECT)
        return run_in_process(v);
    struct address_list list = {NULL, 0, 0};
    enum cfi_status status = CFI_OK;
    for (size_t i = 0; i < v->file->nfdes && status == CFI_OK; i++)
        if (!fde_addresses(v->file, i, v->config, &list))
            status = CFI_E_NOMEM;
    if (status == CFI_OK)
        status = validate_direct(v, list.at, list.count);
    free(list.at);
    return status == CFI_OK ? close_range(v) : status;
}

static struct diff_validation *validation_new(
    const struct diff_validate_config *config, const char *path,
    const char *eh_elf_path)
{
    struct diff_validation *result = calloc(1, sizeof *result);
    if (!result)
        return NULL;
    result->config = *config;
    if (result->config.nstates == 0)
        result->config.nstates = 1;
    result->path = path;
    result->eh_elf_path = eh_elf_path;
    return result;
}

enum cfi_status diff_validate(const struct diff_validate_config *config,
                              const char *path, const char *eh_elf_path,
                              struct diff_validation **result,
                              const char **bad_path, struct cfi_diag *diag)
{
    *result = NULL;
    *bad_path = path;
    struct cfi_file *file;
    enum cfi_status status = cfi_file_open(path, &file, diag);
    if (status != CFI_OK)
        return status;
    struct validator v = {.started = now_seconds()};
    v.result = validation_new(config, path, eh_elf_path);
    v.config = v.result ? &v.result->config : config;
    v.file = file;
    struct sem_file_il *il = NULL;
    status = v.result && sem_file_il_build(file, &il) == CFI_OK
                 ? CFI_OK : cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET,
                                     "out of memory");
    v.il = il;
    if (status == CFI_OK) {
        *bad_path = eh_elf_path;
        status = open_eh_elf(&v, eh_elf_path, diag);
    }
    if (status == CFI_OK) {
        *bad_path = NULL;
        v.result->addresses = 0;
        status = validate_file(&v);
        if (status != CFI_OK)
            cfi_fail(diag, status, CFI_NO_OFFSET, "out of memory");
    }
    validator_close(&v);
    sem_file_il_free(il);
    cfi_file_close(file);
    if (status != CFI_OK) {
        diff_validation_free(v.result);
        return status;
    }
    v.result->seconds = now_seconds() - v.started;
    *result = v.result;
    return CFI_OK;
}

void diff_validation_free(struct diff_validation *validation)
{
    if (!validation)
        return;
    for (size_t i = 0; i < validation->nranges; i++)
        free(validation->ranges[i].row_text);
    free(validation->ranges);
    free(validation);
}
