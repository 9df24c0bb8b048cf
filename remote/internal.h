/* SPDX-License-Identifier: MIT */
/* internal.h — remote/'s own types: the space's tables. */
#ifndef CFISEM_REMOTE_INTERNAL_H
#define CFISEM_REMOTE_INTERNAL_H

#include "remote/remote.h"

enum remote_engine_state {
    REMOTE_ENGINE_UNTRIED = 0,
    REMOTE_ENGINE_OPEN,
    REMOTE_ENGINE_FAILED,
};

/* A file some mappings name: opened at most once. */
struct remote_object {
    char *path;
    char *read_path;               /* what is read; NULL: path */
    uint8_t build_id[REMOTE_BUILD_ID_MAX];
    size_t build_id_len;
    bool tried;                    /* remote_object_open ran */
    struct cfi_file *file;         /* NULL: not opened, see open_diag */
    struct cfi_diag open_diag;
    uint8_t engine_state[ENGINE_COUNT]; /* enum remote_engine_state */
    struct engine_instance engines[ENGINE_COUNT];
    struct cfi_diag engine_diag[ENGINE_COUNT];
    bool symbols_read;
    struct cfi_file *debug_file;   /* whose .symtab the symbols are from */
    struct cfi_symbol *symbols;
    size_t nsymbols;
};

enum remote_bias_state {
    REMOTE_BIAS_UNTRIED = 0,
    REMOTE_BIAS_KNOWN,
    REMOTE_BIAS_NONE,
};

/* A mapping; its load bias is found once, when first asked. */
struct remote_mapping {
    uint64_t start;
    uint64_t end;
    uint64_t offset;
    struct remote_object *object;
    uint64_t bias;
    uint8_t bias_state;            /* enum remote_bias_state */
};

/* The mappings of one process over a space's objects, sorted by start,
 * disjoint. `last` is the mapping the last lookup found: the next is
 * most often in the same one. */
struct remote_maps {
    struct remote_space *space;
    struct remote_mapping *maps;
    size_t nmaps;
    size_t cap;
    size_t last;
};

struct remote_space {
    const struct cfi_arch *arch;
    struct remote_options options;
    struct remote_maps own;        /* remote_space_add_map's */
    struct remote_maps *current;   /* what lookups use: own, or used's */
    struct remote_object **objects;
    size_t nobjects;
    size_t objects_cap;
};

/* The mapping of the space's current mappings that holds addr, or NULL. */
struct remote_mapping *remote_find_mapping(struct remote_space *space,
                                           uint64_t addr);
/* Opens the object's file the first time; false when it did not open
 * (then and every time after). */
bool remote_object_open(struct remote_object *object);
/* The mapping's load bias (its object opened), found once. */
bool remote_mapping_bias(struct remote_mapping *mapping, uint64_t *bias);
struct engine_instance *remote_object_engine(struct remote_space *space,
                                             struct remote_object *object,
                                             enum engine_id id,
                                             struct cfi_diag *diag);

#endif
