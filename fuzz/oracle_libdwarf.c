/* SPDX-License-Identifier: MIT */
/* oracle_libdwarf.c — libdwarf's frame API on a (mutated) ELF file.
 *
 * libdwarf opens the file itself (dwarf_init_b on a descriptor: its own
 * ELF reader, unlike cfi/, which shows it only the sections our parser
 * accepted), then: the calls cfi/ makes (dwarf_get_fde_list_eh,
 * dwarf_get_fde_list, dwarf_get_cie_info_b, dwarf_get_fde_range, the
 * augmentation data and instruction bytes), the instruction expander, and
 * the row queries cfi/ does not make: dwarf_get_fde_info_for_all_regs3,
 * dwarf_get_fde_info_for_cfa_reg3_b, dwarf_get_fde_info_for_reg3_b and
 * dwarf_get_fde_at_pc. Expression blocks it returns are read byte by
 * byte, so that a pointer outside its buffers shows up under ASan.
 *
 *
 * The second entry point shows libdwarf raw frame records as the only
 * section of an object (dwarf_object_init_b), as cfi/dwarf.c does, except
 * that nothing has checked them first; the section ends at a guard page.
 *
 * libdwarf is always given a Dwarf_Error*: its default handler aborts. */
#include "internal.h"

#include <dwarf.h>
#include <elf.h>
#include <libdwarf.h>
#include <string.h>

#include "cfi/dwarf_object.h"

enum { MAX_CIES = 16, MAX_FDES = 64, TABLE_SIZE = 192 };

/* Frees an error, if any, and reports a return code (DW_DLV_NO_ENTRY -1,
 * OK 0, ERROR 1) as 0, 1, 2. */
static int settle(Dwarf_Debug dbg, int res, Dwarf_Error *error,
                  unsigned where)
{
    if (res == DW_DLV_ERROR && *error) {
        dwarf_dealloc_error(dbg, *error);
        *error = NULL;
    }
    fuzz_note(where, (uint64_t)(res + 1));
    return res;
}

static unsigned read_block(const void *block, Dwarf_Unsigned len)
{
    const unsigned char *bytes = block;
    unsigned sum = 0;
    for (Dwarf_Unsigned i = 0; bytes && i < len && i < 4096; i++)
        sum += bytes[i];
    return sum;
}

static void expand(Dwarf_Debug dbg, Dwarf_Cie cie, Dwarf_Ptr bytes,
                   Dwarf_Unsigned len)
{
    Dwarf_Frame_Op *ops = NULL;
    Dwarf_Signed count = 0;
    Dwarf_Error error = NULL;
    int res = dwarf_expand_frame_instructions(cie, bytes, len, &ops, &count,
                                              &error);
    if (settle(dbg, res, &error, FUZZ_NOTE_LIBDWARF_LIST) != DW_DLV_OK)
        return;
    for (Dwarf_Signed i = 0; i < count; i++)
        fuzz_note(FUZZ_NOTE_LIBDWARF_RULE, ops[i].fp_base_op);
    dwarf_dealloc(dbg, ops, DW_DLA_FRAME_BLOCK);
}

static void visit_cie(Dwarf_Debug dbg, Dwarf_Cie cie)
{
    Dwarf_Unsigned bytes_in_cie = 0, code_align = 0, instr_len = 0;
    Dwarf_Small version = 0;
    char *augmentation = NULL;
    Dwarf_Signed data_align = 0;
    Dwarf_Half ra = 0, offset_size = 0;
    Dwarf_Ptr instr = NULL;
    Dwarf_Error error = NULL;
    int res = dwarf_get_cie_info_b(cie, &bytes_in_cie, &version, &augmentation,
                                   &code_align, &data_align, &ra, &instr,
                                   &instr_len, &offset_size, &error);
    if (settle(dbg, res, &error, FUZZ_NOTE_LIBDWARF_LIST) != DW_DLV_OK)
        return;
    fuzz_note(FUZZ_NOTE_LIBDWARF_LIST, 8 + version);
    expand(dbg, cie, instr, instr_len);
    Dwarf_Small *data = NULL;
    Dwarf_Unsigned data_len = 0;
    res = dwarf_get_cie_augmentation_data(cie, &data, &data_len, &error);
    if (settle(dbg, res, &error, FUZZ_NOTE_LIBDWARF_LIST) == DW_DLV_OK)
        fuzz_note(FUZZ_NOTE_LIBDWARF_LIST, read_block(data, data_len));
}

static void note_rule(const Dwarf_Regtable_Entry3 *rule)
{
    fuzz_note(FUZZ_NOTE_LIBDWARF_RULE, rule->dw_value_type);
    switch (rule->dw_value_type) {
    case DW_EXPR_OFFSET:
    case DW_EXPR_VAL_OFFSET:
        fuzz_note(FUZZ_NOTE_LIBDWARF_RULE, 4 + rule->dw_offset_relevant);
        break;
    case DW_EXPR_EXPRESSION:
    case DW_EXPR_VAL_EXPRESSION:
        fuzz_note(FUZZ_NOTE_LIBDWARF_RULE,
                  8 + read_block(rule->dw_block_ptr,
                                 rule->dw_offset_or_block_len) % 8);
        break;
    default:
        fuzz_note(FUZZ_NOTE_LIBDWARF_RULE, 6);
        break;
    }
}

/* The row at pc, three ways. */
static void query_row(Dwarf_Debug dbg, Dwarf_Fde fde, Dwarf_Addr pc)
{
    Dwarf_Regtable_Entry3 rules[TABLE_SIZE];
    Dwarf_Regtable3 table = {.rt3_reg_table_size = TABLE_SIZE,
                             .rt3_rules = rules};
    Dwarf_Addr row_pc = 0;
    Dwarf_Error error = NULL;
    int res = dwarf_get_fde_info_for_all_regs3(fde, pc, &table, &row_pc,
                                               &error);
    if (settle(dbg, res, &error, FUZZ_NOTE_LIBDWARF_ROW) == DW_DLV_OK) {
        note_rule(&table.rt3_cfa_rule);
        for (unsigned reg = 0; reg < CFI_NGPRS; reg++)
            note_rule(&rules[reg]);
    }
    Dwarf_Small value_type = 0;
    Dwarf_Signed offset_relevant = 0, regnum = 0, offset = 0;
    Dwarf_Ptr block = NULL;
    Dwarf_Bool more = 0;
    Dwarf_Addr next = 0;
    res = dwarf_get_fde_info_for_cfa_reg3_b(fde, pc, &value_type,
                                            &offset_relevant, &regnum, &offset,
                                            &block, &row_pc, &more, &next,
                                            &error);
    bool is_expr = value_type == DW_EXPR_EXPRESSION ||
                   value_type == DW_EXPR_VAL_EXPRESSION;
    if (settle(dbg, res, &error, FUZZ_NOTE_LIBDWARF_ROW) == DW_DLV_OK &&
        is_expr)
        fuzz_note(FUZZ_NOTE_LIBDWARF_RULE,
                  read_block(block, (Dwarf_Unsigned)offset));
    res = dwarf_get_fde_info_for_reg3_b(fde, CFI_REG_RIP, pc, &value_type,
                                        &offset_relevant, &regnum, &offset,
                                        &block, &row_pc, &more, &next, &error);
    settle(dbg, res, &error, FUZZ_NOTE_LIBDWARF_ROW);
}

static void visit_fde(Dwarf_Debug dbg, Dwarf_Fde *fdes, Dwarf_Fde fde)
{
    Dwarf_Addr low = 0;
    Dwarf_Unsigned length = 0, record_len = 0;
    Dwarf_Ptr record = NULL;
    Dwarf_Off cie_offset = 0, fde_offset = 0;
    Dwarf_Signed cie_index = 0;
    Dwarf_Error error = NULL;
    int res = dwarf_get_fde_range(fde, &low, &length, &record, &record_len,
                                  &cie_offset, &cie_index, &fde_offset,
                                  &error);
    if (settle(dbg, res, &error, FUZZ_NOTE_LIBDWARF_LIST) != DW_DLV_OK)
        return;
    fuzz_note(FUZZ_NOTE_LIBDWARF_LIST, read_block(record, record_len));
    Dwarf_Cie cie = NULL;
    res = dwarf_get_cie_of_fde(fde, &cie, &error);
    Dwarf_Ptr instr = NULL;
    Dwarf_Unsigned instr_len = 0;
    if (settle(dbg, res, &error, FUZZ_NOTE_LIBDWARF_LIST) == DW_DLV_OK) {
        res = dwarf_get_fde_instr_bytes(fde, &instr, &instr_len, &error);
        if (settle(dbg, res, &error, FUZZ_NOTE_LIBDWARF_LIST) == DW_DLV_OK)
            expand(dbg, cie, instr, instr_len);
    }
    Dwarf_Small *data = NULL;
    Dwarf_Unsigned data_len = 0;
    res = dwarf_get_fde_augmentation_data(fde, &data, &data_len, &error);
    if (settle(dbg, res, &error, FUZZ_NOTE_LIBDWARF_LIST) == DW_DLV_OK)
        fuzz_note(FUZZ_NOTE_LIBDWARF_LIST, read_block(data, data_len));
    query_row(dbg, fde, low);
    query_row(dbg, fde, low + length / 2);
    query_row(dbg, fde, low + length - 1);
    query_row(dbg, fde, low + length);
    Dwarf_Fde found = NULL;
    Dwarf_Addr lopc = 0, hipc = 0;
    res = dwarf_get_fde_at_pc(fdes, low, &found, &lopc, &hipc, &error);
    settle(dbg, res, &error, FUZZ_NOTE_LIBDWARF_ROW);
}

/* One frame section: .eh_frame or .debug_frame. */
static void visit_section(Dwarf_Debug dbg, enum cfi_section section)
{
    struct cfi_dwarf_fde_list list;
    Dwarf_Error error = NULL;
    int res = cfi_dwarf_fde_list_get(dbg, section, &list, &error);
    if (settle(dbg, res, &error, FUZZ_NOTE_LIBDWARF_INIT) != DW_DLV_OK)
        return;
    fuzz_note(FUZZ_NOTE_LIBDWARF_INIT, 3 + (uint64_t)list.ncies);
    fuzz_note(FUZZ_NOTE_LIBDWARF_LIST, 3 + (uint64_t)list.nfdes);
    for (Dwarf_Signed i = 0; i < list.ncies && i < MAX_CIES; i++)
        visit_cie(dbg, list.cies[i]);
    for (Dwarf_Signed i = 0; i < list.nfdes && i < MAX_FDES; i++)
        visit_fde(dbg, list.fdes, list.fdes[i]);
    cfi_dwarf_fde_list_free(dbg, &list);
}

void fuzz_oracle_libdwarf(int fd)
{
    Dwarf_Debug dbg = NULL;
    Dwarf_Error error = NULL;
    int res = dwarf_init_b(fd, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL,
                           &dbg, &error);
    if (settle(dbg, res, &error, FUZZ_NOTE_LIBDWARF_INIT) != DW_DLV_OK)
        return;
    /* x86-64 defaults (FACTS.md): no rule means undefined, before any CIE
     * is read. */
    dwarf_set_frame_rule_initial_value(dbg, DW_FRAME_UNDEFINED_VAL);
    dwarf_set_frame_cfa_value(dbg, DW_FRAME_CFA_COL3);
    visit_section(dbg, CFI_EH_FRAME);
    visit_section(dbg, CFI_DEBUG_FRAME);
    res = dwarf_finish(dbg, &error);
    if (res == DW_DLV_ERROR && error)
        dwarf_dealloc_error(NULL, error);
}

/* ------------------------------------------------------------------ */
/* Raw frame records through the object access interface               */
/* ------------------------------------------------------------------ */

/* libdwarf 20210528 keeps the section-flags function of the last ELF
 * reader it opened (dwarf_init_b above) in this process-global pointer
 * and calls it on every later object, a caller's interface included,
 * which it then reads as its reader's private struct: the first object
 * init after a dwarf_init_b faults or fails whatever the input
 * (fuzz/findings/oracles/libdwarf-global-elf-flags.c reproduces it).
 * Cleared before each object init, so that inputs stay independent and
 * what is found here is caused by the input. */
extern int (*_dwarf_get_elf_flags_func_ptr)(void *object, Dwarf_Half index,
                                            Dwarf_Unsigned *flags,
                                            Dwarf_Unsigned *addralign,
                                            int *error);

void fuzz_oracle_libdwarf_forget(void)
{
    _dwarf_get_elf_flags_func_ptr = NULL;
}

void fuzz_oracle_libdwarf_section(const uint8_t *data, size_t size)
{
    if (size < FUZZ_CFI_HEADER_SIZE)
        return;
    enum cfi_section which = data[0] & FUZZ_CFI_DEBUG_FRAME
        ? CFI_DEBUG_FRAME : CFI_EH_FRAME;
    size_t section_size = size - FUZZ_CFI_HEADER_SIZE;
    struct fuzz_guarded section;
    if (section_size == 0 ||
        !fuzz_guarded_copy(&section, data + FUZZ_CFI_HEADER_SIZE,
                           section_size, 1))
        return;
    struct cfi_dwarf_object object;
    cfi_dwarf_object_init(&object);
    cfi_dwarf_object_add(&object, cfi_section_name(which),
                         cfi_load_le(data + 12, 4), section.bytes,
                         section_size);
    Dwarf_Debug dbg = NULL;
    Dwarf_Error error = NULL;
    fuzz_oracle_libdwarf_forget();
    int res = cfi_dwarf_object_open(&object, &dbg, &error);
    if (settle(dbg, res, &error, FUZZ_NOTE_LIBDWARF_INIT) == DW_DLV_OK) {
        dwarf_set_frame_rule_initial_value(dbg, DW_FRAME_UNDEFINED_VAL);
        dwarf_set_frame_cfa_value(dbg, DW_FRAME_CFA_COL3);
        visit_section(dbg, which);
        cfi_dwarf_object_finish(dbg);
    }
    fuzz_guarded_free(&section);
}
