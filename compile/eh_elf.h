/* SPDX-License-Identifier: MIT */
/* eh_elf.h — the ABI of the eh_elfs cfisem generates.
 *
 * An eh_elf is a shared object, built from one ELF file's call frame
 * information (.eh_frame and .debug_frame), whose code unwinds one frame
 * at any address of that file without reading DWARF at run time. This
 * header is all a tool needs to use one: it depends on <stdint.h> only.
 *
 * Two flavours exist:
 *
 *   full  (cfisem compile --abi full, the default): the machine's DWARF
 *         registers (x86-64: 0-16; AArch64: 0-34, x0-x30, sp, pc,
 *         elr_mode, ra_sign_state) and the CFA, the status of each
 *         register (value, undefined, unknown), error classes, a memory
 *         reader that may fail. Entry point: eh_elf_unwind.
 *   v1    (cfisem compile --abi v1, x86-64 only): the first published
 *         eh_elf ABI (2018-2019), kept so that tools built for it can
 *         use our output. Entry point: _eh_elf. See the end of this
 *         header for what it cannot express.
 *
 * Every eh_elf cfisem builds, of either flavour, exports
 *
 *   const char eh_elf_ident[];          "cfisem eh_elf full" or
 *                                       "cfisem eh_elf v1"
 *   const uint32_t eh_elf_abi_version;  EH_ELF_ABI_VERSION
 *   const struct eh_elf_object_id eh_elf_object_id;
 *                                       the ELF file it was built from
 *   const uint16_t eh_elf_machine;      EH_ELF_MACHINE: the machine of
 *                                       its code and register file
 *
 * so that a loader tells an eh_elf from a foreign shared object (no
 * eh_elf_ident), its flavour (the ident), refuses a version it was not
 * written for, an eh_elf of another machine than its own (its register
 * file is not the one the loader was built with), and an eh_elf of
 * another file, or of another version of the file (a stale eh_elf
 * answers for code that is no longer there). The version changes
 * whenever anything in this header changes meaning. The eh_elfs of the
 * 2018-2019 tools define _eh_elf only: they carry no stamp, and nothing
 * can tell which file they were built from.
 *
 * Machines. An eh_elf is code of its file's machine, built by that
 * machine's C compiler: the declarations below give the register file
 * of the machine the including code is compiled for (__aarch64__:
 * AArch64's, else x86-64's), so that an eh_elf and the consumer that
 * calls it agree when both are built for the same machine. The
 * generated C refuses to compile for another one. cfisem, an x86-64
 * program, runs the eh_elfs of AArch64 files with its eh_elf runner
 * (compile/runner/), an AArch64 program run by qemu-aarch64, to which
 * it speaks over a socket (compile/runner/protocol.h).
 *
 * Addresses. An eh_elf answers for addresses of its ELF file as readelf
 * prints them (file addresses: the load bias of a shared object is not
 * included). The caller subtracts the load bias first.
 *
 * The lookup PC. The PC given to the entry point is the address whose
 * row is wanted. For a caller frame (a return address, when the frame
 * below is not a signal frame) the caller passes PC-1: a call may be the
 * last instruction of its function, and the instruction after a noreturn
 * call may belong to another row (libunwind#54). The eh_elf does not
 * subtract anything itself; the result's signal_frame flag tells the
 * caller whether the next frame's PC is exact.
 *
 * Unwinding one frame (what eh_elf_unwind computes, exactly as the
 * reference semantics of cfisem, cfi/cfi.h "Unwinding one frame"):
 *   1. Find the row of the lookup PC: .eh_frame first, then .debug_frame;
 *      when FDEs overlap the one with the greatest start wins. No FDE:
 *      EH_ELF_E_NO_FDE. An FDE whose instructions are malformed anywhere
 *      (even after the PC) or unsupported: that error, for every PC
 *      inside it, with error_offset the section offset of the faulty
 *      instruction.
 *   2. The CFA: register + offset (mod 2^64), or a DWARF expression.
 *      A row without CFA rule: EH_ELF_E_MALFORMED.
 *   3. Every register's rule, in increasing DWARF number, reading the
 *      callee's registers (never a result being computed):
 *        no rule          the ABI default. x86-64 (System V): rsp is
 *                         the CFA, rbx rbp r12-r15 keep the callee's
 *                         value (and status), every other register is
 *                         undefined. AArch64 (aadwarf64, AAPCS64): sp
 *                         is the CFA, x19-x29 and v8-v15 keep the
 *                         callee's, ra_sign_state is 0, every other is
 *                         undefined;
 *        undefined        undefined;
 *        same_value       the callee's register, status included;
 *        offset(n)        the 8 bytes at CFA+n;
 *        val_offset(n)    CFA+n;
 *        register(m)      the callee's register m, status included;
 *        expression(E)    the 8 bytes at the address E leaves (the CFA
 *                         pushed first);
 *        val_expression(E) the value E leaves (the CFA pushed first).
 *      Rules of registers past the reported ones (EH_ELF_NREGS and
 *      above) are evaluated too, for their errors (a read that faults,
 *      an expression that fails); their values are not reported.
 *   4. The caller's PC: when the CIE's return address column is not the
 *      PC register (AArch64: column x30, PC register 32), the PC
 *      register is what step 3 gave that column. On AArch64, a PC that
 *      holds a value loses its pointer-authentication code (the bits
 *      above env->va_bits become copies of bit 55, as XPACI does) when
 *      the caller's ra_sign_state is a value other than 0, and is
 *      unknown when ra_sign_state is not a value; x30 keeps the signed
 *      value.
 *   The first error ends the evaluation. A rule that needs the value of
 *   a callee register that is unknown or undefined (the CFA register,
 *   DW_OP_breg*) fails with EH_ELF_E_REG_UNKNOWN and error_reg.
 *
 * DWARF expressions (DWARF 5 §2.5, §6.4.2) are compiled to C; they behave
 * as an evaluator with a stack of at most EH_ELF_EXPR_STACK_MAX 64-bit
 * entries (more: EH_ELF_E_EXPR_STACK) executing at most
 * EH_ELF_EXPR_STEP_LIMIT operations (more: EH_ELF_E_STEP_LIMIT).
 * Arithmetic wraps mod 2^64; div is signed (INT64_MIN / -1 = INT64_MIN),
 * mod unsigned, both by zero fail; shifts by 64 or more give 0 (shra: the
 * sign); comparisons are signed; skip/bra jump from the end of their
 * operand, a target outside [0, length] fails (length ends the
 * expression); deref reads 8 bytes, deref_size n reads n bytes (1-8;
 * sizes other than 1, 2, 4, 8 one byte at a time), zero-extended. Stack
 * underflow, an unknown or truncated operation, bregx of a register
 * number >= EH_ELF_DWARF_REGS, an empty stack at the end, and every
 * operation DWARF does not allow in CFI fail with EH_ELF_E_EXPR, at the
 * point where they would execute (an operation never reached is no
 * error).
 *
 * Memory. Every memory read goes through env->read_memory, 8 bytes for
 * offset and expression rules and DW_OP_deref, except the 8-byte reads
 * inside the window the caller offers (env->direct_base, direct_span:
 * since version 3), which are plain loads: the caller vouches that
 * those bytes are mapped and hold what read_memory would give (a
 * thread's own stack, checked readable), and saves a call per saved
 * register. A caller that offers no window (direct_span 0) sees every
 * read. An eh_elf has no state: calls are reentrant, and may run in
 * parallel with distinct frames.
 *
 * Versions. 3 added the window to struct eh_elf_env; 4 added the stamp,
 * eh_elf_object_id; the rest is as in 2. The AArch64 register file and
 * eh_elf_machine came within version 4: x86-64's layout and meaning are
 * as they were, so x86-64 eh_elfs built before and after them are
 * interchangeable (one without eh_elf_machine is x86-64's), and no
 * AArch64 eh_elf existed before (a consumer built earlier cannot load
 * one: dlopen refuses the machine). A consumer of this header may
 * call eh_elfs of every version from EH_ELF_ABI_VERSION_MIN to
 * EH_ELF_ABI_VERSION, and refuses the others: those of versions 2 and 3
 * would unwind as well, but carry no stamp, so that which file they were
 * built from cannot be checked; they are to be rebuilt. A consumer built
 * for version 2 or 3 refuses those of version 4.
 */
#ifndef EH_ELF_H
#define EH_ELF_H

/* <eh_elf:declarations> The generated code of every eh_elf starts with a
 * copy of the text from here to the closing marker. */
#include <stdint.h>

#define EH_ELF_ABI_VERSION 4u
#define EH_ELF_ABI_VERSION_MIN 4u
#define EH_ELF_IDENT_FULL "cfisem eh_elf full"
#define EH_ELF_IDENT_V1 "cfisem eh_elf v1"

/* The machine an eh_elf's code and register file are for: its ELF
 * e_machine, which it exports as eh_elf_machine. The layout below is
 * chosen by the compiler that builds the eh_elf (and the consumer that
 * calls it): the two must be for the same machine. */
#define EH_ELF_MACHINE_X86_64 62
#define EH_ELF_MACHINE_AARCH64 183

#if defined(__aarch64__)
/* AArch64: DWARF registers 0-34 (x0-x30, sp, pc, elr_mode,
 * ra_sign_state) are reported, one bit each in a 64-bit mask. */
#define EH_ELF_MACHINE EH_ELF_MACHINE_AARCH64
#define EH_ELF_NREGS 35
typedef uint64_t eh_elf_mask_t;
#else
/* DWARF registers 0-16 (rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip) are
 * reported; rules may name registers up to EH_ELF_DWARF_REGS - 1. */
#define EH_ELF_MACHINE EH_ELF_MACHINE_X86_64
#define EH_ELF_NREGS 17
typedef uint32_t eh_elf_mask_t;
#endif
#define EH_ELF_DWARF_REGS 128
#define EH_ELF_EXPR_STACK_MAX 64
#define EH_ELF_EXPR_STEP_LIMIT 10000

/* The result of a call. The numbers are those of cfisem's error classes
 * (cfi/cfi.h enum cfi_status) for the same meaning. */
enum eh_elf_error {
    EH_ELF_OK = 0,
    EH_ELF_E_NO_FDE = 1,       /* no FDE covers the lookup PC */
    EH_ELF_E_MALFORMED = 2,    /* malformed CFI: bad instructions in the
                                  PC's FDE or CIE, a row with no CFA rule */
    EH_ELF_E_UNSUPPORTED = 3,  /* CFI the generator does not compile (e.g.
                                  DW_CFA_GNU_window_save, an unknown
                                  address encoding) */
    EH_ELF_E_MEMORY = 4,       /* read_memory failed */
    EH_ELF_E_EXPR = 5,         /* a DWARF expression failed */
    EH_ELF_E_EXPR_STACK = 6,   /* expression stack overflow */
    EH_ELF_E_STEP_LIMIT = 7,   /* an expression executed too many steps */
    EH_ELF_E_REG_UNKNOWN = 8,  /* a rule needs a callee register whose
                                  value is unknown or undefined: error_reg */
};

/* What read_register answers for a register. */
enum eh_elf_reg_status {
    EH_ELF_REG_UNKNOWN = 0,
    EH_ELF_REG_VALUE = 1,
    EH_ELF_REG_UNDEFINED = 2,
};

/* A register file of registers 0 to EH_ELF_NREGS - 1. Bit r of `known`
 * set: value[r] is register r's value. Bit r of `undefined` set: register
 * r is undefined (not recoverable; for the PC, the end of the stack).
 * Neither: unknown (the caller of the unwinder did not say). Never both.
 * value[r] is unspecified unless bit r of `known` is set. */
struct eh_elf_regs {
    uint64_t value[EH_ELF_NREGS];
    eh_elf_mask_t known;
    eh_elf_mask_t undefined;
};

/* What the eh_elf may ask its caller. read_memory reads `size` bytes (1,
 * 2, 4 or 8) little-endian at `addr` into *value, zero-extended, and
 * returns 0, or anything else when the memory cannot be read.
 * read_register gives the callee's register `reg` for EH_ELF_NREGS <=
 * reg < EH_ELF_DWARF_REGS (a rule rarely needs one) and returns its status;
 * NULL means every such register is unknown. Both get `data`.
 * An 8-byte read at addr with addr - direct_base < direct_span (unsigned
 * arithmetic) is a plain load instead: [direct_base, direct_base +
 * direct_span + 7) must be readable and hold what read_memory would
 * give; direct_span 0 offers no window. AArch64: va_bits is the number
 * of virtual-address bits of a code address, for stripping the
 * pointer-authentication code of a signed return address (0: 48). */
struct eh_elf_env {
    int (*read_memory)(void *data, uint64_t addr, unsigned size,
                       uint64_t *value);
    int (*read_register)(void *data, unsigned reg, uint64_t *value);
    void *data;
    uint64_t direct_base;      /* version 3 */
    uint64_t direct_span;
#if defined(__aarch64__)
    uint32_t va_bits;
    uint32_t reserved;         /* zero */
#endif
};

/* The result of unwinding one frame. When error is EH_ELF_OK: cfa, the
 * caller's registers and signal_frame (the FDE's CIE has the 'S'
 * augmentation: the caller's PC is exact, its frame is not looked up at
 * PC-1); on AArch64 also ra_b_key (the CIE has the 'B' augmentation: a
 * signed return address was signed with the B key). Otherwise error_reg
 * is the register for EH_ELF_E_REG_UNKNOWN (else -1), error_offset the
 * section offset of the faulty instruction for an error in the FDE's or
 * CIE's instructions (else UINT64_MAX), and the other fields are
 * unspecified. */
struct eh_elf_frame {
    uint32_t error;            /* enum eh_elf_error */
    int32_t error_reg;
    uint64_t error_offset;
    uint64_t cfa;
    struct eh_elf_regs caller;
    uint32_t signal_frame;
#if defined(__aarch64__)
    uint32_t ra_b_key;
#else
    uint32_t reserved;         /* zero */
#endif
};

/* The full ABI's entry point: unwinds one frame of the callee whose
 * registers are *callee, at lookup PC `pc`, into *frame, and returns
 * frame->error. callee and frame must not overlap. */
typedef int eh_elf_unwind_fn(uint64_t pc, const struct eh_elf_regs *callee,
                             const struct eh_elf_env *env,
                             struct eh_elf_frame *frame);
eh_elf_unwind_fn eh_elf_unwind;

extern const char eh_elf_ident[];
extern const uint32_t eh_elf_abi_version;
/* EH_ELF_MACHINE_X86_64 or EH_ELF_MACHINE_AARCH64; an eh_elf without
 * this symbol is x86-64's. */
extern const uint16_t eh_elf_machine;

/* Which ELF file an eh_elf was built from (since version 4). kind
 * EH_ELF_OBJECT_ID_BUILD_ID: id holds the file's GNU build-id (the
 * NT_GNU_BUILD_ID note's descriptor, `size` bytes); kind
 * EH_ELF_OBJECT_ID_FRAME_SHA256: the file has no build-id, and id holds
 * the SHA-256 of its frame sections (.eh_frame, then .debug_frame, as
 * they are in the file), 32 bytes. A consumer compares the stamp with the
 * object it is about to unwind and refuses an eh_elf of another object. */
#define EH_ELF_OBJECT_ID_MAX 64
enum eh_elf_object_id_kind {
    EH_ELF_OBJECT_ID_NONE = 0,
    EH_ELF_OBJECT_ID_BUILD_ID = 1,
    EH_ELF_OBJECT_ID_FRAME_SHA256 = 2,
};
struct eh_elf_object_id {
    uint32_t kind;             /* enum eh_elf_object_id_kind */
    uint32_t size;             /* bytes of id in use */
    uint8_t id[EH_ELF_OBJECT_ID_MAX];
};
extern const struct eh_elf_object_id eh_elf_object_id;

/* The v1 ABI (2018-2019), with its published names. `flags` has bit
 * 1 << UNWF_x set for each register the context defines, and bit
 * 1 << UNWF_ERROR when unwinding failed (the registers are then zero).
 * The result's rsp is the CFA. The eh_elf reads memory with `deref`
 * (8 bytes at an address; it cannot fail). */
typedef enum {
    UNWF_RIP = 0,
    UNWF_RSP = 1,
    UNWF_RBP = 2,
    UNWF_RBX = 3,
    UNWF_ERROR = 7
} unwind_flags_t;

typedef struct {
    uint8_t flags;
    uintptr_t rip, rsp, rbp, rbx;
} unwind_context_t;

typedef uintptr_t (*deref_func_t)(uintptr_t);

typedef unwind_context_t eh_elf_v1_fn(unwind_context_t ctx, uintptr_t pc,
                                      deref_func_t deref);
eh_elf_v1_fn _eh_elf;
/* </eh_elf:declarations> */

/* What the v1 flavour computes: the lookup PC's row as above; the CFA;
 * then the rules of rbx, rbp and of the return address column (step 6:
 * the caller's rip is that column's value; column 16 unless the CIE names
 * another, DWARF 5 §6.4.1), in that order, where the callee's registers
 * are the four of ctx whose flag is set, every other register unknown.
 * rsp is the CFA. The return address column's rule is read as a rule for
 * rip: its same_value is the callee's value of that column, its missing
 * rule that column's ABI default (undefined for rcx, say: a clear rip
 * flag). A flag is clear when the result is undefined or unknown. The
 * error bit is set for every error class above (no FDE, malformed,
 * unsupported, an expression error, a register the CFA or those rules
 * need and ctx lacks), and where the rule of rip, rbp or rbx is
 * DW_CFA_register of a register ctx does not carry (rip=rdi at __vfork):
 * the value is well defined, but a clear flag would mean "undefined" (the
 * end of the stack) for rip and "the callee's value" for rbp and rbx,
 * both wrong; the error bit lets a consumer fall back to DWARF.
 *
 * What v1 cannot express:
 *   - registers other than rip, rsp, rbp, rbx, in or out: a rule whose
 *     value is another register's, or that reads one (an expression, the
 *     CFA), gives the error bit, and the other registers' rules are not
 *     evaluated (their errors go unseen);
 *   - unknown versus undefined: both are a clear flag; a clear rbp or
 *     rbx flag means "not restored" (the callee's value);
 *   - which error: one bit;
 *   - a failed read: deref cannot fail (a caller that must know records
 *     the failure itself, as cfisem's loader does); deref_size n reads
 *     the 8-byte word at the address and keeps its n low bytes;
 *   - the signal frame flag, and a DWARF rule for rsp (rsp is always the
 *     CFA). */

#endif
