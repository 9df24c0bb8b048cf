/* SPDX-License-Identifier: MIT */
/* space.c — the address space of remote.h: mappings and their objects,
 * each object's file, engines and symbols opened once. */
#include "remote/internal.h"

#include <stdlib.h>
#include <string.h>

#include "compile/cg.h"
#include "compile/eh_elf.h"

static const char *const stop_names[] = {
#define REMOTE_STOP_NAME(name, short, text) #short,
    REMOTE_STOP_LIST(REMOTE_STOP_NAME)
#undef REMOTE_STOP_NAME
};

static const char *const stop_texts[] = {
#define REMOTE_STOP_TEXT(name, short, text) text,
    REMOTE_STOP_LIST(REMOTE_STOP_TEXT)
#undef REMOTE_STOP_TEXT
};

const char *remote_stop_name(enum remote_stop_reason reason)
{
    return (unsigned)reason < REMOTE_STOP_COUNT ? stop_names[reason] : "?";
}

const char *remote_stop_text(enum remote_stop_reason reason)
{
    return (unsigned)reason < REMOTE_STOP_COUNT ? stop_texts[reason] : "?";
}

enum cfi_status remote_space_new(const struct cfi_arch *arch,
                                 const struct remote_options *options,
                                 struct remote_space **space)
{
    struct remote_space *s = calloc(1, sizeof *s);
    if (!s)
        return CFI_E_NOMEM;
    s->arch = arch;
    s->own.space = s;
    s->current = &s->own;
    s->options = options ? *options
                         : (struct remote_options){ENGINE_compiled, NULL,
                                                   true};
    *space = s;
    return CFI_OK;
}

static void object_free(struct remote_object *object)
{
    for (unsigned id = 0; id < ENGINE_COUNT; id++)
        if (object->engine_state[id] == REMOTE_ENGINE_OPEN)
            engine_close(&object->engines[id]);
    if (object->file)
        cfi_file_close(object->file);
    if (object->debug_file)
        cfi_file_close(object->debug_file);
    free(object->symbols);
    free(object->path);
    free(object->read_path);
    free(object);
}

void remote_space_free(struct remote_space *space)
{
    if (!space)
        return;
    for (size_t i = 0; i < space->nobjects; i++)
        object_free(space->objects[i]);
    free(space->objects);
    free(space->own.maps);
    free(space);
}

size_t remote_space_map_count(const struct remote_space *space)
{
    return space->own.nmaps;
}

enum cfi_status remote_maps_new(struct remote_space *space,
                                struct remote_maps **maps)
{
    struct remote_maps *m = calloc(1, sizeof *m);
    if (!m)
        return CFI_E_NOMEM;
    m->space = space;
    *maps = m;
    return CFI_OK;
}

void remote_maps_free(struct remote_maps *maps)
{
    if (!maps)
        return;
    if (maps->space->current == maps)
        maps->space->current = &maps->space->own;
    free(maps->maps);
    free(maps);
}

void remote_space_use(struct remote_space *space, struct remote_maps *maps)
{
    space->current = maps ? maps : &space->own;
}

/* The object of (path, build-id), made when new: one per file, however
 * many mappings name it. */
static struct remote_object *object_for(struct remote_space *space,
                                        const struct remote_map *map,
                                        const char *file)
{
    for (size_t i = 0; i < space->nobjects; i++) {
        struct remote_object *o = space->objects[i];
        if (strcmp(o->path, map->path) == 0
            && strcmp(o->read_path ? o->read_path : "", file ? file : "")
                   == 0
            && o->build_id_len == map->build_id_len
            && memcmp(o->build_id, map->build_id ? map->build_id
                                                 : o->build_id,
                      map->build_id_len) == 0)
            return o;
    }
    if (space->nobjects == space->objects_cap) {
        size_t cap = space->objects_cap ? 2 * space->objects_cap : 16;
        void *grown = realloc(space->objects, cap * sizeof *space->objects);
        if (!grown)
            return NULL;
        space->objects = grown;
        space->objects_cap = cap;
    }
    struct remote_object *o = calloc(1, sizeof *o);
    if (!o || !(o->path = strdup(map->path))
        || (file && !(o->read_path = strdup(file)))) {
        if (o)
            free(o->path);
        free(o);
        return NULL;
    }
    o->build_id_len = map->build_id_len;
    if (map->build_id_len)
        memcpy(o->build_id, map->build_id, map->build_id_len);
    space->objects[space->nobjects++] = o;
    return o;
}

static bool maps_reserve(struct remote_maps *t, size_t more)
{
    if (t->nmaps + more <= t->cap)
        return true;
    size_t cap = t->cap ? 2 * t->cap : 32;
    while (cap < t->nmaps + more)
        cap *= 2;
    void *grown = realloc(t->maps, cap * sizeof *t->maps);
    if (!grown)
        return false;
    t->maps = grown;
    t->cap = cap;
    return true;
}

/* Inserts m at its place by start; room was reserved. */
static void maps_insert(struct remote_maps *t, struct remote_mapping m)
{
    size_t at = 0;
    while (at < t->nmaps && t->maps[at].start < m.start)
        at++;
    memmove(&t->maps[at + 1], &t->maps[at],
            (t->nmaps - at) * sizeof *t->maps);
    m.bias_state = REMOTE_BIAS_UNTRIED;
    t->maps[at] = m;
    t->nmaps++;
}

enum cfi_status remote_maps_remove(struct remote_maps *t, uint64_t start,
                                   uint64_t end)
{
    t->last = 0;
    if (end <= start)
        return CFI_OK;
    /* Mappings are disjoint: at most one holds [start, end) strictly
     * inside, and splits in two. */
    if (!maps_reserve(t, 1))
        return CFI_E_NOMEM;
    size_t kept = 0;
    struct remote_mapping high = {0};
    for (size_t i = 0; i < t->nmaps; i++) {
        struct remote_mapping m = t->maps[i];
        if (m.end <= start || m.start >= end) {
            t->maps[kept++] = m;
            continue;
        }
        if (m.end > end) {
            high = m;
            high.offset += end - m.start;
            high.start = end;
        }
        if (m.start < start) {
            m.end = start;
            m.bias_state = REMOTE_BIAS_UNTRIED;
            t->maps[kept++] = m;
        }
    }
    t->nmaps = kept;
    if (high.object)
        maps_insert(t, high);
    return CFI_OK;
}

enum cfi_status remote_space_remove(struct remote_space *space,
                                    uint64_t start, uint64_t end)
{
    return remote_maps_remove(&space->own, start, end);
}

static enum cfi_status maps_add_from(struct remote_maps *t,
                                     const struct remote_map *map,
                                     const char *file)
{
    if (map->end <= map->start || !map->path
        || map->build_id_len > REMOTE_BUILD_ID_MAX)
        return CFI_E_MALFORMED;
    enum cfi_status status = remote_maps_remove(t, map->start, map->end);
    if (status != CFI_OK)
        return status;
    struct remote_object *object = object_for(t->space, map, file);
    if (!object || !maps_reserve(t, 1))
        return CFI_E_NOMEM;
    maps_insert(t, (struct remote_mapping){map->start, map->end,
                                           map->offset, object, 0,
                                           REMOTE_BIAS_UNTRIED});
    return CFI_OK;
}

enum cfi_status remote_maps_add(struct remote_maps *maps,
                                const struct remote_map *map)
{
    return maps_add_from(maps, map, NULL);
}

enum cfi_status remote_space_add_map(struct remote_space *space,
                                     const struct remote_map *map)
{
    return maps_add_from(&space->own, map, NULL);
}

enum cfi_status remote_space_add_map_from(struct remote_space *space,
                                          const struct remote_map *map,
                                          const char *file)
{
    return maps_add_from(&space->own, map, file);
}

struct remote_mapping *remote_find_mapping(struct remote_space *space,
                                           uint64_t addr)
{
    struct remote_maps *t = space->current;
    if (t->last < t->nmaps && t->maps[t->last].start <= addr
        && addr < t->maps[t->last].end)
        return &t->maps[t->last];
    size_t low = 0, high = t->nmaps;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (t->maps[mid].end <= addr)
            low = mid + 1;
        else
            high = mid;
    }
    if (low < t->nmaps && t->maps[low].start <= addr) {
        t->last = low;
        return &t->maps[low];
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Objects, opened once                                                 */
/* ------------------------------------------------------------------ */

static const char *file_of(const struct remote_object *object)
{
    return object->read_path ? object->read_path : object->path;
}

/* The GNU build-id of the object's opened file, from its image; false
 * when it has none. */
static bool file_build_id(const struct remote_object *object,
                          struct eh_elf_object_id *id)
{
    struct cfi_diag diag;
    return cg_file_object_id(object->file, id, &diag) == CFI_OK
           && id->kind == EH_ELF_OBJECT_ID_BUILD_ID && id->size >= 2
           && id->size <= EH_ELF_OBJECT_ID_MAX;
}

static bool build_id_matches(struct remote_object *object)
{
    if (!object->build_id_len)
        return true;
    struct eh_elf_object_id id;
    return file_build_id(object, &id) && id.size == object->build_id_len
           && memcmp(id.id, object->build_id, id.size) == 0;
}

bool remote_object_open(struct remote_object *object)
{
    if (object->tried)
        return object->file != NULL;
    object->tried = true;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    if (cfi_check_regular_file(file_of(object), &diag) != CFI_OK
        || cfi_file_open_code(file_of(object), &object->file, &diag)
               != CFI_OK) {
        object->file = NULL;
        object->open_diag = diag;
        return false;
    }
    if (!build_id_matches(object)) {
        cfi_file_close(object->file);
        object->file = NULL;
        cfi_fail(&object->open_diag, CFI_E_IO, CFI_NO_OFFSET,
                 "the file's build-id differs from the mapped object's");
        return false;
    }
    return true;
}

/* The bias of a mapping: its start holds the byte at its file offset,
 * which the PT_LOAD segment holding that offset maps at vaddr + (offset
 * - p_offset). A segment's p_offset is where its bytes lie in the
 * file's image (cfi/elf.c points them there). */
/* The bias of a mapping: its start holds the byte at its file offset,
 * which the PT_LOAD segment holding that offset maps at vaddr + (offset
 * - p_offset). A segment's p_offset is where its bytes lie in the
 * file's image (cfi/elf.c points them there). */
static bool find_bias(const struct remote_mapping *mapping, uint64_t *bias)
{
    const struct cfi_file *file = mapping->object->file;
    if (!file)
        return false;
    for (size_t i = 0; i < file->nsegments; i++) {
        const struct cfi_segment *seg = &file->segments[i];
        if (!seg->filesz || !seg->bytes || !file->image)
            continue;
        uint64_t p_offset = (uint64_t)(seg->bytes - file->image);
        /* The kernel maps from the page holding p_offset. */
        uint64_t first = p_offset & ~(uint64_t)0xfff;
        if (mapping->offset < first
            || mapping->offset >= p_offset + seg->filesz)
            continue;
        *bias = mapping->start - (seg->vaddr - p_offset + mapping->offset);
        return true;
    }
    return false;
}

bool remote_mapping_bias(struct remote_mapping *mapping, uint64_t *bias)
{
    if (mapping->bias_state == REMOTE_BIAS_UNTRIED && mapping->object->file)
        mapping->bias_state = find_bias(mapping, &mapping->bias)
                                  ? REMOTE_BIAS_KNOWN
                                  : REMOTE_BIAS_NONE;
    *bias = mapping->bias;
    return mapping->bias_state == REMOTE_BIAS_KNOWN;
}

bool remote_space_place(struct remote_space *space, uint64_t addr,
                        struct remote_place *place)
{
    *place = (struct remote_place){NULL, 0, false, 0};
    struct remote_mapping *mapping = remote_find_mapping(space, addr);
    if (!mapping)
        return false;
    place->path = mapping->object->path;
    if (remote_object_open(mapping->object)
        && remote_mapping_bias(mapping, &place->bias)) {
        place->bias_known = true;
        place->rel = addr - place->bias;
    }
    return true;
}

/* The engine `id` of an object, opened at its first use; ENGINE_COUNT's
 * meaning (the space's choice, compiled falling back to interp) is
 * resolved by the caller. NULL, with *diag, when it does not open. */
struct engine_instance *remote_object_engine(struct remote_space *space,
                                             struct remote_object *object,
                                             enum engine_id id,
                                             struct cfi_diag *diag)
{
    if (object->engine_state[id] == REMOTE_ENGINE_UNTRIED) {
        struct engine_config config = {NULL, space->options.cache_dir};
        struct cfi_diag opened = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
        enum cfi_status status = engine_open(id, object->file, &config,
                                             &object->engines[id], &opened);
        object->engine_state[id] = status == CFI_OK ? REMOTE_ENGINE_OPEN
                                                    : REMOTE_ENGINE_FAILED;
        object->engine_diag[id] = opened;
    }
    if (object->engine_state[id] == REMOTE_ENGINE_OPEN)
        return &object->engines[id];
    *diag = object->engine_diag[id];
    return NULL;
}

/* The separate debug file of the object's build-id, as distributions
 * install them (/usr/lib/debug/.build-id/NN/REST.debug), or NULL. Its
 * .symtab names the functions a stripped object's .dynsym does not. */
static struct cfi_file *debug_file_of(const struct remote_object *object)
{
    struct eh_elf_object_id id;
    struct cfi_diag diag;
    if (!file_build_id(object, &id))
        return NULL;
    char path[64 + 2 * EH_ELF_OBJECT_ID_MAX];
    int at = snprintf(path, sizeof path, "/usr/lib/debug/.build-id/%02x/",
                      id.id[0]);
    for (size_t i = 1; i < id.size; i++)
        at += snprintf(path + at, sizeof path - (size_t)at, "%02x",
                       id.id[i]);
    snprintf(path + at, sizeof path - (size_t)at, ".debug");
    struct cfi_file *debug = NULL;
    if (cfi_check_regular_file(path, &diag) != CFI_OK
        || cfi_file_open_code(path, &debug, &diag) != CFI_OK)
        return NULL;
    return debug;
}

/* The object's functions: those of its debug file when it has more. */
static void read_symbols(struct remote_object *object)
{
    object->symbols_read = true;
    if (cfi_file_functions(object->file, &object->symbols,
                           &object->nsymbols) != CFI_OK) {
        object->symbols = NULL;
        object->nsymbols = 0;
    }
    struct cfi_file *debug = debug_file_of(object);
    struct cfi_symbol *symbols = NULL;
    size_t count = 0;
    if (debug && cfi_file_functions(debug, &symbols, &count) == CFI_OK
        && count > object->nsymbols) {
        free(object->symbols);
        object->symbols = symbols;
        object->nsymbols = count;
        object->debug_file = debug;
        return;
    }
    free(symbols);
    if (debug)
        cfi_file_close(debug);
}

void remote_symbolize(struct remote_space *space,
                      const struct remote_frame *frame,
                      struct remote_symbol *symbol)
{
    *symbol = (struct remote_symbol){NULL, NULL, 0, 0};
    uint64_t lookup = cfi_lookup_pc(frame->pc, !frame->exact);
    struct remote_mapping *mapping = remote_find_mapping(space, lookup);
    if (!mapping)
        return;
    struct remote_object *object = mapping->object;
    symbol->object = object->path;
    uint64_t bias;
    if (!remote_object_open(object) || !remote_mapping_bias(mapping, &bias))
        return;
    symbol->rel = frame->pc - bias;
    if (!object->symbols_read)
        read_symbols(object);
    uint64_t offset;
    const struct cfi_symbol *found = cfi_symbol_find(
        object->symbols, object->nsymbols, lookup - bias, &offset);
    if (found && found->name[0]) {
        symbol->name = found->name;
        symbol->offset = symbol->rel - found->value;
    }
}
