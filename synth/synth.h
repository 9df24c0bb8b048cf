/* SPDX-License-Identifier: MIT */
/* synth.h — call frame information synthesised from the machine code and
 * compared with the IL.
 *
 * This module promises:
 *   1. a decoder of an FDE's address range into x86-64 or AArch64
 *      instructions (capstone 4), each classified by what it does to the
 *      stack, one file per architecture behind one interface;
 *   2. an abstract interpretation over the FDE's control-flow graph that
 *      gives, at every instruction, the CFA as rsp+h or rbp+f and where
 *      each callee-saved register's value is (still in the register, at a
 *      slot CFA+s, both, or lost), or says why it cannot ("not
 *      analysable", with a reason: nothing is guessed);
 *   3. the comparison of that state with the IL's row at every
 *      instruction boundary (the CFA, the return address, rbx rbp r12-r15),
 *      each disagreement classified and coalesced into address ranges;
 *   4. the synthesised table as IL (struct sem_fde_il), for the IL
 *      printers and the eh_elf compiler.
 *
 * The abstract state (CFA = the caller's rsp just before its call):
 *   rsp      CFA - h, or unknown (with the reason);
 *   rbp      CFA - f (the frame pointer), or not a frame pointer;
 *   aux      the other registers each holding CFA - a (`mov %rsp,%rbx`
 *            before a realignment, as in ld.so's _dl_runtime_resolve;
 *            `lea 0x68(%rsp),%rsi` in OpenSSL; `mov %rsp,%r15` kept
 *            across a call whose arguments are pointers to locals, then
 *            `mov %r15,%rsp`): room for all 14, so none is forgotten;
 *   r ∈ {rbx, rbp, r12..r15}: in_reg (r holds the caller's value),
 *            slot s (CFA+s holds it), both, or neither (lost);
 *   the return address is at CFA-8 while the frame exists.
 * At a join point, differing heights make rsp unknown there ("heights
 * conflict at a join"), differing slots make the slot unknown. A call's
 * fall-through edge is weaker than a jump's: when both reach an
 * instruction with conflicting states, the call is taken not to return,
 * and the fixpoint starts again without that fall-through (the states it
 * left behind on the way are gone with it).
 *
 * Landing pads (from the FDE's LSDA, .gcc_except_table) are successors
 * of the calls of their call-site range, with the state at the call.
 *
 * On AArch64 "rsp" is sp and "rbp" x29 (struct synth_machine); the
 * followed registers are x19-x30 and v8-v15, the return address is x30's
 * (written by bl and blr, saved and restored as the others), the entry
 * height is 0, and the state also says whether x30 is signed and with
 * which key (RA_SIGN_STATE, compared with the IL's column 34 and the
 * CIE's 'B').
 *
 * The entry state of an FDE is the ABI's (rsp = CFA-8, every register
 * in place) when the IL's first row is cfa=rsp+8; otherwise (a function's
 * cold part, split off with its frame already built) the first row is
 * taken as the entry state and the FDE is counted as "entered mid-frame".
 *
 * Depends on cfi/ and semantics/ only (and libcapstone).
 */
#ifndef CFISEM_SYNTH_H
#define CFISEM_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../cfi/cfi.h"
#include "../semantics/sem.h"

/* Bounds on the input: instructions per FDE, fixpoint visits per
 * instruction, jump table entries, restarts of the fixpoint. */
#define SYNTH_MAX_INSNS 200000
#define SYNTH_VISITS_PER_INSN 64
#define SYNTH_MAX_TABLE 1024
#define SYNTH_MAX_RESTARTS 32 /* calls taken not to return, per FDE */
#define SYNTH_NAUX 14 /* the GPRs other than rsp and rbp */

/* The registers whose caller's value is followed (struct synth_machine,
 * `saved`): at most this many (AArch64: x19-x30 and v8-v15). */
#define SYNTH_MAX_SAVED 20

/* What the analysis reads of the machine, from the file's architecture
 * descriptor (arch.h): the stack pointer and frame pointer (sp, fp: the
 * "rsp" and "rbp" of the state below), the stack height at a function's
 * entry (x86-64: 8, the return address the call pushed; AArch64: 0, it
 * is in x30), and the registers whose caller's value is followed: the
 * callee-saved list, then the return-address column when it is a
 * register of its own (AArch64's x30), then the registers from 64 up
 * whose ABI default is "same value" (AArch64's v8-v15), in that order.
 * ra_on_stack: the return address is at CFA - entry_height for the
 * whole function (x86-64), not a followed register. The syscall facts
 * let a clone be told apart (the number's register, the new stack's
 * argument, clone's and clone3's numbers). */
struct synth_machine {
    const struct cfi_arch *arch;
    unsigned sp, fp;
    int64_t entry_height;
    bool ra_on_stack;
    int nsaved;
    uint8_t saved[SYNTH_MAX_SAVED];
    int syscall_nr, syscall_stack;
    int64_t clone_nr, clone3_nr;
};

/* Why the code cannot be analysed at an instruction:
 * X(NAME, name, text). */
#define SYNTH_REASONS(X)                                                       \
    X(NONE, none, "analysed")                                                  \
    X(UNDECODABLE, undecodable, "instruction cannot be decoded")               \
    X(UNREACHED, unreached, "not reached from the FDE's start")                \
    X(JOIN_CONFLICT, join_conflict, "stack heights conflict at a join")        \
    X(RSP_UNKNOWN, rsp_unknown, "rsp written with an unknown value")           \
    X(REALIGNED, realigned, "stack realigned without a frame pointer")         \
    X(INDIRECT_JUMP, indirect_jump,                                            \
      "indirect jump whose targets are not found")                             \
    X(MID_INSN_TARGET, mid_insn_target,                                        \
      "jump into the middle of an instruction")                                \
    X(CFA_EXPRESSION, cfa_expression, "the IL's CFA is an expression")         \
    X(CFA_OTHER_REG, cfa_other_reg,                                            \
      "the IL's CFA is on a register not known to hold a CFA offset")         \
    X(OUTERMOST, outermost,                                                    \
      "the IL marks the outermost frame (rip undefined)")                      \
    X(RULE_NOT_COMPARED, rule_not_compared,                                    \
      "a register rule of a kind not compared")                                \
    X(REGS_CONFLICT, regs_conflict,                                            \
      "callee-saved register states conflict at a join")                       \
    X(REG_LOST, reg_lost, "callee-saved register overwritten without a save")  \
    X(NO_IL, no_il, "the FDE's CFI does not translate")                        \
    X(ENTRY_UNKNOWN, entry_unknown,                                            \
      "the entry state cannot be taken from the IL")                           \
    X(FIXPOINT_LIMIT, fixpoint_limit, "fixpoint iteration limit reached")      \
    X(TOO_LARGE, too_large, "FDE larger than the instruction limit")           \
    X(NOT_MAPPED, not_mapped, "FDE range outside the file's loaded segments") \
    X(NEW_STACK, new_stack,                                                    \
      "after clone, the child runs on the stack it was given")                 \
    X(RSP_RULE, rsp_rule,                                                      \
      "the IL gives rsp its own rule: its CFA is not the caller's rsp")       \
    X(AFTER_NORETURN, after_noreturn,                                          \
      "dead code: a call's fall-through that runs straight into a trap")      \
    X(RA_SIGN_CONFLICT, ra_sign_conflict,                                      \
      "return-address signing states conflict at a join")

enum synth_reason {
#define SYNTH_REASON_ENUM(name, id, text) SYNTH_REASON_##name,
    SYNTH_REASONS(SYNTH_REASON_ENUM)
#undef SYNTH_REASON_ENUM
    SYNTH_REASON_COUNT
};
const char *synth_reason_text(enum synth_reason reason);
const char *synth_reason_name(enum synth_reason reason); /* "join_conflict" */
/* Whether a reason or kind can occur on `arch` (the return-address
 * signing ones only where it signs return addresses): the lists the
 * JSON report gives in full. */
bool synth_reason_applies(enum synth_reason reason,
                          const struct cfi_arch *arch);

/* How the IL disagrees with the code at an instruction: X(NAME, name, text). */
#define SYNTH_KINDS(X)                                                         \
    X(CFA_HEIGHT, cfa_height, "CFA height wrong")                              \
    X(SAVE_SLOT, save_slot, "save slot wrong")                                 \
    X(RESTORED_EARLY, restored_early, "register restored too early")           \
    X(RESTORED_LATE, restored_late, "register restored too late")              \
    X(NO_FDE, no_fde, "code covered by no FDE")                                \
    X(NO_FDE_CRTSTUFF, no_fde_crtstuff,                                        \
      "code covered by no FDE, known: GCC's crtstuff.c (deregister_tm_clones, " \
      "register_tm_clones, __do_global_dtors_aux, frame_dummy), whose "       \
      "crtbegin.o and crtbeginS.o carry no .eh_frame")                        \
    X(NOT_ANALYSABLE, not_analysable, "code not analysable")                   \
    X(RA_SIGN_STATE, ra_sign_state, "RA_SIGN_STATE or its key wrong")         \
    X(NO_FDE_CALL_WEAK_FN, no_fde_call_weak_fn,                                \
      "code covered by no FDE, known: glibc's call_weak_fn (AArch64 crti.o "   \
      "and crt1.o), written without CFI")

enum synth_kind {
#define SYNTH_KIND_ENUM(name, id, text) SYNTH_##name,
    SYNTH_KINDS(SYNTH_KIND_ENUM)
#undef SYNTH_KIND_ENUM
    SYNTH_KIND_COUNT
};
const char *synth_kind_text(enum synth_kind kind);
const char *synth_kind_name(enum synth_kind kind); /* "cfa_height" */
bool synth_kind_applies(enum synth_kind kind, const struct cfi_arch *arch);
/* Whether a kind is a known deviation of the toolchain, counted but not
 * a disagreement (no_fde_crtstuff, no_fde_call_weak_fn). */
bool synth_kind_known(enum synth_kind kind);

/* A range of instructions [begin, end) with one classification. `reg` is
 * the register involved (CFA_HEIGHT, NOT_ANALYSABLE: -1; SAVE_SLOT with
 * 16 on x86-64: the return address rule; RA_SIGN_STATE: the
 * architecture's RA_SIGN_STATE column). `il` and `synth` say what each side has
 * at `begin` ("rsp+16", "[cfa-24]", "in register"). */
struct synth_range {
    uint64_t begin;
    uint64_t end;
    enum synth_kind kind;
    enum synth_reason reason; /* NOT_ANALYSABLE */
    int reg;
    char il[48];
    char synth[48];
};

/* The synthesised state at one instruction. */
enum synth_cfa_base { SYNTH_BASE_NONE, SYNTH_BASE_RSP, SYNTH_BASE_RBP };
struct synth_reg_state {
    bool in_reg;       /* the register holds the caller's value */
    bool slot_valid;   /* CFA+slot holds it */
    bool saved;        /* a save was seen on the way here */
    bool restored;     /* a restore was seen after the save */
    int64_t slot;
};
struct synth_state {
    bool reached;
    bool weak;                 /* reached only by call fall-through edges */
    uint32_t weak_call;        /* weak: the call (instruction index) whose
                                  fall-through it came by */
    bool rsp_known;
    bool rbp_known;
    bool regs_conflict;
    uint8_t naux;
    int8_t aux_reg[SYNTH_NAUX]; /* other registers holding CFA - aux_a */
    enum synth_reason rsp_reason; /* why rsp is unknown */
    int64_t h;                 /* CFA - rsp */
    int64_t f;                 /* CFA - rbp */
    int64_t aux_a[SYNTH_NAUX];
    /* AArch64's return-address signing: x30 signed (paciasp, pacibsp)
     * or not (autiasp, autibsp), the key that signed it, or states that
     * disagree at a join. */
    uint8_t ra_sign;           /* enum synth_ra_sign */
    struct synth_reg_state regs[SYNTH_MAX_SAVED];
};
enum synth_ra_sign {
    SYNTH_RA_NOT_SIGNED,
    SYNTH_RA_SIGNED_A,
    SYNTH_RA_SIGNED_B,
    SYNTH_RA_CONFLICT,
};

/* Where analysed code leaves its range for: a direct call, or a direct
 * jump with the state it jumps with (a tail call, or a jump to a cold
 * part). */
struct synth_exit {
    uint64_t target;
    bool is_call;
    struct synth_state state; /* jumps: the state at the target */
};

/* The result for one FDE. */
struct synth_fde {
    const struct cfi_fde *fde;
    struct synth_machine machine; /* the decoder's */
    size_t ninsns;
    uint64_t *addrs;          /* ninsns + 1: each instruction's address,
                                 then the end of the last */
    struct synth_state *states;
    enum synth_reason *limits; /* per instruction: why not compared */
    bool *dead;               /* per instruction: a call's fall-through into
                                 a trap (a difference there is excused) */
    struct synth_range *ranges; /* disagreements and limits, by address */
    size_t nranges;
    bool entered_mid_frame;
    bool fully_analysed;      /* no limit at any instruction */
    size_t jump_tables;       /* indirect jumps resolved */
    size_t landing_pads;      /* call sites with a landing pad (LSDA) */
    size_t noreturn_calls;    /* calls taken not to return */
    struct synth_exit *exits; /* reached direct calls and jumps out */
    size_t nexits;
    bool no_fde;              /* code no FDE covers (synth_analyse_code):
                                 nothing to compare with */
    bool outermost;           /* the entry point: the table has rip
                                 undefined (no caller) */
    uint64_t code_end;        /* the end of the code analysed */
};

/* The decoder of one architecture (a capstone handle, its register map
 * and the machine's facts): x86-64 (synth/decode_x86.c) or AArch64
 * (synth/decode_aarch64.c); CFI_E_UNSUPPORTED for another. */
struct synth_decoder;
enum cfi_status synth_decoder_new(struct synth_decoder **decoder,
                                  const struct cfi_arch *arch,
                                  struct cfi_diag *diag);
void synth_decoder_free(struct synth_decoder *decoder);
const struct synth_machine *synth_decoder_machine(
    const struct synth_decoder *decoder);

/* The machine code of [begin, end) as text, one line per instruction,
 * as capstone prints it (x86-64 in Intel syntax, "push rbp"), for a
 * reader. bytes_missing:
 * the file holds no bytes there (no loaded segment has them: a
 * relocatable object, .debug_frame only), nothing listed; otherwise
 * decoding stops at the first undecodable byte (stopped_at < end) or at
 * SYNTH_MAX_INSNS. CFI_E_NOMEM only. */
#define SYNTH_INSN_TEXT 200 /* a mnemonic (32) and operands (160) */
struct synth_listed_insn {
    uint64_t addr;
    uint8_t len;
    uint8_t bytes[16];
    char text[SYNTH_INSN_TEXT];
};
struct synth_listing {
    struct synth_listed_insn *insns;
    size_t count;
    bool bytes_missing;
    uint64_t stopped_at;
};
enum cfi_status synth_disassemble(struct synth_decoder *decoder,
                                  const struct cfi_file *file,
                                  uint64_t begin, uint64_t end,
                                  struct synth_listing *out);
void synth_listing_free(struct synth_listing *listing);

/* Analyses one FDE against its IL (`il` NULL: translation failed; the FDE
 * is then analysed from the ABI entry state and not compared). Fills
 * *out, which synth_fde_free releases. CFI_E_NOMEM only: everything the
 * input can do wrong is a reason in *out. */
enum cfi_status synth_analyse_fde(struct synth_decoder *decoder,
                                  const struct cfi_file *file,
                                  const struct cfi_fde *fde,
                                  const struct sem_fde_il *il,
                                  struct synth_fde *out);
void synth_fde_free(struct synth_fde *fde);

/* Code no FDE covers, analysed over range->[pc_begin, pc_end) (`range`
 * stands for an FDE: no CIE, no instructions) from `entry` (NULL: the
 * ABI entry state). Nothing is compared; the analysis ends after the
 * last instruction reached (out->code_end, ninsns). */
enum cfi_status synth_analyse_code(struct synth_decoder *decoder,
                                   const struct cfi_file *file,
                                   const struct cfi_fde *range,
                                   const struct synth_state *entry,
                                   struct synth_fde *out);

/* The synthesised table of an analysed FDE as IL: one range per run of
 * equal rows, covering the FDE; an instruction with no known CFA (not
 * reached, not analysable) has a row with no CFA rule. The table owns
 * its rows; synth_table_free releases them. */
struct synth_table {
    struct sem_fde_il il;
    struct sem_row *rows;
    struct sem_reg_rule *rules;
};
enum cfi_status synth_fde_table(const struct synth_fde *fde,
                                struct synth_table *table);
void synth_table_free(struct synth_table *table);

/* The functions of the code no FDE covers, each analysed from its start
 * (synth_analyse_code) and kept as its synthesised table (synth/code.c):
 * the starts are the function symbols (.symtab, .dynsym), the entry point
 * (its table has rip undefined: the outermost frame), the init and fini
 * arrays' entries and the executable sections' starts, `targets` (the
 * direct calls and jumps out of the FDEs' analyses, their exits) and the
 * calls and jumps of the functions found, to a fixpoint. A function runs
 * from its start to the next start, FDE, symbol end or segment end, and
 * ends after its last instruction reached. */
enum synth_origin {
    SYNTH_FROM_SYMBOL,
    SYNTH_FROM_ENTRY,
    SYNTH_FROM_ARRAY,         /* an init or fini array, a section start */
    SYNTH_FROM_CALL,
    SYNTH_FROM_JUMP,
};
const char *synth_origin_name(enum synth_origin origin); /* "symbol" */

struct synth_code_function {
    struct cfi_fde range;     /* [pc_begin, pc_end): the code analysed */
    enum synth_origin origin;
    const char *name;         /* the symbol's, or NULL */
    bool entered_mid_frame;   /* from a jump with its frame built */
    bool fully_analysed;
    size_t ninsns;
    struct synth_table table; /* its il.fde is &range */
};
struct synth_code {
    struct synth_code_function *functions; /* by address */
    size_t count;
};
enum cfi_status synth_code_find(struct synth_decoder *decoder,
                                const struct cfi_file *file,
                                const uint64_t *targets, size_t ntargets,
                                struct synth_code *code);
void synth_code_free(struct synth_code *code);

/* Code covered by no FDE: the bytes between consecutive FDEs of an
 * executable segment (from the first FDE to the last) that are not
 * padding (nop, int3, zero). Appended to *ranges (kind NO_FDE, or
 * NO_FDE_CRTSTUFF for a range that is GCC's crtstuff.c functions: it
 * starts as deregister_tm_clones does and is no longer than crtbeginS.o's
 * .text, SYNTH_CRTSTUFF_MAX bytes; on AArch64 NO_FDE_CALL_WEAK_FN for
 * glibc's call_weak_fn, its five instructions exactly). Both known
 * kinds are deviations, not disagreements (synth_kind_known). */
#define SYNTH_CRTSTUFF_MAX 192
enum cfi_status synth_uncovered(struct synth_decoder *decoder,
                                const struct cfi_file *file,
                                struct synth_range **ranges, size_t *count);

/* The whole file's report. */
struct synth_report {
    size_t nfdes;
    size_t fully_analysed;
    size_t entered_mid_frame;
    size_t not_translated;
    size_t ninsns;
    size_t jump_tables;
    size_t noreturn_calls;
    size_t fdes_with_disagreement;
    /* instruction counts and range counts by kind and by reason */
    size_t kind_ranges[SYNTH_KIND_COUNT];
    size_t reason_insns[SYNTH_REASON_COUNT];
    size_t reason_fdes[SYNTH_REASON_COUNT];
};
void synth_report_add(struct synth_report *report, const struct synth_fde *fde);

/* One line per range: "0x1234-0x1238 save_slot rbx il=[cfa-16]
 * synth=[cfa-24]", the register named as on `arch`. */
void synth_print_range(FILE *out, const struct cfi_arch *arch,
                       const struct synth_range *range);

#endif
