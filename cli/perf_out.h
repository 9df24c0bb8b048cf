/* SPDX-License-Identifier: MIT */
/* perf_out.h — what `cfisem perf` prints besides perf script's text:
 * the comparison of its chains with another unwinder's (perf script's,
 * or the frame-pointer chain), grouped by cause (perf_compare.c), and
 * the flame graph (perf_svg.c). Private to cli/. */
#ifndef CFISEM_CLI_PERF_OUT_H
#define CFISEM_CLI_PERF_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "remote/remote.h"

/* One user frame of a chain: its address (perf script's: the link-time
 * address in its object less 1 for a return address; for the
 * frame-pointer chain, the absolute PC) and whether no object holds
 * it. */
struct chain_frame {
    uint64_t addr;
    bool outside;
};

/* ------------------------------------------------------------------ */
/* Causes                                                               */
/* ------------------------------------------------------------------ */

struct chain_tally;

/* `theirs` names the other unwinder in the causes ("perf script"). */
struct chain_tally *chain_tally_new(const char *theirs);
void chain_tally_free(struct chain_tally *tally);

/* Compares two chains, innermost first, and counts the sample under
 * its cause: the same chain; the first depth where the addresses
 * differ (or where one frame is outside any object); or which side
 * stopped earlier, cfisem's with `our_stop` (its stop reason). `label`
 * names the sample in the cause's example (the first one is kept).
 * True when the chains are the same. */
bool chain_tally_compare(struct chain_tally *tally, const char *label,
                         const struct chain_frame *ours, size_t n_ours,
                         const struct chain_frame *theirs, size_t n_theirs,
                         const char *our_stop);
/* Counts a sample under a cause of the caller's (a sample skipped). */
void chain_tally_add(struct chain_tally *tally, const char *cause,
                     const char *example);
/* The samples counted, and those whose chains were the same. */
uint64_t chain_tally_samples(const struct chain_tally *tally);
uint64_t chain_tally_same(const struct chain_tally *tally);
/* The table: one line per cause, most samples first, with its first
 * example. */
void chain_tally_print(const struct chain_tally *tally, FILE *out);

/* ------------------------------------------------------------------ */
/* perf script's chains                                                 */
/* ------------------------------------------------------------------ */

struct script_chains;

/* Runs `perf script -F pid,tid,time,ip,sym,dso --no-inline -i PATH` and
 * keeps each sample's user frames. False, with one line on `err`, when
 * perf script cannot run or fails. */
bool script_chains_load(const char *path, struct script_chains **chains,
                        FILE *err);
void script_chains_free(struct script_chains *chains);
/* The user frames of the sample of thread `tid` at `time` (ns; perf
 * script prints microseconds), each sample given once: NULL when perf
 * script printed none. */
const struct chain_frame *script_chains_take(struct script_chains *chains,
                                             uint32_t tid, uint64_t time,
                                             size_t *n);

/* ------------------------------------------------------------------ */
/* The frame-pointer chain                                              */
/* ------------------------------------------------------------------ */

/* The chain the x86-64 kernel's user walk gives (perf_callchain_user,
 * when the event does not exclude user callchains): `pc`, then the
 * return address of each frame record from `rbp` on ([rbp] the caller's
 * rbp, [rbp + 8] the return address), while the records are readable
 * and each lies above the last. Into pcs[0 .. return value). */
size_t fp_chain(uint64_t pc, uint64_t rbp, remote_read_fn read, void *data,
                uint64_t *pcs, size_t max);

/* ------------------------------------------------------------------ */
/* Flame graph                                                          */
/* ------------------------------------------------------------------ */

/* Writes a self-contained SVG flame graph of the folded stacks
 * (`lines[i]` is "A;B;C", the outermost first; one line per sample):
 * one <rect> with a <title> per distinct frame prefix, its width
 * proportional to its samples, the root ("all") spanning the graph.
 * False when out of memory. */
bool perf_svg_write(FILE *out, char *const *lines, size_t n,
                    const char *title);

#endif
