/* SPDX-License-Identifier: MIT */
/* report.h — what a differential run prints: the text report for people
 * and the JSON file for tools.
 *
 * Text (diff_report_text):
 *   - one line for the run (files, FDEs, rows, requests, seed, time);
 *   - the summary table, one line per engine asked: compared, agree,
 *     differ, known deviation, not comparable, errors (harness.h defines
 *     each);
 *   - each engine that could not be opened, once per (engine, reason),
 *     with the files and the requests counted as its errors;
 *   - each known deviation that explained something: id, engine, count,
 *     summary;
 *   - the first `show` new mismatches: engine, file, PC, state, each
 *     differing item with expected and got, the row's IL, and the
 *     `cfisem unwind` line that asks the same question of that engine
 *     (run it with --engine il as well to see the reference's answer);
 *   - a last line with the number of new mismatches.
 *
 * JSON (diff_report_json), one object:
 *   {"seed": S, "states": N, "all_pcs": B, "seconds": T, "requests": N,
 *    "files": [{"path", "status", "error", "fdes", "rows", "requests"}],
 *    "summary": {"interp": {"compared": N, "agree": N, "differ": N,
 *                "known_deviation": N, "not_comparable": N, "errors": N},
 *                ...},                        (the engines asked)
 *    "errors": [{"engine", "file", "message", "requests"}],
 *    "deviations": {"ID": {"engine", "summary", "count", "example"}},
 *                                             (every entry of the table;
 *                                              example null or a mismatch)
 *    "mismatches_total": N,
 *    "mismatches": [{"engine", "file", "pc", "caller_frame", "lookup_pc",
 *                    "state", "state_kind", "mem_seed", "fault", "regs",
 *                    "fde", "row", "items": [{"item", "expected", "got",
 *                    "deviation"}], "expected", "got", "reproducer"}]}
 * "mismatches" holds the kept ones (the first --keep, DIFF_KEEP_DEFAULT
 * by default, at most DIFF_KEEP_MAX); "mismatches_total" counts all.
 * Addresses and register values are strings "0x..."; counts are numbers.
 * A frame is {"status", "message", "reg", "cfa", "regs": {"N": "0x.." |
 * "undefined" | "unknown"}} with registers 0-16 and any other that is not
 * undefined.
 */
#ifndef CFISEM_DIFF_REPORT_H
#define CFISEM_DIFF_REPORT_H

#include <stdio.h>

#include "diff/harness.h"
#include "engines/engines.h"

void diff_report_text(FILE *out, const struct diff_run *run, size_t show);
void diff_report_json(FILE *out, const struct diff_run *run);

/* One mismatch as the text report prints it (tests). */
void diff_report_record(FILE *out, const struct diff_run *run,
                        const struct diff_record *record, size_t number);

/* The reproducer of a record, one line without newline. */
void diff_report_reproducer(FILE *out, const struct diff_run *run,
                            const struct diff_record *record,
                            enum engine_id engine);

#endif
