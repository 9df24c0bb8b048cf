/* SPDX-License-Identifier: MIT */
/* oracle_libdw.h — elfutils libdw (0.188) as an outside engine.
 *
 * libdw is loaded at run time, never linked: it exports 34 dwarf_* names
 * that libdwarf exports too. dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL |
 * RTLD_DEEPBIND) and dlsym of every function used, per engine instance
 * (no global state). Under AddressSanitizer RTLD_DEEPBIND is refused by
 * the sanitizer runtime, so those builds load it with RTLD_LOCAL only:
 * the CFI functions used here call no libdw function that libdwarf also
 * exports (checked on the relocations of libdw.so.1: its self-calls by
 * shared names are DIE and attribute functions only).
 *
 * libdw reads the file itself (elf_begin on its own descriptor; libelf is
 * the same library libdw uses): dwarf_getcfi_elf for .eh_frame, and
 * dwarf_begin_elf + dwarf_getcfi for .debug_frame, asked in that order
 * (cfi.h step 2). At the lookup PC, dwarf_cfi_addrframe gives a frame;
 * dwarf_frame_cfa the CFA as a DWARF expression, and dwarf_frame_register
 * each register 0..CFI_NREGS-1 as a location description, with libdw's
 * own ABI defaults (its x86-64 backend's initial instructions) applied:
 *   nops 0, ops NULL          same_value: the callee's register;
 *   nops 0, ops == ops_mem    undefined;
 *   [regx N]                  the callee's register N (DW_CFA_register);
 *   [call_frame_cfa, ...]     the CFA pushed first, then the operations;
 *                             a last DW_OP_stack_value means the result
 *                             is the value, else it is the address of
 *                             the value (8 bytes read there).
 * The adapter evaluates these operations itself (cfi.h's expression
 * rules, over Dwarf_Op atoms): DW_OP_call_frame_cfa only as the first
 * operation of a register rule (libdw puts it there), DW_OP_stack_value
 * only last; everything cfi.h does not allow is an expression fault.
 * libdw's errors are answered in the closest class with its message.
 *
 * What it cannot say, marked not comparable: a register rule naming a
 * register outside 0..CFI_NREGS-1. A file without a path is not
 * supported.
 */
#ifndef CFISEM_ENGINES_ORACLE_LIBDW_H
#define CFISEM_ENGINES_ORACLE_LIBDW_H

#include "cfi/cfi.h"
#include "engines/engine.h"

enum cfi_status engine_libdw_open(const struct cfi_file *file, void **self,
                                  struct cfi_diag *diag);
enum cfi_status engine_libdw_answer(void *self,
                                    const struct cfi_request *request,
                                    struct engine_answer *answer);
void engine_libdw_close(void *self);

#endif
