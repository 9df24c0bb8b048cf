/* SPDX-License-Identifier: MIT */
/* report.c — the trace report: counts, per-engine agreement, and the
 * mismatch groups with their reproducers, as text or JSON. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "cfi/json.h"

static const struct {
    const char *name;
    const char *text;
} kinds[TRACE_KIND_COUNT] = {
#define TRACE_KIND_ROW(name, text) {#name, text},
    TRACE_KINDS(TRACE_KIND_ROW)
#undef TRACE_KIND_ROW
};

const char *trace_kind_name(enum trace_kind kind)
{
    return (unsigned)kind < TRACE_KIND_COUNT ? kinds[kind].name : "?";
}

const char *trace_kind_text(enum trace_kind kind)
{
    return (unsigned)kind < TRACE_KIND_COUNT ? kinds[kind].text : "?";
}

void trace_group_free(struct trace_group *g)
{
    free(g->elf);
    free(g->row_il);
    free(g->function);
    free(g->dump_path);
    free(g->reproducer);
}

void trace_report_free(struct trace_report *r)
{
    for (size_t i = 0; i < r->ngroups; i++)
        trace_group_free(&r->groups[i]);
    free(r->groups);
    for (size_t i = 0; i < r->nopen_errors; i++)
        free(r->open_errors[i]);
    free(r->open_errors);
    for (size_t i = 0; i < r->nelves; i++)
        free(r->elves[i].path);
    free(r->elves);
    memset(r, 0, sizeof *r);
}

uint64_t trace_report_mismatches(const struct trace_report *r)
{
    uint64_t n = 0;
    for (int id = 0; id < ENGINE_COUNT; id++)
        n += r->engines[id].mismatch - r->engines[id].explained;
    return n;
}

const char *trace_end_text(const struct trace_report *r, char *buf,
                           size_t size)
{
    switch (r->end) {
    case TRACE_END_EXITED:
        snprintf(buf, size, "exited with status %d", r->end_value);
        break;
    case TRACE_END_SIGNALED:
        snprintf(buf, size, "killed by SIG%s", sigabbrev_np(r->end_value)
                                                   ? sigabbrev_np(r->end_value)
                                                   : "?");
        break;
    case TRACE_END_TIMEOUT:
        snprintf(buf, size, "stopped: timeout after %.1f s", r->seconds);
        break;
    case TRACE_END_STEP_LIMIT:
        snprintf(buf, size, "stopped: step limit reached");
        break;
    case TRACE_END_EXEC_FAILED:
        snprintf(buf, size, "cannot be run: %s", strerror(r->end_value));
        break;
    case TRACE_END_NO_SYMBOL:
        snprintf(buf, size, "stopped: no such function to start from");
        break;
    case TRACE_END_TARGET_SILENT:
        snprintf(buf, size, "stopped: qemu's gdbstub stopped answering "
                 "(killed)");
        break;
    case TRACE_END_UNSUPPORTED:
        snprintf(buf, size, "not traced: --from and --at are x86-64 only");
        break;
    case TRACE_END_TRACE_FAILED:
    default:
        snprintf(buf, size, "lost: ptrace failed");
        break;
    }
    return buf;
}

static const char *reg_name(const struct trace_report *r, int reg, char *buf,
                            size_t size)
{
    const struct cfi_arch *arch = r->arch ? r->arch : &cfi_arch_x86_64;
    return reg < 0 ? "cfa"
                   : cfi_arch_reg_label(arch, (unsigned)reg, buf, size);
}

/* "0x..." or the status the engine gave instead. */
static const char *got_text(const struct trace_group *g, char *buf,
                            size_t size)
{
    if (!g->got_value)
        return g->got_text ? g->got_text : "?";
    snprintf(buf, size, "0x%" PRIx64, g->got);
    return buf;
}

static void engines_text(FILE *out, const bool *engines)
{
    const char *sep = "";
    for (int id = 0; id < ENGINE_COUNT; id++)
        if (engines[id]) {
            fprintf(out, "%s%s", sep, engine_name((enum engine_id)id));
            sep = ",";
        }
}

/* objdump's listing of the group's instructions, with up to four before
 * and two after. objdump starts at the FDE's first instruction (a start
 * in the middle of one would list garbage) and stops a little past the
 * last PC. */
#define DISASM_LINES 4096
static void disassembly(FILE *out, const struct trace_group *g)
{
    if (strchr(g->elf, '\'') || g->elf[0] == '[')
        return;
    uint64_t from = g->fde_end ? g->fde_begin : g->pc_first;
    char command[4400];
    snprintf(command, sizeof command,
             "objdump -d --no-show-raw-insn --start-address=0x%" PRIx64
             " --stop-address=0x%" PRIx64 " '%s' 2>/dev/null | "
             "grep -E '^ +[0-9a-f]+:' | head -n %d",
             from, g->pc_last + 32, g->elf, DISASM_LINES);
    FILE *in = popen(command, "r");
    if (!in)
        return;
    char (*lines)[160] = malloc(DISASM_LINES * sizeof *lines);
    size_t n = 0, first = SIZE_MAX, last = 0;
    /* Bounded by head -n. */
    while (lines && n < DISASM_LINES && fgets(lines[n], sizeof lines[n], in)) {
        uint64_t at = strtoull(lines[n], NULL, 16);
        if (at >= g->pc_first && at <= g->pc_last) {
            first = first == SIZE_MAX ? n : first;
            last = n;
        }
        n++;
    }
    pclose(in);
    for (size_t i = first >= 4 && first != SIZE_MAX ? first - 4 : 0;
         first != SIZE_MAX && i < n && i <= last + 2; i++) {
        uint64_t at = strtoull(lines[i], NULL, 16);
        bool inside = at >= g->pc_first && at <= g->pc_last;
        fprintf(out, "      %s%s", inside ? "> " : "  ", lines[i]);
        if (!strchr(lines[i], '\n'))
            fputc('\n', out);
    }
    free(lines);
}

static void group_text(FILE *out, const struct trace_report *r,
                       const struct trace_group *g, bool disasm)
{
    char name[16], buf[32];
    fprintf(out, "  %s: %s", g->elf, trace_kind_text(g->kind));
    if (g->kind == TRACE_KIND_reg)
        fprintf(out, " (%s)", reg_name(r, g->reg, name, sizeof name));
    if (g->fde_end)
        fprintf(out, ", FDE [0x%" PRIx64 ",0x%" PRIx64 ")", g->fde_begin,
                g->fde_end);
    fprintf(out, "\n    at 0x%" PRIx64 "..0x%" PRIx64 ", %" PRIu64 " stops",
            g->pc_first, g->pc_last, g->count);
    if (g->context_restore)
        fprintf(out, ", explained: the code then restores another context "
                "(longjmp, eh_return), which its CFI describes");
    if (g->kind == TRACE_KIND_no_fde) {
        if (g->function)
            fprintf(out, ", first at 0x%" PRIx64 " <%s>", g->pc, g->function);
        fputc('\n', out);
        return;
    }
    fprintf(out, ", engines ");
    engines_text(out, g->engines);
    fprintf(out, "\n    first at 0x%" PRIx64, g->pc);
    if (g->function)
        fprintf(out, " <%s>", g->function);
    fprintf(out, " (runtime 0x%" PRIx64 "), %s: expected 0x%" PRIx64
            ", got %s\n", g->runtime_pc, engine_name(g->engine), g->expected,
            got_text(g, buf, sizeof buf));
    if (g->row_il)
        fprintf(out, "    row: %s\n", g->row_il);
    if (disasm)
        disassembly(out, g);
    if (g->reproducer)
        fprintf(out, "    reproduce: %s\n", g->reproducer);
}

void trace_report_text(FILE *out, const struct trace_report *r, bool disasm)
{
    char end[128];
    fprintf(out, "program %s\n", trace_end_text(r, end, sizeof end));
    fprintf(out, "instructions traced %" PRIu64 " in %.2f s (%.0f per second)\n",
            r->instructions, r->seconds,
            r->seconds > 0 ? (double)r->instructions / r->seconds : 0.0);
    fprintf(out, "frames checked %" PRIu64 "; not checked: %" PRIu64
            " before any frame, %" PRIu64 " without FDE, %" PRIu64
            " outside any ELF, %" PRIu64 " resynchronising\n",
            r->stops_checked, r->no_frame, r->no_fde, r->no_elf, r->resync);
    fprintf(out, "calls deepest %" PRIu64 ", signals %" PRIu64
            ", irregular pops %" PRIu64 ", execs %" PRIu64 "\n",
            r->max_depth, r->signals, r->irregular_pops, r->execs);
    if (r->from_missed)
        fprintf(out, "the function to start from was never reached (the "
                "program ended first, or rewrote its first byte)\n");
    if (r->clones)
        fprintf(out, "the program created %" PRIu64 " threads or processes: "
                "only the first thread is followed\n", r->clones);
    for (int id = 0; id < ENGINE_COUNT; id++)
        if (r->engine_asked[id])
            fprintf(out, "%-9s agree %" PRIu64 ", mismatch %" PRIu64
                    " (of which %" PRIu64 " in context restores)\n",
                    engine_name((enum engine_id)id),
                    r->engines[id].agree, r->engines[id].mismatch,
                    r->engines[id].explained);
    for (size_t i = 0; i < r->nopen_errors; i++)
        fprintf(out, "not checked: %s\n", r->open_errors[i]);
    for (size_t i = 0; i < r->nelves; i++)
        fprintf(out, "checked %10" PRIu64 " in %s\n", r->elves[i].checked,
                r->elves[i].path);
    if (r->ngroups)
        fprintf(out, "groups:\n");
    for (size_t i = 0; i < r->ngroups; i++)
        group_text(out, r, &r->groups[i], disasm);
}

static void group_json(FILE *out, const struct trace_report *r,
                       const struct trace_group *g)
{
    char name[16], buf[32];
    fprintf(out, "{\"elf\": ");
    cfi_json_string(out, g->elf ? g->elf : "");
    fprintf(out, ", \"kind\": \"%s\", \"reg\": \"%s\", "
            "\"fde\": [\"0x%" PRIx64 "\", \"0x%" PRIx64 "\"], "
            "\"pc_first\": \"0x%" PRIx64 "\", \"pc_last\": \"0x%" PRIx64 "\", "
            "\"count\": %" PRIu64 ", \"context_restore\": %s, \"engines\": [",
            trace_kind_name(g->kind), reg_name(r, g->reg, name, sizeof name),
            g->fde_begin, g->fde_end, g->pc_first, g->pc_last, g->count,
            g->context_restore ? "true" : "false");
    const char *sep = "";
    for (int id = 0; id < ENGINE_COUNT; id++)
        if (g->engines[id]) {
            fprintf(out, "%s\"%s\"", sep,
                    engine_name((enum engine_id)id));
            sep = ", ";
        }
    fprintf(out, "], \"pcs\": [");
    for (size_t i = 0; i < g->npcs; i++)
        fprintf(out, "%s\"0x%" PRIx64 "\"", i ? ", " : "", g->pcs[i]);
    fprintf(out, "], \"pcs_truncated\": %s", g->pcs_truncated ? "true" : "false");
    fprintf(out, ", \"first\": {\"pc\": \"0x%" PRIx64 "\", \"runtime_pc\": "
            "\"0x%" PRIx64 "\", \"engine\": \"%s\", \"expected\": \"0x%" PRIx64
            "\", \"got\": \"%s\", \"row\": ", g->pc, g->runtime_pc,
            engine_name(g->engine), g->expected,
            got_text(g, buf, sizeof buf));
    cfi_json_string(out, g->row_il ? g->row_il : "");
    fprintf(out, ", \"dump\": ");
    cfi_json_string(out, g->dump_path ? g->dump_path : "");
    fprintf(out, ", \"dump_addr\": \"0x%" PRIx64 "\", \"reproducer\": ",
            g->dump_addr);
    cfi_json_string(out, g->reproducer ? g->reproducer : "");
    fprintf(out, ", \"function\": ");
    cfi_json_string(out, g->function ? g->function : "");
    fprintf(out, "}}");
}

void trace_report_json(FILE *out, const struct trace_report *r)
{
    char end[128];
    fprintf(out, "{\"schema_version\": %d, \"program\": ",
            CFI_JSON_SCHEMA_VERSION);
    cfi_json_string(out, trace_end_text(r, end, sizeof end));
    fprintf(out, ", \"end\": %d, \"end_value\": %d, \"instructions\": %" PRIu64
            ", \"seconds\": %.3f, \"frames_checked\": %" PRIu64
            ", \"no_frame\": %" PRIu64 ", \"no_fde\": %" PRIu64
            ", \"no_elf\": %" PRIu64 ", \"resync\": %" PRIu64
            ", \"signals\": %" PRIu64 ", \"irregular_pops\": %" PRIu64
            ", \"execs\": %" PRIu64 ", \"clones\": %" PRIu64
            ", \"max_depth\": %" PRIu64 ", \"from_missed\": %s, \"engines\": {",
            (int)r->end, r->end_value, r->instructions, r->seconds,
            r->stops_checked, r->no_frame, r->no_fde, r->no_elf, r->resync,
            r->signals, r->irregular_pops, r->execs, r->clones, r->max_depth,
            r->from_missed ? "true" : "false");
    const char *sep = "";
    for (int id = 0; id < ENGINE_COUNT; id++)
        if (r->engine_asked[id]) {
            fprintf(out, "%s\"%s\": {\"agree\": %" PRIu64 ", \"mismatch\": %"
                    PRIu64 ", \"explained\": %" PRIu64 "}", sep,
                    engine_name((enum engine_id)id),
                    r->engines[id].agree, r->engines[id].mismatch,
                    r->engines[id].explained);
            sep = ", ";
        }
    fprintf(out, "}, \"not_checked\": [");
    for (size_t i = 0; i < r->nopen_errors; i++) {
        fputs(i ? ", " : "", out);
        cfi_json_string(out, r->open_errors[i] ? r->open_errors[i] : "");
    }
    fprintf(out, "], \"elves\": [");
    for (size_t i = 0; i < r->nelves; i++) {
        fprintf(out, "%s{\"path\": ", i ? ", " : "");
        cfi_json_string(out, r->elves[i].path ? r->elves[i].path : "");
        fprintf(out, ", \"checked\": %" PRIu64 "}", r->elves[i].checked);
    }
    fprintf(out, "], \"groups\": [");
    for (size_t i = 0; i < r->ngroups; i++) {
        fputs(i ? ",\n  " : "\n  ", out);
        group_json(out, r, &r->groups[i]);
    }
    fprintf(out, "]}\n");
}
