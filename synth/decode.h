/* SPDX-License-Identifier: MIT */
/* decode.h — the decoder seam: what decode.c (the machine-independent
 * part: the decoding loop, listings, the machine's facts) shares with one
 * file per architecture (decode_x86.c, decode_aarch64.c). Only the
 * decode*.c files include capstone. */
#ifndef CFISEM_SYNTH_DECODE_H
#define CFISEM_SYNTH_DECODE_H

#include <capstone/capstone.h>

#include "internal.h"

/* Room for capstone's register numbers of every architecture decoded. */
#define SYNTH_CS_REGS 512

struct synth_decoder;

/* One architecture's decoder. */
struct synth_isa {
    const struct cfi_arch *arch;
    cs_arch cs_arch;
    cs_mode cs_mode;
    const char *missing;      /* "capstone has no x86-64 decoder" */
    int64_t entry_height;     /* struct synth_machine */
    int syscall_nr, syscall_stack;
    int64_t clone_nr, clone3_nr;
    /* The DWARF number of a register named by capstone, or -1. */
    int (*dwarf_of_name)(const char *name);
    /* Classifies a decoded instruction. */
    void (*classify)(const struct synth_decoder *decoder, const cs_insn *ci,
                     struct synth_insn *in);
    /* An instruction capstone cannot decode but the analysis knows
     * (AArch64's retaa, retab), at `bytes` (`size` left): its length, 0
     * when unknown; NULL when there are none. `text` gets its text. */
    unsigned (*known_word)(const uint8_t *bytes, size_t size, uint64_t addr,
                           struct synth_insn *in, char *text, size_t len);
    /* The kind of code no FDE covers, [at, at+len) at `code`: NO_FDE, or
     * a known deviation of the toolchain (x86-64: GCC's crtstuff.c;
     * AArch64: glibc's call_weak_fn). */
    enum synth_kind (*known_gap)(const uint8_t *code, uint64_t at,
                                 uint64_t len);
};

extern const struct synth_isa synth_isa_x86_64;
extern const struct synth_isa synth_isa_aarch64;

struct synth_decoder {
    csh handle;
    cs_insn *insn;
    const struct synth_isa *isa;
    struct synth_machine machine;
    int8_t dwarf[SYNTH_CS_REGS]; /* capstone register → DWARF or -1 */
};

/* The DWARF number of capstone's register `reg`, or -1. */
static inline int synth_dwarf(const struct synth_decoder *d, unsigned reg)
{
    return reg < SYNTH_CS_REGS ? d->dwarf[reg] : -1;
}

/* An instruction's fields before classification (-1 registers, address
 * and length); the registers it writes, as capstone reports them. */
void synth_insn_init(const struct synth_decoder *d, const cs_insn *ci,
                     struct synth_insn *in);

#endif
