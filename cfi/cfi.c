/* SPDX-License-Identifier: MIT */
/* cfi.c — status texts, x86-64 register names and widths. */
#include "cfi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_texts[] = {
#define CFI_STATUS_TEXT(name, short, text) [name] = text,
    CFI_STATUS_LIST(CFI_STATUS_TEXT)
#undef CFI_STATUS_TEXT
};

static const char *const status_names[] = {
#define CFI_STATUS_NAME(name, short, text) [name] = #short,
    CFI_STATUS_LIST(CFI_STATUS_NAME)
#undef CFI_STATUS_NAME
};

const char *cfi_status_text(enum cfi_status status)
{
    if ((unsigned)status >= CFI_STATUS_COUNT)
        return "invalid status";
    return status_texts[status];
}

const char *cfi_status_name(enum cfi_status status)
{
    if ((unsigned)status >= CFI_STATUS_COUNT)
        return "invalid";
    return status_names[status];
}

bool cfi_diag_in_expression(const struct cfi_diag *diag)
{
    switch (diag->status) {
    case CFI_E_EXPR: case CFI_E_EXPR_STACK: case CFI_E_STEP_LIMIT:
        return true;
    case CFI_E_MEMORY: case CFI_E_REG_UNKNOWN:
        /* Outside an expression these have no position (cfi.h). */
        return diag->offset != CFI_NO_OFFSET;
    default:
        return false;
    }
}

enum cfi_status cfi_fail(struct cfi_diag *diag, enum cfi_status status,
                         uint64_t offset, const char *message)
{
    if (diag) {
        diag->status = status;
        diag->message = message;
        diag->offset = offset;
        diag->reg = -1;
    }
    return status;
}

/* The reasons an open or a read fails that a user can act on. */
#define CFI_ERRNO_LIST(X)                                                   \
    X(ENOENT, "no such file or directory")                                  \
    X(EACCES, "permission denied")                                          \
    X(EPERM, "operation not permitted")                                     \
    X(ENOTDIR, "a component of the path is not a directory")                \
    X(EISDIR, "is a directory")                                             \
    X(ELOOP, "too many levels of symbolic links")                           \
    X(ENAMETOOLONG, "file name too long")                                   \
    X(EMFILE, "too many open files")                                        \
    X(ENFILE, "too many open files in the system")                          \
    X(ENXIO, "no such device or address")                                   \
    X(ENODEV, "no such device")                                             \
    X(EIO, "input/output error")                                            \
    X(ENOMEM, "out of memory")                                              \
    X(EOVERFLOW, "file too large")

const char *cfi_errno_text(int error)
{
    switch (error) {
#define CFI_ERRNO_CASE(number, text)                                        \
    case number:                                                            \
        return "cannot open file: " text;
        CFI_ERRNO_LIST(CFI_ERRNO_CASE)
#undef CFI_ERRNO_CASE
    default:
        return "cannot open file";
    }
}

/* The names of x86-64's registers: the descriptor's. */
const char *cfi_reg_name(unsigned reg)
{
    return cfi_arch_reg_name(&cfi_arch_x86_64, reg);
}

unsigned cfi_reg_size(unsigned reg)
{
    if (reg < CFI_NREGS && !cfi_reg_name(reg))
        return 0;
    if (reg <= CFI_REG_RIP)
        return 8;
    if (reg <= 32 || (reg >= 67 && reg <= 82))
        return 16; /* xmm0-15, xmm16-31 */
    if (reg <= 40)
        return 10; /* st0-7 */
    if (reg <= 49 || reg == 58 || reg == 59 || (reg >= 118 && reg <= 125))
        return 8;  /* mm0-7, rflags, fs.base, gs.base, k0-7 */
    if (reg == 64)
        return 4;  /* mxcsr */
    if (reg < CFI_NREGS)
        return 2;  /* es..gs, tr, ldtr, fcw, fsw */
    return 0;
}

const char *cfi_reg_label(unsigned reg, char *buf, size_t size)
{
    const char *name = cfi_reg_name(reg);
    if (name)
        return name;
    snprintf(buf, size, "r%u", reg);
    return buf;
}

static int parse_number(const char *text, size_t len)
{
    if (len == 0 || len > 3)
        return -1;
    int n = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9')
            return -1;
        n = n * 10 + (text[i] - '0');
    }
    return n < CFI_NREGS ? n : -1;
}

int cfi_reg_parse(const char *text, size_t len)
{
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        const char *name = cfi_reg_name(reg);
        if (name && strlen(name) == len && memcmp(name, text, len) == 0)
            return (int)reg;
    }
    if (len > 1 && text[0] == 'r')
        return parse_number(text + 1, len - 1);
    return parse_number(text, len);
}

void cfi_regs_clear(struct cfi_regs *regs)
{
    memset(regs, 0, sizeof *regs);
}

void cfi_regs_set(struct cfi_regs *regs, unsigned reg, uint64_t value)
{
    if (reg >= CFI_NREGS)
        return;
    regs->value[reg] = value;
    regs->status[reg] = CFI_REG_VALUE;
}

const char *cfi_section_name(enum cfi_section section)
{
    return section == CFI_DEBUG_FRAME ? ".debug_frame" : ".eh_frame";
}

bool cfi_fde_is_nop_only(const struct cfi_fde *fde)
{
    for (size_t i = 0; i < fde->instructions_len; i++)
        if (fde->instructions[i] != 0)
            return false;
    return true;
}
