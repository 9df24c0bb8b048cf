/* SPDX-License-Identifier: MIT */
/* internal.h — what the files of synth/ share. */
#ifndef CFISEM_SYNTH_INTERNAL_H
#define CFISEM_SYNTH_INTERNAL_H

#include "synth.h"

/* The machine the analysis reads is the decoder's (struct synth_machine,
 * from the file's descriptor): x86-64 (decode_x86.c, capstone's x86 mode,
 * the System V calling convention) or AArch64 (decode_aarch64.c,
 * capstone's ARM64 mode, AAPCS64). Each decoder classifies its
 * instructions into the operations below; "rsp" and "rbp" are the
 * machine's sp and fp (AArch64: sp and x29).
 *
 * What an instruction does to the stack and to control flow. Operands in
 * Intel order (destination first), as capstone gives them. */
enum synth_op {
    SYNTH_OP_OTHER,      /* nothing the analysis follows */
    SYNTH_OP_PUSH,       /* rsp -= size; `reg` pushed (-1: not a GPR) */
    SYNTH_OP_POP,        /* rsp += size; into `reg` (-1: not a GPR) */
    SYNTH_OP_ADD_RSP,    /* rsp += imm (add, sub, lea rsp,[rsp+imm]) */
    SYNTH_OP_RSP_FROM_REG, /* rsp = base + imm (mov, lea) */
    SYNTH_OP_RSP_UNKNOWN, /* rsp = anything else */
    SYNTH_OP_AND_RSP,    /* and rsp, imm: realignment */
    SYNTH_OP_RBP_FROM_RSP, /* rbp = rsp + imm (mov, lea) */
    SYNTH_OP_REG_FROM_RSP, /* dst = rsp + imm, dst another GPR */
    SYNTH_OP_RBP_FROM_REG, /* rbp = base + imm, base not rsp */
    SYNTH_OP_LEAVE,
    SYNTH_OP_ENTER,      /* imm: frame size; imm2: nesting level */
    SYNTH_OP_CALL,
    SYNTH_OP_RET,
    SYNTH_OP_JMP,        /* direct: target */
    SYNTH_OP_JMP_INDIRECT,
    SYNTH_OP_JCC,        /* conditional, direct: target */
    SYNTH_OP_STOP,       /* hlt, ud2, int3: no successor */
    SYNTH_OP_STORE,      /* mov [base+disp], reg64: `reg` stored (and
                            `reg2` at disp + pair: AArch64's stp) */
    SYNTH_OP_LOAD,       /* mov reg, [base+disp] (ldp: and reg2) */
    SYNTH_OP_PADDING,    /* nop */
    SYNTH_OP_SYSCALL,
    SYNTH_OP_CLONE,      /* a syscall with eax = clone or clone3 */
    SYNTH_OP_RA_SIGN,    /* paciasp, pacibsp: x30 signed; imm 1: B key */
    SYNTH_OP_RA_AUTH,    /* autiasp, autibsp, xpaclri: x30 not signed */
};

/* A store or load that also moves its base register (AArch64): before
 * the access, base += disp and the access is at the new base (pre-index,
 * `stp x29, x30, [sp, #-32]!`); or after it, base += wb_imm (post-index,
 * `ldp x29, x30, [sp], #32`). */
enum synth_writeback { SYNTH_WB_NONE, SYNTH_WB_PRE, SYNTH_WB_POST };

struct synth_insn {
    uint64_t addr;
    uint8_t len;
    enum synth_op op;
    int8_t reg;          /* DWARF number of the GPR pushed/popped/moved */
    int8_t base;         /* STORE, LOAD: the address's base register;
                            RSP_FROM_REG, RBP_FROM_REG: the source */
    int8_t dst;          /* the first operand's GPR, or -1 */
    int8_t src;          /* a register copy (mov, movzx, movsx between
                            GPRs): the source GPR, else -1 */
    bool is_mem_copy;    /* mov, movzx, movsx dst, [mem] */
    bool sets_flags;     /* writes CF, ZF, SF or OF */
    int8_t mem_base;     /* a memory operand's base, index (-1: none) */
    int8_t mem_index;
    uint8_t mem_scale;
    bool mem_rip;        /* the memory operand is rip-relative */
    bool is_cmp_imm;     /* cmp dst, imm */
    bool is_mov_imm;     /* mov dst, imm (imm) */
    bool is_zeroing;     /* dst := 0 (xor or sub of itself, mov $0) */
    bool is_movsxd;      /* movsxd dst, dword [mem] */
    bool is_lea;         /* lea dst, [mem]; AArch64's adr and adrp, with
                            mem_rip and the address in target */
    bool is_add_reg;     /* add dst, reg (mem_base holds reg), or
                            lea dst, [mem_base + mem_index]; AArch64's
                            add dst, mem_base, mem_index, sxtb #2 */
    int64_t imm;
    int64_t imm2;
    int64_t disp;        /* a memory operand's displacement */
    uint64_t target;     /* JMP, JCC, CALL direct; rip-relative address */
    uint32_t writes;     /* GPRs 0-31 written (bit = DWARF number) */
    uint32_t vwrites;    /* vector registers written (bit = DWARF - 64) */
    int8_t reg2;         /* STORE, LOAD of a pair: the second register, at
                            disp + pair (-1: none, or not followed) */
    bool has_pair;       /* a pair (stp, ldp) even when reg2 is -1 */
    uint8_t pair;        /* the bytes between the pair's two slots */
    uint8_t wb;          /* enum synth_writeback */
    int64_t wb_imm;      /* SYNTH_WB_POST: what the base moves by */
    /* AArch64's jump tables (GCC: adrp, add #lo12; ldrb/ldrh with the
     * index; adr of the base; add base, entry, sxtb #2; br): */
    bool is_add_imm;     /* add dst, src, #imm */
    bool is_table_load;  /* ldr{b,h,sb,sh,} dst, [mem_base, mem_index]:
                            entries of mem_scale bytes */
    uint8_t add_ext;     /* is_add_reg with an extended register: the
                            bits sign-extended (8, 16, 32; 0: none) */
    uint8_t add_shift;   /* ... and the shift after it */
    /* RSP_UNKNOWN by a register (AArch64's `mov x12, #N; sub sp, sp,
     * x12` for a frame too large for an immediate): the register in
     * `base`, added (1) or subtracted (-1). */
    int8_t sp_by_reg;
};

/* Decodes [begin, end) of `bytes` (mapped at begin) into insns (at most
 * `max`). Stops at the first undecodable byte: *count instructions were
 * decoded, *stopped_at is the address where decoding stopped (end when
 * all was decoded). */
enum cfi_status synth_decode(struct synth_decoder *decoder,
                             const uint8_t *bytes, uint64_t begin,
                             uint64_t end, struct synth_insn *insns,
                             size_t max, size_t *count, uint64_t *stopped_at);

/* A call-site range of the LSDA and its landing pad. */
struct synth_pad {
    uint64_t begin, end; /* the calls in [begin, end) ... */
    uint64_t pad;        /* ... may land here */
};
#define SYNTH_MAX_PADS 4096

/* The landing pads of the FDE (at most max); 0 when it has no LSDA or the
 * LSDA cannot be read (then its pads stay unreached). */
size_t synth_landing_pads(const struct cfi_file *file,
                          const struct cfi_fde *fde, struct synth_pad *pads,
                          size_t max);

/* GNU_args_size: `size` bytes of pushed arguments from `from` on. */
struct synth_args {
    uint64_t from;
    uint64_t size;
};
size_t synth_args_sizes(const struct cfi_fde *fde, struct synth_args *out,
                        size_t max);

/* The entry of `reg` among the state's auxiliary frame registers, or -1. */
int synth_aux_find(const struct synth_state *state, int reg);

/* The index of `addr` among insns[0..n) (sorted), or -1. */
long synth_insn_index(const struct synth_insn *insns, size_t n, uint64_t addr);

/* Index of a register among the machine's followed ones (`saved`), or
 * -1. */
int synth_saved_index(const struct synth_machine *machine, int reg);

/* Whether `reg` is written by `in` (writes, vwrites). */
bool synth_insn_writes(const struct synth_insn *in, int reg);

/* The kind of code no FDE covers at [at, at+len) (`code` its bytes):
 * NO_FDE or a known deviation, as the decoder's architecture knows them
 * (decode.h, known_gap). */
enum synth_kind synth_known_gap(const struct synth_decoder *decoder,
                                const uint8_t *code, uint64_t at,
                                uint64_t len);

/* The bytes of the file image at [addr, addr+len), or NULL. */
const uint8_t *synth_file_bytes(const struct cfi_file *file, uint64_t addr,
                                uint64_t len);

#endif
