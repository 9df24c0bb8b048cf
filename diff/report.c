/* SPDX-License-Identifier: MIT */
/* report.c — see report.h. */
#include "report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "cfi/json.h"

/* ------------------------------------------------------------------ */
/* Text                                                                 */
/* ------------------------------------------------------------------ */

static void print_headline(FILE *out, const struct diff_run *run)
{
    size_t fdes = 0, rows = 0, bad = 0;
    for (size_t i = 0; i < run->nfiles; i++) {
        fdes += run->files[i].nfdes;
        rows += run->files[i].nrows;
        bad += run->files[i].status != CFI_OK;
    }
    fprintf(out, "cfisem diff: %zu file%s", run->nfiles,
            run->nfiles == 1 ? "" : "s");
    if (bad)
        fprintf(out, " (%zu could not be loaded)", bad);
    fprintf(out, ", %zu FDEs, %zu rows; %" PRIu64 " requests (%u state%s per"
            " PC%s), seed %" PRIu64 ", %.1f s\n", fdes, rows, run->requests,
            run->config.nstates, run->config.nstates == 1 ? "" : "s",
            run->config.all_pcs ? ", every PC" : "", run->config.seed,
            run->seconds);
    fputs("reference answers:", out);
    for (int s = 0; s < CFI_STATUS_COUNT; s++)
        if (run->reference[s])
            fprintf(out, " %s %" PRIu64, cfi_status_name((enum cfi_status)s),
                    run->reference[s]);
    fputc('\n', out);
}

static void print_table(FILE *out, const struct diff_run *run)
{
    fprintf(out, "\n%-10s %10s %10s %8s %10s %10s %10s\n", "engine",
            "compared", "agree", "differ", "known_dev", "not_comp", "errors");
    for (int e = 0; e < ENGINE_COUNT; e++) {
        if (!run->config.engines[e])
            continue;
        const struct diff_counts *c = &run->counts[e];
        fprintf(out, "%-10s %10" PRIu64 " %10" PRIu64 " %8" PRIu64
                " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n",
                engine_name((enum engine_id)e), c->compared,
                c->agree, c->differ, c->known_deviation, c->not_comparable,
                c->errors);
    }
}

static bool same_failure(const struct diff_open_failure *a,
                         const struct diff_open_failure *b)
{
    const char *x = a->diag.message ? a->diag.message : "";
    const char *y = b->diag.message ? b->diag.message : "";
    return a->engine == b->engine && !strcmp(x, y);
}

/* Each (engine, reason) once, with its files and requests. */
static void print_failures(FILE *out, const struct diff_run *run)
{
    bool header = false;
    for (size_t i = 0; i < run->nfailures; i++) {
        const struct diff_open_failure *f = &run->failures[i];
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = same_failure(&run->failures[j], f);
        if (seen)
            continue;
        size_t files = 0;
        uint64_t requests = 0;
        for (size_t j = i; j < run->nfailures; j++)
            if (same_failure(&run->failures[j], f))
                files++, requests += run->failures[j].requests;
        if (!header)
            fprintf(out, "\nengines that could not answer (counted as errors):\n");
        header = true;
        fprintf(out, "  %s: %s: %zu file%s (first: %s), %" PRIu64 " requests\n",
                engine_name(f->engine),
                f->diag.message ? f->diag.message : "cannot open",
                files, files == 1 ? "" : "s", run->files[f->file].path,
                requests);
    }
}

static void print_deviations(FILE *out, const struct diff_run *run)
{
    bool header = false;
    for (size_t d = 0; d < run->ndeviations; d++) {
        if (!run->deviation_counts[d])
            continue;
        if (!header)
            fprintf(out, "\nknown deviations (requests explained):\n");
        header = true;
        const struct engine_deviation *dev = &run->deviations[d];
        fprintf(out, "  %-40s %-10s %10" PRIu64 "  %s\n", dev->id,
                engine_name(dev->engine), run->deviation_counts[d],
                dev->summary);
    }
}

void diff_report_reproducer(FILE *out, const struct diff_run *run,
                            const struct diff_record *record,
                            enum engine_id engine)
{
    const char *extra = NULL;
    char eh_elf[4200];
    if (engine == ENGINE_compiled && run->config.engine_config.eh_elf_path) {
        snprintf(eh_elf, sizeof eh_elf, "--eh-elf %s",
                 run->config.engine_config.eh_elf_path);
        extra = eh_elf;
    }
    engine_state_reproducer(out, run->files[record->file].path, &record->state,
                            (const uint64_t(*)[2])run->config.faults,
                            run->config.nfaults, engine_name(engine), extra);
}

void diff_report_record(FILE *out, const struct diff_run *run,
                        const struct diff_record *record, size_t number)
{
    const struct engine_state *s = &record->state;
    fprintf(out, "[%zu] %s: %s: pc 0x%" PRIx64, number,
            engine_name(record->engine), run->files[record->file].path,
            s->at.pc);
    if (record->function[0])
        fprintf(out, " <%s>", record->function);
    if (s->at.caller_frame)
        fprintf(out, " (caller frame: row at 0x%" PRIx64 ")", s->at.pc - 1);
    fprintf(out, ", state %u (%s)\n", s->index,
            engine_state_kind_name(s->kind));
    engine_report_items(out, record->state.arch, &record->outcome,
                        &record->expected, &record->got);
    if (record->has_fde)
        fprintf(out, "    fde %s+0x%" PRIx64 " [0x%" PRIx64 ",0x%" PRIx64 ")%s%s\n",
                cfi_section_name(record->fde_section), record->fde_offset,
                record->fde_begin, record->fde_end,
                record->translation == CFI_OK ? "" : ": ",
                record->translation == CFI_OK
                    ? "" : cfi_status_text(record->translation));
    if (record->row_text)
        fprintf(out, "    row %s\n", record->row_text);
    fputs("    reproduce: ", out);
    diff_report_reproducer(out, run, record, record->engine);
    fputs("\n", out);
}

/* A file that could not be loaded was not compared at all: its count is
 * part of the result, so that "0 new mismatches" never stands alone for a
 * run that asked nothing of it. */
static void print_unloaded(FILE *out, const struct diff_run *run)
{
    size_t bad = 0;
    for (size_t i = 0; i < run->nfiles; i++)
        bad += run->files[i].status != CFI_OK;
    if (bad)
        fprintf(out, "; %zu of %zu file%s could not be loaded (bad input)",
                bad, run->nfiles, run->nfiles == 1 ? "" : "s");
}

void diff_report_text(FILE *out, const struct diff_run *run, size_t show)
{
    print_headline(out, run);
    print_table(out, run);
    print_failures(out, run);
    print_deviations(out, run);
    if (run->records_total) {
        size_t shown = run->nrecords < show ? run->nrecords : show;
        fprintf(out, "\nnew mismatches: %" PRIu64 " (the first %zu)\n",
                run->records_total, shown);
        for (size_t r = 0; r < shown; r++)
            diff_report_record(out, run, &run->records[r], r + 1);
        if (shown)
            fprintf(out, "(run a reproducer with --engine il to see the"
                    " reference's answer)\n");
    }
    fprintf(out, "\nresult: %" PRIu64 " new mismatch%s", run->records_total,
            run->records_total == 1 ? "" : "es");
    print_unloaded(out, run);
    fputc('\n', out);
}

/* ------------------------------------------------------------------ */
/* JSON                                                                 */
/* ------------------------------------------------------------------ */

static void json_hex(FILE *out, uint64_t value)
{
    cfi_json_address(out, value);
}

static void json_counts(FILE *out, const struct diff_counts *c)
{
    fprintf(out, "{\"compared\": %" PRIu64 ", \"agree\": %" PRIu64
            ", \"differ\": %" PRIu64 ", \"known_deviation\": %" PRIu64
            ", \"not_comparable\": %" PRIu64 ", \"errors\": %" PRIu64 "}",
            c->compared, c->agree, c->differ, c->known_deviation,
            c->not_comparable, c->errors);
}

static void json_fde(FILE *out, const struct diff_record *record)
{
    if (!record->has_fde) {
        fputs("null", out);
        return;
    }
    fprintf(out, "{\"section\": \"%s\", \"offset\": %" PRIu64 ", \"begin\": ",
            cfi_section_name(record->fde_section), record->fde_offset);
    json_hex(out, record->fde_begin);
    fputs(", \"end\": ", out);
    json_hex(out, record->fde_end);
    fprintf(out, ", \"translation\": \"%s\"}",
            cfi_status_name(record->translation));
}

static void json_record(FILE *out, const struct diff_run *run,
                        const struct diff_record *record)
{
    fprintf(out, "{\"engine\": \"%s\", \"file\": ",
            engine_name(record->engine));
    engine_json_string(out, run->files[record->file].path);
    if (record->function[0]) {
        fputs(", \"function\": ", out);
        engine_json_string(out, record->function);
    }
    fputs(", ", out);
    engine_json_state(out, &record->state);
    fputs(", \"fde\": ", out);
    json_fde(out, record);
    fputs(", \"row\": ", out);
    engine_json_string(out, record->row_text);
    fputs(", \"items\": ", out);
    engine_json_items(out, record->state.arch, &record->outcome,
                      &record->expected, &record->got);
    fprintf(out, ", \"items_total\": %u, \"items_new\": %u",
            record->outcome.nitems, record->outcome.nnew);
    fputs(", \"expected\": ", out);
    engine_json_frame(out, &record->expected);
    fputs(", \"got\": ", out);
    engine_json_frame(out, &record->got);
    char *line = NULL;
    size_t len = 0;
    FILE *memory = open_memstream(&line, &len);
    if (memory) {
        diff_report_reproducer(memory, run, record, record->engine);
        fclose(memory);
    }
    fputs(", \"reproducer\": ", out);
    engine_json_string(out, line);
    free(line);
    fputc('}', out);
}

/* What a merge needs besides (diff/merge.h): the file's place in the
 * whole list, its error's offset, its FDEs that do not translate, its
 * .eh_frame_hdr. */
static void json_file_more(FILE *out, const struct diff_file_result *f)
{
    fprintf(out, ", \"index\": %zu, \"error_offset\": ", f->index);
    if (f->status != CFI_OK && f->diag.offset != CFI_NO_OFFSET)
        fprintf(out, "%" PRIu64, f->diag.offset);
    else
        fputs("null", out);
    fprintf(out, ", \"failed_fdes\": %zu, \"eh_frame_hdr\": ",
            f->nfailed_fdes);
    if (f->hdr_problems)
        fprintf(out, "{\"problems\": %" PRIu64 ", \"first\": \"%s\"}}",
                f->hdr_problems, engine_hdr_problem_name(f->hdr_first));
    else
        fputs("null}", out);
}

static void json_files(FILE *out, const struct diff_run *run)
{
    fputs("\"files\": [", out);
    for (size_t i = 0; i < run->nfiles; i++) {
        const struct diff_file_result *f = &run->files[i];
        fputs(i ? ", {\"path\": " : "{\"path\": ", out);
        engine_json_string(out, f->path);
        fprintf(out, ", \"status\": \"%s\", \"error\": ",
                cfi_status_name(f->status));
        engine_json_string(out, f->status == CFI_OK ? NULL : f->diag.message);
        fprintf(out, ", \"fdes\": %zu, \"rows\": %zu, \"requests\": %" PRIu64,
                f->nfdes, f->nrows, f->requests);
        json_file_more(out, f);
    }
    fputs("]", out);
}

static void json_summary(FILE *out, const struct diff_run *run)
{
    fputs("\"summary\": {", out);
    const char *separator = "";
    for (int e = 0; e < ENGINE_COUNT; e++) {
        if (!run->config.engines[e])
            continue;
        fprintf(out, "%s\"%s\": ", separator,
                engine_name((enum engine_id)e));
        json_counts(out, &run->counts[e]);
        separator = ", ";
    }
    fputs("}, \"errors\": [", out);
    for (size_t i = 0; i < run->nfailures; i++) {
        const struct diff_open_failure *f = &run->failures[i];
        fprintf(out, "%s{\"engine\": \"%s\", \"file\": ", i ? ", " : "",
                engine_name(f->engine));
        engine_json_string(out, run->files[f->file].path);
        fputs(", \"message\": ", out);
        engine_json_string(out, f->diag.message);
        fprintf(out, ", \"requests\": %" PRIu64 "}", f->requests);
    }
    fputs("]", out);
}

static void json_deviations(FILE *out, const struct diff_run *run)
{
    fputs("\"deviations\": {", out);
    for (size_t d = 0; d < run->ndeviations; d++) {
        const struct engine_deviation *dev = &run->deviations[d];
        fputs(d ? ", " : "", out);
        engine_json_string(out, dev->id);
        fprintf(out, ": {\"engine\": \"%s\", \"summary\": ",
                engine_name(dev->engine));
        engine_json_string(out, dev->summary);
        fprintf(out, ", \"count\": %" PRIu64 ", \"example\": ",
                run->deviation_counts[d]);
        if (run->deviation_examples[d].engine != ENGINE_COUNT)
            json_record(out, run, &run->deviation_examples[d]);
        else
            fputs("null", out);
        fputc('}', out);
    }
    fputs("}", out);
}

/* The run's other settings, which a merge checks are the same in every
 * part (diff/merge.h). */
static void json_run_more(FILE *out, const struct diff_run *run)
{
    const struct diff_config *c = &run->config;
    fputs("\"producer\": ", out);
    engine_json_string(out, c->producer);
    fputs(", \"build\": ", out);
    engine_json_string(out, c->build);
    fprintf(out, ", \"keep\": %zu, \"pcs\": ", c->keep);
    engine_json_string(out, c->pcs_name);
    fputs(", \"eh_elf\": ", out);
    engine_json_string(out, c->engine_config.eh_elf_path);
    fputs(", \"faults\": [", out);
    for (size_t f = 0; f < c->nfaults; f++) {
        fputs(f ? ", [" : "[", out);
        json_hex(out, c->faults[f][0]);
        fputs(", ", out);
        json_hex(out, c->faults[f][1]);
        fputc(']', out);
    }
    fprintf(out, "], \"files_total\": %zu,\n", run->files_total);
}

void diff_report_json(FILE *out, const struct diff_run *run)
{
    fprintf(out, "{\"schema_version\": %d, \"seed\": %" PRIu64
            ", \"states\": %u, \"all_pcs\": %s, "
            "\"seconds\": %.3f, \"requests\": %" PRIu64 ",\n",
            CFI_JSON_SCHEMA_VERSION, run->config.seed, run->config.nstates,
            run->config.all_pcs ? "true" : "false", run->seconds,
            run->requests);
    json_run_more(out, run);
    json_files(out, run);
    fputs(",\n\"reference\": {", out);
    const char *separator = "";
    for (int s = 0; s < CFI_STATUS_COUNT; s++)
        if (run->reference[s]) {
            fprintf(out, "%s\"%s\": %" PRIu64, separator,
                    cfi_status_name((enum cfi_status)s), run->reference[s]);
            separator = ", ";
        }
    fputs("},\n", out);
    json_summary(out, run);
    fputs(",\n", out);
    json_deviations(out, run);
    fprintf(out, ",\n\"mismatches_total\": %" PRIu64 ",\n\"mismatches\": [",
            run->records_total);
    for (size_t r = 0; r < run->nrecords; r++) {
        fputs(r ? ",\n" : "\n", out);
        json_record(out, run, &run->records[r]);
    }
    fputs("]}\n", out);
}
