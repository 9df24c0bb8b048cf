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
    return cfi_arch_reg_size(&cfi_arch_x86_64, reg);
}

const char *cfi_reg_label(unsigned reg, char *buf, size_t size)
{
    return cfi_arch_reg_label(&cfi_arch_x86_64, reg, buf, size);
}

int cfi_reg_parse(const char *text, size_t len)
{
    return cfi_arch_reg_parse(&cfi_arch_x86_64, text, len);
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
