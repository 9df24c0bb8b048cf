/* SPDX-License-Identifier: MIT */
/* qemu_dyn.h — a dynamically linked program's objects under qemu-user
 * (qemu_dyn.c says how they are found). */
#ifndef CFISEM_TRACE_QEMU_DYN_H
#define CFISEM_TRACE_QEMU_DYN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfi/cfi.h"

struct trace_mem;

/* The program's PT_INTERP (its dynamic loader's path), or false when it
 * has none (a static executable). */
bool trace_dyn_interp(const struct cfi_file *file, char *path, size_t size);
/* The value of auxiliary-vector entry `type` (AT_ENTRY, ...) in the
 * vector's len bytes, or false. */
bool trace_dyn_auxv(const uint8_t *auxv, size_t len, uint64_t type,
                    uint64_t *value);
/* Where the host has the guest's file `name`: under sysroot when it is
 * there (as qemu -L looks), else name itself. */
void trace_dyn_host_path(const char *sysroot, const char *name, char *path,
                         size_t size);
/* Called for each loaded object with a name: its guest path and its
 * load bias (l_addr). */
typedef void trace_dyn_found_fn(void *env, const char *name, uint64_t bias);
/* Walks the loader's list of loaded objects (the program placed at
 * `bias`); the number found, 0 before the loader has made the list. */
size_t trace_dyn_objects(struct trace_mem *mem, const struct cfi_file *program,
                         uint64_t bias, trace_dyn_found_fn *found, void *env);

#endif
