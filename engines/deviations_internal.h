/* SPDX-License-Identifier: MIT */
/* deviations_internal.h — what the deviation table (deviations.c) and
 * its predicates share. Not a public header.
 *
 * The table is the one place where deviations are listed. Each entry's
 * predicate lives beside the library it describes (libunwind_deviations.c,
 * libdwarf_deviations.c, libdw_deviations.c, sframe_deviations.c); the
 * questions they all ask of a mismatch are in deviations_common.c. */
#ifndef CFISEM_ENGINES_DEVIATIONS_INTERNAL_H
#define CFISEM_ENGINES_DEVIATIONS_INTERNAL_H

#include "engines/deviations.h"

/* ------------------------------------------------------------------ */
/* Questions over a mismatch (deviations_common.c)                      */
/* ------------------------------------------------------------------ */

/* The IL's rule of `reg` in the row at the lookup PC; false when there
 * is no row (the IL failed, or no FDE). */
bool engine_deviation_row_rule(const struct engine_mismatch *m, unsigned reg,
                               struct sem_rule *rule);
/* The row gives `reg` no rule. */
bool engine_deviation_has_no_rule(const struct engine_mismatch *m,
                                  unsigned reg);
/* The IL and the engine both unwound. */
bool engine_deviation_both_unwound(const struct engine_mismatch *m);
/* A register item where the engine `id` unwound and the IL did too. */
bool engine_deviation_reg_item(const struct engine_mismatch *m,
                               enum engine_id id);
/* `frame`'s caller register `reg` is the callee's `from`, as it is. */
bool engine_deviation_is_callee_reg(const struct cfi_frame *frame,
                                    const struct cfi_request *request,
                                    unsigned reg, unsigned from);
bool engine_deviation_is_undefined(const struct cfi_frame *frame, unsigned reg);

/* What the libraries run of a program: the whole CIE program, then the
 * FDE program only while the location has not passed the lookup PC
 * (libdwarf's search_over, libdw's execute_cfi, libunwind's
 * run_cfi_program). */

/* The libraries run an instruction `opcode` for the lookup PC. */
bool engine_deviation_runs(const struct engine_mismatch *m,
                           enum sem_opcode opcode);
/* The IL says the FDE is an error because of an instruction with one of
 * `opcodes` (in the CIE when in_cie), the libraries run it for the lookup
 * PC, and the engine `id` unwound: it accepts what the IL rejects. */
bool engine_deviation_accepts(const struct engine_mismatch *m,
                              enum engine_id id, bool in_cie,
                              const enum sem_opcode *opcodes, size_t n);
/* The IL says the FDE is an error because of an instruction with one of
 * `opcodes` (in the CIE or the FDE), and the libraries run it for the
 * lookup PC; whatever the engine answered. */
bool engine_deviation_il_fails_at(const struct engine_mismatch *m,
                                  const enum sem_opcode *opcodes, size_t n);
/* engine_deviation_accepts for def_cfa_register / def_cfa_offset{,_sf} in the
 * FDE (the IL's error: they change an expression CFA). */
bool engine_deviation_accepts_cfa_ops_on_expression(
    const struct engine_mismatch *m, enum engine_id id);
/* engine_deviation_accepts for restore{,_extended} or a location change in the
 * CIE. */
bool engine_deviation_accepts_cie_restore_and_location(
    const struct engine_mismatch *m, enum engine_id id);
/* The IL's error comes from an FDE instruction that the libraries do not
 * run for the lookup PC (it lies after it), and the engine `id`
 * unwound. */
/* The library's lookup through .eh_frame_hdr gives another FDE than
 * .eh_frame holds for the lookup PC. */
bool engine_deviation_trusts_eh_frame_hdr(const struct engine_mismatch *m,
                                          enum engine_id id);
bool engine_deviation_stops_at_lookup_pc(const struct engine_mismatch *m,
                                         enum engine_id id);
/* The FDE is in .debug_frame after a zero length word, which the engine
 * `id` takes as the section's end: it says "no FDE", the IL does not. */
bool engine_deviation_stops_at_zero_length(const struct engine_mismatch *m,
                                           enum engine_id id);

/* ------------------------------------------------------------------ */
/* The IL's answer under a library's reading (deviations_common.c)      */
/* ------------------------------------------------------------------ */

/* A library's deviation shows on more than the item it is about: a rule
 * read differently changes the memory read, so the status too. These
 * compute what the library's reading gives for the whole request, so
 * that a predicate can check that the engine's answer on the item is
 * exactly that. */

/* `model` answers the mismatch's item as the engine did. */
bool engine_deviation_same_item(const struct engine_mismatch *m,
                                const struct cfi_frame *model);
/* The engine's answer differs from the reference's on the item: the
 * predicates that model a reading are meant for such items only. */
bool engine_deviation_item_differs(const struct engine_mismatch *m);
/* The IL's answer (sem_eval_row) from its row at the lookup PC with
 * every rule passed through `edit`, which may rewrite it, or drop it by
 * returning false. False when there is no row. */
bool engine_deviation_eval_edited_row(const struct engine_mismatch *m,
                                      bool (*edit)(struct sem_reg_rule *),
                                      struct cfi_frame *frame);
/* A rewrite of one instruction in a copy of its program's bytes. */
typedef void (*engine_deviation_patch_fn)(uint8_t *bytes, size_t len,
                                          const struct sem_insn *insn);
/* The IL's answer (the row at the lookup PC, then cfi.h step 6) when the
 * CIE's and FDE's programs are read with `patch` applied; where the
 * programs so read do not translate, the frame is that error. */
bool engine_deviation_eval_patched(const struct engine_mismatch *m,
                                   engine_deviation_patch_fn patch,
                                   struct cfi_frame *frame);
/* The IL's answer when the instruction the IL fails at (run for the
 * lookup PC) is read as DW_CFA_nop bytes. */
bool engine_deviation_eval_faulty_as_nops(const struct engine_mismatch *m,
                                          struct cfi_frame *frame);
/* The most bytes an expansion writes. */
enum { ENGINE_DEVIATION_EXPAND_MAX = 128 };
/* A one-byte instruction read as a sequence of instructions: writes the
 * sequence's bytes into `out` and returns their count, or 0 to keep the
 * instruction. */
typedef size_t (*engine_deviation_expand_fn)(const struct engine_mismatch *m,
                                             const struct sem_insn *insn,
                                             uint8_t *out);
/* As engine_deviation_eval_patched, with the programs' one-byte
 * instructions that `expand` rewrites replaced by their sequences: a
 * library's reading that inserts rules. */
bool engine_deviation_eval_expanded(const struct engine_mismatch *m,
                                    engine_deviation_expand_fn expand,
                                    struct cfi_frame *frame);

/* ------------------------------------------------------------------ */
/* The predicates, one per entry of the table                           */
/* ------------------------------------------------------------------ */

/* Each says whether `m` is its entry's deviation. */

/* libunwind_deviations.c */
bool engine_deviation_libunwind_no_undefined_default(
    const struct engine_mismatch *m);
bool engine_deviation_libunwind_rsp_is_cfa(const struct engine_mismatch *m);
bool engine_deviation_libunwind_needs_caller_rip(
    const struct engine_mismatch *m);
bool engine_deviation_libunwind_val_offset_unknown(
    const struct engine_mismatch *m);
bool engine_deviation_libunwind_stops_at_lookup_pc(
    const struct engine_mismatch *m);
bool engine_deviation_libunwind_cfa_ops_on_expression(
    const struct engine_mismatch *m);
bool engine_deviation_libunwind_cie_restore_and_location(
    const struct engine_mismatch *m);
bool engine_deviation_libunwind_undefined_rbp_ends_stack(
    const struct engine_mismatch *m);
bool engine_deviation_libunwind_register_new_location(
    const struct engine_mismatch *m);
bool engine_deviation_libunwind_rip_is_ip(const struct engine_mismatch *m);
bool engine_deviation_libunwind_deref_size(const struct engine_mismatch *m);
bool engine_deviation_libunwind_div_by_zero(const struct engine_mismatch *m);
bool engine_deviation_libunwind_shift_count(const struct engine_mismatch *m);
bool engine_deviation_libunwind_cfa_zero_pushed(
    const struct engine_mismatch *m);
bool engine_deviation_libunwind_null_address(const struct engine_mismatch *m);
bool engine_deviation_libunwind_expressions_first(
    const struct engine_mismatch *m);
bool engine_deviation_libunwind_no_debug_frame(const struct engine_mismatch *m);
bool engine_deviation_libunwind_trusts_eh_frame_hdr(
    const struct engine_mismatch *m);
bool engine_deviation_libunwind_underflow_malformed(
    const struct engine_mismatch *m);
bool engine_deviation_libunwind_pc_outside_text(
    const struct engine_mismatch *m);

/* libdwarf_deviations.c */
bool engine_deviation_libdwarf_stops_at_lookup_pc(
    const struct engine_mismatch *m);
bool engine_deviation_libdwarf_no_negative_offset(
    const struct engine_mismatch *m);
bool engine_deviation_libdwarf_augmentation_without_z(
    const struct engine_mismatch *m);
bool engine_deviation_libdwarf_val_offset_sf_rax(
    const struct engine_mismatch *m);
bool engine_deviation_libdwarf_cfa_ops_on_expression(
    const struct engine_mismatch *m);
bool engine_deviation_libdwarf_cie_restore_and_location(
    const struct engine_mismatch *m);
bool engine_deviation_libdwarf_zero_length(const struct engine_mismatch *m);
bool engine_deviation_libdwarf_window_save_ignored(
    const struct engine_mismatch *m);
bool engine_deviation_libdwarf_negate_ra_state_ignored(
    const struct engine_mismatch *m);
bool engine_deviation_libdwarf_aarch64_ra_state_ops(
    const struct engine_mismatch *m);
bool engine_deviation_libdwarf_augmentation_b_key(
    const struct engine_mismatch *m);
bool engine_deviation_libdwarf_cie_ra_register_refused(
    const struct engine_mismatch *m);

/* libdw_deviations.c */
/* gdb_deviations.c */
bool engine_deviation_gdb_unspecified_same_value(
    const struct engine_mismatch *m);
bool engine_deviation_gdb_rip_own_column(const struct engine_mismatch *m);
bool engine_deviation_gdb_signal_frame_at_pc(const struct engine_mismatch *m);
bool engine_deviation_gdb_stops_at_lookup_pc(const struct engine_mismatch *m);
bool engine_deviation_gdb_cfa_ops_on_expression(
    const struct engine_mismatch *m);
bool engine_deviation_libdw_abi_rax_for_rbx(const struct engine_mismatch *m);
bool engine_deviation_libdw_abi_rip_same_value(const struct engine_mismatch *m);
bool engine_deviation_libdw_stops_at_lookup_pc(const struct engine_mismatch *m);
bool engine_deviation_libdw_empty_expression(const struct engine_mismatch *m);
bool engine_deviation_libdw_expression_decoded_with_rule(
    const struct engine_mismatch *m);
bool engine_deviation_libdw_location_backwards(const struct engine_mismatch *m);
bool engine_deviation_libdw_address_size_4(const struct engine_mismatch *m);
bool engine_deviation_libdw_zero_length(const struct engine_mismatch *m);
bool engine_deviation_libdw_trusts_eh_frame_hdr(
    const struct engine_mismatch *m);
bool engine_deviation_libdw_no_pac_strip(const struct engine_mismatch *m);
bool engine_deviation_libdw_negate_ra_state_unchecked(
    const struct engine_mismatch *m);
bool engine_deviation_libdw_aarch64_abi_cfa_x30(
    const struct engine_mismatch *m);
bool engine_deviation_libdw_aarch64_ra_state_ops(
    const struct engine_mismatch *m);
bool engine_deviation_libdw_window_save_sparc(
    const struct engine_mismatch *m);
bool engine_deviation_libdw_cfa_ops_invalidate(
    const struct engine_mismatch *m);

/* sframe_deviations.c */
bool engine_deviation_sframe_three_columns(const struct engine_mismatch *m);
bool engine_deviation_sframe_pc_mask_lookup_pc(const struct engine_mismatch *m);

#endif
