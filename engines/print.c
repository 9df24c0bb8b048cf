/* SPDX-License-Identifier: MIT */
/* print.c — see print.h. */
#include "print.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cfi/json.h"

const char *engine_reg_text(const struct cfi_frame *frame, unsigned reg,
                            char *buf, size_t size)
{
    switch (frame->caller.status[reg]) {
    case CFI_REG_VALUE:
        snprintf(buf, size, "0x%" PRIx64, frame->caller.value[reg]);
        return buf;
    case CFI_REG_UNDEFINED:
        return "undefined";
    default:
        return "unknown";
    }
}

const char *engine_status_text(const struct cfi_frame *frame, char *buf,
                               size_t size)
{
    if (frame->status == CFI_OK)
        return "ok";
    char name[16];
    const char *message = frame->diag.message ? frame->diag.message
                                              : cfi_status_text(frame->status);
    if (frame->status == CFI_E_REG_UNKNOWN && frame->diag.reg >= 0)
        snprintf(buf, size, "%s (%s: %s)", cfi_status_name(frame->status),
                 cfi_reg_label((unsigned)frame->diag.reg, name, sizeof name),
                 message);
    else
        snprintf(buf, size, "%s (%s)", cfi_status_name(frame->status),
                 message);
    return buf;
}

/* Expected and got of one item, for people. */
static void item_values(const struct cfi_frame *expected_frame,
                        const struct cfi_frame *got_frame,
                        const struct engine_item_found *item, char *expected,
                        char *got, size_t size)
{
    char a[128], b[128];
    const char *e = "?", *g = "?";
    switch (item->item) {
    case ENGINE_ITEM_STATUS:
        e = engine_status_text(expected_frame, a, sizeof a);
        g = engine_status_text(got_frame, b, sizeof b);
        break;
    case ENGINE_ITEM_CFA:
        snprintf(a, sizeof a, "0x%" PRIx64, expected_frame->cfa);
        snprintf(b, sizeof b, "0x%" PRIx64, got_frame->cfa);
        e = a, g = b;
        break;
    case ENGINE_ITEM_REG:
        e = engine_reg_text(expected_frame, item->reg, a, sizeof a);
        g = engine_reg_text(got_frame, item->reg, b, sizeof b);
        break;
    case ENGINE_ITEM_SIGNAL:
        e = expected_frame->signal_frame ? "signal frame" : "not a signal frame";
        g = got_frame->signal_frame ? "signal frame" : "not a signal frame";
        break;
    }
    snprintf(expected, size, "%s", e);
    snprintf(got, size, "%s", g);
}

/* The kept items a deviation explains, on one line. */
static void print_known(FILE *out, const struct cfi_arch *arch,
                        const struct engine_outcome *outcome, unsigned first)
{
    const struct engine_deviation *deviation = outcome->items[first].deviation;
    for (unsigned i = 0; i < first; i++)
        if (outcome->items[i].deviation == deviation)
            return;   /* printed with an earlier item */
    fprintf(out, "    known: %s:", deviation->id);
    for (unsigned i = first; i < outcome->nkept; i++)
        if (outcome->items[i].deviation == deviation) {
            char label[16];
            fprintf(out, " %s", engine_item_label(arch, outcome->items[i].item,
                                                  outcome->items[i].reg, label,
                                                  sizeof label));
        }
    fputc('\n', out);
}

void engine_report_items(FILE *out, const struct cfi_arch *arch,
                         const struct engine_outcome *outcome,
                         const struct cfi_frame *expected_frame,
                         const struct cfi_frame *got_frame)
{
    for (unsigned i = 0; i < outcome->nkept; i++) {
        const struct engine_item_found *item = &outcome->items[i];
        if (item->deviation)
            continue;
        char label[16], expected[128], got[128];
        item_values(expected_frame, got_frame, item, expected, got,
                    sizeof expected);
        fprintf(out, "    %-6s expected %s, got %s\n",
                engine_item_label(arch, item->item, item->reg, label,
                                  sizeof label),
                expected, got);
    }
    for (unsigned i = 0; i < outcome->nkept; i++)
        if (outcome->items[i].deviation)
            print_known(out, arch, outcome, i);
    if (outcome->nitems > outcome->nkept)
        fprintf(out, "    ... %u differing items in all, %u explained by no"
                " deviation\n", outcome->nitems, outcome->nnew);
}

void engine_json_string(FILE *out, const char *text)
{
    cfi_json_string(out, text);
}

static void json_hex(FILE *out, uint64_t value)
{
    cfi_json_address(out, value);
}

void engine_json_frame(FILE *out, const struct cfi_frame *frame)
{
    fprintf(out, "{\"status\": \"%s\", \"message\": ",
            cfi_status_name(frame->status));
    engine_json_string(out,
                       frame->status == CFI_OK ? NULL : frame->diag.message);
    fprintf(out, ", \"reg\": %d, \"cfa\": ",
            frame->status == CFI_OK ? -1 : frame->diag.reg);
    if (frame->status != CFI_OK) {
        fputs("null, \"signal_frame\": false, \"regs\": {}}", out);
        return;
    }
    json_hex(out, frame->cfa);
    fprintf(out, ", \"signal_frame\": %s",
            frame->signal_frame ? "true" : "false");
    fputs(", \"regs\": {", out);
    const char *separator = "";
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        if (reg >= CFI_NGPRS && frame->caller.status[reg] == CFI_REG_UNDEFINED)
            continue;
        char buf[32];
        fprintf(out, "%s\"%u\": \"%s\"", separator, reg,
                engine_reg_text(frame, reg, buf, sizeof buf));
        separator = ", ";
    }
    fputs("}}", out);
}

static void json_regs(FILE *out, const struct cfi_arch *arch,
                      const struct cfi_regs *regs)
{
    fputc('{', out);
    const char *separator = "";
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        if (regs->status[reg] != CFI_REG_VALUE)
            continue;
        char name[16];
        fprintf(out, "%s\"%s\": ", separator,
                cfi_arch_reg_label(arch, reg, name, sizeof name));
        json_hex(out, regs->value[reg]);
        separator = ", ";
    }
    fputc('}', out);
}

void engine_json_items(FILE *out, const struct cfi_arch *arch,
                       const struct engine_outcome *outcome,
                       const struct cfi_frame *expected_frame,
                       const struct cfi_frame *got_frame)
{
    fputs("[", out);
    for (unsigned i = 0; i < outcome->nkept; i++) {
        const struct engine_item_found *item = &outcome->items[i];
        char label[16], expected[128], got[128];
        item_values(expected_frame, got_frame, item, expected, got,
                    sizeof expected);
        fprintf(out, "%s{\"item\": ", i ? ", " : "");
        engine_json_string(out, engine_item_label(arch, item->item, item->reg,
                                                  label, sizeof label));
        fputs(", \"expected\": ", out);
        engine_json_string(out, expected);
        fputs(", \"got\": ", out);
        engine_json_string(out, got);
        fputs(", \"deviation\": ", out);
        engine_json_string(out, item->deviation ? item->deviation->id : NULL);
        fputc('}', out);
    }
    fputs("]", out);
}

void engine_json_state(FILE *out, const struct engine_state *s)
{
    fputs("\"pc\": ", out);
    json_hex(out, s->at.pc);
    fprintf(out, ", \"caller_frame\": %s, \"lookup_pc\": ",
            s->at.caller_frame ? "true" : "false");
    json_hex(out, cfi_lookup_pc(s->at.pc, s->at.caller_frame));
    fprintf(out, ", \"state\": %u, \"state_kind\": \"%s\", \"mem_seed\": ",
            s->index, engine_state_kind_name(s->kind));
    json_hex(out, s->mem_seed);
    fputs(", \"fault\": ", out);
    if (s->has_fault) {
        fputc('[', out);
        json_hex(out, s->fault_begin);
        fputs(", ", out);
        json_hex(out, s->fault_end);
        fputc(']', out);
    } else {
        fputs("null", out);
    }
    const struct cfi_arch *arch = s->arch ? s->arch : &cfi_arch_x86_64;
    fprintf(out, ", \"arch\": \"%s\", \"regs\": ", arch->name);
    json_regs(out, arch, &s->callee);
}
