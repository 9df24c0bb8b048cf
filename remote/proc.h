/* SPDX-License-Identifier: MIT */
/* proc.h — a live process for remote.h: its threads stopped under
 * ptrace, their registers, its memory and its mappings.
 *
 * Threads are attached with PTRACE_SEIZE and stopped with
 * PTRACE_INTERRUPT: no SIGSTOP is sent, so a tracer that dies leaves
 * them running (the kernel detaches them) rather than stopped.
 * remote_proc_detach resumes every thread; call it on every path.
 */
#ifndef CFISEM_REMOTE_PROC_H
#define CFISEM_REMOTE_PROC_H

#include <sys/types.h>

#include "remote/remote.h"

struct remote_proc;

/* Stops every thread of `pid` (those of /proc/PID/task, again until no
 * new one appears). A thread that ends meanwhile is left out. Errors:
 * CFI_E_IO with a message (no such process, not permitted), CFI_E_NOMEM. */
enum cfi_status remote_proc_attach(pid_t pid, struct remote_proc **proc,
                                   struct cfi_diag *diag);
/* Resumes every thread and frees. NULL is accepted. */
void remote_proc_detach(struct remote_proc *proc);

/* The threads stopped, their registers read once they all were (x86-64
 * hosts only: elsewhere none is known); *count of them (at least 1). */
const struct remote_thread *remote_proc_threads(
    const struct remote_proc *proc, size_t *count);

/* Adds the mappings of /proc/PID/maps that name a file. */
enum cfi_status remote_proc_load_maps(const struct remote_proc *proc,
                                      struct remote_space *space,
                                      struct cfi_diag *diag);

/* A remote_read_fn: `data` is the struct remote_proc. */
enum remote_read_result remote_proc_read(void *data, uint64_t addr,
                                         unsigned size, uint64_t *value);

#endif
