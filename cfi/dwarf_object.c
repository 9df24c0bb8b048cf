/* SPDX-License-Identifier: MIT */
/* dwarf_object.c — see dwarf_object.h. */
#include "dwarf_object.h"

#include <elf.h>
#include <string.h>

static int object_section_info(void *object, Dwarf_Half index,
                               Dwarf_Obj_Access_Section *info, int *error)
{
    const struct cfi_dwarf_object *frames = object;
    (void)error;
    if (index >= frames->count)
        return DW_DLV_NO_ENTRY;
    memset(info, 0, sizeof *info);
    const struct cfi_dwarf_object_section *shown = &frames->sections[index];
    info->name = shown->name;
    if (shown->bytes) {
        info->type = SHT_PROGBITS;
        info->addr = shown->addr;
        info->size = shown->size;
    }
    return DW_DLV_OK;
}

static Dwarf_Endianness object_byte_order(void *object)
{
    (void)object;
    return DW_OBJECT_LSB;
}

static Dwarf_Small object_length_size(void *object)
{
    (void)object;
    return 4;
}

static Dwarf_Small object_pointer_size(void *object)
{
    (void)object;
    return 8;
}

static Dwarf_Unsigned object_section_count(void *object)
{
    return ((const struct cfi_dwarf_object *)object)->count;
}

/* libdwarf only reads the section (no relocate_a_section is given), so
 * handing it const bytes is safe despite the non-const type. */
static int object_load_section(void *object, Dwarf_Half index,
                               Dwarf_Small **bytes, int *error)
{
    const struct cfi_dwarf_object *frames = object;
    (void)error;
    if (index >= frames->count || !frames->sections[index].bytes)
        return DW_DLV_NO_ENTRY;
    *bytes = (Dwarf_Small *)(uintptr_t)frames->sections[index].bytes;
    return DW_DLV_OK;
}

static const Dwarf_Obj_Access_Methods object_methods = {
    .get_section_info = object_section_info,
    .get_byte_order = object_byte_order,
    .get_length_size = object_length_size,
    .get_pointer_size = object_pointer_size,
    .get_section_count = object_section_count,
    .load_section = object_load_section,
    .relocate_a_section = NULL,
};

void cfi_dwarf_object_init(struct cfi_dwarf_object *object)
{
    *object = (struct cfi_dwarf_object){.kind = 'C', .count = 1};
    object->sections[0] = (struct cfi_dwarf_object_section){"", 0, 0, NULL};
}

bool cfi_dwarf_object_add(struct cfi_dwarf_object *object, const char *name,
                          uint64_t addr, const void *bytes, uint64_t size)
{
    if (object->count == sizeof object->sections / sizeof object->sections[0])
        return false;
    object->sections[object->count++] =
        (struct cfi_dwarf_object_section){name, addr, size, bytes};
    return true;
}

int cfi_dwarf_object_open(struct cfi_dwarf_object *object, Dwarf_Debug *dbg,
                          Dwarf_Error *error)
{
    object->interface =
        (Dwarf_Obj_Access_Interface){object, &object_methods};
    return dwarf_object_init_b(&object->interface, NULL, NULL,
                               DW_GROUPNUMBER_ANY, dbg, error);
}

/* dwarf_object_finish, not dwarf_finish: the latter only adds the tear
 * down of libdwarf's own readers and of a descriptor it opened, neither
 * of which an object of ours has. */
void cfi_dwarf_object_finish(Dwarf_Debug dbg)
{
    Dwarf_Error error = NULL;
    if (dwarf_object_finish(dbg, &error) == DW_DLV_ERROR && error)
        dwarf_dealloc_error(NULL, error);
}

int cfi_dwarf_fde_list_get(Dwarf_Debug dbg, enum cfi_section section,
                           struct cfi_dwarf_fde_list *list,
                           Dwarf_Error *error)
{
    struct cfi_dwarf_fde_list got = {NULL, 0, NULL, 0};
    int res = section == CFI_EH_FRAME
        ? dwarf_get_fde_list_eh(dbg, &got.cies, &got.ncies, &got.fdes,
                                &got.nfdes, error)
        : dwarf_get_fde_list(dbg, &got.cies, &got.ncies, &got.fdes,
                             &got.nfdes, error);
    if (res == DW_DLV_OK)
        *list = got;
    return res;
}

void cfi_dwarf_fde_list_free(Dwarf_Debug dbg,
                             const struct cfi_dwarf_fde_list *list)
{
    dwarf_fde_cie_list_dealloc(dbg, list->cies, list->ncies, list->fdes,
                               list->nfdes);
}
