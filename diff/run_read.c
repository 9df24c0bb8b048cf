/* SPDX-License-Identifier: MIT */
/* run_read.c — diff_run_read_json (merge.h): the JSON of report.c read
 * back into a run. Every member report.c writes is read and checked;
 * names (statuses, engines, deviations, items) are looked up in this
 * program's own tables, so a result of another version that names
 * something else is refused rather than half read. */
#include "merge.h"
#include "harness_internal.h"
#include "json.h"
#include "cfi/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A result file larger than this is refused (a whole system's run with
 * the most records kept is far smaller). */
#define RUN_JSON_MAX ((size_t)1 << 31)
/* Bound on a whole list's files (a system has thousands). */
#define RUN_FILES_MAX ((size_t)1 << 24)

struct reading {
    struct diff_run *run;
    const char *missing;     /* the member that was not as expected */
    size_t next_file;        /* where the next record's file is searched */
};

static bool need(struct reading *r, bool ok, const char *member)
{
    if (!ok && !r->missing)
        r->missing = member;
    return ok;
}

static const struct diff_json *member(struct reading *r,
                                      const struct diff_json *object,
                                      const char *key)
{
    const struct diff_json *m = diff_json_member(object, key);
    need(r, m != NULL, key);
    return m;
}

/* A string member (NULL allowed when nullable), kept by the run. */
static bool kept_text(struct reading *r, const struct diff_json *object,
                      const char *key, bool nullable, const char **out)
{
    const struct diff_json *m = member(r, object, key);
    *out = NULL;
    if (m && m->kind == DIFF_JSON_NULL && nullable)
        return true;
    const char *text = diff_json_text(m);
    if (!need(r, text != NULL, key))
        return false;
    *out = diff_harness_keep_string(r->run, text);
    return need(r, *out != NULL, "(out of memory)");
}

static bool u64_member(struct reading *r, const struct diff_json *object,
                       const char *key, uint64_t *out)
{
    return need(r, diff_json_u64(member(r, object, key), out), key);
}

static bool size_member(struct reading *r, const struct diff_json *object,
                        const char *key, size_t *out)
{
    uint64_t v = 0;
    bool ok = u64_member(r, object, key, &v) && need(r, v <= SIZE_MAX, key);
    *out = (size_t)v;
    return ok;
}

static bool hex_member(struct reading *r, const struct diff_json *object,
                       const char *key, uint64_t *out)
{
    return need(r, diff_json_hex(member(r, object, key), out), key);
}

/* ------------------------------------------------------------------ */
/* Names                                                                */
/* ------------------------------------------------------------------ */

static bool status_of(const char *name, enum cfi_status *out)
{
    for (int s = 0; name && s < CFI_STATUS_COUNT; s++)
        if (!strcmp(name, cfi_status_name((enum cfi_status)s))) {
            *out = (enum cfi_status)s;
            return true;
        }
    return false;
}

static bool engine_of(const char *name, enum engine_id *out)
{
    int id = name ? engine_parse(name, strlen(name)) : -1;
    *out = id < 0 ? ENGINE_COUNT : (enum engine_id)id;
    return id >= 0;
}

static const struct engine_deviation *deviation_of(const struct diff_run *run,
                                                   const char *id)
{
    for (size_t d = 0; id && d < run->ndeviations; d++)
        if (!strcmp(run->deviations[d].id, id))
            return &run->deviations[d];
    return NULL;
}

static bool item_of(const struct cfi_arch *arch, const char *label,
                    struct engine_item_found *out)
{
    static const enum engine_item plain[] = {
        ENGINE_ITEM_STATUS, ENGINE_ITEM_CFA, ENGINE_ITEM_SIGNAL};
    char buf[16];
    for (size_t i = 0; label && i < sizeof plain / sizeof plain[0]; i++)
        if (!strcmp(label, engine_item_label(arch, plain[i], 0, buf,
                                             sizeof buf))) {
            *out = (struct engine_item_found){plain[i], 0, NULL};
            return true;
        }
    for (unsigned reg = 0; label && reg < CFI_NREGS; reg++)
        if (!strcmp(label, engine_item_label(arch, ENGINE_ITEM_REG, reg, buf,
                                             sizeof buf))) {
            *out = (struct engine_item_found){ENGINE_ITEM_REG, reg, NULL};
            return true;
        }
    return false;
}

static bool kind_of(const char *name, enum engine_state_kind *out)
{
    static const enum engine_state_kind kinds[] = {
        ENGINE_STATE_FULL, ENGINE_STATE_PARTIAL, ENGINE_STATE_FAULT};
    for (size_t k = 0; name && k < sizeof kinds / sizeof kinds[0]; k++)
        if (!strcmp(name, engine_state_kind_name(kinds[k]))) {
            *out = kinds[k];
            return true;
        }
    return false;
}

static bool section_of(const char *name, enum cfi_section *out)
{
    static const enum cfi_section sections[] = {CFI_EH_FRAME, CFI_DEBUG_FRAME};
    for (size_t s = 0; name && s < 2; s++)
        if (!strcmp(name, cfi_section_name(sections[s]))) {
            *out = sections[s];
            return true;
        }
    return false;
}

static bool hdr_kind_of(const char *name, enum engine_hdr_problem_kind *out)
{
    for (int k = 0; name && k < ENGINE_HDR_PROBLEM_COUNT; k++)
        if (!strcmp(name, engine_hdr_problem_name((enum engine_hdr_problem_kind)k))) {
            *out = (enum engine_hdr_problem_kind)k;
            return true;
        }
    return false;
}

/* The index of the file named `path`, from r->next_file on (records and
 * failures come in file order; a path given twice is found in turn). */
static bool file_of(struct reading *r, const char *path, size_t *out)
{
    const struct diff_run *run = r->run;
    for (size_t pass = 0; path && pass < 2; pass++)
        for (size_t i = pass ? 0 : r->next_file; i < run->nfiles; i++)
            if (!strcmp(run->files[i].path, path)) {
                *out = r->next_file = i;
                return true;
            }
    return need(r, false, "file (a path in no entry of \"files\")");
}

/* ------------------------------------------------------------------ */
/* Frames, states, records                                              */
/* ------------------------------------------------------------------ */

static bool frame_reg(struct reading *r, const char *key,
                      const struct diff_json *value, struct cfi_regs *regs)
{
    char *end;
    unsigned long reg = strtoul(key, &end, 10);
    const char *text = diff_json_text(value);
    if (!need(r, *key && !*end && reg < CFI_NREGS && text, "regs"))
        return false;
    if (!strcmp(text, "undefined"))
        regs->status[reg] = CFI_REG_UNDEFINED;
    else if (!strcmp(text, "unknown"))
        regs->status[reg] = CFI_REG_UNKNOWN;
    else if (!need(r, diff_json_hex(value, &regs->value[reg]), "regs"))
        return false;
    else
        regs->status[reg] = CFI_REG_VALUE;
    return true;
}

/* A frame as engine_json_frame writes it. Registers above 16 that it
 * leaves out are undefined. */
static bool read_frame(struct reading *r, const struct diff_json *json,
                       struct cfi_frame *frame)
{
    memset(frame, 0, sizeof *frame);
    cfi_regs_clear(&frame->caller);
    for (unsigned reg = CFI_NGPRS; reg < CFI_NREGS; reg++)
        frame->caller.status[reg] = CFI_REG_UNDEFINED;
    int64_t reg = -1;
    const struct diff_json *regs = member(r, json, "regs");
    if (!need(r, status_of(diff_json_text(member(r, json, "status")),
                           &frame->status), "status") ||
        !kept_text(r, json, "message", true, &frame->diag.message) ||
        !need(r, diff_json_i64(member(r, json, "reg"), &reg) && reg >= -1 &&
                     reg < CFI_NREGS, "reg") ||
        !need(r, diff_json_bool(member(r, json, "signal_frame"),
                                &frame->signal_frame), "signal_frame") ||
        !need(r, regs && regs->kind == DIFF_JSON_OBJECT, "regs"))
        return false;
    frame->diag.status = frame->status;
    frame->diag.offset = CFI_NO_OFFSET;
    frame->diag.reg = (int)reg;
    if (frame->status == CFI_OK &&
        !hex_member(r, json, "cfa", &frame->cfa))
        return false;
    for (size_t i = 0; i < regs->count; i++)
        if (!frame_reg(r, regs->keys[i], &regs->elements[i], &frame->caller))
            return false;
    return true;
}

/* The state's architecture: results written before AArch64 name none,
 * and are x86-64's. */
static bool read_arch(struct reading *r, const struct diff_json *name,
                      struct engine_state *s)
{
    s->arch = &cfi_arch_x86_64;
    if (!name)
        return true;
    const char *text = diff_json_text(name);
    if (text && !strcmp(text, cfi_arch_aarch64.name))
        s->arch = &cfi_arch_aarch64;
    return need(r, text && !strcmp(text, s->arch->name), "arch");
}

static bool read_callee(struct reading *r, const struct diff_json *regs,
                        const struct cfi_arch *arch, struct cfi_regs *callee)
{
    cfi_regs_clear(callee);
    if (!need(r, regs && regs->kind == DIFF_JSON_OBJECT, "regs"))
        return false;
    for (size_t i = 0; i < regs->count; i++) {
        int reg = cfi_arch_reg_parse(arch, regs->keys[i],
                                     strlen(regs->keys[i]));
        uint64_t value;
        if (!need(r, reg >= 0 && diff_json_hex(&regs->elements[i], &value),
                  "regs"))
            return false;
        cfi_regs_set(callee, (unsigned)reg, value);
    }
    return true;
}

static bool read_fault(struct reading *r, const struct diff_json *fault,
                       struct engine_state *s)
{
    s->has_fault = fault && fault->kind == DIFF_JSON_ARRAY;
    if (!s->has_fault)
        return need(r, fault && fault->kind == DIFF_JSON_NULL, "fault");
    return need(r, fault->count == 2 &&
                       diff_json_hex(&fault->elements[0], &s->fault_begin) &&
                       diff_json_hex(&fault->elements[1], &s->fault_end),
                "fault");
}

static bool read_state(struct reading *r, const struct diff_json *json,
                       struct engine_state *s)
{
    uint64_t index = 0;
    memset(s, 0, sizeof *s);
    return hex_member(r, json, "pc", &s->at.pc) &&
           need(r, diff_json_bool(member(r, json, "caller_frame"),
                                  &s->at.caller_frame), "caller_frame") &&
           u64_member(r, json, "state", &index) &&
           need(r, index < 1024, "state") && (s->index = (unsigned)index, true) &&
           need(r, kind_of(diff_json_text(member(r, json, "state_kind")),
                           &s->kind), "state_kind") &&
           hex_member(r, json, "mem_seed", &s->mem_seed) &&
           read_fault(r, member(r, json, "fault"), s) &&
           read_arch(r, diff_json_member(json, "arch"), s) &&
           read_callee(r, member(r, json, "regs"), s->arch, &s->callee);
}

static bool read_fde(struct reading *r, const struct diff_json *fde,
                     struct diff_record *record)
{
    record->has_fde = fde && fde->kind == DIFF_JSON_OBJECT;
    if (!record->has_fde)
        return need(r, fde && fde->kind == DIFF_JSON_NULL, "fde");
    return need(r, section_of(diff_json_text(member(r, fde, "section")),
                              &record->fde_section), "section") &&
           u64_member(r, fde, "offset", &record->fde_offset) &&
           hex_member(r, fde, "begin", &record->fde_begin) &&
           hex_member(r, fde, "end", &record->fde_end) &&
           need(r, status_of(diff_json_text(member(r, fde, "translation")),
                             &record->translation), "translation");
}

static bool read_items(struct reading *r, const struct diff_json *json,
                       const struct cfi_arch *arch,
                       struct engine_outcome *outcome)
{
    const struct diff_json *items = member(r, json, "items");
    uint64_t total = 0, fresh = 0;
    if (!need(r, items && items->kind == DIFF_JSON_ARRAY &&
                     items->count <= ENGINE_ITEMS_KEPT, "items") ||
        !u64_member(r, json, "items_total", &total) ||
        !u64_member(r, json, "items_new", &fresh) ||
        !need(r, total >= items->count && fresh <= total &&
                     total <= 4 * CFI_NREGS, "items_total"))
        return false;
    outcome->nitems = (unsigned)total;
    outcome->nnew = (unsigned)fresh;
    outcome->nkept = (unsigned)items->count;
    for (size_t i = 0; i < items->count; i++) {
        const struct diff_json *item = &items->elements[i];
        const struct diff_json *dev = member(r, item, "deviation");
        struct engine_item_found *found = &outcome->items[i];
        if (!need(r, item_of(arch, diff_json_text(member(r, item, "item")),
                             found), "item") || !dev)
            return false;
        found->deviation = deviation_of(r->run, diff_json_text(dev));
        if (!need(r, dev->kind == DIFF_JSON_NULL || found->deviation,
                  "deviation (one this program does not know)"))
            return false;
    }
    return true;
}

/* A record; row_text is the caller's to free (also on failure). */
static bool read_record(struct reading *r, const struct diff_json *json,
                        enum engine_verdict verdict, struct diff_record *record)
{
    memset(record, 0, sizeof *record);
    record->outcome.verdict = verdict;
    const char *row = NULL;
    bool ok = need(r, json && json->kind == DIFF_JSON_OBJECT, "mismatches") &&
              need(r, engine_of(diff_json_text(member(r, json, "engine")),
                                &record->engine), "engine") &&
              file_of(r, diff_json_text(member(r, json, "file")),
                      &record->file) &&
              read_state(r, json, &record->state) &&
              read_fde(r, member(r, json, "fde"), record) &&
              kept_text(r, json, "row", true, &row) &&
              read_items(r, json, record->state.arch, &record->outcome) &&
              read_frame(r, member(r, json, "expected"), &record->expected) &&
              read_frame(r, member(r, json, "got"), &record->got);
    /* "function" is optional: absent when no symbol holds the PC */
    const char *function = diff_json_text(diff_json_member(json, "function"));
    if (ok && function)
        snprintf(record->function, sizeof record->function, "%s", function);
    record->row_text = row ? strdup(row) : NULL;
    return ok && need(r, !row || record->row_text, "(out of memory)");
}

/* ------------------------------------------------------------------ */
/* The run                                                              */
/* ------------------------------------------------------------------ */

static bool read_file_hdr(struct reading *r, const struct diff_json *hdr,
                          struct diff_file_result *f)
{
    if (hdr && hdr->kind == DIFF_JSON_NULL)
        return true;
    return need(r, hdr != NULL, "eh_frame_hdr") &&
           u64_member(r, hdr, "problems", &f->hdr_problems) &&
           need(r, f->hdr_problems > 0, "problems") &&
           need(r, hdr_kind_of(diff_json_text(member(r, hdr, "first")),
                               &f->hdr_first), "first");
}

static bool read_file(struct reading *r, const struct diff_json *json,
                      struct diff_file_result *f)
{
    const struct diff_json *offset = member(r, json, "error_offset");
    f->diag.offset = CFI_NO_OFFSET;
    f->diag.reg = -1;
    bool ok = need(r, status_of(diff_json_text(member(r, json, "status")),
                                &f->status), "status") &&
              kept_text(r, json, "error", true, &f->diag.message) &&
              need(r, offset && (offset->kind == DIFF_JSON_NULL ||
                                 diff_json_u64(offset, &f->diag.offset)),
                   "error_offset") &&
              size_member(r, json, "fdes", &f->nfdes) &&
              size_member(r, json, "rows", &f->nrows) &&
              size_member(r, json, "failed_fdes", &f->nfailed_fdes) &&
              u64_member(r, json, "requests", &f->requests) &&
              size_member(r, json, "index", &f->index) &&
              read_file_hdr(r, member(r, json, "eh_frame_hdr"), f);
    f->diag.status = f->status;
    r->run->requests += f->requests;
    return ok;
}

static bool read_faults(struct reading *r, const struct diff_json *faults,
                        struct diff_config *config)
{
    if (!need(r, faults && faults->kind == DIFF_JSON_ARRAY &&
                     faults->count <= DIFF_FAULTS_MAX, "faults"))
        return false;
    for (size_t f = 0; f < faults->count; f++) {
        const struct diff_json *pair = &faults->elements[f];
        if (!need(r, pair->kind == DIFF_JSON_ARRAY && pair->count == 2 &&
                         diff_json_hex(&pair->elements[0], &config->faults[f][0]) &&
                         diff_json_hex(&pair->elements[1], &config->faults[f][1]),
                  "faults"))
            return false;
    }
    config->nfaults = faults->count;
    return true;
}

static bool read_engines(struct reading *r, const struct diff_json *summary,
                         struct diff_config *config)
{
    if (!need(r, summary && summary->kind == DIFF_JSON_OBJECT, "summary"))
        return false;
    for (int e = 0; e < ENGINE_COUNT; e++)
        config->engines[e] = false;
    for (size_t i = 0; i < summary->count; i++) {
        enum engine_id id;
        if (!need(r, engine_of(summary->keys[i], &id), "summary"))
            return false;
        config->engines[id] = true;
    }
    return true;
}

/* The settings a run was made with, as far as its report shows them. */
static bool read_config(struct reading *r, const struct diff_json *root,
                        struct diff_config *config)
{
    uint64_t states = 0;
    diff_config_default(config);
    return u64_member(r, root, "seed", &config->seed) &&
           u64_member(r, root, "states", &states) &&
           need(r, states >= 1 && states <= 1024, "states") &&
           (config->nstates = (unsigned)states, true) &&
           need(r, diff_json_bool(member(r, root, "all_pcs"),
                                  &config->all_pcs), "all_pcs") &&
           size_member(r, root, "keep", &config->keep) &&
           need(r, config->keep <= DIFF_KEEP_MAX, "keep") &&
           read_faults(r, member(r, root, "faults"), config) &&
           read_engines(r, member(r, root, "summary"), config);
}

/* The strings of the config, kept by the run once it exists. */
static bool read_config_strings(struct reading *r, const struct diff_json *root)
{
    struct diff_config *c = &r->run->config;
    c->build = NULL;
    /* "build" is newer than the schema version: a result without it
     * says no build. */
    return kept_text(r, root, "producer", true, &c->producer) &&
           (!diff_json_member(root, "build") ||
            kept_text(r, root, "build", true, &c->build)) &&
           kept_text(r, root, "pcs", true, &c->pcs_name) &&
           kept_text(r, root, "eh_elf", true, &c->engine_config.eh_elf_path);
}

static bool read_files(struct reading *r, const struct diff_json *files)
{
    struct diff_run *run = r->run;
    for (size_t i = 0; i < run->nfiles; i++)
        if (!read_file(r, &files->elements[i], &run->files[i]))
            return false;
    return true;
}

static bool read_counts(struct reading *r, const struct diff_json *json,
                        struct diff_counts *c)
{
    return u64_member(r, json, "compared", &c->compared) &&
           u64_member(r, json, "agree", &c->agree) &&
           u64_member(r, json, "differ", &c->differ) &&
           u64_member(r, json, "known_deviation", &c->known_deviation) &&
           u64_member(r, json, "not_comparable", &c->not_comparable) &&
           u64_member(r, json, "errors", &c->errors);
}

static bool read_reference(struct reading *r, const struct diff_json *ref)
{
    if (!need(r, ref && ref->kind == DIFF_JSON_OBJECT, "reference"))
        return false;
    for (size_t i = 0; i < ref->count; i++) {
        enum cfi_status s;
        if (!need(r, status_of(ref->keys[i], &s) &&
                         diff_json_u64(&ref->elements[i], &r->run->reference[s]),
                  "reference"))
            return false;
    }
    return true;
}

static bool read_summary(struct reading *r, const struct diff_json *summary)
{
    for (size_t i = 0; i < summary->count; i++) {
        enum engine_id id;
        engine_of(summary->keys[i], &id);
        if (!read_counts(r, &summary->elements[i], &r->run->counts[id]))
            return false;
    }
    return true;
}

static bool read_failures(struct reading *r, const struct diff_json *errors)
{
    if (!need(r, errors && errors->kind == DIFF_JSON_ARRAY, "errors"))
        return false;
    r->next_file = 0;
    for (size_t i = 0; i < errors->count; i++) {
        const struct diff_json *e = &errors->elements[i];
        struct diff_open_failure f = {.diag = {CFI_E_UNSUPPORTED, NULL,
                                               CFI_NO_OFFSET, -1}};
        if (!need(r, engine_of(diff_json_text(member(r, e, "engine")),
                               &f.engine), "engine") ||
            !file_of(r, diff_json_text(member(r, e, "file")), &f.file) ||
            !kept_text(r, e, "message", true, &f.diag.message) ||
            !u64_member(r, e, "requests", &f.requests) ||
            !need(r, diff_harness_add_failure(r->run, &f), "(out of memory)"))
            return false;
    }
    return true;
}

static bool read_deviation(struct reading *r, const char *id,
                           const struct diff_json *json)
{
    struct diff_run *run = r->run;
    const struct engine_deviation *dev = deviation_of(run, id);
    if (!need(r, dev != NULL, "deviations (one this program does not know)"))
        return false;
    size_t d = (size_t)(dev - run->deviations);
    const struct diff_json *example = member(r, json, "example");
    if (!u64_member(r, json, "count", &run->deviation_counts[d]) || !example)
        return false;
    if (example->kind == DIFF_JSON_NULL)
        return true;
    r->next_file = 0;
    struct diff_record record;
    bool ok = read_record(r, example, ENGINE_VERDICT_KNOWN, &record);
    if (ok)
        run->deviation_examples[d] = record;
    else
        free(record.row_text);
    return ok;
}

static bool read_outcomes(struct reading *r, const struct diff_json *root)
{
    const struct diff_json *devs = member(r, root, "deviations");
    const struct diff_json *records = member(r, root, "mismatches");
    struct diff_run *run = r->run;
    if (!need(r, devs && devs->kind == DIFF_JSON_OBJECT, "deviations") ||
        !need(r, records && records->kind == DIFF_JSON_ARRAY &&
                     records->count <= run->config.keep, "mismatches") ||
        !u64_member(r, root, "mismatches_total", &run->records_total) ||
        !need(r, run->records_total >= records->count, "mismatches_total"))
        return false;
    for (size_t i = 0; i < devs->count; i++)
        if (!read_deviation(r, devs->keys[i], &devs->elements[i]))
            return false;
    r->next_file = 0;
    for (size_t i = 0; i < records->count; i++) {
        struct diff_record record;
        bool ok = read_record(r, &records->elements[i], ENGINE_VERDICT_DIFFER,
                              &record);
        if (!ok || !need(r, diff_harness_add_record(run, &record),
                         "(out of memory)")) {
            if (!ok)
                free(record.row_text);
            return false;
        }
    }
    return true;
}

/* A document of another schema version is refused whole: its members
 * may mean something else (cfi/json.h). */
static bool read_version(struct reading *r, const struct diff_json *root)
{
    uint64_t version = 0;
    return need(r, root->kind == DIFF_JSON_OBJECT, "schema_version") &&
           u64_member(r, root, "schema_version", &version) &&
           need(r, version == CFI_JSON_SCHEMA_VERSION, "schema_version");
}

/* The run of a parsed document: its files first (records name them). */
static bool read_run(struct reading *r, const struct diff_json *root)
{
    struct diff_config config;
    if (!read_version(r, root) || !read_config(r, root, &config))
        return false;
    const struct diff_json *files = member(r, root, "files");
    if (!need(r, files && files->kind == DIFF_JSON_ARRAY, "files"))
        return false;
    const char **paths = calloc(files->count + 1, sizeof *paths);
    for (size_t i = 0; paths && i < files->count; i++)
        paths[i] = diff_json_text(diff_json_member(&files->elements[i], "path"));
    for (size_t i = 0; paths && i < files->count; i++)
        if (!need(r, paths[i] != NULL, "path")) {
            free(paths);
            return false;
        }
    r->run = paths ? diff_harness_run_new(&config, paths, files->count) : NULL;
    free(paths);
    if (!need(r, r->run != NULL, "(out of memory)"))
        return false;
    for (size_t i = 0; i < r->run->nfiles; i++)
        r->run->files[i].path =
            diff_harness_keep_string(r->run, r->run->files[i].path);
    double seconds = 0;
    const struct diff_json *t = member(r, root, "seconds");
    if (t && t->kind == DIFF_JSON_NUMBER)
        seconds = t->number;
    r->run->seconds = seconds;
    return need(r, t && t->kind == DIFF_JSON_NUMBER, "seconds") &&
           read_config_strings(r, root) && read_files(r, files) &&
           size_member(r, root, "files_total", &r->run->files_total) &&
           need(r, r->run->files_total >= r->run->nfiles &&
                       r->run->files_total <= RUN_FILES_MAX, "files_total") &&
           read_reference(r, member(r, root, "reference")) &&
           read_summary(r, member(r, root, "summary")) &&
           read_failures(r, member(r, root, "errors")) &&
           read_outcomes(r, root);
}

/* The whole file in memory; NULL with `why` filled. */
static char *slurp(const char *path, size_t *len, char *why, size_t size)
{
    struct cfi_diag diag;
    if (cfi_check_regular_file(path, &diag) != CFI_OK) {
        snprintf(why, size, "%s", diag.message);
        return NULL;
    }
    FILE *in = fopen(path, "rb");
    struct stat st;
    char *text = NULL;
    if (in && fstat(fileno(in), &st) == 0 && (uint64_t)st.st_size < RUN_JSON_MAX)
        text = malloc((size_t)st.st_size + 1);
    *len = text ? fread(text, 1, (size_t)st.st_size, in) : 0;
    if (!in || !text || ferror(in)) {
        snprintf(why, size, "%s", !in ? "cannot be opened" : !text
                                  ? "too large, or out of memory"
                                  : "cannot be read");
        free(text);
        text = NULL;
    }
    if (in)
        fclose(in);
    return text;
}

enum cfi_status diff_run_read_json(const char *path, struct diff_run **run,
                                   char *why, size_t size)
{
    *run = NULL;
    size_t len;
    char *text = slurp(path, &len, why, size);
    if (!text)
        return CFI_E_IO;
    struct diff_json_error error;
    struct diff_json *root = diff_json_parse(text, len, &error);
    free(text);
    if (!root) {
        snprintf(why, size, "not JSON: %s at byte %zu", error.message,
                 error.offset);
        return CFI_E_MALFORMED;
    }
    struct reading r = {NULL, NULL, 0};
    bool ok = read_run(&r, root);
    diff_json_free(root);
    if (!ok) {
        snprintf(why, size, "not the JSON of a cfisem diff run: \"%s\" is "
                 "missing or wrong", r.missing ? r.missing : "?");
        diff_run_free(r.run);
        return CFI_E_MALFORMED;
    }
    *run = r.run;
    return CFI_OK;
}
