/* SPDX-License-Identifier: MIT */
/* qemu_dyn.c — where a dynamically linked AArch64 program's objects lie
 * under qemu-user, which has no /proc/PID/maps of the guest to read:
 *   - at the first stop (the dynamic loader's entry) the auxiliary vector
 *     (qXfer:auxv:read) gives the program's entry point (AT_ENTRY, hence
 *     its load bias) and the loader's base (AT_BASE); the loader's file
 *     is the program's PT_INTERP under the sysroot;
 *   - later, when a PC lies in no known object, the loader's list of
 *     loaded objects is walked: the program's DT_DEBUG entry holds the
 *     address of struct r_debug, whose r_map starts the struct link_map
 *     chain (l_addr, l_name, l_ld, l_next, l_prev; <link.h>). A name is
 *     looked for under the sysroot first, as qemu -L does.
 * Every read goes through the tracer's memory reader and is bounded:
 * a corrupt chain ends the walk. */
#define _GNU_SOURCE
#include <elf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "qemu_dyn.h"

enum { MAX_OBJECTS = 1024, NAME_MAX_LEN = 4096 };

bool trace_dyn_interp(const struct cfi_file *file, char *path, size_t size)
{
    struct cfi_segment interp;
    if (!cfi_file_program_header(file, PT_INTERP, &interp) ||
        interp.filesz == 0 || interp.filesz >= size)
        return false;
    memcpy(path, interp.bytes, interp.filesz);
    path[interp.filesz] = 0;
    return path[0] != 0 && strlen(path) == interp.filesz - 1;
}

bool trace_dyn_auxv(const uint8_t *auxv, size_t len, uint64_t type,
                    uint64_t *value)
{
    for (size_t at = 0; at + 16 <= len; at += 16) {
        uint64_t key = cfi_load_le(auxv + at, 8);
        if (key == AT_NULL)
            return false;
        if (key == type) {
            *value = cfi_load_le(auxv + at + 8, 8);
            return true;
        }
    }
    return false;
}

void trace_dyn_host_path(const char *sysroot, const char *name, char *path,
                         size_t size)
{
    snprintf(path, size, "%s%s", sysroot, name);
    if (name[0] != '/' || access(path, R_OK) != 0)
        snprintf(path, size, "%s", name);
}

static bool read_word(struct trace_mem *mem, uint64_t addr, uint64_t *value)
{
    uint8_t bytes[8];
    if (trace_mem_read(mem, addr, bytes, 8) != 8)
        return false;
    *value = cfi_load_le(bytes, 8);
    return true;
}

/* The address of struct r_debug: the program's DT_DEBUG in memory. */
static bool r_debug_of(struct trace_mem *mem, const struct cfi_file *program,
                       uint64_t bias, uint64_t *r_debug)
{
    struct cfi_segment dynamic;
    if (!cfi_file_program_header(program, PT_DYNAMIC, &dynamic))
        return false;
    uint64_t at = dynamic.vaddr + bias;
    /* Bounded by the segment's size. */
    for (uint64_t i = 0; i + 16 <= dynamic.memsz; i += 16) {
        uint64_t tag, value;
        if (!read_word(mem, at + i, &tag) || !read_word(mem, at + i + 8,
                                                        &value))
            return false;
        if (tag == DT_NULL)
            return false;
        if (tag == DT_DEBUG) {
            *r_debug = value;
            return value != 0;
        }
    }
    return false;
}

static bool read_name(struct trace_mem *mem, uint64_t addr, char *name)
{
    /* Bounded by NAME_MAX_LEN. */
    for (size_t i = 0; i < NAME_MAX_LEN; i++) {
        uint8_t ch;
        if (trace_mem_read(mem, addr + i, &ch, 1) != 1)
            return false;
        name[i] = (char)ch;
        if (ch == 0)
            return true;
    }
    return false;
}

size_t trace_dyn_objects(struct trace_mem *mem, const struct cfi_file *program,
                         uint64_t bias, trace_dyn_found_fn *found, void *env)
{
    uint64_t r_debug, map;
    if (!r_debug_of(mem, program, bias, &r_debug) ||
        !read_word(mem, r_debug + 8, &map))
        return 0;
    size_t count = 0;
    char name[NAME_MAX_LEN];
    /* Bounded by MAX_OBJECTS: a corrupt chain may loop. */
    for (size_t i = 0; map != 0 && i < MAX_OBJECTS; i++) {
        uint64_t l_addr, l_name, l_next;
        if (!read_word(mem, map, &l_addr) ||
            !read_word(mem, map + 8, &l_name) ||
            !read_word(mem, map + 24, &l_next))
            break;
        if (l_name != 0 && read_name(mem, l_name, name) && name[0]) {
            found(env, name, l_addr);
            count++;
        }
        map = l_next;
    }
    return count;
}
