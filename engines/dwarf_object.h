/* SPDX-License-Identifier: MIT */
/* dwarf_object.h — frame sections in memory, shown to libdwarf as an
 * object (Dwarf_Obj_Access_Interface): the libdwarf engine and the
 * libdwarf fuzzing oracle give libdwarf only the bytes they choose, never
 * a file for its own ELF reader.
 *
 * cfi/ has its own copy of this plumbing: cfi/ may not use engines/. */
#ifndef CFISEM_ENGINES_DWARF_OBJECT_H
#define CFISEM_ENGINES_DWARF_OBJECT_H

#include <libdwarf.h>
#include <stdbool.h>
#include <stdint.h>

struct diff_dwarf_section {
    const char *name;
    uint64_t addr;
    uint64_t size;
    void *bytes;
};

/* Index 0 is the null section ELF always has, as libdwarf expects. The
 * first byte must not be 'E', 'F', 'M' or 'P': dwarf_finish reads it to
 * recognise its own readers. */
struct diff_dwarf_object {
    char kind;
    unsigned count;
    struct diff_dwarf_section sections[3];
};

/* An object holding only the null section. */
void diff_dwarf_object_init(struct diff_dwarf_object *object);
/* Adds a section; false when the object is full (two sections). */
bool diff_dwarf_object_add(struct diff_dwarf_object *object, const char *name,
                           uint64_t addr, void *bytes, uint64_t size);
/* The interface dwarf_object_init_b reads `object` through. */
Dwarf_Obj_Access_Interface diff_dwarf_object_interface(
    struct diff_dwarf_object *object);

#endif
