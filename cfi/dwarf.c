/* SPDX-License-Identifier: MIT */
/* dwarf.c — loading CIEs and FDEs through libdwarf's frame API.
 *
 * libdwarf reads the frame sections through an object access interface
 * (dwarf_object.h) that shows it exactly the bytes of .eh_frame and
 * .debug_frame that our own parser already accepted, in our image. So:
 *   - libdwarf never parses the ELF headers (its reader has bugs of its
 *     own and refuses files for reasons unrelated to frames);
 *   - it never sees bytes past the .eh_frame terminator, which nothing
 *     validated;
 *   - every pointer it hands back lies in our bytes: we check that, turn
 *     it into a section offset and keep our own pointer, so the records
 *     never point into libdwarf's memory, and libdwarf is finished
 *     before returning.
 * libdwarf is always given a Dwarf_Error*: its default handler aborts. */
#include "dwarf_object.h"
#include "internal.h"

#include <dwarf.h>
#include <libdwarf.h>
#include <string.h>

/* Fixed messages naming the section: "libdwarf: cannot read .eh_frame". */
#define LIBDWARF_MESSAGE(section, text)                                     \
    ((section) == CFI_DEBUG_FRAME ? "libdwarf: " text " .debug_frame"       \
                                  : "libdwarf: " text " .eh_frame")

/* Loading the records of one section. */
struct loader {
    Dwarf_Debug dbg;
    enum cfi_section section;
    const struct cfi_dwarf_section *data;
    struct cfi_builder *builder;
    struct cfi_diag *diag;
};

/* What libdwarf was reading when it failed. */
enum reading {
    READING_SECTION,
    READING_CIE,
    READING_FDE,
};

/* Frees the error and reports the failure as malformed, as libdwarf sees
 * it. The error number is not asked for: dwarf_errno and dwarf_errmsg are
 * also exported by elfutils' libdw, which the harness links too, and a
 * call by that name may land in libdw (it does with the Makefile's link
 * order). */
static enum cfi_status libdwarf_failed(const struct loader *l,
                                       Dwarf_Error error, enum reading what,
                                       uint64_t offset)
{
    if (error)
        dwarf_dealloc_error(l->dbg, error);
    const char *message = LIBDWARF_MESSAGE(l->section, "cannot read");
    if (what == READING_CIE)
        message = LIBDWARF_MESSAGE(l->section, "cannot read a CIE of");
    else if (what == READING_FDE)
        message = LIBDWARF_MESSAGE(l->section, "cannot read an FDE of");
    return cfi_fail(l->diag, CFI_E_MALFORMED, offset, message);
}

/* The section offset of bytes [pointer, pointer + size) handed back by
 * libdwarf, which must lie in the section we showed it. */
static bool section_offset(const struct loader *l, const void *pointer,
                           uint64_t size, uint64_t *offset)
{
    uintptr_t start = (uintptr_t)l->data->bytes;
    uintptr_t at = (uintptr_t)pointer;
    if (!pointer || at < start || at - start > l->data->size ||
        size > l->data->size - (at - start))
        return false;
    *offset = at - start;
    return true;
}

static enum cfi_status outside(const struct loader *l, uint64_t offset)
{
    return cfi_fail(l->diag, CFI_E_MALFORMED, offset,
                    LIBDWARF_MESSAGE(l->section, "pointer outside"));
}

/* Bytes of the initial length field of the record at `offset`. */
static uint64_t length_field_size(const struct loader *l, uint64_t offset)
{
    if (offset > l->data->size || l->data->size - offset < 4)
        return 4;
    return cfi_load_le(l->data->bytes + offset, 4) == 0xffffffff ? 12 : 4;
}

/* libdwarf's API does not give a version 4 CIE's address size; it is the
 * byte after the augmentation string (DWARF 5 §6.4.1). */
static enum cfi_status read_address_size(const struct loader *l,
                                         struct cfi_cie *cie)
{
    cie->address_size = 8;
    if (cie->version != 4)
        return CFI_OK;
    uint64_t header = length_field_size(l, cie->offset);
    uint64_t id_size = header == 12 ? 8 : 4;
    uint64_t pos = cie->offset + header + id_size + 1 +
                   strlen(cie->augmentation) + 1;
    if (pos >= l->data->size)
        return outside(l, cie->offset);
    cie->address_size = l->data->bytes[pos];
    return CFI_OK;
}

/* Instructions and augmentation data, as pointers into our bytes. */
static enum cfi_status place_cie_bytes(struct loader *l, Dwarf_Cie cie,
                                       struct cfi_cie *out, Dwarf_Ptr instr,
                                       Dwarf_Unsigned instr_len)
{
    uint64_t offset;
    if (!section_offset(l, instr, instr_len, &offset))
        return outside(l, out->offset);
    out->instructions = l->data->bytes + offset;
    out->instructions_len = (size_t)instr_len;
    out->instructions_offset = offset;
    Dwarf_Small *data = NULL;
    Dwarf_Unsigned data_len = 0;
    Dwarf_Error error = NULL;
    int res = dwarf_get_cie_augmentation_data(cie, &data, &data_len, &error);
    if (res == DW_DLV_ERROR)
        return libdwarf_failed(l, error, READING_CIE, out->offset);
    /* Empty 'z' data ends where the instructions begin; libdwarf may
     * give no pointer for it, or no entry at all (for "z"). */
    if (res == DW_DLV_NO_ENTRY)
        data_len = 0;
    uint64_t data_offset = out->instructions_offset;
    if (out->augmentation[0] == 'z') {
        if (data_len > 0 && !section_offset(l, data, data_len, &data_offset))
            return outside(l, out->offset);
        out->augmentation_data = l->data->bytes + data_offset;
        out->augmentation_data_len = (size_t)data_len;
    }
    const char *message = NULL;
    enum cfi_status status = cfi_cie_apply_augmentation(
        out, data_offset, l->data->addr, &message);
    if (status != CFI_OK)
        return cfi_fail(l->diag, status, out->offset, message);
    return CFI_OK;
}

static enum cfi_status load_cie(struct loader *l, Dwarf_Cie cie)
{
    Dwarf_Unsigned length = 0, code_align = 0, instr_len = 0;
    Dwarf_Small version = 0;
    char *augmentation = NULL;
    Dwarf_Signed data_align = 0;
    Dwarf_Half ra = 0, offset_size = 0;
    Dwarf_Ptr instr = NULL;
    Dwarf_Off offset = 0;
    Dwarf_Error error = NULL;
    if (dwarf_cie_section_offset(l->dbg, cie, &offset, &error) != DW_DLV_OK)
        return libdwarf_failed(l, error, READING_CIE, CFI_NO_OFFSET);
    if (dwarf_get_cie_info_b(cie, &length, &version, &augmentation,
                             &code_align, &data_align, &ra, &instr,
                             &instr_len, &offset_size, &error) != DW_DLV_OK)
        return libdwarf_failed(l, error, READING_CIE, offset);
    struct cfi_cie *out = cfi_builder_add_cie(l->builder);
    if (!out)
        return cfi_fail(l->diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    out->section = l->section;
    out->arch = l->builder->arch;
    out->offset = offset;
    out->length = length;
    out->version = version;
    out->code_align = code_align;
    out->data_align = data_align;
    out->ra_column = ra;
    size_t len =
        augmentation ? strnlen(augmentation, CFI_AUGMENTATION_MAX) : 0;
    if (len == CFI_AUGMENTATION_MAX)
        return cfi_fail(
            l->diag, CFI_E_UNSUPPORTED, offset,
            SECTION_MESSAGE(l->section, "augmentation string too long"));
    if (len > 0)
        memcpy(out->augmentation, augmentation, len);
    enum cfi_status status = read_address_size(l, out);
    if (status != CFI_OK)
        return status;
    return place_cie_bytes(l, cie, out, instr, instr_len);
}

/* The section offset of the FDE's CIE: dwarf_get_fde_range gives the raw
 * CIE pointer field, not an offset, so ask the CIE itself. */
static enum cfi_status fde_cie_offset(const struct loader *l, Dwarf_Fde fde,
                                      uint64_t fde_offset, uint64_t *offset)
{
    Dwarf_Cie cie = NULL;
    Dwarf_Off cie_offset = 0;
    Dwarf_Error error = NULL;
    if (dwarf_get_cie_of_fde(fde, &cie, &error) != DW_DLV_OK ||
        dwarf_cie_section_offset(l->dbg, cie, &cie_offset, &error) !=
            DW_DLV_OK)
        return libdwarf_failed(l, error, READING_FDE, fde_offset);
    *offset = cie_offset;
    return CFI_OK;
}

/* Instructions and augmentation data, as pointers into our bytes. */
static enum cfi_status place_fde_bytes(struct loader *l, Dwarf_Fde fde,
                                       struct cfi_fde *out)
{
    Dwarf_Ptr instr = NULL;
    Dwarf_Unsigned instr_len = 0;
    Dwarf_Small *data = NULL;
    Dwarf_Unsigned data_len = 0;
    Dwarf_Error error = NULL;
    if (dwarf_get_fde_instr_bytes(fde, &instr, &instr_len, &error) !=
        DW_DLV_OK)
        return libdwarf_failed(l, error, READING_FDE, out->offset);
    uint64_t offset;
    if (!section_offset(l, instr, instr_len, &offset))
        return outside(l, out->offset);
    out->instructions = l->data->bytes + offset;
    out->instructions_len = (size_t)instr_len;
    out->instructions_offset = offset;
    out->instructions_addr = l->data->addr + offset;
    int res = dwarf_get_fde_augmentation_data(fde, &data, &data_len, &error);
    if (res == DW_DLV_ERROR)
        return libdwarf_failed(l, error, READING_FDE, out->offset);
    if (res == DW_DLV_OK) {
        /* Empty data ends where the instructions begin, whatever
         * pointer libdwarf gives for it. */
        offset = out->instructions_offset;
        if (data_len > 0 && !section_offset(l, data, data_len, &offset))
            return outside(l, out->offset);
        out->augmentation_data = l->data->bytes + offset;
        out->augmentation_data_len = (size_t)data_len;
    }
    return CFI_OK;
}

static enum cfi_status load_fde(struct loader *l, Dwarf_Fde fde)
{
    Dwarf_Addr low_pc = 0;
    Dwarf_Unsigned func_length = 0, record_size = 0;
    Dwarf_Ptr record = NULL;
    Dwarf_Off raw_cie_pointer = 0, offset = 0;
    Dwarf_Signed cie_index = 0;
    Dwarf_Error error = NULL;
    if (dwarf_get_fde_range(fde, &low_pc, &func_length, &record, &record_size,
                            &raw_cie_pointer, &cie_index, &offset,
                            &error) != DW_DLV_OK)
        return libdwarf_failed(l, error, READING_FDE, CFI_NO_OFFSET);
    /* record_size is the initial length's value: it leaves out the
     * length field itself. */
    uint64_t record_offset;
    uint64_t header = length_field_size(l, offset);
    if (record_size > UINT64_MAX - header ||
        !section_offset(l, record, record_size + header, &record_offset) ||
        record_offset != offset)
        return outside(l, offset);
    if (func_length > UINT64_MAX - low_pc)
        return cfi_fail(
            l->diag, CFI_E_MALFORMED, offset,
            SECTION_MESSAGE(l->section, "FDE address range wraps around"));
    struct cfi_fde *out = cfi_builder_add_fde(l->builder);
    if (!out)
        return cfi_fail(l->diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    out->section = l->section;
    out->offset = offset;
    out->length = record_size;
    out->pc_begin = low_pc;
    out->pc_end = low_pc + func_length;
    enum cfi_status status = fde_cie_offset(l, fde, offset, &out->cie_offset);
    if (status == CFI_OK)
        status = place_fde_bytes(l, fde, out);
    return status;
}

static enum cfi_status load_section(struct loader *l)
{
    struct cfi_dwarf_fde_list list;
    Dwarf_Error error = NULL;
    int res = cfi_dwarf_fde_list_get(l->dbg, l->section, &list, &error);
    if (res == DW_DLV_NO_ENTRY)
        return CFI_OK;
    if (res != DW_DLV_OK)
        return libdwarf_failed(l, error, READING_SECTION, CFI_NO_OFFSET);
    enum cfi_status status = CFI_OK;
    for (Dwarf_Signed i = 0; i < list.ncies && status == CFI_OK; i++)
        status = load_cie(l, list.cies[i]);
    for (Dwarf_Signed i = 0; i < list.nfdes && status == CFI_OK; i++)
        status = load_fde(l, list.fdes[i]);
    cfi_dwarf_fde_list_free(l->dbg, &list);
    return status;
}

/* The sections shown, in the object's order after the null section. */
struct shown {
    enum cfi_section section;
    const struct cfi_dwarf_section *data;
};

enum cfi_status cfi_dwarf_load(struct cfi_builder *builder,
                               const struct cfi_dwarf_section *eh_frame,
                               const struct cfi_dwarf_section *debug_frame,
                               struct cfi_diag *diag)
{
    struct shown shown[2];
    unsigned count = 0;
    if (eh_frame->bytes)
        shown[count++] = (struct shown){CFI_EH_FRAME, eh_frame};
    if (debug_frame->bytes)
        shown[count++] = (struct shown){CFI_DEBUG_FRAME, debug_frame};
    if (count == 0)
        return CFI_OK;
    struct cfi_dwarf_object object;
    cfi_dwarf_object_init(&object);
    for (unsigned i = 0; i < count; i++)
        cfi_dwarf_object_add(&object, cfi_section_name(shown[i].section),
                             shown[i].data->addr, shown[i].data->bytes,
                             shown[i].data->size);
    Dwarf_Debug dbg = NULL;
    Dwarf_Error error = NULL;
    if (cfi_dwarf_object_open(&object, &dbg, &error) != DW_DLV_OK) {
        if (error)
            dwarf_dealloc_error(NULL, error);
        return cfi_fail(diag, CFI_E_MALFORMED, CFI_NO_OFFSET,
                        "libdwarf: cannot initialise");
    }
    enum cfi_status status = CFI_OK;
    for (unsigned i = 0; i < count && status == CFI_OK; i++) {
        struct loader l = {dbg, shown[i].section, shown[i].data, builder,
                           diag};
        status = load_section(&l);
    }
    cfi_dwarf_object_finish(dbg);
    return status;
}
