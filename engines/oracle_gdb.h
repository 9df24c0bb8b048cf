/* SPDX-License-Identifier: MIT */
/* oracle_gdb.h — gdb's DWARF unwinder as an engine.
 *
 * A batch of requests becomes one synthetic ELF core
 * (engines/gdb_core.c): a thread a request, whose NT_PRSTATUS holds the
 * callee's registers, and PT_LOAD segments with the union of the
 * requests' memory images (for each, the words the direct interpreter
 * reads for its frame, a window around every register's value, and its
 * own faulting range as a hole), taken from the requests' memory models.
 * Only requests that read the same memory (engine_batch_entry.shared)
 * and whose images agree word for word share a core: the others go to
 * the next core. Every byte gdb finds in the core is then the one the
 * request's own memory model gives, and a read gdb makes outside it is
 * checked against that model, as for a core of the request alone.
 *
 * One gdb process (`gdb -nx -batch`) runs per engine instance, that is
 * per file: a Python loop in it loads a batch's core with `core-file`,
 * and for each thread asked switches to it and prints what
 * `gdb.newest_frame().older()` gives for registers 0-16 and the CFA
 * ("frame at" of `info frame`), so that gdb's start-up is paid once per
 * file and the loading of a core once per batch. A gdb that does not
 * answer within 5 s (its own watchdog, shorter than cfisem diff's; 20 s
 * to start or to load a core) is killed, and the request it was on is
 * not comparable; so is one a gdb
 * that exits leaves unanswered. The rest of the batch is asked of a new
 * gdb; a failure before gdb began on any request of a core makes
 * smaller cores, down to a request each. A request asked alone
 * (engine_gdb_answer) is a batch of one.
 *
 * A caller frame: the thread's innermost frame is at a PC no file maps,
 * claimed by a Python unwinder of the driver that gives the frame above
 * it the request's registers and PC, so that gdb unwinds that frame as a
 * caller (level 1). Which of gdb's unwinders answered the frame asked
 * about is checked in gdb's own log (`set debug frame on`): at a `ret`
 * of an innermost frame gdb's epilogue analyser answers, not comparable.
 *
 * What gdb cannot be asked is not comparable: a PC no FDE
 * covers (gdb would use its prologue analyser, not its DWARF unwinder),
 * a callee register without a value (a core gives every register one),
 * registers above 16, a frame gdb stops at for its own reasons (its
 * stack sanity checks), a read outside the core's memory. Files of
 * another architecture: the host's gdb has no AArch64 (`set
 * architecture aarch64` is an undefined item; gdb-multiarch would have
 * it). */
#ifndef CFISEM_ENGINES_ORACLE_GDB_H
#define CFISEM_ENGINES_ORACLE_GDB_H

#include "cfi/cfi.h"
#include "engines/engine.h"

enum cfi_status engine_gdb_open(const struct cfi_file *file, void **self,
                                struct cfi_diag *diag);
enum cfi_status engine_gdb_answer(void *self, const struct cfi_request *request,
                                  struct engine_answer *answer);
void engine_gdb_answer_batch(void *self, struct engine_batch_entry *entries,
                             size_t n,
                             const struct engine_batch_progress *progress);
void engine_gdb_close(void *self);

#endif
