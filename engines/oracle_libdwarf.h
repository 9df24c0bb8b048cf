/* SPDX-License-Identifier: MIT */
/* oracle_libdwarf.h — libdwarf (20210528) as an outside engine.
 *
 * libelf finds .eh_frame and .debug_frame in the file (on the adapter's
 * own descriptor) and libdwarf reads them through an object access
 * interface (dwarf_object_init_b): its own CIE/FDE parser on the raw
 * section bytes. Not dwarf_init_b: its ELF reader sets a global function
 * pointer (_dwarf_get_elf_flags_func_ptr) that it never resets, and every
 * later dwarf_object_init_b in the process — cfi_file_open's included —
 * then calls it on a caller's object and crashes
 * (diff/findings/libdwarf-init-b-global). It finds the FDE at the lookup PC
 * (dwarf_get_fde_at_pc, .eh_frame first, then .debug_frame, as
 * cfi_file_lookup) and gives the row there as a rule table
 * (dwarf_get_fde_info_for_all_regs3). The adapter turns that table into a
 * struct sem_row and evaluates it with sem_eval_row on the request's
 * registers and memory: a difference with the IL evaluator means libdwarf
 * read the rules differently.
 *
 * The frame defaults are set right after init, before any CIE is read:
 * every register and the CFA start with a sentinel rule of our own (no
 * DWARF register, neither DW_FRAME_UNDEFINED_VAL nor DW_FRAME_SAME_VAL), so
 * that "no rule" stays apart from DW_CFA_undefined and the ABI default
 * applies to it as in cfi.h; the CFA column is DW_FRAME_CFA_COL3.
 *
 * Refused for safety (not comparable): an FDE whose CIE or FDE program
 * holds a DW_CFA_expression or DW_CFA_val_expression on a register above
 * UINT32_MAX, as libdwarf decodes it: libdwarf checks the truncated
 * number and writes at the full one (diff/findings/README.md).
 *
 * What it cannot say, marked not comparable: a register whose rule names
 * a register outside 0..CFI_NREGS-1 (libdwarf's table has 191 columns),
 * and the whole request when the CFA is defined on such a register. A
 * file without a path (built from bytes in memory) is not supported.
 * Errors libdwarf reports while building the row are answered as errors
 * of the closest class (malformed, out of memory) with libdwarf's
 * message.
 */
#ifndef CFISEM_ENGINES_ORACLE_LIBDWARF_H
#define CFISEM_ENGINES_ORACLE_LIBDWARF_H

#include "cfi/cfi.h"
#include "engines/engine.h"

enum cfi_status engine_libdwarf_open(const struct cfi_file *file, void **self,
                                     struct cfi_diag *diag);
enum cfi_status engine_libdwarf_answer(void *self,
                                       const struct cfi_request *request,
                                       struct engine_answer *answer);
void engine_libdwarf_close(void *self);

#endif
