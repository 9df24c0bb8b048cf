/* SPDX-License-Identifier: MIT */
/* validate/report.c — the text and JSON reports of a validation. */
#include "internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cfi/json.h"
#include "engines/engines.h"

/* The kind of a range or of a total: its class, then "cfa rip",
 * "status ok->unsupported", "crashed (SIGSEGV)". */
struct kind_of {
    enum validate_wrong_class wrong_class;
    uint64_t kind;
    const struct cfi_arch *arch;
    enum cfi_status expected_status, got_status;
    int signal;
};

static struct kind_of range_kind(const struct validate_result *v,
                                 const struct validate_wrong_range *r)
{
    return (struct kind_of){r->wrong_class, r->kind, v->arch,
                            r->expected_status, r->got_status, r->signal};
}

/* The reported registers of the file's architecture. */
static unsigned kind_regs(const struct kind_of *k)
{
    unsigned n = k->arch ? k->arch->nreported : CFI_NGPRS;
    return n < VALIDATE_REGS_MAX ? n : VALIDATE_REGS_MAX;
}

static const char *kind_reg_name(const struct kind_of *k, unsigned reg)
{
    return k->arch ? cfi_arch_reg_name(k->arch, reg) : cfi_reg_name(reg);
}

static void print_kind(FILE *out, const struct kind_of *k)
{
    const char *sep = "";
    if (k->kind & VALIDATE_KIND_CRASH) {
        fprintf(out, "crashed (%s)", validate_crash_text(k->signal));
        sep = " ";
    }
    if (k->kind & VALIDATE_KIND_STATUS) {
        fprintf(out, "%sstatus %s->%s", sep, cfi_status_name(k->expected_status),
                cfi_status_name(k->got_status));
        sep = " ";
    }
    if (k->kind & VALIDATE_KIND_CFA) {
        fprintf(out, "%scfa", sep);
        sep = " ";
    }
    for (unsigned reg = 0; reg < kind_regs(k); reg++)
        if (k->kind & (VALIDATE_KIND_REG0 << reg)) {
            fprintf(out, "%s%s", sep, kind_reg_name(k, reg));
            sep = " ";
        }
}

/* "wrong value: cfa rip", "unsupported: status ok->unsupported",
 * "crashed (SIGSEGV)". */
static void print_class_kind(FILE *out, const struct kind_of *k)
{
    if (k->wrong_class != VALIDATE_WRONG_CRASH)
        fprintf(out, "%s: ", validate_wrong_class_name(k->wrong_class));
    print_kind(out, k);
}

/* "--eh-elf X --abi v1": what `cfisem unwind --engine compiled` needs. */
static char *eh_elf_words(const struct validate_result *v)
{
    size_t size = strlen(v->eh_elf_path) + 32;
    char *extra = malloc(size);
    if (extra)
        snprintf(extra, size, "--eh-elf %s --abi %s", v->eh_elf_path,
                 validate_abi_name(v->config.abi));
    return extra;
}

static void print_reproducers(FILE *out, const struct validate_result *v,
                              const struct validate_wrong_range *r)
{
    fputs("    reference: ", out);
    engine_state_reproducer(out, v->path, &r->state, NULL, 0, "il", NULL);
    fputc('\n', out);
    char *extra = eh_elf_words(v);
    if (!extra)
        return;
    fputs("    eh_elf:    ", out);
    engine_state_reproducer(out, v->path, &r->state, NULL, 0, "compiled",
                            extra);
    fputc('\n', out);
    free(extra);
}

static void print_where(FILE *out, const struct validate_wrong_range *r)
{
    if (r->in_gap)
        fputs("    in no FDE", out);
    if (r->has_fde)
        fprintf(out, "%s fde %s+0x%" PRIx64 " [0x%" PRIx64 ",0x%" PRIx64 ")",
                r->in_gap ? ", after" : "   ", cfi_section_name(r->fde_section),
                r->fde_offset, r->fde_begin, r->fde_end);
    if (r->function[0])
        fprintf(out, ", 0x%" PRIx64 " <%s>", r->begin, r->function);
    fputc('\n', out);
}

static void print_crash_text(FILE *out, const char *text)
{
    fputs("    the eh_elf wrote on stderr:\n", out);
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        fprintf(out, "      | %.*s\n", (int)len, line);
        line += len + (end != NULL);
    }
}

static void print_range(FILE *out, const struct validate_result *v,
                        const struct validate_wrong_range *r, size_t number)
{
    fprintf(out, "[%zu] [0x%" PRIx64 ",0x%" PRIx64 ") ", number, r->begin,
            r->end);
    struct kind_of kind = range_kind(v, r);
    print_class_kind(out, &kind);
    fprintf(out, ": %" PRIu64 " address%s, %" PRIu64 " wrong answer%s\n",
            r->end - r->begin, r->end - r->begin == 1 ? "" : "es",
            r->wrong_requests, r->wrong_requests == 1 ? "" : "s");
    print_where(out, r);
    fprintf(out, "    first at 0x%" PRIx64 ", state %u (%s)", r->begin,
            r->state.index, engine_state_kind_name(r->state.kind));
    if (r->crashed)
        fprintf(out, ": the call crashed (%s)\n",
                validate_crash_text(r->signal));
    else
        fputs(":\n", out);
    if (r->crash_text)
        print_crash_text(out, r->crash_text);
    if (!r->crashed)
        engine_report_items(out, r->state.arch, &r->outcome, &r->expected,
                            &r->got);
    if (r->row_text)
        fprintf(out, "    row %s\n", r->row_text);
    print_reproducers(out, v, r);
}

static void print_kinds(FILE *out, const struct validate_result *v)
{
    fputs("\nwrong ranges by kind:\n"
          "    ranges  addresses    answers  kind\n", out);
    for (size_t i = 0; i < v->nkinds; i++) {
        const struct validate_kind_total *t = &v->kinds[i];
        fprintf(out, "  %8" PRIu64 " %10" PRIu64 " %10" PRIu64 "  ",
                t->ranges, t->addresses, t->wrong_requests);
        struct kind_of kind = {t->wrong_class, t->kind, v->arch,
                               t->expected_status, t->got_status, t->signal};
        print_class_kind(out, &kind);
        fputc('\n', out);
    }
}

static void print_hint(FILE *out, const struct validate_result *v)
{
    if (v->crashes * 2 <= v->requests || v->config.abi == VALIDATE_ABI_FULL)
        return;
    fprintf(out, "\nmost calls crashed (%" PRIu64 " of %" PRIu64
            "): --abi %s is probably not this eh_elf's ABI", v->crashes,
            v->requests, validate_abi_name(v->config.abi));
    if (v->abi_hint)
        fprintf(out, "; with --abi %s, %" PRIu64 " addresses sampled: no "
                "crash, %" PRIu64 " wrong", validate_abi_name(v->hint_abi),
                v->hint_addresses, v->hint_wrong);
    fputc('\n', out);
}

static void print_result(FILE *out, const struct validate_result *v)
{
    fprintf(out, "\nresult: %" PRIu64 " wrong range%s", v->ranges_total,
            v->ranges_total == 1 ? "" : "s");
    if (v->unsupported_ranges)
        fprintf(out, " (%" PRIu64 " unsupported%s)", v->unsupported_ranges,
                v->config.allow_unsupported ? ", allowed" : "");
    fprintf(out, ": %s\n", validate_result_failed(v) ? "FAIL" : "pass");
}

void validate_result_text(FILE *out, const struct validate_result *v,
                          size_t show)
{
    fprintf(out, "cfisem validate: %s with %s (abi %s): %zu FDEs, %" PRIu64
            " addresses (%" PRIu64 " in no FDE), %u state%s: %" PRIu64
            " requests, seed %" PRIu64 ", %.1f s\n", v->path, v->eh_elf_path,
            validate_abi_name(v->config.abi), v->nfdes, v->addresses,
            v->gap_addresses, v->config.nstates,
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
    print_hint(out, v);
    if (v->ranges_total) {
        print_kinds(out, v);
        size_t shown = v->nranges < show ? v->nranges : show;
        fprintf(out, "\nwrong: %" PRIu64 " range%s, %" PRIu64 " address%s, %"
                PRIu64 " answers (the first %zu ranges)\n", v->ranges_total,
                v->ranges_total == 1 ? "" : "s", v->wrong_addresses,
                v->wrong_addresses == 1 ? "" : "es", v->wrong_requests, shown);
        for (size_t i = 0; i < shown; i++)
            print_range(out, v, &v->ranges[i], i + 1);
    }
    print_result(out, v);
}

/* ------------------------------------------------------------------ */
/* JSON                                                                 */
/* ------------------------------------------------------------------ */

static void json_kind(FILE *out, const struct kind_of *k)
{
    fputs("[", out);
    const char *sep = "";
    uint64_t kind = k->kind;
    if (kind & VALIDATE_KIND_CRASH)
        fputs("\"crashed\"", out), sep = ", ";
    if (kind & VALIDATE_KIND_STATUS)
        fprintf(out, "%s\"status\"", sep), sep = ", ";
    if (kind & VALIDATE_KIND_CFA)
        fprintf(out, "%s\"cfa\"", sep), sep = ", ";
    for (unsigned reg = 0; reg < kind_regs(k); reg++)
        if (kind & (VALIDATE_KIND_REG0 << reg))
            fprintf(out, "%s\"%s\"", sep, kind_reg_name(k, reg)),
                sep = ", ";
    fputs("]", out);
}

/* The kind's members: "class", "kind", "expected_status", "got_status"
 * ("crashed" for a crash), "signal" (a name, or null). */
static void json_kind_members(FILE *out, const struct kind_of *k)
{
    fprintf(out, "\"class\": \"%s\", \"kind\": ",
            validate_wrong_class_name(k->wrong_class));
    json_kind(out, k);
    bool crashed = k->kind & VALIDATE_KIND_CRASH;
    fprintf(out, ", \"expected_status\": \"%s\", \"got_status\": \"%s\", "
            "\"signal\": ", cfi_status_name(k->expected_status),
            crashed ? "crashed" : cfi_status_name(k->got_status));
    engine_json_string(out, crashed ? validate_crash_text(k->signal) : NULL);
}

/* A v1 frame speaks for rip, rsp, rbp and rbx only. */
static void json_v1_frame(FILE *out, const struct cfi_frame *frame)
{
    fprintf(out, "{\"status\": \"%s\", \"message\": ",
            cfi_status_name(frame->status));
    engine_json_string(out,
                       frame->status == CFI_OK ? NULL : frame->diag.message);
    if (frame->status != CFI_OK) {
        fputs(", \"reg\": -1, \"cfa\": null, \"regs\": {}}", out);
        return;
    }
    fprintf(out, ", \"reg\": -1, \"cfa\": \"0x%" PRIx64 "\", \"regs\": {",
            frame->cfa);
    static const unsigned carried[] = {CFI_REG_RBX, CFI_REG_RBP, CFI_REG_RSP,
                                       CFI_REG_RIP};
    for (size_t i = 0; i < 4; i++) {
        char buf[32];
        fprintf(out, "%s\"%u\": \"%s\"", i ? ", " : "", carried[i],
                engine_reg_text(frame, carried[i], buf, sizeof buf));
    }
    fputs("}}", out);
}

static void json_frame(FILE *out, const struct validate_result *v,
                       const struct cfi_frame *frame)
{
    if (v->config.abi == VALIDATE_ABI_FULL)
        engine_json_frame(out, frame);
    else
        json_v1_frame(out, frame);
}

static void json_reproducer(FILE *out, const char *name,
                            const struct validate_result *v,
                            const struct validate_wrong_range *r,
                            const char *engine, const char *extra)
{
    char *line = NULL;
    size_t len = 0;
    FILE *memory = open_memstream(&line, &len);
    if (memory) {
        engine_state_reproducer(memory, v->path, &r->state, NULL, 0, engine,
                                extra);
        fclose(memory);
    }
    fprintf(out, ", \"%s\": ", name);
    engine_json_string(out, line);
    free(line);
}

static void json_range(FILE *out, const struct validate_result *v,
                       const struct validate_wrong_range *r)
{
    fprintf(out, "{\"begin\": \"0x%" PRIx64 "\", \"end\": \"0x%" PRIx64 "\", ",
            r->begin, r->end);
    struct kind_of kind = range_kind(v, r);
    json_kind_members(out, &kind);
    fprintf(out, ", \"addresses\": %" PRIu64 ", \"wrong_requests\": %" PRIu64
            ", \"in_gap\": %s, ", r->end - r->begin, r->wrong_requests,
            r->in_gap ? "true" : "false");
    if (r->function[0]) {
        fputs("\"function\": ", out);
        engine_json_string(out, r->function);
        fputs(", \"fde\": ", out);
    } else {
        fputs("\"fde\": ", out);
    }
    if (r->has_fde)
        fprintf(out, "{\"section\": \"%s\", \"offset\": %" PRIu64
                ", \"begin\": \"0x%" PRIx64 "\", \"end\": \"0x%" PRIx64 "\"}",
                cfi_section_name(r->fde_section), r->fde_offset, r->fde_begin,
                r->fde_end);
    else
        fputs("null", out);
    fputs(", \"first\": {", out);
    engine_json_state(out, &r->state);
    fprintf(out, ", \"crashed\": %s, \"crash_text\": ",
            r->crashed ? "true" : "false");
    engine_json_string(out, r->crash_text);
    fputs(", \"items\": ", out);
    engine_json_items(out, r->state.arch, &r->outcome, &r->expected,
                      &r->got);
    fputs(", \"expected\": ", out);
    json_frame(out, v, &r->expected);
    fputs(", \"got\": ", out);
    json_frame(out, v, &r->got);
    fputs("}, \"row\": ", out);
    engine_json_string(out, r->row_text);
    json_reproducer(out, "reproducer", v, r, "il", NULL);
    char *extra = eh_elf_words(v);
    json_reproducer(out, "eh_elf_reproducer", v, r, "compiled", extra);
    free(extra);
    fputc('}', out);
}

static void json_kinds(FILE *out, const struct validate_result *v)
{
    fputs(",\n\"kinds\": [", out);
    for (size_t i = 0; i < v->nkinds; i++) {
        const struct validate_kind_total *t = &v->kinds[i];
        struct kind_of kind = {t->wrong_class, t->kind, v->arch,
                               t->expected_status, t->got_status, t->signal};
        fputs(i ? ",\n  {" : "\n  {", out);
        json_kind_members(out, &kind);
        fprintf(out, ", \"ranges\": %" PRIu64 ", \"addresses\": %" PRIu64
                ", \"wrong_requests\": %" PRIu64 "}", t->ranges, t->addresses,
                t->wrong_requests);
    }
    fputs("]", out);
}

static void json_hint(FILE *out, const struct validate_result *v)
{
    fputs(",\n\"abi_hint\": ", out);
    if (!v->abi_hint) {
        fputs("null", out);
        return;
    }
    fprintf(out, "{\"abi\": \"%s\", \"addresses\": %" PRIu64
            ", \"wrong_addresses\": %" PRIu64 "}",
            validate_abi_name(v->hint_abi), v->hint_addresses, v->hint_wrong);
}

void validate_result_json(FILE *out, const struct validate_result *v)
{
    fprintf(out, "{\"schema_version\": %d, \"file\": ",
            CFI_JSON_SCHEMA_VERSION);
    engine_json_string(out, v->path);
    fputs(", \"eh_elf\": ", out);
    engine_json_string(out, v->eh_elf_path);
    fprintf(out, ", \"abi\": \"%s\", \"states\": %u, \"seed\": %" PRIu64
            ", \"seconds\": %.3f, \"fdes\": %zu, \"addresses\": %" PRIu64
            ", \"gap_addresses\": %" PRIu64 ", \"requests\": %" PRIu64
            ", \"wrong_addresses\": %" PRIu64 ", \"wrong_requests\": %" PRIu64
            ", \"crashes\": %" PRIu64 ", \"allow_unsupported\": %s"
            ", \"failed\": %s,\n\"reference\": {",
            validate_abi_name(v->config.abi),
            v->config.nstates, v->config.seed, v->seconds, v->nfdes,
            v->addresses, v->gap_addresses, v->requests, v->wrong_addresses,
            v->wrong_requests, v->crashes,
            v->config.allow_unsupported ? "true" : "false",
            validate_result_failed(v) ? "true" : "false");
    const char *sep = "";
    for (int s = 0; s < CFI_STATUS_COUNT; s++)
        if (v->reference[s]) {
            fprintf(out, "%s\"%s\": %" PRIu64, sep,
                    cfi_status_name((enum cfi_status)s), v->reference[s]);
            sep = ", ";
        }
    fputs("}", out);
    json_hint(out, v);
    fprintf(out, ",\n\"wrong_ranges_total\": %" PRIu64
            ", \"unsupported_ranges\": %" PRIu64, v->ranges_total,
            v->unsupported_ranges);
    json_kinds(out, v);
    fputs(",\n\"wrong_ranges\": [", out);
    for (size_t i = 0; i < v->nranges; i++) {
        fputs(i ? ",\n" : "\n", out);
        json_range(out, v, &v->ranges[i]);
    }
    fputs("]}\n", out);
}
