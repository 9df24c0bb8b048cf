/* SPDX-License-Identifier: MIT */
/* objects.c — the table of loaded objects and their eh_elfs.
 *
 * The one piece of global mutable state of the library, because a
 * run-time unwinder must not open files or allocate while it steps: the
 * table is filled by cfisem_prepare (under a mutex, outside signal
 * handlers) and read by the step path without a lock. An entry is
 * written completely, then published by a release store of the count;
 * readers load the count with acquire and read only published entries,
 * which never change. The counters are relaxed atomics (lock-free on
 * x86-64), so both are async-signal-safe and thread-safe.
 *
 * Objects come and go (dlclose). An entry is used only while the object
 * that _dl_find_object finds at the PC is the entry's: the same link
 * map, extent and .eh_frame_hdr, and the same build-id read from its
 * headers in memory. Otherwise the entry is retired for good (an atomic
 * flag) and the PC goes to the object loaded there now, without an
 * eh_elf until cfisem_prepare finds its own. Two kinds of objects stay
 * and are not checked: those loaded with the program (startup.c), and
 * the one holding this library's code, which cannot go while a walk
 * runs in it (and the table goes with it). */
#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#ifndef CFISEM_SYSTEM_EH_ELF_DIR /* set by the Makefile from PREFIX */
#define CFISEM_SYSTEM_EH_ELF_DIR "/usr/local/lib/x86_64-linux-gnu/cfisem/eh_elf"
#endif

enum { RT_MAX_OBJECTS = 512, RT_BUILD_ID_MAX = 64 };

/* What tells an entry's object from another loaded at the same place
 * later: written with the entry, never changed. */
struct rt_identity {
    const void *link_map;
    uint64_t map_start;       /* _dl_find_object's extent */
    uint64_t map_end;
    uint8_t build_id[RT_BUILD_ID_MAX];
    size_t build_id_len;
    /* Where the build-id lies in memory, when that is in the first page
     * of the object's extent (the first page of its first segment: the
     * ELF header's, mapped and readable on x86-64 whatever object is
     * loaded there), else NULL. */
    const uint8_t *build_id_at;
    bool stays; /* loaded with the program, or this library's object */
};

static struct rt_object objects[RT_MAX_OBJECTS];
static struct rt_identity identities[RT_MAX_OBJECTS];
static _Atomic uint8_t retired[RT_MAX_OBJECTS]; /* its object is gone */
static _Atomic size_t nobjects;
static _Atomic uint64_t objects_eh_elf;
static _Atomic uint64_t objects_unloaded;
static _Atomic uint64_t eh_elfs_untrusted;
static _Atomic uint64_t eh_elfs_stale;
static _Atomic uint64_t frames_interp;
static _Atomic uint64_t frames_failed;
static unsigned eh_elf_loads; /* under prepare_lock */
static pthread_mutex_t prepare_lock = PTHREAD_MUTEX_INITIALIZER;

const char *cfisem_system_eh_elf_dir(void)
{
    return CFISEM_SYSTEM_EH_ELF_DIR;
}

void rt_count_interp(uint32_t frames)
{
    atomic_fetch_add_explicit(&frames_interp, frames, memory_order_relaxed);
}

void rt_count_failure(void)
{
    atomic_fetch_add_explicit(&frames_failed, 1, memory_order_relaxed);
}

void cfisem_stats(struct cfisem_stats *stats)
{
    stats->objects = atomic_load_explicit(&nobjects, memory_order_acquire);
    stats->objects_eh_elf =
        atomic_load_explicit(&objects_eh_elf, memory_order_relaxed);
    stats->frames_interp =
        atomic_load_explicit(&frames_interp, memory_order_relaxed);
    stats->frames_failed =
        atomic_load_explicit(&frames_failed, memory_order_relaxed);
    stats->objects_unloaded =
        atomic_load_explicit(&objects_unloaded, memory_order_relaxed);
    stats->eh_elfs_untrusted =
        atomic_load_explicit(&eh_elfs_untrusted, memory_order_relaxed);
    stats->eh_elfs_stale =
        atomic_load_explicit(&eh_elfs_stale, memory_order_relaxed);
}

/* The GNU build-id note among the PT_NOTE segments of an object loaded
 * at bias (padded to 4 bytes, or 8 in a segment aligned so), as `cfisem
 * cache` reads it from the file (compile/elf.c, cg_build_id). Reads
 * only memory the caller knows mapped. */
static size_t note_build_id(const ElfW(Phdr) *phdrs, unsigned phnum,
                            uint64_t bias, uint8_t *out,
                            const uint8_t **where)
{
    for (unsigned i = 0; i < phnum; i++) {
        const ElfW(Phdr) *ph = &phdrs[i];
        if (ph->p_type != PT_NOTE)
            continue;
        size_t align = ph->p_align == 8 ? 8 : 4;
        const uint8_t *p = (const uint8_t *)(uintptr_t)(bias + ph->p_vaddr);
        const uint8_t *end = p + ph->p_memsz;
        while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
            const ElfW(Nhdr) *note = (const ElfW(Nhdr) *)p;
            size_t name = (note->n_namesz + align - 1) & ~(align - 1);
            size_t desc = (note->n_descsz + align - 1) & ~(align - 1);
            const uint8_t *data = p + sizeof *note;
            if (name > (size_t)(end - data) ||
                desc > (size_t)(end - data) - name)
                break;
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
                !memcmp(data, "GNU", 4) && note->n_descsz <= RT_BUILD_ID_MAX) {
                memcpy(out, data + name, note->n_descsz);
                *where = data + name;
                return note->n_descsz;
            }
            p = data + name + desc;
        }
    }
    return 0;
}

#ifdef DLFO_STRUCT_HAS_EH_DBASE
/* Every PT_NOTE of the program headers lies inside a readable PT_LOAD
 * segment (so it is mapped). */
static bool notes_mapped(const ElfW(Phdr) *phdrs, unsigned phnum)
{
    for (unsigned i = 0; i < phnum; i++) {
        if (phdrs[i].p_type != PT_NOTE)
            continue;
        bool inside = false;
        for (unsigned k = 0; k < phnum && !inside; k++)
            inside = phdrs[k].p_type == PT_LOAD && (phdrs[k].p_flags & PF_R) &&
                     phdrs[i].p_vaddr >= phdrs[k].p_vaddr &&
                     phdrs[i].p_vaddr + phdrs[i].p_memsz <=
                         phdrs[k].p_vaddr + phdrs[k].p_memsz;
        if (!inside)
            return false;
    }
    return true;
}

/* The program headers of the object _dl_find_object found, from its ELF
 * header at the start of its first segment (mapped: the loader maps the
 * first page of the file there), when they lie in that first page; NULL
 * otherwise. */
static const ElfW(Phdr) *first_page_phdrs(const struct dl_find_object *found,
                                          unsigned *phnum)
{
    const ElfW(Ehdr) *ehdr = found->dlfo_map_start;
    if (memcmp(ehdr->e_ident, ELFMAG, SELFMAG) ||
        ehdr->e_phentsize != sizeof(ElfW(Phdr)) ||
        ehdr->e_phoff + (uint64_t)ehdr->e_phnum * sizeof(ElfW(Phdr)) > 4096)
        return NULL;
    *phnum = ehdr->e_phnum;
    return (const ElfW(Phdr) *)((const char *)ehdr + ehdr->e_phoff);
}

/* The build-id of that object, from its program headers in the first
 * page; 0 when it cannot be read so. */
static size_t mapped_build_id(const struct dl_find_object *found,
                              uint8_t *out)
{
    unsigned phnum;
    const ElfW(Phdr) *phdrs = first_page_phdrs(found, &phnum);
    if (!phdrs || !notes_mapped(phdrs, phnum))
        return 0;
    const uint8_t *where;
    return note_build_id(phdrs, phnum, (uint64_t)found->dlfo_link_map->l_addr,
                         out, &where);
}

/* The n bytes at a and b are the same: memcmp's answer, in 8-byte
 * words for a build-id of 8 bytes or more (the last word may overlap
 * the one before), which a walk compares whenever it enters an object
 * that may be unloaded. */
static inline bool same_bytes(const uint8_t *a, const uint8_t *b, size_t n)
{
    if (n < 8)
        return !memcmp(a, b, n);
    uint64_t x, y, differ = 0;
    for (size_t at = 0; at + 8 < n; at += 8) {
        memcpy(&x, a + at, 8);
        memcpy(&y, b + at, 8);
        differ |= x ^ y;
    }
    memcpy(&x, a + n - 8, 8);
    memcpy(&y, b + n - 8, 8);
    return (differ | (x ^ y)) == 0;
}

/* The object loaded at pc now is entry i's. Async-signal-safe:
 * _dl_find_object is lock-free (glibc 2.35), the rest reads mapped
 * memory. */
static bool still_loaded(size_t i, uint64_t pc)
{
    const struct rt_object *o = &objects[i];
    const struct rt_identity *id = &identities[i];
    if (!id->link_map || id->stays)
        return true; /* unknown to _dl_find_object (the vDSO), or stays */
    struct dl_find_object found;
    if (_dl_find_object((void *)(uintptr_t)pc, &found) != 0 ||
        found.dlfo_link_map != id->link_map ||
        (uint64_t)(uintptr_t)found.dlfo_map_start != id->map_start ||
        (uint64_t)(uintptr_t)found.dlfo_map_end != id->map_end ||
        (uint64_t)found.dlfo_link_map->l_addr != o->bias ||
        (uint64_t)(uintptr_t)found.dlfo_eh_frame != o->eh_frame_hdr)
        return false;
    if (id->build_id_at) /* the same place in the first page */
        return same_bytes(id->build_id_at, id->build_id, id->build_id_len);
    uint8_t now[RT_BUILD_ID_MAX];
    size_t len = mapped_build_id(&found, now);
    return len == id->build_id_len && !memcmp(now, id->build_id, len);
}
#else
/* Without _dl_find_object (glibc before 2.35) the table is believed: a
 * program that unloads objects calls cfisem_prepare before it unwinds
 * again (cfisem-unwind.h). */
static bool still_loaded(size_t i, uint64_t pc)
{
    (void)i;
    (void)pc;
    return true;
}
#endif

/* Entry i's object is never unloaded, or is not checked (still_loaded
 * believes it): its entry is never retired. */
static bool entry_stays(size_t i)
{
#ifdef DLFO_STRUCT_HAS_EH_DBASE
    return !identities[i].link_map || identities[i].stays;
#else
    (void)i;
    return true;
#endif
}

/* Entry i answers for pc: its object is loaded there still; else it is
 * retired. */
static bool entry_valid(size_t i, uint64_t pc)
{
    if (atomic_load_explicit(&retired[i], memory_order_relaxed))
        return false;
    if (still_loaded(i, pc))
        return true;
    if (!atomic_exchange_explicit(&retired[i], 1, memory_order_relaxed))
        atomic_fetch_add_explicit(&objects_unloaded, 1,
                                  memory_order_relaxed);
    return false;
}

/* Which table entry held a PC of each 64 KiB block lately: a walk finds
 * its objects anew, and most are the last walk's. A hint is checked
 * against the (unchanging) entry it names before it is used, so a stale
 * or torn one costs only the scan it failed to save. */
enum { HINTS = 64 };
static _Atomic uint16_t hints[HINTS];

static size_t hint_of(uint64_t pc)
{
    return (size_t)(pc >> 16) % HINTS;
}

/* The published entry whose extent holds pc, not retired; n if none. */
static size_t entry_of(uint64_t pc, size_t n)
{
    size_t hint = atomic_load_explicit(&hints[hint_of(pc)],
                                       memory_order_relaxed);
    if (hint < n && pc >= objects[hint].start && pc < objects[hint].end &&
        !atomic_load_explicit(&retired[hint], memory_order_relaxed))
        return hint;
    for (size_t i = 0; i < n; i++)
        if (pc >= objects[i].start && pc < objects[i].end &&
            !atomic_load_explicit(&retired[i], memory_order_relaxed)) {
            atomic_store_explicit(&hints[hint_of(pc)], (uint16_t)i,
                                  memory_order_relaxed);
            return i;
        }
    return n;
}

#ifdef DLFO_STRUCT_HAS_EH_DBASE
/* The segment of .eh_frame_hdr of an object _dl_find_object found, from
 * the program headers in the first page of its extent (where the loader
 * maps the ELF header when the first segment starts the file); none
 * when they are not there. */
static void frame_segment_of(const struct dl_find_object *found,
                             struct rt_object *object)
{
    object->frame_below = object->frame_above = 0;
    unsigned phnum, first = 0;
    const ElfW(Phdr) *phdrs = first_page_phdrs(found, &phnum);
    if (!phdrs)
        return;
    while (first < phnum && phdrs[first].p_type != PT_LOAD)
        first++;
    if (first == phnum || phdrs[first].p_offset != 0 ||
        ((object->bias + phdrs[first].p_vaddr) & ~(uint64_t)4095) !=
            (object->start & ~(uint64_t)4095))
        return; /* the first segment does not start the file */
    rt_frame_segment(phdrs, phnum, object->bias, object);
}
#endif

bool rt_find_object(uint64_t pc, struct rt_object *object, uint16_t *entry)
{
    _Static_assert((int)RT_MAX_OBJECTS < (int)RT_ENTRY_STAYS,
                   "entries fit 15 bits");
    size_t n = atomic_load_explicit(&nobjects, memory_order_acquire);
    size_t i = entry_of(pc, n);
    *entry = 0;
    if (i < n && entry_valid(i, pc)) {
        *object = objects[i];
        *entry = (uint16_t)(i + 1) | (entry_stays(i) ? RT_ENTRY_STAYS : 0);
        return true;
    }
#ifdef DLFO_STRUCT_HAS_EH_DBASE
    /* An object loaded after cfisem_prepare: no eh_elf, the
     * interpreter on its .eh_frame. _dl_find_object is lock-free and
     * async-signal-safe (glibc 2.35). */
    struct dl_find_object found;
    if (_dl_find_object((void *)(uintptr_t)pc, &found) == 0) {
        object->start = (uint64_t)(uintptr_t)found.dlfo_map_start;
        object->end = (uint64_t)(uintptr_t)found.dlfo_map_end;
        object->bias = (uint64_t)found.dlfo_link_map->l_addr;
        object->eh_frame_hdr = (uint64_t)(uintptr_t)found.dlfo_eh_frame;
        object->unwind = NULL;
        frame_segment_of(&found, object);
        return true;
    }
#endif
    return false;
}

bool rt_entry_object(uint16_t entry, uint64_t pc, struct rt_object *object)
{
    size_t i = (size_t)(entry & ~RT_ENTRY_STAYS) - 1;
    size_t n = atomic_load_explicit(&nobjects, memory_order_acquire);
    if (i >= n || pc < objects[i].start || pc >= objects[i].end ||
        !entry_valid(i, pc))
        return false;
    *object = objects[i];
    return true;
}

/* ------------------------------------------------------------------ */
/* cfisem_prepare                                                        */
/* ------------------------------------------------------------------ */

/* What dl_iterate_phdr says about one object. */
struct candidate {
    struct rt_object object;
    char path[PATH_MAX];
    uint8_t build_id[RT_BUILD_ID_MAX];
    size_t build_id_len;
    const uint8_t *build_id_at;
    struct eh_elf_object_id id; /* what its eh_elf's stamp must name */
};

struct candidates {
    struct candidate *list;
    size_t count;
    size_t capacity;
};

/* An eh_elf: by its name, or loaded through its descriptor. */
static bool is_eh_elf_name(const char *path)
{
    size_t n = strlen(path);
    const char *suffix = ".eh_elf.so";
    size_t k = strlen(suffix);
    return (n >= k && !strcmp(path + n - k, suffix)) ||
           !strncmp(path, "/proc/self/fd/", 14);
}

static void describe(const struct dl_phdr_info *info, struct candidate *c)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    c->object.eh_frame_hdr = 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD) {
            if (ph->p_vaddr < lo)
                lo = ph->p_vaddr;
            if (ph->p_vaddr + ph->p_memsz > hi)
                hi = ph->p_vaddr + ph->p_memsz;
        } else if (ph->p_type == PT_GNU_EH_FRAME) {
            c->object.eh_frame_hdr = info->dlpi_addr + ph->p_vaddr;
        }
    }
    c->object.bias = info->dlpi_addr;
    c->object.start = lo == UINT64_MAX ? 0 : info->dlpi_addr + lo;
    c->object.end = info->dlpi_addr + hi;
    c->object.unwind = NULL;
    rt_frame_segment(info->dlpi_phdr, info->dlpi_phnum, info->dlpi_addr,
                     &c->object);
    c->build_id_at = NULL;
    c->build_id_len = note_build_id(info->dlpi_phdr, info->dlpi_phnum,
                                      info->dlpi_addr, c->build_id,
                                      &c->build_id_at);
}

/* The id an eh_elf of the candidate is stamped with: its build-id, else
 * the hash of its file's frame sections, read now, while the loader
 * holds the object (the file must be what is loaded: frame_id.c). */
static void object_id(const struct dl_phdr_info *info, struct candidate *c)
{
    struct eh_elf_object_id *id = &c->id;
    memset(id, 0, sizeof *id);
    if (c->build_id_len > 0) {
        id->kind = EH_ELF_OBJECT_ID_BUILD_ID;
        id->size = (uint32_t)c->build_id_len;
        memcpy(id->id, c->build_id, c->build_id_len);
    } else if (c->path[0] && rt_frame_sha256(c->path, info, id->id)) {
        id->kind = EH_ELF_OBJECT_ID_FRAME_SHA256;
        id->size = 32;
    }
}

static int collect(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct candidates *all = data;
    const char *name = info->dlpi_name;
    if (all->count == all->capacity || is_eh_elf_name(name))
        return 0;
    struct candidate *c = &all->list[all->count];
    describe(info, c);
    if (c->object.start >= c->object.end)
        return 0;
    if (name[0] == '\0') { /* the main program */
        ssize_t n = readlink("/proc/self/exe", c->path, sizeof c->path - 1);
        c->path[n > 0 ? n : 0] = '\0';
    } else {
        snprintf(c->path, sizeof c->path, "%s", name);
    }
    object_id(info, c);
    all->count++;
    return 0;
}

/* Where eh_elfs are looked for, besides beside the objects. */
struct places {
    const char *user_cache; /* keyed by build-id, or NULL */
    const char *system;     /* keyed by build-id, or NULL */
    const char *name_dir;   /* keyed by file name, or NULL */
    const char *flavour;
};

/* A secure process (setuid, setgid, file capabilities: AT_SECURE) got
 * its environment from a caller it must not trust: no user cache. */
static bool secure_process(void)
{
    return getauxval(AT_SECURE) != 0;
}

/* The user's cache: $CFISEM_CACHE, else
 * ${XDG_CACHE_HOME:-$HOME/.cache}/cfisem; NULL when secure. */
static const char *user_cache_dir(bool secure, char *buf, size_t size)
{
    if (secure)
        return NULL;
    const char *env = secure_getenv("CFISEM_CACHE");
    if (env && *env)
        return env;
    const char *xdg = secure_getenv("XDG_CACHE_HOME");
    if (xdg && *xdg) {
        snprintf(buf, size, "%s/cfisem", xdg);
        return buf;
    }
    const char *home = secure_getenv("HOME");
    if (!home || !*home)
        return NULL;
    snprintf(buf, size, "%s/.cache/cfisem", home);
    return buf;
}

static void places_of(const struct cfisem_options *o, bool secure,
                      char *buf, size_t size, struct places *p)
{
    p->user_cache = o && o->cache_dir ? o->cache_dir
                                      : user_cache_dir(secure, buf, size);
    p->system = o && o->system_dir ? o->system_dir
                                   : cfisem_system_eh_elf_dir();
    if (p->system && !*p->system)
        p->system = NULL;
    p->name_dir = o ? o->name_dir : NULL;
    p->flavour = o && o->name_flavour ? o->name_flavour : "full";
}

/* Tries root/rel, counting a refusal. */
static eh_elf_unwind_fn *try_load(const struct candidate *c,
                                  const char *root, const char *rel)
{
    eh_elf_unwind_fn *fn;
    switch (rt_load_eh_elf(root, rel, &c->id, &eh_elf_loads, &fn)) {
    case RT_LOAD_OK:
        return fn;
    case RT_LOAD_UNTRUSTED:
        atomic_fetch_add_explicit(&eh_elfs_untrusted, 1,
                                  memory_order_relaxed);
        return NULL;
    case RT_LOAD_STALE:
        atomic_fetch_add_explicit(&eh_elfs_stale, 1, memory_order_relaxed);
        return NULL;
    case RT_LOAD_ABSENT:
    case RT_LOAD_LIMIT:
        return NULL;
    }
    return NULL;
}

/* .build-id/xx/rest.eh_elf.so of the object's build-id in a cache. */
static eh_elf_unwind_fn *try_build_id(const struct candidate *c,
                                      const char *cache)
{
    if (!cache || c->build_id_len < 2)
        return NULL;
    char rel[32 + 2 * RT_BUILD_ID_MAX];
    int n = snprintf(rel, sizeof rel, ".build-id/%02x/", c->build_id[0]);
    for (size_t i = 1; i < c->build_id_len; i++)
        n += snprintf(rel + n, sizeof rel - (size_t)n, "%02x",
                      c->build_id[i]);
    snprintf(rel + n, sizeof rel - (size_t)n, ".eh_elf.so");
    return try_load(c, cache, rel);
}

/* Beside the object, by build-id in the user's cache then the system
 * folder, by name in name_dir. */
static eh_elf_unwind_fn *find_eh_elf(const struct candidate *c,
                                     const struct places *p)
{
    char root[PATH_MAX], rel[NAME_MAX + 1];
    const char *slash = strrchr(c->path, '/');
    const char *base = slash ? slash + 1 : c->path;
    eh_elf_unwind_fn *fn = NULL;
    if (slash && (size_t)(slash - c->path) < sizeof root &&
        snprintf(rel, sizeof rel, "%s.eh_elf.so", base) < (int)sizeof rel) {
        size_t len = slash == c->path ? 1 : (size_t)(slash - c->path);
        memcpy(root, c->path, len);
        root[len] = '\0';
        fn = try_load(c, root, rel);
    }
    if (!fn)
        fn = try_build_id(c, p->user_cache);
    if (!fn)
        fn = try_build_id(c, p->system);
    if (!fn && p->name_dir &&
        snprintf(rel, sizeof rel, "%s.%s.eh_elf.so", base, p->flavour) <
            (int)sizeof rel)
        fn = try_load(c, p->name_dir, rel);
    return fn;
}

/* The objects loaded with the program (startup.c). */
struct staying {
    const void *maps[RT_MAX_STARTUP];
    size_t count;
};

/* The candidate's object stays: loaded with the program, or holding
 * this library's code. */
static bool stays(const struct staying *staying, const struct candidate *c,
                  const void *link_map)
{
    uint64_t self = (uint64_t)(uintptr_t)&cfisem_prepare;
    if (self >= c->object.start && self < c->object.end)
        return true;
    for (size_t i = 0; link_map && i < staying->count; i++)
        if (staying->maps[i] == link_map)
            return true;
    return false;
}

/* What tells the candidate's object from another at the same place. */
static void identify(const struct candidate *c,
                     const struct staying *staying, struct rt_identity *id)
{
    memset(id, 0, sizeof *id);
    memcpy(id->build_id, c->build_id, c->build_id_len);
    id->build_id_len = c->build_id_len;
#ifdef DLFO_STRUCT_HAS_EH_DBASE
    struct dl_find_object found;
    if (_dl_find_object((void *)(uintptr_t)c->object.start, &found) == 0) {
        id->link_map = found.dlfo_link_map;
        id->map_start = (uint64_t)(uintptr_t)found.dlfo_map_start;
        id->map_end = (uint64_t)(uintptr_t)found.dlfo_map_end;
        uint64_t at = (uint64_t)(uintptr_t)c->build_id_at;
        if (c->build_id_len && at >= id->map_start &&
            at + c->build_id_len <= id->map_start + 4096)
            id->build_id_at = c->build_id_at;
        id->stays = stays(staying, c, id->link_map);
    }
#else
    (void)staying;
#endif
}

/* The candidate's object has an entry already (not retired). */
static bool known(const struct candidate *c, const struct rt_identity *id,
                  size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!atomic_load_explicit(&retired[i], memory_order_relaxed) &&
            objects[i].start == c->object.start &&
            objects[i].bias == c->object.bias &&
            identities[i].link_map == id->link_map &&
            identities[i].build_id_len == id->build_id_len &&
            !memcmp(identities[i].build_id, id->build_id, id->build_id_len))
            return true;
    return false;
}

static int publish(struct candidates *all, const struct staying *staying,
                   const struct cfisem_options *o)
{
    char buf[PATH_MAX];
    struct places places;
    places_of(o, secure_process(), buf, sizeof buf, &places);
    size_t n = atomic_load_explicit(&nobjects, memory_order_relaxed);
    /* Entries of objects unloaded since: retired. */
    for (size_t i = 0; i < n; i++)
        entry_valid(i, objects[i].start);
    for (size_t i = 0; i < all->count; i++) {
        struct candidate *c = &all->list[i];
        struct rt_identity id;
        identify(c, staying, &id);
        if (known(c, &id, n))
            continue;
        if (n == RT_MAX_OBJECTS)
            return CFISEM_E_NOT_READY;
        c->object.unwind = find_eh_elf(c, &places);
        objects[n] = c->object;
        identities[n] = id;
        atomic_store_explicit(&retired[n], 0, memory_order_relaxed);
        atomic_store_explicit(&nobjects, ++n, memory_order_release);
        if (c->object.unwind)
            atomic_fetch_add_explicit(&objects_eh_elf, 1,
                                      memory_order_relaxed);
    }
    return CFISEM_OK;
}

int cfisem_prepare(const struct cfisem_options *options)
{
    struct candidates all = {.capacity = RT_MAX_OBJECTS};
    all.list = calloc(all.capacity, sizeof *all.list);
    struct staying *staying = calloc(1, sizeof *staying);
    if (!all.list || !staying) {
        free(all.list);
        free(staying);
        return CFISEM_E_NOT_READY;
    }
    /* Collected first, loaded after: dlopen inside dl_iterate_phdr's
     * callback would take the loader's lock again. */
    dl_iterate_phdr(collect, &all);
    staying->count = rt_startup_maps(staying->maps, RT_MAX_STARTUP);
    pthread_mutex_lock(&prepare_lock);
    int result = publish(&all, staying, options);
    pthread_mutex_unlock(&prepare_lock);
    free(all.list);
    free(staying);
    return result;
}
