/* validate_report.c — the text and JSON reports of a validation. */
#include "validate_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "diff/report.h"

/* "cfa rip", "status (ok, got unsupported)", "crashed". */
static void print_kind(FILE *out, const struct diff_wrong_range *r,
                       const char *separator)
{
    const char *sep = "";
    if (r->kind & DIFF_KIND_CRASH) {
        fprintf(out, "%scrashed", sep);
        sep = separator;
    }
    if (r->kind & DIFF_KIND_STATUS) {
        fprintf(out, "%sstatus %s->%s", sep, cfi_status_name(r->expected_status),
                cfi_status_name(r->got_status));
        sep = separator;
    }
    if (r->kind & DIFF_KIND_CFA) {
        fprintf(out, "%scfa", sep);
        sep = separator;
    }
    for (unsigned reg = 0; reg < CFI_NGPRS; reg++)
        if (r->kind & (DIFF_KIND_REG0 << reg)) {
            fprintf(out, "%s%s", sep, cfi_reg_name(reg));
            sep = separator;
        }
}

static void print_reproducers(FILE *out, const struct diff_validation *v,
                              const struct diff_wrong_range *r)
{
    fputs("    reference: ", out);
    diff_state_reproducer(out, v->path, &r->state, NULL, 0, "il", NULL);
    fputc('\n', out);
    if (v->config.abi != DIFF_ABI_FULL)
        return;
    size_t size = strlen(v->eh_elf_path) + 16;
    char *extra = malloc(size);
    if (!extra)
        return;
    snprintf(extra, size, "--eh-elf %s", v->eh_elf_path);
    fputs("    eh_elf:    ", out);
    diff_state_reproducer(out, v->path, &r->state, NULL, 0, "compiled", extra);
    fputc('\n', out);
    free(extra);
}

static void print_range(FILE *out, const struct diff_validation *v,
                        const struct diff_wrong_range *r, size_t number)
{
    fprintf(out, "[%zu] [0x%" PRIx64 ",0x%" PRIx64 ") ", number, r->begin,
            r->end);
    print_kind(out, r, " ");
    fprintf(out, ": %" PRIu64 " address%s, %" PRIu64 " wrong answer%s\n",
            r->end - r->begin, r->end - r->begin == 1 ? "" : "es",
            r->wrong_requests, r->wrong_requests == 1 ? "" : "s");
    fprintf(out, "    fde %s+0x%" PRIx64 " [0x%" PRIx64 ",0x%" PRIx64 ")\n",
            cfi_section_name(r->fde_section), r->fde_offset, r->fde_begin,
            r->fde_end);
    fprintf(out, "    first at 0x%" PRIx64 ", state %u (%s)%s\n", r->begin,
            r->state.index, diff_state_kind_name(r->state.kind),
            r->crashed ? ": the call crashed" : ":");
    diff_report_items(out, &r->outcome, &r->expected, &r->got);
    if (r->row_text)
        fprintf(out, "    row %s\n", r->row_text);
    print_reproducers(out, v, r);
}

void diff_validation_text(FILE *out, const struct diff_validation *v,
                          size_t show)
{
    fprintf(out, "cfisem validate: %s with %s (abi %s): %zu FDEs, %" PRIu64
            " addresses, %u state%s: %" PRIu64 " requests, seed %" PRIu64
            ", %.1f s\n", v->path, v->eh_elf_path, diff_abi_name(v->config.abi),
            v->nfdes, v->addresses, v->config.nstates,
            v->config.nstates == 1 ? "" : "s", v->requests, v->config.seed,
            v->seconds);
    fputs("reference answers:", out);
    for (int s = 0; s < CFI_STATUS_COUNT; s++)
        if (v->reference[s])
            fprintf(out, " %s %" PRIu64, cfi_status_name((enum cfi_status)s),
                    v->reference[s]);
    fputc('\n', out);
    if (v->crashes)
        fprintf(out, "calls that crashed: %" PRIu64 "\n", v->crashes);
    if (v->ranges_total) {
        size_t shown = v->nranges < show ? v->nranges : show;
        fprintf(out, "\nwrong: %" PRIu64 " range%s, %" PRIu64 " address%s, %"
                PRIu64 " answers (the first %zu ranges)\n", v->ranges_total,
                v->ranges_total == 1 ? "" : "s", v->wrong_addresses,
                v->wrong_addresses == 1 ? "" : "es", v->wrong_requests, shown);
        for (size_t i = 0; i < shown; i++)
            print_range(out, v, &v->ranges[i], i + 1);
    }
    fprintf(out, "\nresult: %" PRIu64 " wrong range%s\n", v->ranges_total,
            v->ranges_total == 1 ? "" : "s");
}

/* ------------------------------------------------------------------ */
/* JSON                                                                 */
/* ------------------------------------------------------------------ */

static void json_kind(FILE *out, const struct diff_wrong_range *r)
{
    fputs("[", out);
    const char *sep = "";
    if (r->kind & DIFF_KIND_CRASH)
        fputs("\"crashed\"", out), sep = ", ";
    if (r->kind & DIFF_KIND_STATUS)
        fprintf(out, "%s\"status\"", sep), sep = ", ";
    if (r->kind & DIFF_KIND_CFA)
        fprintf(out, "%s\"cfa\"", sep), sep = ", ";
    for (unsigned reg = 0; reg < CFI_NGPRS; reg++)
        if (r->kind & (DIFF_KIND_REG0 << reg))
            fprintf(out, "%s\"%s\"", sep, cfi_reg_name(reg)), sep = ", ";
    fputs("]", out);
}

static void json_range(FILE *out, const struct diff_validation *v,
                       const struct diff_wrong_range *r)
{
    fprintf(out, "{\"begin\": \"0x%" PRIx64 "\", \"end\": \"0x%" PRIx64
            "\", \"kind\": ", r->begin, r->end);
    json_kind(out, r);
    fprintf(out, ", \"expected_status\": \"%s\", \"got_status\": \"%s\", "
            "\"addresses\": %" PRIu64 ", \"wrong_requests\": %" PRIu64
            ", \"fde\": {\"section\": \"%s\", \"offset\": %" PRIu64
            ", \"begin\": \"0x%" PRIx64 "\", \"end\": \"0x%" PRIx64 "\"}",
            cfi_status_name(r->expected_status), cfi_status_name(r->got_status),
            r->end - r->begin, r->wrong_requests,
            cfi_section_name(r->fde_section), r->fde_offset, r->fde_begin,
            r->fde_end);
    fputs(", \"first\": {", out);
    diff_json_state(out, &r->state);
    fprintf(out, ", \"crashed\": %s, \"items\": ", r->crashed ? "true" : "false");
    diff_json_items(out, &r->outcome, &r->expected, &r->got);
    fputs(", \"expected\": ", out);
    diff_json_frame(out, &r->expected);
    fputs(", \"got\": ", out);
    diff_json_frame(out, &r->got);
    fputs("}, \"row\": ", out);
    diff_json_string(out, r->row_text);
    char *line = NULL;
    size_t len = 0;
    FILE *memory = open_memstream(&line, &len);
    if (memory) {
        diff_state_reproducer(memory, v->path, &r->state, NULL, 0, "il", NULL);
        fclose(memory);
    }
    fputs(", \"reproducer\": ", out);
    diff_json_string(out, line);
    free(line);
    fputc('}', out);
}

void diff_validation_json(FILE *out, const struct diff_validation *v)
{
    fputs("{\"file\": ", out);
    diff_json_string(out, v->path);
    fputs(", \"eh_elf\": ", out);
    diff_json_string(out, v->eh_elf_path);
    fprintf(out, ", \"abi\": \"%s\", \"states\": %u, \"seed\": %" PRIu64
            ", \"seconds\": %.3f, \"fdes\": %zu, \"addresses\": %" PRIu64
            ", \"requests\": %" PRIu64 ", \"wrong_addresses\": %" PRIu64
            ", \"wrong_requests\": %" PRIu64 ", \"crashes\": %" PRIu64
            ",\n\"reference\": {", diff_abi_name(v->config.abi),
            v->config.nstates, v->config.seed, v->seconds, v->nfdes,
            v->addresses, v->requests, v->wrong_addresses, v->wrong_requests,
            v->crashes);
    const char *sep = "";
    for (int s = 0; s < CFI_STATUS_COUNT; s++)
        if (v->reference[s]) {
            fprintf(out, "%s\"%s\": %" PRIu64, sep,
                    cfi_status_name((enum cfi_status)s), v->reference[s]);
            sep = ", ";
        }
    fprintf(out, "},\n\"wrong_ranges_total\": %" PRIu64 ",\n\"wrong_ranges\": [",
            v->ranges_total);
    for (size_t i = 0; i < v->nranges; i++) {
        fputs(i ? ",\n" : "\n", out);
        json_range(out, v, &v->ranges[i]);
    }
    fputs("]}\n", out);
}
