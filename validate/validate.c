/* SPDX-License-Identifier: MIT */
/* validate/validate.c — see validate.h. The addresses, the verdicts and their
 * merging into wrong ranges, the run. The v1 reference is in
 * validate/v1.c, the child processes in validate/child.c, the text
 * ranges in validate/text.c, the reports in validate/report.c. */
#include "internal.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compile/cg.h"
#include "engines/engines.h"

/* Addresses of one FDE, or of one gap, checked at most (a malformed
 * range cannot make the run endless). */
#define FDE_ADDRESSES_MAX ((uint64_t)1 << 20)
/* Questions a sample asks the other ABIs when most calls crashed. */
#define HINT_ADDRESSES 2048

static const char *const abi_names[] = {"full", "v1", "v1-direct"};

const char *validate_abi_name(enum validate_abi abi)
{
    return (unsigned)abi < 3 ? abi_names[abi] : "?";
}

bool validate_abi_parse(const char *text, enum validate_abi *abi)
{
    for (unsigned i = 0; i < 3; i++)
        if (!strcmp(text, abi_names[i])) {
            *abi = (enum validate_abi)i;
            return true;
        }
    return false;
}

void validate_config_default(struct validate_config *config)
{
    *config = (struct validate_config){VALIDATE_ABI_FULL, 4, 1, 100, false,
                                            0, 0, NULL, NULL, NULL, 0, NULL};
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

static bool list_push(struct address_list *list, size_t fde, uint64_t pc,
                      bool in_gap)
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
    list->at[list->count++] = (struct check_address){fde, pc, in_gap};
    return true;
}

/* The addresses FDE i answers for. */
static bool fde_addresses(const struct cfi_file *file, size_t i,
                          struct address_list *list)
{
    const struct cfi_fde *fde = &file->fdes[i];
    if (fde->pc_end <= fde->pc_begin)
        return list_push(list, i, fde->pc_begin, false);
    uint64_t end = fde->pc_end - fde->pc_begin > FDE_ADDRESSES_MAX
                       ? fde->pc_begin + FDE_ADDRESSES_MAX : fde->pc_end;
    for (uint64_t pc = fde->pc_begin; pc < end; pc++)
        if (cfi_file_lookup(file, pc) == fde && !list_push(list, i, pc, false))
            return false;
    return true;
}

/* The FDE whose range ends last at or before pc (SIZE_MAX: none), for
 * naming a gap. */
static size_t fde_before(const struct cfi_file *file, uint64_t pc)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < file->nfdes; i++) {
        const struct cfi_fde *f = &file->fdes[i];
        if (f->pc_end <= pc &&
            (best == SIZE_MAX || f->pc_end > file->fdes[best].pc_end))
            best = i;
    }
    return best;
}

/* The lowest start of an FDE above pc (UINT64_MAX: none): where a gap
 * that contains pc ends. */
static uint64_t next_fde_begin(const struct cfi_file *file, uint64_t pc)
{
    uint64_t next = UINT64_MAX;
    for (size_t i = 0; i < file->nfdes; i++) {
        const struct cfi_fde *f = &file->fdes[i];
        if (f->pc_end > f->pc_begin && f->pc_begin > pc && f->pc_begin < next)
            next = f->pc_begin;
    }
    return next;
}

/* The addresses of text range [begin, end) that no FDE covers, at most
 * FDE_ADDRESSES_MAX per gap. The walk jumps over each covering FDE and
 * over a gap's addresses past the cap, so that its time follows the
 * FDEs and the cap, never the size a section header claims. */
static bool range_gap_addresses(const struct cfi_file *file, uint64_t begin,
                                uint64_t end, struct address_list *list,
                                uint64_t *count)
{
    uint64_t run = 0;
    size_t before = SIZE_MAX;
    for (uint64_t pc = begin; pc < end;) {
        const struct cfi_fde *fde = cfi_file_lookup(file, pc);
        if (fde) {
            run = 0;
            pc = fde->pc_end > pc ? fde->pc_end : pc + 1;
            continue;
        }
        if (run == 0)
            before = fde_before(file, pc);
        if (run++ == FDE_ADDRESSES_MAX) {
            pc = next_fde_begin(file, pc);
            continue;
        }
        if (!list_push(list, before, pc, true))
            return false;
        ++*count;
        pc++;
    }
    return true;
}

/* Every address of the text that no FDE covers (at most
 * FDE_ADDRESSES_MAX per gap); without text ranges, the first address
 * after each FDE that no FDE covers. */
static bool gap_addresses(const struct cfi_file *file,
                          struct address_list *list, uint64_t *count)
{
    uint64_t (*text)[2] = NULL;
    size_t ntext = 0;
    if (!validate_text_ranges(file, &text, &ntext))
        return false;
    bool ok = true;
    for (size_t t = 0; t < ntext && ok; t++)
        ok = range_gap_addresses(file, text[t][0], text[t][1], list, count);
    for (size_t i = 0; i < file->nfdes && ok && ntext == 0; i++) {
        uint64_t end = file->fdes[i].pc_end;
        if (!cfi_file_lookup(file, end)) {
            ok = list_push(list, i, end, true);
            ++*count;
        }
    }
    free(text);
    return ok;
}

static int by_pc(const void *a, const void *b)
{
    const struct check_address *x = a, *y = b;
    if (x->pc != y->pc)
        return x->pc < y->pc ? -1 : 1;
    return x->in_gap - y->in_gap;
}

/* Only the addresses of config->only_pcs, each with the FDE that covers
 * it (none: a gap). */
static bool only_addresses(const struct cfi_file *file,
                           const struct validate_config *config,
                           struct address_list *list)
{
    for (size_t p = 0; p < config->nonly_pcs; p++) {
        uint64_t pc = config->only_pcs[p];
        const struct cfi_fde *fde = cfi_file_lookup(file, pc);
        if (!list_push(list, fde ? (size_t)(fde - file->fdes) : SIZE_MAX, pc,
                       fde == NULL))
            return false;
    }
    return true;
}

/* Every address to check, in increasing address order (FDEs of
 * .debug_frame that .eh_frame hides are asked where the lookup finds
 * them), or only config->only_pcs. Duplicates (the first address after
 * two FDEs) are dropped. */
static bool all_addresses(const struct validator *v, struct address_list *list)
{
    const struct cfi_file *file = v->file;
    uint64_t gaps = 0;
    if (v->config->only_pcs) {
        if (!only_addresses(file, v->config, list))
            return false;
    } else {
        for (size_t i = 0; i < file->nfdes; i++)
            if (!fde_addresses(file, i, list))
                return false;
        if (!gap_addresses(file, list, &gaps))
            return false;
    }
    qsort(list->at, list->count, sizeof *list->at, by_pc);
    size_t n = 0;
    for (size_t i = 0; i < list->count; i++)
        if (n == 0 || list->at[n - 1].pc != list->at[i].pc ||
            list->at[n - 1].in_gap != list->at[i].in_gap)
            list->at[n++] = list->at[i];
    list->count = n;
    uint64_t max = v->config->max_addresses;
    if (max && list->count > max)
        list->count = (size_t)max;
    for (size_t i = 0; i < list->count; i++)
        v->result->gap_addresses += list->at[i].in_gap;
    return true;
}

/* ------------------------------------------------------------------ */
/* Verdicts and wrong ranges                                            */
/* ------------------------------------------------------------------ */

uint64_t validate_kind(const struct validator *v,
                       const struct engine_outcome *outcome, bool crashed)
{
    if (crashed)
        return VALIDATE_KIND_CRASH;
    uint64_t kind = 0;
    for (unsigned i = 0; i < outcome->nkept; i++) {
        const struct engine_item_found *item = &outcome->items[i];
        if (item->item == ENGINE_ITEM_STATUS)
            kind |= VALIDATE_KIND_STATUS;
        else if (item->item == ENGINE_ITEM_CFA)
            kind |= VALIDATE_KIND_CFA;
        else if (item->reg < v->file->arch->nreported)
            kind |= VALIDATE_KIND_REG0 << item->reg;
    }
    return kind;
}

enum validate_wrong_class validate_class(uint64_t kind,
                                         enum cfi_status expected_status,
                                         enum cfi_status got_status)
{
    if (kind & VALIDATE_KIND_CRASH)
        return VALIDATE_WRONG_CRASH;
    if (kind == VALIDATE_KIND_STATUS && got_status == CFI_E_UNSUPPORTED &&
        expected_status != CFI_E_UNSUPPORTED)
        return VALIDATE_WRONG_UNSUPPORTED;
    return VALIDATE_WRONG_VALUE;
}

/* "name+0x12" of the function symbol that holds pc, inside the file's
 * executable segments; "" when none. */
static void name_function(const struct validator *v, uint64_t pc,
                          char *buf, size_t size)
{
    uint64_t offset;
    const struct cfi_segment *segment = cfi_file_segment(v->file, pc);
    const struct cfi_symbol *symbol =
        segment && segment->executable
            ? cfi_symbol_find(v->symbols, v->nsymbols, pc, &offset) : NULL;
    buf[0] = '\0';
    if (symbol && symbol->name[0] && offset == 0)
        snprintf(buf, size, "%s", symbol->name);
    else if (symbol && symbol->name[0])
        snprintf(buf, size, "%s+0x%" PRIx64, symbol->name, offset);
}

void validate_first_wrong(struct validator *v, const struct check_address *at,
                          const struct engine_question *q,
                          const struct cfi_frame *expected,
                          const struct cfi_frame *got,
                          const struct engine_outcome *outcome, bool crashed,
                          struct validate_wrong_range *wrong)
{
    if (at->fde < v->file->nfdes) {
        const struct cfi_fde *fde = &v->file->fdes[at->fde];
        wrong->has_fde = true;
        wrong->fde_section = fde->section;
        wrong->fde_offset = fde->offset;
        wrong->fde_begin = fde->pc_begin;
        wrong->fde_end = fde->pc_end;
    }
    wrong->in_gap = at->in_gap;
    name_function(v, at->pc, wrong->function, sizeof wrong->function);
    wrong->begin = at->pc;
    wrong->end = at->pc + 1;
    wrong->state = q->state;
    wrong->expected = *expected;
    wrong->got = *got;
    wrong->outcome = *outcome;
    wrong->crashed = crashed;
    wrong->row_text = q->range && q->fde
        ? sem_range_text(q->fde->cie->arch, q->range) : NULL;
}

static bool same_kind(const struct validate_wrong_range *a, uint64_t kind,
                      enum cfi_status expected, enum cfi_status got,
                      int signal)
{
    return a->kind == kind &&
           (!(kind & VALIDATE_KIND_STATUS) ||
            (a->expected_status == expected && a->got_status == got)) &&
           (!(kind & VALIDATE_KIND_CRASH) || a->signal == signal);
}

/* Adds a closed range to the totals by kind. */
static bool count_kind(struct validate_result *result,
                       const struct validate_wrong_range *r)
{
    for (size_t i = 0; i < result->nkinds; i++) {
        struct validate_kind_total *t = &result->kinds[i];
        if (t->kind == r->kind && t->wrong_class == r->wrong_class &&
            (!(t->kind & VALIDATE_KIND_STATUS) ||
             (t->expected_status == r->expected_status &&
              t->got_status == r->got_status)) &&
            t->signal == r->signal) {
            t->ranges++;
            t->addresses += r->end - r->begin;
            t->wrong_requests += r->wrong_requests;
            return true;
        }
    }
    struct validate_kind_total *grown =
        realloc(result->kinds, (result->nkinds + 1) * sizeof *grown);
    if (!grown)
        return false;
    result->kinds = grown;
    grown[result->nkinds++] = (struct validate_kind_total){
        r->wrong_class, r->kind, r->expected_status, r->got_status,
        r->signal, 1, r->end - r->begin, r->wrong_requests};
    return true;
}

static void range_free(struct validate_wrong_range *r)
{
    free(r->row_text);
    free(r->crash_text);
}

static enum cfi_status close_range(struct validator *v)
{
    if (!v->open)
        return CFI_OK;
    v->open = false;
    struct validate_result *result = v->result;
    result->ranges_total++;
    result->unsupported_ranges +=
        v->current.wrong_class == VALIDATE_WRONG_UNSUPPORTED;
    if (!count_kind(result, &v->current)) {
        range_free(&v->current);
        return CFI_E_NOMEM;
    }
    if (result->nranges >= v->config->keep) {
        range_free(&v->current);
        return CFI_OK;
    }
    if (result->nranges % 16 == 0) {
        struct validate_wrong_range *grown = realloc(
            result->ranges, (result->nranges + 16) * sizeof *grown);
        if (!grown) {
            range_free(&v->current);
            return CFI_E_NOMEM;
        }
        result->ranges = grown;
    }
    result->ranges[result->nranges++] = v->current;
    return CFI_OK;
}

enum cfi_status validate_merge(struct validator *v,
                               const struct check_address *at,
                               struct validate_wrong_range *wrong)
{
    if (!wrong->wrong_requests)
        return close_range(v);
    v->result->wrong_addresses++;
    v->result->wrong_requests += wrong->wrong_requests;
    struct validate_wrong_range *c = &v->current;
    if (v->open && c->end == at->pc && c->has_fde == wrong->has_fde &&
        c->fde_offset == wrong->fde_offset &&
        c->fde_section == wrong->fde_section && c->in_gap == wrong->in_gap &&
        same_kind(c, wrong->kind, wrong->expected_status, wrong->got_status,
                  wrong->signal)) {
        c->end = at->pc + 1;
        c->wrong_requests += wrong->wrong_requests;
        range_free(wrong);
        return CFI_OK;
    }
    enum cfi_status status = close_range(v);
    v->current = *wrong;
    v->open = true;
    return status;
}

/* ------------------------------------------------------------------ */
/* The run                                                              */
/* ------------------------------------------------------------------ */

/* A cfisem eh_elf names its flavour: the message when the ABI given is
 * not it. */
static const char *flavour_mismatch(const char *path, enum validate_abi abi)
{
    struct cg_eh_elf *eh;
    struct cfi_diag ignored;
    if (cg_load(path, &eh, &ignored) != CFI_OK)
        return NULL;
    enum cg_abi flavour = cg_eh_elf_abi(eh);
    cg_unload(eh);
    if (flavour == CG_ABI_FULL && abi != VALIDATE_ABI_FULL)
        return "a cfisem eh_elf of the full ABI: validate it with --abi full";
    return NULL;
}

static enum cfi_status open_eh_elf(struct validator *v, const char *path,
                                   struct validate_error *error)
{
    struct cfi_diag *diag = &error->diag;
    enum cfi_status status = validate_try_load(path, diag, error->detail,
                                               sizeof error->detail);
    if (status != CFI_OK)
        return status;
    enum validate_abi abi = v->config->abi;
    if (abi != VALIDATE_ABI_FULL) {
        status = engine_v1_open(path, abi == VALIDATE_ABI_V1 ? ENGINE_V1_DEREF
                                                       : ENGINE_V1_DIRECT,
                                &v->v1, diag);
        const char *other = status == CFI_E_UNSUPPORTED
                                ? flavour_mismatch(path, abi) : NULL;
        if (other)
            diag->message = other;
        return status;
    }
    status = cg_load(path, &v->full, diag);
    if (status == CFI_OK && cg_eh_elf_abi(v->full) != CG_ABI_FULL) {
        cg_unload(v->full);
        v->full = NULL;
        return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                        "a v1 eh_elf: validate it with --abi v1 (or "
                        "v1-direct, for one built without deref)");
    }
    return status;
}

static bool make_memories(struct validator *v)
{
    unsigned n = v->config->nstates;
    v->memories = calloc(n, sizeof *v->memories);
    for (unsigned k = 0; v->memories && k < n; k++)
        if (!(v->memories[k] = engine_state_memory(&v->states, k, v->file,
                                                   NULL, 0)))
            return false;
    return v->memories != NULL;
}

static void validator_close(struct validator *v)
{
    for (unsigned k = 0; v->memories && k < v->config->nstates; k++)
        engine_memory_free(v->memories[k]);
    free(v->memories);
    free(v->expected);
    free(v->answer);
    engine_v1_close(v->v1);
    if (v->full)
        cg_unload(v->full);
    if (v->open)
        range_free(&v->current);
}

static enum cfi_status validate_file(struct validator *v)
{
    engine_state_config_default(&v->states, v->config->seed);
    v->reference = sem_unwind;
    if (v->config->abi != VALIDATE_ABI_FULL) {
        v->reference = validate_v1_reference;
        v->states.regs = ENGINE_REGS_V1;
    }
    v->expected = malloc(sizeof *v->expected);
    v->answer = malloc(sizeof *v->answer);
    if (!v->expected || !v->answer || !make_memories(v))
        return CFI_E_NOMEM;
    v->got = &v->answer->frame;
    v->result->nfdes = v->file->nfdes;
    v->result->arch = v->file->arch;
    if (v->file->arch->nreported > VALIDATE_REGS_MAX)
        return CFI_E_UNSUPPORTED; /* a register file validate cannot hold */
    struct address_list list = {NULL, 0, 0};
    enum cfi_status status = all_addresses(v, &list) ? CFI_OK : CFI_E_NOMEM;
    v->total = list.count;
    if (status == CFI_OK)
        status = validate_run(v, list.at, list.count);
    free(list.at);
    return status == CFI_OK ? close_range(v) : status;
}

static struct validate_result *validation_new(
    const struct validate_config *config, const char *path,
    const char *eh_elf_path)
{
    struct validate_result *result = calloc(1, sizeof *result);
    if (!result)
        return NULL;
    result->config = *config;
    if (result->config.nstates == 0)
        result->config.nstates = 1;
    result->path = path;
    result->eh_elf_path = eh_elf_path;
    return result;
}

static enum cfi_status run_validation(const struct validate_config *config,
                                      const char *path, const char *eh_elf_path,
                                      struct validate_result **result,
                                      struct validate_error *error)
{
    *result = NULL;
    error->path = path;
    error->detail[0] = 0;
    struct cfi_diag *diag = &error->diag;
    struct cfi_file *file;
    enum cfi_status status =
        config->debug_search
            ? cfi_file_open_debug(path, config->debug_search, &file, diag)
            : cfi_file_open(path, &file, diag);
    if (status != CFI_OK)
        return status;
    struct validator v = {.started = now_seconds()};
    v.result = validation_new(config, path, eh_elf_path);
    v.config = v.result ? &v.result->config : config;
    v.file = file;
    if (cfi_file_functions(file, &v.symbols, &v.nsymbols) != CFI_OK)
        v.nsymbols = 0;
    struct sem_file_il *il = NULL;
    status = v.result && sem_file_il_build(file, &il) == CFI_OK
                 ? CFI_OK : cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET,
                                     "out of memory");
    v.il = il;
    if (status == CFI_OK) {
        error->path = eh_elf_path;
        status = open_eh_elf(&v, eh_elf_path, error);
    }
    if (status == CFI_OK && file->debug_state == CFI_DEBUG_MISSING &&
        !(v.result->debug_missing = strdup(file->debug_path)))
        status = cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    if (status == CFI_OK) {
        error->path = NULL;
        status = validate_file(&v);
        if (status != CFI_OK)
            cfi_fail(diag, status, CFI_NO_OFFSET,
                     status == CFI_E_NOMEM ? "out of memory"
                                           : "cannot run the eh_elf's calls");
    }
    validator_close(&v);
    free(v.symbols);
    sem_file_il_free(il);
    cfi_file_close(file);
    if (status != CFI_OK) {
        validate_result_free(v.result);
        return status;
    }
    v.result->seconds = now_seconds() - v.started;
    *result = v.result;
    return CFI_OK;
}

/* When most calls crashed, a v1 eh_elf may be of the other variant: a
 * sample of addresses asked with it says whether it fits. */
static void hint_abi(struct validate_result *v)
{
    if (v->config.abi == VALIDATE_ABI_FULL || v->crashes * 2 <= v->requests)
        return;
    struct validate_config config = v->config;
    config.abi = v->config.abi == VALIDATE_ABI_V1 ? VALIDATE_ABI_V1_DIRECT
                                              : VALIDATE_ABI_V1;
    config.nstates = 1;
    config.keep = 0;
    config.max_addresses = HINT_ADDRESSES;
    config.progress = NULL;
    struct validate_result *sample;
    struct validate_error error;
    if (run_validation(&config, v->path, v->eh_elf_path, &sample, &error) !=
        CFI_OK)
        return;
    if (sample->crashes == 0) {
        v->abi_hint = true;
        v->hint_abi = config.abi;
        v->hint_addresses = sample->addresses;
        v->hint_wrong = sample->wrong_addresses;
    }
    validate_result_free(sample);
}

/* The eh_elf must have been built from the file (cg_check_stamp); a
 * file that cannot be read is left to the validation to report. */
static enum cfi_status check_stamp(const char *path, const char *eh_elf_path,
                                   struct validate_error *error)
{
    struct eh_elf_object_id object;
    struct cg_stale stale;
    error->path = eh_elf_path;
    error->detail[0] = 0;
    if (cg_object_id(path, &object, &error->diag) != CFI_OK)
        return CFI_OK;
    enum cfi_status status =
        cg_check_stamp(eh_elf_path, &object, &stale, &error->diag);
    if (status == CFI_OK || !stale.ours)
        return CFI_OK;
    if (status == CFI_E_UNSUPPORTED)
        cg_stale_text(&stale, path, error->detail, sizeof error->detail);
    return status;
}

enum cfi_status validate_eh_elf(const struct validate_config *config,
                                const char *path, const char *eh_elf_path,
                                struct validate_result **result,
                                struct validate_error *error)
{
    enum cfi_status stamp = check_stamp(path, eh_elf_path, error);
    if (stamp != CFI_OK)
        return stamp;
    /* dlopen searches the library path for a name without '/': the
     * file meant is the one in the current folder. */
    size_t len = strlen(eh_elf_path);
    char *local = malloc(len + 3);
    if (!local) {
        error->path = eh_elf_path;
        error->detail[0] = 0;
        return cfi_fail(&error->diag, CFI_E_NOMEM, CFI_NO_OFFSET,
                        "out of memory");
    }
    snprintf(local, len + 3, "%s%s", strchr(eh_elf_path, '/') ? "" : "./",
             eh_elf_path);
    enum cfi_status status = run_validation(config, path, local, result, error);
    if (error->path == local)
        error->path = eh_elf_path;
    if (status == CFI_OK) {
        hint_abi(*result);    /* with the path dlopen takes as meant */
        (*result)->eh_elf_path = eh_elf_path;
    }
    free(local);
    return status;
}

bool validate_result_failed(const struct validate_result *v)
{
    uint64_t allowed = v->config.allow_unsupported ? v->unsupported_ranges : 0;
    return v->ranges_total > allowed;
}

const char *validate_wrong_class_name(enum validate_wrong_class c)
{
    switch (c) {
    case VALIDATE_WRONG_UNSUPPORTED:
        return "unsupported";
    case VALIDATE_WRONG_CRASH:
        return "crashed";
    default:
        return "wrong value";
    }
}

const char *validate_crash_text(int signal)
{
    switch (signal) {
    case 0:
        return "exited, or not run";
    case SIGALRM:
        return "timed out (SIGALRM)";
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGABRT:
        return "SIGABRT";
    case SIGILL:
        return "SIGILL";
    case SIGFPE:
        return "SIGFPE";
    case SIGTRAP:
        return "SIGTRAP";
    case SIGSYS:
        return "SIGSYS";
    case SIGKILL:
        return "SIGKILL";
    default:
        return "a signal";
    }
}

void validate_result_free(struct validate_result *validation)
{
    if (!validation)
        return;
    for (size_t i = 0; i < validation->nranges; i++)
        range_free(&validation->ranges[i]);
    free(validation->ranges);
    free(validation->kinds);
    free(validation->debug_missing);
    free(validation);
}
