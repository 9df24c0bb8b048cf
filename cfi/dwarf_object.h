/* SPDX-License-Identifier: MIT */
/* dwarf_object.h — frame sections in memory, shown to libdwarf as an
 * object (Dwarf_Obj_Access_Interface), so that libdwarf reads only the
 * bytes its caller chooses, never a file through its own ELF reader; and
 * the FDE list of one of them. One piece of glue for every reader of
 * libdwarf's frame API: cfi/dwarf.c (the loader, on bytes our parser
 * accepted), the libdwarf engine (engines/oracle_libdwarf.c) and the
 * libdwarf fuzzing oracle (fuzz/oracle_libdwarf.c, on raw records).
 *
 * libdwarf is always given a Dwarf_Error*: its default handler aborts. */
#ifndef CFISEM_CFI_DWARF_OBJECT_H
#define CFISEM_CFI_DWARF_OBJECT_H

#include <libdwarf.h>
#include <stdbool.h>
#include <stdint.h>

#include "cfi.h"

/* One section shown; NULL bytes: shown by name only, with no data. */
struct cfi_dwarf_object_section {
    const char *name;
    uint64_t addr;
    uint64_t size;
    const void *bytes;
};

/* Index 0 is the null section ELF always has, as libdwarf expects; then
 * up to two frame sections. */
struct cfi_dwarf_object {
    /* dwarf_finish reads the first byte of the object to tell its own
     * readers ('E', 'F', 'M', 'P') from a caller's interface, and would
     * tear ours down as one of its own if it matched. */
    char kind;
    unsigned count;
    struct cfi_dwarf_object_section sections[3];
    /* libdwarf keeps a pointer to the interface as long as it reads. */
    Dwarf_Obj_Access_Interface interface;
};

/* An object holding only the null section. */
void cfi_dwarf_object_init(struct cfi_dwarf_object *object);
/* Adds a section; false when the object is full (two sections). libdwarf
 * only reads the bytes, which must outlive the object's use. */
bool cfi_dwarf_object_add(struct cfi_dwarf_object *object, const char *name,
                          uint64_t addr, const void *bytes, uint64_t size);
/* dwarf_object_init_b on the object, as libdwarf's return code. The
 * object must not move or end before cfi_dwarf_object_finish(*dbg). */
int cfi_dwarf_object_open(struct cfi_dwarf_object *object, Dwarf_Debug *dbg,
                          Dwarf_Error *error);
/* Ends what cfi_dwarf_object_open began; an error in doing so is freed. */
void cfi_dwarf_object_finish(Dwarf_Debug dbg);

/* The CIEs and FDEs libdwarf read in one frame section. */
struct cfi_dwarf_fde_list {
    Dwarf_Cie *cies;
    Dwarf_Signed ncies;
    Dwarf_Fde *fdes;
    Dwarf_Signed nfdes;
};

/* dwarf_get_fde_list_eh for .eh_frame, dwarf_get_fde_list for
 * .debug_frame, as libdwarf's return code; only DW_DLV_OK fills *list,
 * which cfi_dwarf_fde_list_free then frees. */
int cfi_dwarf_fde_list_get(Dwarf_Debug dbg, enum cfi_section section,
                           struct cfi_dwarf_fde_list *list,
                           Dwarf_Error *error);
void cfi_dwarf_fde_list_free(Dwarf_Debug dbg,
                             const struct cfi_dwarf_fde_list *list);

#endif
