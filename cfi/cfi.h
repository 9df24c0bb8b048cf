/* SPDX-License-Identifier: MIT */
/* cfi.h — the shared vocabulary of cfisem.
 *
 * Everything the three engines (interp/, semantics/, compile/) and the
 * harness (diff/) have in common lives here, and nothing else does:
 *
 *   - the records of call frame information as they are in the file
 *     (struct cfi_cie, struct cfi_fde), with their raw instruction bytes;
 *   - the loaded file (struct cfi_file): every CIE and FDE of .eh_frame and
 *     .debug_frame, PC → FDE lookup, and the ELF image for the memory model;
 *   - a register file (struct cfi_regs), the memory reader callback and the
 *     result of unwinding one frame (struct cfi_frame);
 *   - status codes and diagnostics.
 *
 * This module never interprets instructions: decoding them is each engine's
 * own business, so that a decoding bug in one engine shows up as a
 * disagreement with the others.
 *
 * Target: little-endian, 64-bit ELF. What the registers are and what a
 * register with no rule holds is the architecture's (arch.h); every
 * loaded file and every CIE carries its descriptor.
 */
#ifndef CFISEM_CFI_H
#define CFISEM_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch.h"

/* ------------------------------------------------------------------ */
/* Status and diagnostics                                              */
/* ------------------------------------------------------------------ */

/* The outcome of any operation. Every value but CFI_OK is an error
 * class; engines must agree on the class for the same input.
 * CFI_E_INTERNAL is apart: a state that no input can reach (a switch
 * default past every case, a table entry the code itself filled) says
 * that cfisem is wrong, not the input; it is never an agreement. It is
 * last, so that the other classes keep their numbers (eh_elf.h's). */
#define CFI_STATUS_LIST(X)                                                  \
    X(CFI_OK, ok, "ok")                                                     \
    X(CFI_E_NO_FDE, no_fde, "no FDE covers the address")                    \
    X(CFI_E_MALFORMED, malformed, "malformed CFI")                          \
    X(CFI_E_UNSUPPORTED, unsupported, "unsupported")                        \
    X(CFI_E_MEMORY, memory, "memory fault")                                 \
    X(CFI_E_EXPR, expr, "expression fault")                                 \
    X(CFI_E_EXPR_STACK, expr_stack, "expression stack overflow")            \
    X(CFI_E_STEP_LIMIT, step_limit, "step limit reached")                   \
    X(CFI_E_REG_UNKNOWN, reg_unknown, "register value unknown")             \
    X(CFI_E_IO, io, "cannot read file")                                     \
    X(CFI_E_NOT_ELF, not_elf, "not an ELF file")                            \
    X(CFI_E_NO_CFI, no_cfi, "no call frame information")                    \
    X(CFI_E_NOMEM, nomem, "out of memory")                                  \
    X(CFI_E_INTERNAL, internal, "internal error")

enum cfi_status {
#define CFI_STATUS_ENUM(name, short, text) name,
    CFI_STATUS_LIST(CFI_STATUS_ENUM)
#undef CFI_STATUS_ENUM
    CFI_STATUS_COUNT
};

/* A short fixed text for the class ("memory fault"). */
const char *cfi_status_text(enum cfi_status status);
/* The enumerator's name without prefix, for JSON ("memory", "no_fde"). */
const char *cfi_status_name(enum cfi_status status);

/* Where an error was found and what it is. `message` is always a fixed
 * string (never freed). `offset` is a section or byte offset whose meaning
 * the reporting function documents; CFI_NO_OFFSET when unknown. `reg` names
 * the register involved, or -1. */
#define CFI_NO_OFFSET UINT64_MAX
struct cfi_diag {
    enum cfi_status status;
    const char *message;
    uint64_t offset;
    int reg;
};

/* Fill *diag (when non-NULL) and return `status`. */
enum cfi_status cfi_fail(struct cfi_diag *diag, enum cfi_status status,
                         uint64_t offset, const char *message);

/* Why a file could not be opened or read, as a fixed string naming the
 * system's reason ("cannot open file: no such file or directory") for
 * errno value `error`. */
const char *cfi_errno_text(int error);

/* CFI_OK when `path` is a regular file that can be opened for reading;
 * else CFI_E_IO, the message saying why (cfi_errno_text, "is a
 * directory", "not a regular file"). Never waits: a FIFO is refused. */
enum cfi_status cfi_check_regular_file(const char *path,
                                       struct cfi_diag *diag);

/* mkdir -p: `dir` and the folders above it (mode 0755 less the umask);
 * true when all exist afterwards as folders or were made (errno says why
 * not otherwise). */
bool cfi_make_dirs(const char *dir);

/* ------------------------------------------------------------------ */
/* Registers                                                           */
/* ------------------------------------------------------------------ */

/* DWARF register numbers handled: 0 .. CFI_NREGS-1. A register number at or
 * above this bound in CFI is malformed input. x86-64 numbers stop at 130
 * (k7 = 125); 128 covers every register an x86-64 compiler emits. */
#define CFI_NREGS 128

/* The x86-64 DWARF register numbers the ABI gives meaning to, for code
 * that is x86-64's alone (the eh_elf ABI, the v1 ABI, ptrace, capstone).
 * Code for every architecture reads its file's descriptor (arch.h):
 * arch->sp, arch->pc, arch->ra_column, arch->nreported. */
enum {
    CFI_REG_RAX = 0, CFI_REG_RDX = 1, CFI_REG_RCX = 2, CFI_REG_RBX = 3,
    CFI_REG_RSI = 4, CFI_REG_RDI = 5, CFI_REG_RBP = 6, CFI_REG_RSP = 7,
    CFI_REG_R8 = 8, CFI_REG_R15 = 15,
    CFI_REG_RIP = 16, /* the return address column on x86-64 */
    CFI_NGPRS = 17    /* registers 0..16: x86-64's reported registers,
                         which the eh_elf ABI (EH_ELF_NREGS) fixes */
};

/* x86-64's names (cfi_arch_x86_64): "rax".."r15", "rip", "xmm0".., or
 * NULL when the number has no name. */
const char *cfi_reg_name(unsigned reg);
/* A register's name or "rN"; writes into buf (>= 8 bytes) when needed. */
const char *cfi_reg_label(unsigned reg, char *buf, size_t size);
/* The register's width in bytes in the psABI's mapping: 8 for rax..rip,
 * mm0-7, rflags, fs.base, gs.base and k0-7; 16 for xmm0-31; 10 for
 * st0-7; 4 for mxcsr; 2 for the segment selectors (es..gs), tr, ldtr,
 * fcw and fsw; 0 for a number with no register. The engines read every
 * saved register as 8 bytes (step 5): only 8-byte registers are
 * modelled. */
unsigned cfi_reg_size(unsigned reg);
/* Parses "rbx", "r3", "xmm0" or "3" into a DWARF number; -1 if unknown. */
int cfi_reg_parse(const char *text, size_t len);

/* Each register of a register file is a value, undefined, or unknown (the
 * caller of the unwinder did not say; a rule that needs it fails). */
enum cfi_reg_status {
    CFI_REG_UNKNOWN = 0,
    CFI_REG_VALUE,
    CFI_REG_UNDEFINED,
};

struct cfi_regs {
    uint64_t value[CFI_NREGS];
    uint8_t status[CFI_NREGS]; /* enum cfi_reg_status */
};

void cfi_regs_clear(struct cfi_regs *regs); /* all unknown */
void cfi_regs_set(struct cfi_regs *regs, unsigned reg, uint64_t value);

/* ------------------------------------------------------------------ */
/* Memory                                                              */
/* ------------------------------------------------------------------ */

/* Reads `size` bytes (1, 2, 4 or 8) little-endian at `addr` into *value
 * (zero-extended). Returns CFI_OK or CFI_E_MEMORY. Engines read memory
 * only through this callback. */
typedef enum cfi_status (*cfi_read_fn)(void *env, uint64_t addr,
                                       unsigned size, uint64_t *value);

struct cfi_memory {
    cfi_read_fn read;
    void *env;
};

/* ------------------------------------------------------------------ */
/* Unwinding one frame: the result every engine computes               */
/* ------------------------------------------------------------------ */

/* Unwinding one frame: what every engine computes, exactly.
 *
 *  1. Lookup PC. request->caller_frame says the PC is a return address
 *     (the frame is not the innermost one and the frame below it is not a
 *     signal frame): then the row is looked up at PC-1, both to find the
 *     FDE and to find the row in it (libunwind#54: a call may be the last
 *     instruction of its function, and the instruction after a noreturn
 *     call may change the CFA). Otherwise at PC.
 *  2. FDE: .eh_frame first, then .debug_frame (cfi_file_lookup). None:
 *     CFI_E_NO_FDE.
 *  3. Row: the CIE's initial instructions, then the FDE's, give the row in
 *     effect at the lookup PC. The whole of both programs must be well
 *     formed (the table is defined by the whole program): an error in the
 *     instructions anywhere in the CIE or FDE, even after the lookup PC,
 *     makes the result an error (CFI_E_MALFORMED or CFI_E_UNSUPPORTED).
 *     The error reported is the first in program order: the CIE's
 *     instructions, then the FDE's, one by one, each decoded and then
 *     checked against its rule's preconditions. An FDE whose end is below
 *     its start is malformed, whatever the PC. def_cfa and def_cfa_offset
 *     take an unsigned offset: 2^63 and above are valid (mod 2^64). An
 *     unknown DW_EH_PE pointer format is CFI_E_UNSUPPORTED.
 *  4. CFA: reg+off is the callee's reg plus off (mod 2^64); expr(E) is the
 *     value E leaves on top of the stack, started empty. No CFA rule:
 *     CFI_E_MALFORMED.
 *  5. Registers 0 .. CFI_NREGS-1, in increasing number:
 *       no rule        the ABI default (cfi_arch_default of the CIE's
 *                      architecture);
 *       undefined      undefined;
 *       same_value     the callee's register, as it is (value, undefined
 *                      or unknown);
 *       offset(n)      the 8 bytes at CFA+n;
 *       val_offset(n)  CFA+n;
 *       register(m)    the callee's register m, as it is;
 *       expression(E)  the 8 bytes at the address E leaves, the CFA pushed
 *                      on the stack first;
 *       val_expression(E) the value E leaves, the CFA pushed first.
 *     Every rule reads the callee's registers, never a result being
 *     computed (libunwind#43). Reading a register that is unknown or
 *     undefined (CFA reg, DW_OP_breg*) is CFI_E_REG_UNKNOWN with diag.reg
 *     set. A memory fault is CFI_E_MEMORY. The first error ends the
 *     evaluation, so the order above decides which error is reported.
 *  6. The caller's PC: "return_address_register ... indicates which column
 *     in the rule table represents the return address" (DWARF 5 §6.4.1).
 *     The column and the register holding the caller's PC are two
 *     things (arch.h: arch->ra_column, arch->pc): on x86-64 both are 16,
 *     rip; on AArch64 the column is x30's and the PC register is 32.
 *     When the CIE's column is not the PC register, the caller's PC is
 *     what step 5 computed for that column (value, undefined or
 *     unknown), whatever the PC register's own rule says. Then, on an
 *     architecture with return-address signing (arch->ra_state: AArch64's
 *     RA_SIGN_STATE, whose rule step 5 evaluated like any register's),
 *     when the caller's PC is a value and that state is a value other
 *     than 0 (not signed), the PC's pointer-authentication code is
 *     stripped (cfi_strip_pac, with request->va_bits), whichever column
 *     it came from (libgcc strips the return address it read, whatever
 *     its column); the column's own register keeps the signed value. A
 *     state that is not a value makes the caller's PC unknown.
 *  7. frame->signal_frame is the 'S' flag of the FDE's CIE: the caller's
 *     PC is then exact, and the next frame is not a caller_frame.
 *     frame->ra_b_key is its 'B' flag (AArch64): a signed return address
 *     was signed with the B key, not the A key.
 *
 * DWARF expressions (DWARF 5 §2.5, §6.4.2), evaluated on a stack of 64-bit
 * values with at most CFI_EXPR_STACK_MAX entries (else
 * CFI_E_EXPR_STACK) and at most CFI_EXPR_STEP_LIMIT operations executed
 * (else CFI_E_STEP_LIMIT). Arithmetic wraps mod 2^64. div is signed
 * (INT64_MIN / -1 = INT64_MIN), mod unsigned; by zero: CFI_E_EXPR. shl and
 * shr by 64 or more give 0, shra gives the sign. Comparisons are signed.
 * skip/bra jump from the end of their operand; a target outside
 * [0, length] is CFI_E_EXPR (length itself ends the expression). deref
 * reads 8 bytes, deref_size n reads n bytes (1..8; sizes other than
 * 1, 2, 4, 8 one byte at a time), zero-extended. Stack underflow, an
 * unknown opcode, a truncated operand, bregx/regx past CFI_NREGS, an empty
 * stack at the end, and every operation not allowed in CFI are
 * CFI_E_EXPR. Allowed: lit*, addr, const*, dup, drop, over, pick, swap,
 * rot, deref, deref_size, abs, and, div, minus, mod, mul, neg, not, or,
 * plus, plus_uconst, shl, shr, shra, xor, eq, ge, gt, le, lt, ne, skip,
 * bra, breg*, bregx, nop. Not allowed: everything else (call2, call4,
 * call_ref, push_object_address: §6.4.2 forbids them; call_frame_cfa: the
 * CFA is what is being defined, or already pushed; reg*, regx,
 * implicit_value, stack_value, piece, bit_piece, implicit_pointer: they
 * describe locations, not values; fbreg: no frame base; and the rest:
 * xderef*, form_tls_address, addrx, constx, entry_value, typed and GNU
 * operations). Every operation executed counts towards the step limit,
 * nop included; the pushed CFA counts towards the stack bound. A bra not
 * taken does not check its target. An expression is checked only when it
 * is evaluated, and an empty one with the CFA pushed yields the CFA. */
#define CFI_EXPR_STACK_MAX 64
#define CFI_EXPR_STEP_LIMIT 10000

/* The result of unwinding one frame. When status is CFI_OK, `cfa` is the
 * canonical frame address and `caller` holds the caller's registers, each a
 * value, undefined, or unknown (a callee register the request did not
 * give, carried over by same_value, a register rule or the ABI default).
 * Otherwise status is the error class, `diag` says where and why, and
 * `caller` must not be read.
 *
 * Where, diag.offset: for an error of the CIE's or FDE's program
 * (CFI_E_MALFORMED, CFI_E_UNSUPPORTED), the section offset of the faulty
 * instruction, or of the record. For an error of evaluating a DWARF
 * expression (CFI_E_EXPR, CFI_E_EXPR_STACK, CFI_E_STEP_LIMIT, and
 * CFI_E_MEMORY or CFI_E_REG_UNKNOWN when an operation read the memory or
 * the register), the byte offset inside that expression of the failing
 * operation's opcode: 0 for its first operation; for the step limit, the
 * operation that was not executed; for an empty stack at the end, the
 * expression's length. The expression is the CFA's or the rule's being
 * evaluated (step 4, then step 5's order). CFI_NO_OFFSET when there is no
 * such position (no FDE, a saved slot that faults, the CFA register
 * unknown) or the engine does not report it (an eh_elf's expressions,
 * the outside libraries). cfi_diag_in_expression tells the two meanings
 * apart. */
struct cfi_frame {
    enum cfi_status status;
    struct cfi_diag diag;
    uint64_t cfa;
    bool signal_frame;
    bool ra_b_key;            /* AArch64: the CIE's 'B' (step 7) */
    struct cfi_regs caller;
};

/* A frame's diag.offset is an offset inside a DWARF expression (struct
 * cfi_frame), not a section offset: the status is an expression's, or a
 * memory or register error that an operation raised. */
bool cfi_diag_in_expression(const struct cfi_diag *diag);

/* Step 1's lookup PC: a return address (caller_frame) is looked up at
 * PC-1, since the call may be the last instruction of its function, and
 * the instruction after a noreturn call may belong to another row or
 * FDE; the innermost frame, and the frame above a signal frame, at PC. */
static inline uint64_t cfi_lookup_pc(uint64_t pc, bool caller_frame)
{
    return caller_frame ? pc - 1 : pc;
}

/* What unwinding a frame is given: the PC, whether it is a return
 * address, the callee's registers and memory. */
struct cfi_request {
    uint64_t pc;
    bool caller_frame;
    const struct cfi_regs *callee;
    struct cfi_memory memory;
    /* The virtual-address bits of a code address, for stripping a signed
     * return address (step 6); 0: CFI_VA_BITS_DEFAULT. */
    unsigned va_bits;
};

/* ------------------------------------------------------------------ */
/* CIE and FDE records                                                 */
/* ------------------------------------------------------------------ */

enum cfi_section {
    CFI_EH_FRAME,
    CFI_DEBUG_FRAME,
};
const char *cfi_section_name(enum cfi_section section); /* ".eh_frame" */

/* DW_EH_PE_* pointer encodings (LSB Core, .eh_frame). */
enum {
    CFI_PE_ABSPTR = 0x00, CFI_PE_ULEB128 = 0x01, CFI_PE_UDATA2 = 0x02,
    CFI_PE_UDATA4 = 0x03, CFI_PE_UDATA8 = 0x04, CFI_PE_SLEB128 = 0x09,
    CFI_PE_SDATA2 = 0x0a, CFI_PE_SDATA4 = 0x0b, CFI_PE_SDATA8 = 0x0c,
    CFI_PE_PCREL = 0x10, CFI_PE_TEXTREL = 0x20, CFI_PE_DATAREL = 0x30,
    CFI_PE_FUNCREL = 0x40, CFI_PE_ALIGNED = 0x50, CFI_PE_INDIRECT = 0x80,
    CFI_PE_OMIT = 0xff,
};

#define CFI_AUGMENTATION_MAX 16

/* A Common Information Entry, as recorded in the file. */
struct cfi_cie {
    enum cfi_section section;
    uint64_t offset;          /* section offset of the record */
    uint64_t length;          /* bytes of the record after the length field */
    uint8_t version;          /* 1 (.eh_frame), 1, 3 or 4 (.debug_frame) */
    char augmentation[CFI_AUGMENTATION_MAX]; /* "zR", "zPLR", "zRS", "" */
    const uint8_t *augmentation_data;        /* after 'z', else NULL */
    size_t augmentation_data_len;
    uint64_t code_align;      /* code alignment factor */
    int64_t data_align;       /* data alignment factor */
    uint64_t ra_column;       /* return address register */
    const struct cfi_arch *arch; /* its file's architecture */
    uint8_t address_size;     /* 8 */
    uint8_t fde_encoding;     /* 'R', else CFI_PE_ABSPTR */
    uint8_t lsda_encoding;    /* 'L', else CFI_PE_OMIT */
    uint8_t personality_encoding; /* 'P', else CFI_PE_OMIT */
    uint64_t personality;     /* 'P': the decoded pointer */
    bool signal_frame;        /* 'S' */
    bool ra_b_key;            /* 'B' (AArch64): signed with the B key */
    bool mte_tagged;          /* 'G' (AArch64): may tag its stack (MTE) */
    const uint8_t *instructions;  /* initial instructions */
    size_t instructions_len;
    uint64_t instructions_offset; /* section offset of instructions[0] */
};

/* A Frame Description Entry, with its CIE. */
struct cfi_fde {
    enum cfi_section section;
    uint64_t offset;          /* section offset of the record */
    uint64_t length;          /* bytes of the record after the length field */
    uint64_t cie_offset;      /* section offset of its CIE */
    uint64_t pc_begin;        /* file address of the first instruction */
    uint64_t pc_end;          /* one past the last */
    const struct cfi_cie *cie;
    const uint8_t *augmentation_data; /* e.g. the LSDA pointer */
    size_t augmentation_data_len;
    const uint8_t *instructions;
    size_t instructions_len;
    uint64_t instructions_offset; /* section offset of instructions[0] */
    /* File address of instructions[0], needed to decode a DW_CFA_set_loc
     * operand encoded pc-relative (.eh_frame 'R' with DW_EH_PE_pcrel). */
    uint64_t instructions_addr;
};

/* True when every byte of the FDE's program is DW_CFA_nop. */
bool cfi_fde_is_nop_only(const struct cfi_fde *fde);

/* ------------------------------------------------------------------ */
/* Loaded files                                                        */
/* ------------------------------------------------------------------ */

/* A loadable segment of the ELF image: `filesz` bytes of the file mapped at
 * `vaddr`, followed by zeros up to `memsz`. */
struct cfi_segment {
    uint64_t vaddr;
    uint64_t memsz;
    uint64_t filesz;
    const uint8_t *bytes;
    bool executable;
};

/* Two FDEs of one section whose PC ranges overlap. */
struct cfi_overlap {
    const struct cfi_fde *first;
    const struct cfi_fde *second;
};

/* A frame section's bytes as the loader read them: decompressed when the
 * file compresses it, and with its relocations applied in a relocatable
 * object. An outside reader of the section is shown these bytes, so that
 * it reads what cfisem read. */
struct cfi_section_bytes {
    const uint8_t *bytes;     /* NULL: no such section, or no bytes */
    uint64_t size;
    uint64_t addr;            /* sh_addr */
    uint64_t file_offset;     /* sh_offset */
    bool relocated;           /* differs from the file's bytes there */
};

/* Whether a separate debug file was read (cfi_file_open_debug). */
enum cfi_debug_state {
    CFI_DEBUG_NONE,     /* not looked for (the file has its own
                           .debug_frame, or cfi_file_open), or the file
                           names none, or only a build-id not found */
    CFI_DEBUG_FOUND,    /* its .debug_frame joined the file's FDEs */
    CFI_DEBUG_MISSING,  /* .gnu_debuglink names one found nowhere */
};

/* A file's call frame information and image. Owns all memory it points to:
 * instruction and augmentation bytes stay valid until cfi_file_close. */
struct cfi_file {
    char *path;
    const struct cfi_arch *arch; /* chosen from e_machine */
    struct cfi_cie *cies;
    size_t ncies;
    /* Every FDE: those of .eh_frame first, then those of .debug_frame, each
     * group sorted by pc_begin (then by section offset). */
    struct cfi_fde *fdes;
    size_t nfdes;
    size_t n_eh_frame;        /* fdes[0 .. n_eh_frame) are .eh_frame */
    struct cfi_overlap *overlaps;
    size_t noverlaps;
    struct cfi_segment *segments;
    size_t nsegments;
    uint64_t eh_frame_addr;   /* file address of .eh_frame, 0 if absent */
    uint64_t eh_frame_size;
    uint64_t eh_frame_hdr_addr; /* of .eh_frame_hdr, 0 if absent */
    uint64_t eh_frame_hdr_size;
    bool relocatable;         /* ET_REL */
    uint64_t entry;           /* e_entry, the entry point (0: none) */
    struct cfi_section_bytes frame_bytes[2]; /* by enum cfi_section */
    /* The separate debug file (cfi_file_open_debug): FOUND, debug_path
     * is the file whose .debug_frame was read; MISSING, debug_path is
     * the name .gnu_debuglink gives, found nowhere. */
    enum cfi_debug_state debug_state;
    char *debug_path;
    /* Private storage. */
    uint8_t *image;           /* the whole file */
    size_t image_size;
    struct cfi_arena *arena;
};

/* Loads every CIE and FDE of .eh_frame and .debug_frame through libdwarf,
 * checked record by record against our own parser (cfi_file_from_section's),
 * and the loadable segments. A CIE libdwarf 20210528 cannot read although
 * it is valid (an augmentation without 'z' and without data, "S", which
 * gas writes in .debug_frame) makes our parser alone read the file. In a
 * relocatable object the frame sections are relocated first. On failure
 * returns the error class and fills *diag; the message names the problem,
 * and diag->offset is the offset in the section named by the message when
 * known. A file with neither section is CFI_E_NO_CFI; sections that hold
 * no record (an .eh_frame of only its zero terminator) are valid, and the
 * file has no CIE and no FDE. */
enum cfi_status cfi_file_open(const char *path, struct cfi_file **file,
                              struct cfi_diag *diag);
void cfi_file_close(struct cfi_file *file);

/* Where a separate debug file is looked for: the debug directories, in
 * order, then CFI_DEBUG_DIR (gdb's debug-file-directory). */
#define CFI_DEBUG_DIR "/usr/lib/debug"
struct cfi_debug_search {
    const char *const *dirs;
    size_t ndirs;
};
/* As cfi_file_open, and when the file has no .debug_frame bytes of its
 * own (stripped: absent or SHT_NOBITS), its .debug_frame is read from
 * its separate debug file, as gdb finds it:
 *   1. by build-id: DIR/.build-id/NN/REST.debug for each debug
 *      directory DIR (NN the first byte in hex, REST the others), whose
 *      own build-id must be the same;
 *   2. by .gnu_debuglink NAME: FILEDIR/NAME (not the file itself),
 *      FILEDIR/.debug/NAME, then DIR/FILEDIR/NAME for each debug
 *      directory (FILEDIR the file's absolute directory), whose CRC-32
 *      must be the one .gnu_debuglink gives.
 * The first candidate that is a readable ELF file of the same machine
 * and matches is taken; its .debug_frame (decompressed when compressed)
 * joins the FDE set as the file's .debug_frame, and everything else
 * (segments, .eh_frame, symbols) stays the file's. file->debug_state
 * says what was found. `search` NULL: CFI_DEBUG_DIR alone. */
enum cfi_status cfi_file_open_debug(const char *path,
                                    const struct cfi_debug_search *search,
                                    struct cfi_file **file,
                                    struct cfi_diag *diag);
/* As cfi_file_open, but a file with neither frame section opens too, with
 * no CIE and no FDE (its segments, entry point and symbols are there):
 * for the code of files that have no CFI at all. */
enum cfi_status cfi_file_open_code(const char *path, struct cfi_file **file,
                                   struct cfi_diag *diag);

/* A function symbol of the file (.symtab and .dynsym: STT_FUNC and
 * STT_GNU_IFUNC, defined, with a non-zero value). `name` points into the
 * file's image, or is "" when the string table does not hold it. */
struct cfi_symbol {
    uint64_t value;
    uint64_t size;
    const char *name;
};
/* Every function symbol, sorted by value, one per value (the first with
 * a size, else the first). *symbols is malloc'd (NULL when none).
 * CFI_E_NOMEM only: a symbol table that does not fit in the file is
 * skipped. */
enum cfi_status cfi_file_functions(const struct cfi_file *file,
                                   struct cfi_symbol **symbols,
                                   size_t *count);
/* The function of `symbols` (sorted, as cfi_file_functions gives them)
 * that holds `addr`: the last one whose value is at most addr, when addr
 * lies before its end (value + size; a symbol of size 0 holds every
 * address up to the next symbol). NULL when none; *offset is then 0. */
const struct cfi_symbol *cfi_symbol_find(const struct cfi_symbol *symbols,
                                         size_t count, uint64_t addr,
                                         uint64_t *offset);
/* Code addresses the file names outside its symbol tables: each entry of
 * .preinit_array, .init_array and .fini_array (crtstuff's frame_dummy and
 * __do_global_dtors_aux, stripped or not) and the start of each
 * executable section (.init, .plt, .text, .fini). *addrs is malloc'd
 * (NULL when none); CFI_E_NOMEM only. */
enum cfi_status cfi_file_code_starts(const struct cfi_file *file,
                                     uint64_t **addrs, size_t *count);

/* The FDE whose [pc_begin, pc_end) holds pc, in `section`; NULL when none.
 * Binary search. When FDEs overlap, the one with the greatest pc_begin
 * (then the first in the section) wins; overlaps are listed at load. */
const struct cfi_fde *cfi_file_lookup_in(const struct cfi_file *file,
                                         enum cfi_section section,
                                         uint64_t pc);
/* .eh_frame first, then .debug_frame. */
const struct cfi_fde *cfi_file_lookup(const struct cfi_file *file,
                                      uint64_t pc);

/* The segment holding `addr`, or NULL. */
const struct cfi_segment *cfi_file_segment(const struct cfi_file *file,
                                           uint64_t addr);
/* The file's first program header of `type` (PT_INTERP, PT_DYNAMIC,
 * ...; <elf.h>) as a segment, its bytes the file's (`filesz` of them,
 * checked to lie in the file); false when there is none. The loadable
 * ones are file->segments. */
bool cfi_file_program_header(const struct cfi_file *file, uint32_t type,
                             struct cfi_segment *out);

/* ------------------------------------------------------------------ */
/* CFI from bytes in memory (tests, fuzzing, generated programs)       */
/* ------------------------------------------------------------------ */

/* Parses `size` bytes laid out as a .eh_frame or .debug_frame section
 * (CIE and FDE records, 32- or 64-bit lengths; a zero length terminates
 * .eh_frame, and is 4 bytes of padding in .debug_frame), located at file
 * address `addr`. The bytes are copied. The result has no path, no
 * segments, and is read as x86-64's (cfi_arch_x86_64); no record at all
 * is a file with no FDE. Errors as cfi_file_open, with
 * diag->offset the offset in `bytes`. Our own parser, independent of
 * libdwarf. */
enum cfi_status cfi_file_from_section(const uint8_t *bytes, size_t size,
                                      enum cfi_section section, uint64_t addr,
                                      struct cfi_file **file,
                                      struct cfi_diag *diag);

/* ------------------------------------------------------------------ */
/* Little-endian helpers for memory callbacks                           */
/* ------------------------------------------------------------------ */

static inline uint64_t cfi_load_le(const uint8_t *p, unsigned size)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < size; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

#endif
