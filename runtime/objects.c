/* objects.c — the table of loaded objects and their eh_elfs.
 *
 * The one piece of global mutable state of the library, because a
 * run-time unwinder must not open files or allocate while it steps: the
 * table is filled by cfisem_prepare (under a mutex, outside signal
 * handlers) and read by the step path without a lock. An entry is
 * written completely, then published by a release store of the count;
 * readers load the count with acquire and read only published entries,
 * which never change. The counters are relaxed atomics (lock-free on
 * x86-64), so both are async-signal-safe and thread-safe. */
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
#include <unistd.h>

enum { RT_MAX_OBJECTS = 512, RT_BUILD_ID_MAX = 64 };

static struct rt_object objects[RT_MAX_OBJECTS];
static _Atomic size_t nobjects;
static _Atomic uint64_t objects_eh_elf;
static _Atomic uint64_t frames_interp;
static _Atomic uint64_t frames_failed;
static pthread_mutex_t prepare_lock = PTHREAD_MUTEX_INITIALIZER;

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

bool rt_find_object(uint64_t pc, struct rt_object *object)
{
    size_t n = atomic_load_explicit(&nobjects, memory_order_acquire);
    size_t hint = atomic_load_explicit(&hints[hint_of(pc)],
                                       memory_order_relaxed);
    if (hint < n && pc >= objects[hint].start && pc < objects[hint].end) {
        *object = objects[hint];
        return true;
    }
    for (size_t i = 0; i < n; i++)
        if (pc >= objects[i].start && pc < objects[i].end) {
            atomic_store_explicit(&hints[hint_of(pc)], (uint16_t)i,
                                  memory_order_relaxed);
            *object = objects[i];
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
        return true;
    }
#endif
    return false;
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
};

struct candidates {
    struct candidate *list;
    size_t count;
    size_t capacity;
};

static bool is_eh_elf_name(const char *path)
{
    size_t n = strlen(path);
    const char *suffix = ".eh_elf.so";
    size_t k = strlen(suffix);
    return n >= k && !strcmp(path + n - k, suffix);
}

/* The GNU build-id note among the object's PT_NOTE segments (padded to
 * 4 bytes, or 8 in a segment aligned so), as `cfisem cache` reads it
 * from the file (compile/elf.c, cg_build_id). */
static size_t note_build_id(const struct dl_phdr_info *info, uint8_t *out)
{
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        size_t align = ph->p_align == 8 ? 8 : 4;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
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
                return note->n_descsz;
            }
            p = data + name + desc;
        }
    }
    return 0;
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
    c->build_id_len = note_build_id(info, c->build_id);
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
    all->count++;
    return 0;
}

/* The eh_elf's entry when `path` is an eh_elf of ours, of the full ABI
 * and this version; the handle stays open for the process's life. */
static eh_elf_unwind_fn *load_eh_elf(const char *path)
{
    if (access(path, R_OK) != 0)
        return NULL;
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle)
        return NULL;
    const char *ident = dlsym(handle, "eh_elf_ident");
    const uint32_t *version = dlsym(handle, "eh_elf_abi_version");
    void *entry = dlsym(handle, "eh_elf_unwind");
    if (!ident || !version || !entry || strcmp(ident, EH_ELF_IDENT_FULL) ||
        *version < EH_ELF_ABI_VERSION_MIN || *version > EH_ELF_ABI_VERSION) {
        dlclose(handle);
        return NULL;
    }
    eh_elf_unwind_fn *fn;
    memcpy(&fn, &entry, sizeof fn); /* object pointer to function pointer */
    return fn;
}

static const char *default_cache_dir(char *buf, size_t size)
{
    const char *env = getenv("CFISEM_CACHE");
    if (env && *env)
        return env;
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && *xdg) {
        snprintf(buf, size, "%s/cfisem", xdg);
        return buf;
    }
    const char *home = getenv("HOME");
    if (!home || !*home)
        return NULL;
    snprintf(buf, size, "%s/.cache/cfisem", home);
    return buf;
}

/* Beside the object, by build-id in the cache, by name in name_dir. */
static eh_elf_unwind_fn *find_eh_elf(const struct candidate *c,
                                     const char *cache_dir,
                                     const char *name_dir,
                                     const char *flavour)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s.eh_elf.so", c->path);
    eh_elf_unwind_fn *fn = load_eh_elf(path);
    if (!fn && cache_dir && c->build_id_len > 1) {
        int n = snprintf(path, sizeof path, "%s/.build-id/%02x/", cache_dir,
                         c->build_id[0]);
        for (size_t i = 1; i < c->build_id_len && n > 0 &&
                           (size_t)n + 3 < sizeof path; i++)
            n += snprintf(path + n, sizeof path - (size_t)n, "%02x",
                          c->build_id[i]);
        if (n > 0 && (size_t)n + 12 < sizeof path) {
            snprintf(path + n, sizeof path - (size_t)n, ".eh_elf.so");
            fn = load_eh_elf(path);
        }
    }
    if (!fn && name_dir) {
        const char *slash = strrchr(c->path, '/');
        snprintf(path, sizeof path, "%s/%s.%s.eh_elf.so", name_dir,
                 slash ? slash + 1 : c->path, flavour);
        fn = load_eh_elf(path);
    }
    return fn;
}

static bool known(const struct rt_object *object, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (objects[i].start == object->start &&
            objects[i].bias == object->bias)
            return true;
    return false;
}

static int publish(struct candidates *all, const struct cfisem_options *o)
{
    char buf[PATH_MAX];
    const char *cache = o && o->cache_dir ? o->cache_dir
                                          : default_cache_dir(buf, sizeof buf);
    const char *name_dir = o ? o->name_dir : NULL;
    const char *flavour = o && o->name_flavour ? o->name_flavour : "full";
    size_t n = atomic_load_explicit(&nobjects, memory_order_relaxed);
    for (size_t i = 0; i < all->count; i++) {
        struct candidate *c = &all->list[i];
        if (known(&c->object, n))
            continue;
        if (n == RT_MAX_OBJECTS)
            return CFISEM_E_NOT_READY;
        c->object.unwind = find_eh_elf(c, cache, name_dir, flavour);
        objects[n] = c->object;
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
    if (!all.list)
        return CFISEM_E_NOT_READY;
    /* Collected first, loaded after: dlopen inside dl_iterate_phdr's
     * callback would take the loader's lock again. */
    dl_iterate_phdr(collect, &all);
    pthread_mutex_lock(&prepare_lock);
    int result = publish(&all, options);
    pthread_mutex_unlock(&prepare_lock);
    free(all.list);
    return result;
}
