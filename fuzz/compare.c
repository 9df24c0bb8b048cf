/* SPDX-License-Identifier: MIT */
/* compare.c — comparing two engines' answers, and the register states
 * the targets give them. */
#include "internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "engines/engines.h"

bool fuzz_frames_agree(const struct cfi_frame *a, const struct cfi_frame *b)
{
    return engine_frames_agree(a, b);
}

/* Appends to text (NUL-terminated, `size` bytes in all). */
static void append(char *text, size_t size, const char *format, ...)
{
    size_t used = strlen(text);
    if (used + 1 >= size)
        return;
    va_list args;
    va_start(args, format);
    vsnprintf(text + used, size - used, format, args);
    va_end(args);
}

static const char *status_label(uint8_t status)
{
    switch (status) {
    case CFI_REG_VALUE: return "value";
    case CFI_REG_UNDEFINED: return "undef";
    case CFI_REG_UNKNOWN: return "unknown";
    }
    return "?";
}

static void describe(char *text, size_t size, const char *name,
                     const struct cfi_frame *frame)
{
    append(text, size, "  %-7s ", name);
    if (frame->status != CFI_OK) {
        append(text, size, "%s (%s, offset 0x%" PRIx64 ", reg %d)\n",
               cfi_status_name(frame->status),
               frame->diag.message ? frame->diag.message : "",
               frame->diag.offset, frame->diag.reg);
        return;
    }
    append(text, size, "cfa=0x%" PRIx64 "%s", frame->cfa,
           frame->signal_frame ? " signal" : "");
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        uint8_t status = frame->caller.status[reg];
        if (reg >= CFI_NGPRS && status == CFI_REG_UNDEFINED)
            continue;
        if (status == CFI_REG_VALUE)
            append(text, size, " %u=0x%" PRIx64, reg,
                   frame->caller.value[reg]);
        else
            append(text, size, " %u=%s", reg, status_label(status));
    }
    append(text, size, "\n");
}

enum fuzz_result fuzz_disagree(struct fuzz_report *report, const char *what,
                               const struct cfi_request *request,
                               const char *name_a, const struct cfi_frame *a,
                               const char *name_b, const struct cfi_frame *b)
{
    char *text = report->text;
    size_t size = sizeof report->text;
    text[0] = '\0';
    append(text, size, "%s at pc 0x%" PRIx64 "%s\n", what, request->pc,
           request->caller_frame ? " (caller frame)" : "");
    append(text, size, "  callee ");
    for (unsigned reg = 0; reg < CFI_NGPRS; reg++) {
        uint8_t status = request->callee->status[reg];
        if (status == CFI_REG_VALUE)
            append(text, size, " %u=0x%" PRIx64, reg,
                   request->callee->value[reg]);
        else
            append(text, size, " %u=%s", reg, status_label(status));
    }
    append(text, size, "\n");
    describe(text, size, name_a, a);
    describe(text, size, name_b, b);
    return FUZZ_DISAGREE;
}

void fuzz_make_regs(uint64_t seed, uint32_t known, bool high, bool undefined,
                    uint64_t pc, struct cfi_regs *regs)
{
    cfi_regs_clear(regs);
    uint64_t rsp = 0x7ffe00000000ull + (engine_mix(seed) & 0xffff0ull);
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        bool given = reg < CFI_NGPRS ? (known >> reg) & 1u : high;
        if (given) {
            uint64_t value = engine_mix(seed ^ (0x9e37ull * (reg + 1)));
            if (reg == CFI_REG_RSP)
                value = rsp;
            else if (reg == CFI_REG_RBP)
                value = rsp + (engine_mix(seed + 1) & 0xff0);
            else if (reg == CFI_REG_RIP)
                value = pc;
            cfi_regs_set(regs, reg, value);
        } else if (undefined) {
            regs->status[reg] = CFI_REG_UNDEFINED;
        }
    }
}
