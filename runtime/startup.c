/* SPDX-License-Identifier: MIT */
/* startup.c — the objects loaded with the program, which stay.
 *
 * glibc never unloads the objects it loads at start-up: the program and
 * the closure of its DT_NEEDED entries (the dynamic loader among them),
 * whatever dlclose is asked (its own _dl_find_object keeps them apart as
 * never unloaded). A walk need not ask whether such an object is still
 * there, which saves it a _dl_find_object and a build-id comparison
 * each time it enters one.
 *
 * The list of the base namespace (_r_debug.r_map) starts with the
 * program, and the objects loaded at start-up come before any loaded
 * later (the loader appends). The closure is computed on that list: a
 * DT_NEEDED name resolves to the first object of the list whose
 * DT_SONAME, file name or path is that name, which is the object loaded
 * at start-up for it, as every name was resolved then. Objects it does
 * not reach (LD_PRELOAD ones, the vDSO) are checked as the others are.
 * The list is read inside a dl_iterate_phdr callback: the loader holds
 * the lock under which it adds and removes objects. Not
 * async-signal-safe (cfisem_prepare's). */
#define _GNU_SOURCE
#include "internal.h"

#include <elf.h>
#include <link.h>
#include <string.h>

struct startup {
    const void **maps; /* out: the link maps of the closure */
    size_t max;
    size_t count;
};

/* A dynamic entry's address: the loader relocates the dynamic section
 * in place, except where it is read-only (the vDSO's). */
static uintptr_t dynamic_address(const struct link_map *m, ElfW(Addr) v)
{
    return v < m->l_addr ? m->l_addr + v : v;
}

/* The string table of m, or NULL. */
static const char *strtab_of(const struct link_map *m, size_t *size)
{
    uintptr_t table = 0;
    *size = 0;
    for (const ElfW(Dyn) *d = m->l_ld; d && d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_STRTAB)
            table = dynamic_address(m, d->d_un.d_ptr);
        else if (d->d_tag == DT_STRSZ)
            *size = d->d_un.d_val;
    }
    return table && *size ? (const char *)table : NULL;
}

/* The string at off in a table of size bytes; NULL when off is outside
 * or the string unterminated. */
static const char *string_at(const char *table, size_t size, ElfW(Xword) off)
{
    if (!table || off >= size || !memchr(table + off, '\0', size - off))
        return NULL;
    return table + off;
}

static const char *soname_of(const struct link_map *m)
{
    size_t size;
    const char *table = strtab_of(m, &size);
    for (const ElfW(Dyn) *d = m->l_ld; d && d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_SONAME)
            return string_at(table, size, d->d_un.d_val);
    return NULL;
}

/* m answers to the DT_NEEDED name `name`. */
static bool answers(const struct link_map *m, const char *name)
{
    const char *path = m->l_name ? m->l_name : "";
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *soname = soname_of(m);
    return !strcmp(path, name) ||
           (!strchr(name, '/') && !strcmp(base, name)) ||
           (soname && !strcmp(soname, name));
}

static bool listed(const struct startup *s, const struct link_map *m)
{
    for (size_t i = 0; i < s->count; i++)
        if (s->maps[i] == m)
            return true;
    return false;
}

/* The first object of the list that answers to name; NULL if none. */
static const struct link_map *resolve(const struct link_map *head,
                                      const char *name)
{
    size_t steps = 0;
    for (const struct link_map *m = head; m && steps < RT_MAX_STARTUP;
         m = m->l_next, steps++)
        if (answers(m, name))
            return m;
    return NULL;
}

/* Adds the objects m's DT_NEEDED names resolve to. */
static void add_needed(struct startup *s, const struct link_map *head,
                       const struct link_map *m)
{
    size_t size;
    const char *table = strtab_of(m, &size);
    for (const ElfW(Dyn) *d = m->l_ld; d && d->d_tag != DT_NULL; d++) {
        if (d->d_tag != DT_NEEDED)
            continue;
        const char *name = string_at(table, size, d->d_un.d_val);
        const struct link_map *dep = name ? resolve(head, name) : NULL;
        if (dep && !listed(s, dep) && s->count < s->max)
            s->maps[s->count++] = dep;
    }
}

static int closure(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    struct startup *s = data;
    const struct link_map *head = _r_debug.r_map;
    if (!head || s->max == 0)
        return 1;
    s->maps[s->count++] = head; /* the program */
    for (size_t i = 0; i < s->count; i++) /* the list grows meanwhile */
        add_needed(s, head, s->maps[i]);
    return 1; /* once: the whole list is read under the lock */
}

size_t rt_startup_maps(const void **maps, size_t max)
{
    struct startup s = {.maps = maps, .max = max, .count = 0};
    dl_iterate_phdr(closure, &s);
    return s.count;
}
