/* SPDX-License-Identifier: MIT */
/* sframe.h — reading an SFrame section (.sframe) and unwinding one frame
 * with it.
 *
 * SFrame (binutils' "SFrame format"; `as --gsframe`) keeps three columns
 * of a frame, derived by the assembler from the .cfi_* directives:
 *   CFA  the stack pointer or the frame pointer, plus an offset;
 *   FP   (rbp on x86-64) saved at CFA plus an offset, or not tracked (it
 *        then keeps its value);
 *   RA   (the caller's rip) saved at CFA plus an offset, on x86-64 always
 *        the header's fixed offset (CFA-8).
 * Nothing else: no other register, no expression.
 *
 * Layout (little-endian for x86-64), versions 1 (gas 2.40) and 2 (2.41
 * on):
 *   header  magic 0xdee2 (2 bytes), version, flags, ABI/arch, the fixed
 *           FP and RA offsets (signed bytes, 0: not fixed), the length of
 *           an auxiliary header, the number of FDEs and of FREs, the
 *           length of the FRE sub-section, the offsets of the FDE and FRE
 *           sub-sections from the end of the header (auxiliary header
 *           included): 28 bytes;
 *   FDE     the function's start (signed 32 bits, relative to the start
 *           of the section; relative to the field itself when the flag
 *           FDE_FUNC_START_PCREL is set), its size, the offset of its
 *           first FRE in the FRE sub-section, its number of FREs, an info
 *           byte (FRE type in bits 0-3: start addresses of 1, 2 or 4
 *           bytes; bit 4: the FREs' start addresses are offsets in a
 *           repeated block (pc-mask, the PLT) instead of from the start;
 *           bit 5: the AArch64 pointer authentication key): 17 bytes in
 *           version 1; version 2 adds the block size (1 byte) and 2
 *           bytes of padding: 20 bytes;
 *   FRE     its start address (1, 2 or 4 bytes), an info byte (bit 0:
 *           CFA from the stack pointer (1) or the frame pointer (0);
 *           bits 1-4: the number of offsets; bits 5-6: their size, 1, 2
 *           or 4 bytes; bit 7: mangled RA, AArch64), then the offsets,
 *           signed: the CFA's, then the RA's unless the header fixes it
 *           (x86-64 always does: CFA-8), then the FP's when present.
 * Version 1 records no block size for a pc-mask FDE: this reader takes
 * 16 bytes, the size of an x86-64 PLT entry (the only pc-mask FDEs ld
 * 2.40 writes). Only the AMD64 ABI (3) is read.
 *
 * An empty section (ld writes one when gas left every FDE out) is a table
 * with no FDE, version 0.
 *
 * Every count and offset comes from the file and is checked against the
 * section's size before use; bad input is an error (CFI_E_MALFORMED, or
 * CFI_E_UNSUPPORTED for a version, ABI or flag this reader does not
 * know) with the offset in the section of the field at fault. */
#ifndef CFISEM_SFRAME_H
#define CFISEM_SFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfi/cfi.h"

#define SFRAME_MAGIC 0xdee2
#define SFRAME_ABI_AMD64 3
#define SFRAME_F_FDE_SORTED 0x1
#define SFRAME_F_FRAME_POINTER 0x2
#define SFRAME_F_FDE_FUNC_START_PCREL 0x4
/* The pc-mask block of a version 1 FDE (see above). */
#define SFRAME_V1_BLOCK_SIZE 16

/* One row: from `start` (an offset from the function's start, or in the
 * block for a pc-mask FDE) to the next FRE's start or the function's
 * end. */
struct sframe_fre {
    uint32_t start;
    bool cfa_from_sp;         /* else from the frame pointer */
    int32_t cfa_offset;
    bool fp_tracked;
    int32_t fp_offset;        /* FP saved at CFA + fp_offset */
    bool ra_tracked;
    int32_t ra_offset;        /* RA saved at CFA + ra_offset */
    uint64_t offset;          /* of the FRE in the section */
};

struct sframe_fde {
    uint64_t start;           /* file address of the function */
    uint32_t size;
    bool pc_mask;
    uint8_t block_size;       /* pc_mask: the repeated block's size */
    uint8_t fre_type;         /* 0, 1, 2: start addresses of 1, 2, 4 bytes */
    size_t first_fre;         /* index in sframe_table.fres */
    size_t nfres;
    uint64_t offset;          /* of the FDE in the section */
};

struct sframe_table {
    uint64_t addr;            /* file address of the section */
    uint64_t size;
    uint8_t version;          /* 1, 2; 0: an empty section */
    uint8_t flags;
    uint8_t abi;
    int8_t fixed_fp_offset;   /* 0: not fixed */
    int8_t fixed_ra_offset;   /* 0: not fixed */
    struct sframe_fde *fdes;  /* in the section's order */
    size_t nfdes;
    struct sframe_fre *fres;  /* each FDE's FREs together, in order */
    size_t nfres;
    /* fdes sorted by start (then section order), for lookup */
    const struct sframe_fde **by_start;
};

/* Parses `size` bytes of an .sframe section at file address `addr`. The
 * result owns its arrays (not the bytes). On error *table is NULL and
 * diag->offset is the offset in the section. */
enum cfi_status sframe_read(const uint8_t *bytes, size_t size, uint64_t addr,
                            struct sframe_table **table,
                            struct cfi_diag *diag);

/* The file's .sframe, found in its section headers (file->image). A file
 * without one: CFI_E_NO_CFI ("no .sframe section"). A relocatable object:
 * CFI_E_UNSUPPORTED (its function starts still need their relocations).
 * Errors name the section in the message; diag->offset is the offset in
 * the section when the section is at fault. */
enum cfi_status sframe_open(const struct cfi_file *file,
                            struct sframe_table **table,
                            struct cfi_diag *diag);
void sframe_free(struct sframe_table *table);

/* The FDE whose [start, start + size) holds pc (the one with the
 * greatest start when several do), or NULL. */
const struct sframe_fde *sframe_lookup(const struct sframe_table *table,
                                       uint64_t pc);
/* The FRE of `fde` in effect at pc (in the FDE), or NULL when pc is before
 * its first FRE. *end is set to the address where that FRE stops being in
 * effect (the next FRE, the block's end or the function's end). */
const struct sframe_fre *sframe_fre_at(const struct sframe_table *table,
                                       const struct sframe_fde *fde,
                                       uint64_t pc, uint64_t *end);

/* Unwinds one frame as SFrame says (cfi.h's request; the lookup PC is
 * PC-1 for a caller frame, as there): frame->cfa, and the caller's rbp
 * (the 8 bytes at CFA + FP offset, or the callee's rbp when the FP is not
 * tracked) and rip (the 8 bytes at CFA + RA offset); rsp is the CFA. The
 * other registers are left unknown: SFrame does not speak for them.
 * CFI_E_NO_FDE when no FDE or FRE covers the lookup PC; CFI_E_REG_UNKNOWN
 * (diag.reg) when the CFA's base register is not a value; CFI_E_MEMORY for
 * a read that faults; the first error in the order CFA, rbp, rip. */
enum cfi_status sframe_unwind(const struct sframe_table *table,
                              const struct cfi_request *request,
                              struct cfi_frame *frame);

#endif
