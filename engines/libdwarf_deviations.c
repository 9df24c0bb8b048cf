/* SPDX-License-Identifier: MIT */
/* libdwarf_deviations.c — the predicates of libdwarf's entries in the
 * deviation table (engines/deviations.c). */
#include "deviations_internal.h"

#include <stdlib.h>
#include <string.h>

bool engine_deviation_libdwarf_stops_at_lookup_pc(
    const struct engine_mismatch *m)
{
    return engine_deviation_stops_at_lookup_pc(m, ENGINE_libdwarf);
}

/* libdwarf's answer is its "cannot decode this instruction" error. */
static bool libdwarf_decoding_error(const struct cfi_frame *got)
{
    return got->status == CFI_E_MALFORMED && got->diag.message &&
           strstr(got->diag.message, "DW_DLE_DF_FRAME_DECODING_ERROR");
}

/* DW_CFA_GNU_negative_offset_extended ran: libdwarf has no case for it
 * and fails the row with a decoding error, whatever the IL's row gives
 * there (registers, or the memory fault, unknown register or expression
 * error of evaluating it): the IL translated the FDE, so every status
 * but the decoding error comes from the row. */
bool engine_deviation_libdwarf_no_negative_offset(
    const struct engine_mismatch *m)
{
    return m->engine == ENGINE_libdwarf &&
           m->item == ENGINE_ITEM_STATUS && m->translation == CFI_OK &&
           m->row && m->expected->status != m->got->status &&
           libdwarf_decoding_error(m->got) &&
           engine_deviation_runs(m, SEM_CFA_GNU_negative_offset_extended);
}

/* A CIE of the file has an augmentation without 'z' ("S": gas's signal
 * frame in .debug_frame), and libdwarf's answer is its refusal of it:
 * it refuses the whole section, so any PC gets that answer. */
static bool has_augmentation_without_z(const struct cfi_file *file)
{
    for (size_t i = 0; i < file->ncies; i++) {
        const char *augmentation = file->cies[i].augmentation;
        if (augmentation[0] != '\0' && augmentation[0] != 'z')
            return true;
    }
    return false;
}

bool engine_deviation_libdwarf_augmentation_without_z(
    const struct engine_mismatch *m)
{
    return m->engine == ENGINE_libdwarf &&
           m->item == ENGINE_ITEM_STATUS &&
           has_augmentation_without_z(m->file) && m->got->status != CFI_OK &&
           m->got->diag.message &&
           strstr(m->got->diag.message, "DW_DLE_FRAME_AUGMENTATION_UNKNOWN");
}

/* libdwarf's reading of DW_CFA_val_offset_sf: the rule goes to register
 * 0. The register operand, a ULEB128 right after the opcode, becomes a
 * ULEB128 0 of the same length. */
static void val_offset_sf_on_rax(uint8_t *bytes, size_t len,
                                 const struct sem_insn *insn)
{
    if (insn->opcode != SEM_CFA_val_offset_sf)
        return;
    size_t at = insn->at + 1;
    for (; at < len && (bytes[at] & 0x80); at++)
        bytes[at] = 0x80;
    if (at < len)
        bytes[at] = 0;
}

/* val_offset_sf ran: libdwarf gives its rule to register 0 (rax, x0),
 * and its register keeps the rule it had. Seen on register 0, on that
 * register, and on the status (what is read changes): the item is what
 * the row gives when the program is read so. */
bool engine_deviation_libdwarf_val_offset_sf_rax(
    const struct engine_mismatch *m)
{
    if (m->engine != ENGINE_libdwarf || m->translation != CFI_OK ||
        !engine_deviation_item_differs(m) ||
        !engine_deviation_runs(m, SEM_CFA_val_offset_sf))
        return false;
    struct cfi_frame *model = malloc(sizeof *model);
    bool explained = model &&
                     engine_deviation_eval_patched(m, val_offset_sf_on_rax,
                                                   model) &&
                     engine_deviation_same_item(m, model);
    free(model);
    return explained;
}

bool engine_deviation_libdwarf_cfa_ops_on_expression(
    const struct engine_mismatch *m)
{
    return engine_deviation_accepts_cfa_ops_on_expression(m, ENGINE_libdwarf);
}

bool engine_deviation_libdwarf_cie_restore_and_location(
    const struct engine_mismatch *m)
{
    return engine_deviation_accepts_cie_restore_and_location(m,
                                                             ENGINE_libdwarf);
}

/* dwarf_frame.c (_dwarf_get_fde_list_internal) takes a zero length word
 * as the end of .debug_frame. */
bool engine_deviation_libdwarf_zero_length(const struct engine_mismatch *m)
{
    return engine_deviation_stops_at_zero_length(m, ENGINE_libdwarf);
}

/* The mismatch's FDE is AArch64's. */
static bool aarch64_fde(const struct engine_mismatch *m)
{
    return m->fde && m->fde->cie && m->fde->cie->arch == &cfi_arch_aarch64;
}

/* libdwarf's reading of 0x2d on AArch64: DW_CFA_GNU_window_save, which
 * it runs as nothing. The opcode becomes DW_CFA_nop (0x00), one byte as
 * it is. */
static void negate_ra_state_as_nop(uint8_t *bytes, size_t len,
                                   const struct sem_insn *insn)
{
    if (insn->opcode == SEM_CFA_GNU_window_save && insn->at < len)
        bytes[insn->at] = 0x00;
}

static const enum sem_opcode negate_ra_state[] = {SEM_CFA_GNU_window_save};

/* negate_ra_state ran: libdwarf leaves RA_SIGN_STATE as it was, so the
 * state (34) it gives, the caller's PC (not stripped where the IL's is)
 * and whatever they change are what the row gives with every 0x2d read
 * as a nop, in the part of the program libdwarf runs for the lookup PC
 * (engine_deviation_eval_patched). Where the IL rejects the FDE at a
 * negate (one mixed with another rule of 34, or of a state signed with
 * the PC), libdwarf, running it as nothing, unwinds. */
bool engine_deviation_libdwarf_negate_ra_state_ignored(
    const struct engine_mismatch *m)
{
    if (m->engine != ENGINE_libdwarf || !aarch64_fde(m))
        return false;
    if (m->item == ENGINE_ITEM_STATUS && m->got->status == CFI_OK &&
        engine_deviation_il_fails_at(m, negate_ra_state, 1))
        return true;
    if (m->translation != CFI_OK || !engine_deviation_item_differs(m) ||
        !engine_deviation_runs(m, SEM_CFA_GNU_window_save))
        return false;
    struct cfi_frame *model = malloc(sizeof *model);
    bool explained = model &&
                     engine_deviation_eval_patched(m, negate_ra_state_as_nop,
                                                   model) &&
                     engine_deviation_same_item(m, model);
    free(model);
    return explained;
}

static const enum sem_opcode ra_state_ops[] = {
    SEM_CFA_AARCH64_set_ra_state, SEM_CFA_AARCH64_negate_ra_state_with_pc};

/* The AArch64 opcodes 0x2b (set_ra_state) and 0x2c
 * (negate_ra_state_with_pc) ran: libdwarf has no case for them and
 * fails the row with a decoding error, whatever the IL's row gives
 * there, or where the IL rejects the FDE at one of them (a reserved
 * state), whatever class the IL gives its error. */
bool engine_deviation_libdwarf_aarch64_ra_state_ops(
    const struct engine_mismatch *m)
{
    if (m->engine != ENGINE_libdwarf || m->item != ENGINE_ITEM_STATUS ||
        !aarch64_fde(m) || m->expected->status == m->got->status ||
        !libdwarf_decoding_error(m->got))
        return false;
    if (m->translation != CFI_OK)
        return engine_deviation_il_fails_at(m, ra_state_ops, 2);
    return m->row &&
           (engine_deviation_runs(m, SEM_CFA_AARCH64_set_ra_state) ||
            engine_deviation_runs(m, SEM_CFA_AARCH64_negate_ra_state_with_pc));
}

/* A CIE of the file has AArch64's 'B' augmentation (the B key), and
 * libdwarf's answer is its refusal of it: it refuses the whole section,
 * so any PC gets that answer. */
static bool has_b_key_cie(const struct cfi_file *file)
{
    for (size_t i = 0; i < file->ncies; i++)
        if (file->cies[i].arch == &cfi_arch_aarch64 &&
            file->cies[i].augmentation[0] == 'z' &&
            strchr(file->cies[i].augmentation, 'B'))
            return true;
    return false;
}

bool engine_deviation_libdwarf_augmentation_b_key(
    const struct engine_mismatch *m)
{
    return m->engine == ENGINE_libdwarf &&
           m->item == ENGINE_ITEM_STATUS && has_b_key_cie(m->file) &&
           m->got->status != CFI_OK && m->got->diag.message &&
           strstr(m->got->diag.message, "DW_DLE_FRAME_AUGMENTATION_UNKNOWN");
}

/* On a machine other than AArch64, 0x2d is DW_CFA_GNU_window_save
 * (SPARC's register window), which cfi.h does not support there (the
 * FDE is unsupported) and libdwarf runs as nothing: where the IL stops
 * at one that runs for the lookup PC, libdwarf's answer is the one the
 * row gives with every 0x2d read as a nop (a frame, or the error of
 * evaluating that row). */
bool engine_deviation_libdwarf_window_save_ignored(
    const struct engine_mismatch *m)
{
    if (m->engine != ENGINE_libdwarf || aarch64_fde(m) ||
        m->item != ENGINE_ITEM_STATUS ||
        !engine_deviation_il_fails_at(m, negate_ra_state, 1))
        return false;
    struct cfi_frame *model = malloc(sizeof *model);
    bool explained = model &&
                     engine_deviation_eval_patched(m, negate_ra_state_as_nop,
                                                   model) &&
                     engine_deviation_same_item(m, model);
    free(model);
    return explained;
}

/* A CIE of the file names a return address register above the rule
 * table the adapter gives libdwarf (dwarf_set_frame_rule_table_size:
 * CFI_NREGS columns), and libdwarf's answer is its refusal of it
 * (dwarf_frame2.c, DW_DLE_CIE_RET_ADDR_REG_ERROR): it refuses the whole
 * section when it reads the CIEs, so any PC gets that answer, one no FDE
 * covers included. */
static bool has_high_ra_cie(const struct cfi_file *file)
{
    for (size_t i = 0; i < file->ncies; i++)
        if (file->cies[i].ra_column > CFI_NREGS)
            return true;
    return false;
}

bool engine_deviation_libdwarf_cie_ra_register_refused(
    const struct engine_mismatch *m)
{
    return m->engine == ENGINE_libdwarf &&
           m->item == ENGINE_ITEM_STATUS && m->file &&
           has_high_ra_cie(m->file) && m->got->status != CFI_OK &&
           m->got->diag.message &&
           strstr(m->got->diag.message, "DW_DLE_CIE_RET_ADDR_REG_ERROR");
}
