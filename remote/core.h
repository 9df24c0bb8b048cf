/* SPDX-License-Identifier: MIT */
/* core.h — an ELF core file for remote.h: its threads' registers
 * (NT_PRSTATUS), its mappings (NT_FILE) and its memory (the core's
 * PT_LOAD segments, and the mapped files for what the core lacks: the
 * kernel and gcore leave out the bytes of unmodified file mappings).
 *
 * Everything the core claims is checked against its size before it is
 * read: a truncated or corrupt core is refused with one message, never
 * read out of bounds; memory and time grow with the core's size, not
 * with the counts it records. x86-64 and AArch64 cores (e_machine).
 */
#ifndef CFISEM_REMOTE_CORE_H
#define CFISEM_REMOTE_CORE_H

#include <sys/types.h>

#include "remote/remote.h"

struct remote_core;

/* Opens and checks a core. Errors: CFI_E_IO (cannot be read: a folder,
 * a FIFO, missing), CFI_E_NOT_ELF, CFI_E_MALFORMED (truncated, notes
 * out of bounds, not a core, no thread), CFI_E_UNSUPPORTED (another
 * machine or class), CFI_E_NOMEM; diag->message says what. */
enum cfi_status remote_core_open(const char *path, struct remote_core **core,
                                 struct cfi_diag *diag);
void remote_core_close(struct remote_core *core);

const struct cfi_arch *remote_core_arch(const struct remote_core *core);
/* The threads of NT_PRSTATUS notes, in the core's order, their
 * registers known; *count of them (at least 1). */
const struct remote_thread *remote_core_threads(
    const struct remote_core *core, size_t *count);

/* Adds the NT_FILE mappings; `exe` (may be NULL) replaces the path of
 * every mapping of the file whose name (after the last '/') is exe's.
 * A core with no NT_FILE note (qemu-user's) gets exe's PT_LOAD
 * segments, moved by NT_AUXV's AT_ENTRY for a position-independent
 * executable. */
enum cfi_status remote_core_load_maps(const struct remote_core *core,
                                      struct remote_space *space,
                                      const char *exe);

/* A remote_read_fn: `data` is the struct remote_core. */
enum remote_read_result remote_core_read(void *data, uint64_t addr,
                                         unsigned size, uint64_t *value);

#endif
