/* SPDX-License-Identifier: MIT */
/* load.c — opening an eh_elf: an eh_elf is code, run in this process, so
 * only a file that the process's effective user (or root) alone could
 * have written is loaded.
 *
 * The checks follow ssh's for its keys: the folder the caller names
 * (the root) and every folder below it on the way to the file, and the
 * file itself, must be owned by the effective user or root and be
 * writable by no one else (no group or other write bit). Folders below
 * the root and the file are opened with O_NOFOLLOW, one at a time
 * (openat), and checked on the open descriptor (fstat); the file is then
 * loaded through /proc/self/fd/N, the very file checked: renaming or
 * replacing a path meanwhile changes nothing. dlopen knows an object by
 * its name, so the descriptor of a loaded eh_elf stays open (its number
 * is never reused while the eh_elf is loaded) and the number of loaded
 * eh_elfs is bounded (RT_MAX_EH_ELFS). A symbol counts only when the
 * eh_elf itself defines it (dlsym also searches its dependencies). */
#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Owned by the effective user or root, writable by no one else, and of
 * the kind wanted. */
static bool trusted(int fd, bool folder)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return false;
    if (st.st_uid != geteuid() && st.st_uid != 0)
        return false;
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return false;
    return folder ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
}

/* The next component of *rel (up to '/') into part; false when it is
 * empty, "." or "..", or too long. */
static bool next_part(const char **rel, char *part, size_t size)
{
    const char *slash = strchr(*rel, '/');
    size_t n = slash ? (size_t)(slash - *rel) : strlen(*rel);
    if (n == 0 || n >= size || !strncmp(*rel, ".", n) ||
        !strncmp(*rel, "..", n))
        return false;
    memcpy(part, *rel, n);
    part[n] = '\0';
    *rel += slash ? n + 1 : n;
    return true;
}

/* A descriptor of root/rel, or -1: absent (*refused false), or there
 * but a folder on the way or the file untrusted (*refused true: only a
 * file that exists is counted as refused). */
static int open_trusted(const char *root, const char *rel, bool *refused)
{
    *refused = false;
    int dir = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return -1;
    char part[NAME_MAX + 1];
    bool ok = trusted(dir, true);
    while (next_part(&rel, part, sizeof part)) {
        bool last = *rel == '\0';
        int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
                    (last ? O_NONBLOCK : O_DIRECTORY);
        int next = openat(dir, part, flags);
        close(dir);
        if (next < 0)
            return -1;
        ok = ok && trusted(next, !last);
        if (last) {
            if (ok)
                return next;
            close(next);
            *refused = true;
            return -1;
        }
        dir = next;
    }
    close(dir);
    return -1;
}

/* `name` when the object `map` itself defines it, else NULL. */
static void *own_symbol(void *handle, const struct link_map *map,
                        const char *name)
{
    void *p = dlsym(handle, name);
    Dl_info info;
    struct link_map *where = NULL;
    if (!p || !dladdr1(p, &info, (void **)&where, RTLD_DL_LINKMAP) ||
        where != map)
        return NULL;
    return p;
}

/* The stamp names the object: its build-id, or for an object without
 * one the hash of its file's frame sections (frame_id.c). An eh_elf
 * without a stamp names no object and is not used. */
static bool stamp_matches(const struct eh_elf_object_id *stamp,
                          const struct eh_elf_object_id *id)
{
    return stamp && id->kind != EH_ELF_OBJECT_ID_NONE &&
           stamp->kind == id->kind && id->size > 0 &&
           id->size <= EH_ELF_OBJECT_ID_MAX && stamp->size == id->size &&
           !memcmp(stamp->id, id->id, id->size);
}

/* The checks of a loaded eh_elf: ours, of the full ABI and a version
 * this library takes, for the library's machine, built from the
 * object. */
static enum rt_load check_loaded(void *handle,
                                 const struct eh_elf_object_id *id,
                                 eh_elf_unwind_fn **entry)
{
    struct link_map *map = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map)
        return RT_LOAD_ABSENT;
    const char *ident = own_symbol(handle, map, "eh_elf_ident");
    const uint32_t *version = own_symbol(handle, map, "eh_elf_abi_version");
    void *fn = own_symbol(handle, map, "eh_elf_unwind");
    if (!ident || !version || !fn || strcmp(ident, EH_ELF_IDENT_FULL) ||
        *version < EH_ELF_ABI_VERSION_MIN || *version > EH_ELF_ABI_VERSION)
        return RT_LOAD_ABSENT;
    /* An eh_elf without eh_elf_machine is x86-64's (eh_elf.h). */
    const uint16_t *machine = own_symbol(handle, map, "eh_elf_machine");
    if ((machine ? *machine : EH_ELF_MACHINE_X86_64) != EH_ELF_MACHINE)
        return RT_LOAD_ABSENT;
    const struct eh_elf_object_id *stamp =
        own_symbol(handle, map, "eh_elf_object_id");
    if (!stamp_matches(stamp, id))
        return RT_LOAD_STALE;
    memcpy(entry, &fn, sizeof fn); /* object pointer to function pointer */
    return RT_LOAD_OK;
}

enum rt_load rt_load_eh_elf(const char *root, const char *rel,
                            const struct eh_elf_object_id *id,
                            unsigned *loads, eh_elf_unwind_fn **entry)
{
    *entry = NULL;
    bool refused;
    int fd = open_trusted(root, rel, &refused);
    if (fd < 0)
        return refused ? RT_LOAD_UNTRUSTED : RT_LOAD_ABSENT;
    if (*loads >= RT_MAX_EH_ELFS) {
        close(fd);
        return RT_LOAD_LIMIT;
    }
    char name[64];
    snprintf(name, sizeof name, "/proc/self/fd/%d", fd);
    void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        close(fd);
        return RT_LOAD_ABSENT;
    }
    enum rt_load result = check_loaded(handle, id, entry);
    if (result != RT_LOAD_OK) {
        dlclose(handle);
        close(fd);
        *entry = NULL;
        return result;
    }
    /* The handle and fd stay open for the process's life: the table
     * may hold entry, and the number keeps the name unique. */
    ++*loads;
    return RT_LOAD_OK;
}
