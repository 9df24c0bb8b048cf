/* SPDX-License-Identifier: MIT */
/* dwarf_object.c — see dwarf_object.h. */
#include "dwarf_object.h"

#include <elf.h>
#include <string.h>

static int section_info(void *object, Dwarf_Half index,
                        Dwarf_Obj_Access_Section *info, int *error)
{
    const struct diff_dwarf_object *frames = object;
    (void)error;
    if (index >= frames->count)
        return DW_DLV_NO_ENTRY;
    memset(info, 0, sizeof *info);
    const struct diff_dwarf_section *shown = &frames->sections[index];
    info->name = shown->name;
    if (shown->bytes) {
        info->type = SHT_PROGBITS;
        info->addr = shown->addr;
        info->size = shown->size;
    }
    return DW_DLV_OK;
}

static Dwarf_Endianness byte_order(void *object)
{
    (void)object;
    return DW_OBJECT_LSB;
}

static Dwarf_Small length_size(void *object)
{
    (void)object;
    return 4;
}

static Dwarf_Small pointer_size(void *object)
{
    (void)object;
    return 8;
}

static Dwarf_Unsigned section_count(void *object)
{
    return ((const struct diff_dwarf_object *)object)->count;
}

/* libdwarf only reads the sections (no relocate_a_section is given). */
static int load_section(void *object, Dwarf_Half index, Dwarf_Small **bytes,
                        int *error)
{
    const struct diff_dwarf_object *frames = object;
    (void)error;
    if (index >= frames->count || !frames->sections[index].bytes)
        return DW_DLV_NO_ENTRY;
    *bytes = frames->sections[index].bytes;
    return DW_DLV_OK;
}

static const Dwarf_Obj_Access_Methods methods = {
    .get_section_info = section_info,
    .get_byte_order = byte_order,
    .get_length_size = length_size,
    .get_pointer_size = pointer_size,
    .get_section_count = section_count,
    .load_section = load_section,
    .relocate_a_section = NULL,
};

void diff_dwarf_object_init(struct diff_dwarf_object *object)
{
    *object = (struct diff_dwarf_object){.kind = 'C', .count = 1};
    object->sections[0] = (struct diff_dwarf_section){"", 0, 0, NULL};
}

bool diff_dwarf_object_add(struct diff_dwarf_object *object, const char *name,
                           uint64_t addr, void *bytes, uint64_t size)
{
    if (object->count == sizeof object->sections / sizeof object->sections[0])
        return false;
    object->sections[object->count++] =
        (struct diff_dwarf_section){name, addr, size, bytes};
    return true;
}

Dwarf_Obj_Access_Interface diff_dwarf_object_interface(
    struct diff_dwarf_object *object)
{
    return (Dwarf_Obj_Access_Interface){object, &methods};
}
