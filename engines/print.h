/* SPDX-License-Identifier: MIT */
/* print.h — an engine's answer and a state for people and as JSON: what
 * the harness's reports (diff/report.h), validate's and `cfisem unwind`
 * print alike. */
#ifndef CFISEM_ENGINES_PRINT_H
#define CFISEM_ENGINES_PRINT_H

#include <stdio.h>

#include "cfi/cfi.h"
#include "engines/compare.h"
#include "engines/state.h"

/* The differing items of an outcome: each new one on its own line
 * ("    cfa    expected 0x.., got 0x.."), then the ones a known deviation
 * explains, one line per deviation ("    known: ID: rax rdx"); validate
 * prints them too. */
void engine_report_items(FILE *out, const struct cfi_arch *arch,
                         const struct engine_outcome *outcome,
                         const struct cfi_frame *expected,
                         const struct cfi_frame *got);

/* JSON helpers: the members of a state ("pc",
 * "caller_frame", "lookup_pc", "state", "state_kind", "mem_seed",
 * "fault", "regs", without braces); the items as an array; a quoted,
 * escaped string (null for NULL); a frame object. */
void engine_json_state(FILE *out, const struct engine_state *state);
void engine_json_items(FILE *out, const struct cfi_arch *arch,
                       const struct engine_outcome *outcome,
                       const struct cfi_frame *expected,
                       const struct cfi_frame *got);
void engine_json_string(FILE *out, const char *text);
void engine_json_frame(FILE *out, const struct cfi_frame *frame);

/* "0x1f", "undefined", "unknown": register `reg` of a frame that
 * unwound; writes into buf (>= 24 bytes). */
const char *engine_reg_text(const struct cfi_frame *frame, unsigned reg,
                            char *buf, size_t size);
/* "ok", or "memory (memory fault)", "reg_unknown (r12)": a frame's
 * status for people; writes into buf (>= 96 bytes). */
const char *engine_status_text(const struct cfi_frame *frame, char *buf,
                               size_t size);

#endif
