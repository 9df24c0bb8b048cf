/* SPDX-License-Identifier: MIT */
/* oracle_libdw.c — see oracle_libdw.h. */
#define _GNU_SOURCE /* RTLD_DEEPBIND */
#include "oracle_libdw.h"

#include <dlfcn.h>
#include <errno.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "semantics/sem.h"

/* AddressSanitizer refuses RTLD_DEEPBIND (see oracle_libdw.h).
 *
 * RTLD_NODELETE: libdw stays mapped after dlclose. Its error texts
 * (dwarf_errmsg) point into its own read-only data, and an answer carries
 * them as fixed strings past the engine's close: the report is printed,
 * or sent to the parent process, after the engines are closed. */
#if defined(__SANITIZE_ADDRESS__)
#define LIBDW_DLOPEN_FLAGS (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LIBDW_DLOPEN_FLAGS (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)
#endif
#endif
#ifndef LIBDW_DLOPEN_FLAGS
#define LIBDW_DLOPEN_FLAGS                                                  \
    (RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND | RTLD_NODELETE)
#endif

/* libdw's error numbers (libdw/libdwP.h, 0.188) that the adapter tells
 * apart: no FDE at the address, and out of memory. */
enum { LIBDW_E_NOMEM = 10, LIBDW_E_NO_MATCH = 37 };

/* The functions used, resolved with dlsym: X(name, return, parameters). */
#define LIBDW_FUNCTIONS(X)                                                  \
    X(dwarf_getcfi_elf, Dwarf_CFI *, (Elf *))                               \
    X(dwarf_cfi_end, int, (Dwarf_CFI *))                                    \
    X(dwarf_begin_elf, Dwarf *, (Elf *, Dwarf_Cmd, Elf_Scn *))              \
    X(dwarf_end, int, (Dwarf *))                                            \
    X(dwarf_getcfi, Dwarf_CFI *, (Dwarf *))                                 \
    X(dwarf_cfi_addrframe, int, (Dwarf_CFI *, Dwarf_Addr, Dwarf_Frame **))  \
    X(dwarf_frame_info, int,                                                \
      (Dwarf_Frame *, Dwarf_Addr *, Dwarf_Addr *, bool *))                  \
    X(dwarf_frame_cfa, int, (Dwarf_Frame *, Dwarf_Op **, size_t *))         \
    X(dwarf_frame_register, int,                                            \
      (Dwarf_Frame *, int, Dwarf_Op *, Dwarf_Op **, size_t *))              \
    X(dwarf_errno, int, (void))                                             \
    X(dwarf_errmsg, const char *, (int))

struct libdw_api {
#define LIBDW_POINTER(name, ret, params) ret(*name) params;
    LIBDW_FUNCTIONS(LIBDW_POINTER)
#undef LIBDW_POINTER
};

struct engine_libdw {
    const struct cfi_file *file;
    void *handle;
    struct libdw_api dw;
    int fd;
    char *image;              /* a relocatable object's relocated copy */
    size_t image_size;
    Elf *elf;
    Dwarf_CFI *eh_frame;      /* dwarf_getcfi_elf: ended with dwarf_cfi_end */
    Dwarf *dwarf;             /* for .debug_frame */
    Dwarf_CFI *debug_frame;   /* owned by dwarf */
    /* The frame of the last lookup PC that had one (malloc'd by libdw):
     * a function of the PC alone, asked for each state of that PC in
     * turn, so it is looked up once for all of them. */
    Dwarf_Frame *memo_frame;
    uint64_t memo_pc;
};

static bool resolve(struct engine_libdw *ld)
{
    void *symbol;
#define LIBDW_RESOLVE(name, ret, params)                                    \
    if (!(symbol = dlsym(ld->handle, #name)))                              \
        return false;                                                       \
    memcpy(&ld->dw.name, &symbol, sizeof symbol);
    LIBDW_FUNCTIONS(LIBDW_RESOLVE)
#undef LIBDW_RESOLVE
    return true;
}

void engine_libdw_close(void *self)
{
    struct engine_libdw *ld = self;
    if (!ld)
        return;
    free(ld->memo_frame);
    if (ld->eh_frame)
        ld->dw.dwarf_cfi_end(ld->eh_frame);
    if (ld->dwarf)
        ld->dw.dwarf_end(ld->dwarf);
    if (ld->elf)
        elf_end(ld->elf);
    if (ld->fd >= 0)
        close(ld->fd);
    free(ld->image);
    if (ld->handle)
        dlclose(ld->handle);
    free(ld);
}

/* A relocatable object is shown to libdw as a copy of the file whose
 * frame sections hold the loader's relocated bytes (libdw reads them as
 * they are in the file, relocations not applied). False when out of
 * memory; a file that cannot be read whole is left to libelf. */
static bool relocated_image(struct engine_libdw *ld)
{
    struct stat st;
    if (fstat(ld->fd, &st) != 0 || st.st_size <= 0)
        return true;
    ld->image_size = (size_t)st.st_size;
    ld->image = malloc(ld->image_size);
    if (!ld->image)
        return false;
    size_t done = 0;
    while (done < ld->image_size) {
        ssize_t n = pread(ld->fd, ld->image + done, ld->image_size - done,
                          (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    for (int s = 0; s < 2 && done == ld->image_size; s++) {
        const struct cfi_section_bytes *shown = &ld->file->frame_bytes[s];
        if (shown->relocated && shown->file_offset <= done &&
            shown->size <= done - shown->file_offset)
            memcpy(ld->image + shown->file_offset, shown->bytes, shown->size);
    }
    if (done != ld->image_size) {
        free(ld->image);
        ld->image = NULL;
    }
    return true;
}

static enum cfi_status open_failed(struct engine_libdw *ld,
                                   struct cfi_diag *diag,
                                   enum cfi_status status, const char *text)
{
    engine_libdw_close(ld);
    return cfi_fail(diag, status, CFI_NO_OFFSET, text);
}

enum cfi_status engine_libdw_open(const struct cfi_file *file, void **self,
                                  struct cfi_diag *diag)
{
    *self = NULL;
    if (!file->path)
        return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                        "libdw: the file has no path to open");
    struct engine_libdw *ld = calloc(1, sizeof *ld);
    if (!ld)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    ld->fd = -1;
    ld->file = file;
    ld->handle = dlopen("libdw.so.1", LIBDW_DLOPEN_FLAGS);
    if (!ld->handle || !resolve(ld))
        return open_failed(ld, diag, CFI_E_UNSUPPORTED,
                           "libdw: cannot load libdw.so.1");
    ld->fd = open(file->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (ld->fd < 0)
        return open_failed(ld, diag, CFI_E_IO, "libdw: cannot open the file");
    elf_version(EV_CURRENT);
    if (file->relocatable && !relocated_image(ld))
        return open_failed(ld, diag, CFI_E_NOMEM, "out of memory");
    ld->elf = ld->image ? elf_memory(ld->image, ld->image_size)
                        : elf_begin(ld->fd, ELF_C_READ_MMAP, NULL);
    if (!ld->elf)
        return open_failed(ld, diag, CFI_E_UNSUPPORTED,
                           "libdw: libelf cannot read the file");
    ld->eh_frame = ld->dw.dwarf_getcfi_elf(ld->elf);
    ld->dwarf = ld->dw.dwarf_begin_elf(ld->elf, DWARF_C_READ, NULL);
    if (ld->dwarf)
        ld->debug_frame = ld->dw.dwarf_getcfi(ld->dwarf);
    if (!ld->eh_frame && !ld->debug_frame)
        return open_failed(ld, diag, CFI_E_UNSUPPORTED,
                           "libdw: no .eh_frame or .debug_frame");
    *self = ld;
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Answers                                                              */
/* ------------------------------------------------------------------ */

/* libdw's last error, in the class `status` unless it is out of memory. */
static enum cfi_status libdw_error(const struct engine_libdw *ld,
                                   struct engine_answer *answer,
                                   enum cfi_status status, int reg)
{
    int number = ld->dw.dwarf_errno();
    const char *text = ld->dw.dwarf_errmsg(number);
    if (number == LIBDW_E_NOMEM)
        status = CFI_E_NOMEM;
    return engine_answer_error(answer, status, text ? text : "libdw: error",
                               reg);
}

/* cfi.h step 2: .eh_frame first, then .debug_frame. */
static enum cfi_status find_frame(const struct engine_libdw *ld, uint64_t pc,
                                  Dwarf_Frame **frame,
                                  struct engine_answer *answer)
{
    Dwarf_CFI *sections[2] = {ld->eh_frame, ld->debug_frame};
    for (int s = 0; s < 2; s++) {
        if (!sections[s])
            continue;
        if (ld->dw.dwarf_cfi_addrframe(sections[s], pc, frame) == 0)
            return CFI_OK;
        if (ld->dw.dwarf_errno() != LIBDW_E_NO_MATCH)
            return libdw_error(ld, answer, CFI_E_MALFORMED, -1);
    }
    return engine_answer_error(answer, CFI_E_NO_FDE,
                               "no FDE covers the address", -1);
}

/* ------------------------------------------------------------------ */
/* Evaluating libdw's operations (cfi.h's expression rules)             */
/* ------------------------------------------------------------------ */

/* What evaluating a list of operations gives. */
enum eval {
    EVAL_OK,
    EVAL_FAILED,          /* an error of the frame, in machine.status */
    EVAL_NOT_COMPARABLE,  /* a jump libdw's operation list cannot place */
};

struct machine {
    const Dwarf_Op *ops;
    size_t begin, end;    /* the operations to run: ops[begin .. end) */
    uint64_t stack[CFI_EXPR_STACK_MAX];
    unsigned depth;
    unsigned steps;
    const struct cfi_regs *callee;
    struct cfi_memory memory;
    enum cfi_status status;
    const char *message;
    int reg;
};

static enum eval fail(struct machine *m, enum cfi_status status,
                      const char *message)
{
    m->status = status;
    m->message = message;
    return EVAL_FAILED;
}

static enum eval push(struct machine *m, uint64_t value)
{
    if (m->depth == CFI_EXPR_STACK_MAX)
        return fail(m, CFI_E_EXPR_STACK, "expression stack overflow");
    m->stack[m->depth++] = value;
    return EVAL_OK;
}

static enum eval pop(struct machine *m, uint64_t *value)
{
    if (m->depth == 0)
        return fail(m, CFI_E_EXPR, "expression stack underflow");
    *value = m->stack[--m->depth];
    return EVAL_OK;
}

static enum eval read_memory(struct machine *m, uint64_t addr, uint64_t size,
                             uint64_t *value)
{
    if (size == 0 || size > 8)
        return fail(m, CFI_E_EXPR, "deref_size out of range");
    *value = 0;
    bool whole = size == 1 || size == 2 || size == 4 || size == 8;
    for (uint64_t done = 0; done < size; done += whole ? size : 1) {
        uint64_t part;
        unsigned n = whole ? (unsigned)size : 1;
        if (m->memory.read(m->memory.env, addr + done, n, &part) != CFI_OK)
            return fail(m, CFI_E_MEMORY, "expression reads unreadable memory");
        *value |= part << (8 * done);
    }
    return EVAL_OK;
}

static enum eval callee_register(struct machine *m, uint64_t reg,
                                 uint64_t *value)
{
    if (reg >= CFI_NREGS)
        return fail(m, CFI_E_EXPR, "register number out of range");
    if (m->callee->status[reg] != CFI_REG_VALUE) {
        m->reg = (int)reg;
        return fail(m, CFI_E_REG_UNKNOWN,
                    "expression reads a register whose value is unknown");
    }
    *value = m->callee->value[reg];
    return EVAL_OK;
}

/* The encoded size of an operation whose operands libdw decoded: LEB128
 * operands counted at their shortest. */
static uint64_t leb_size(uint64_t value, bool is_signed)
{
    uint64_t size = 1;
    if (is_signed) {
        int64_t v = (int64_t)value;
        while (v >= 64 || v < -64) {
            v >>= 7;
            size++;
        }
        return size;
    }
    while (value >= 128) {
        value >>= 7;
        size++;
    }
    return size;
}

static uint64_t op_size(const Dwarf_Op *op)
{
    uint8_t a = op->atom;
    if (a >= DW_OP_breg0 && a <= DW_OP_breg31)
        return 1 + leb_size(op->number, true);
    switch (a) {
    case DW_OP_addr: case DW_OP_const8u: case DW_OP_const8s: return 9;
    case DW_OP_const1u: case DW_OP_const1s: case DW_OP_pick:
    case DW_OP_deref_size: return 2;
    case DW_OP_const2u: case DW_OP_const2s: case DW_OP_skip:
    case DW_OP_bra: return 3;
    case DW_OP_const4u: case DW_OP_const4s: return 5;
    case DW_OP_constu: case DW_OP_plus_uconst: return 1 + leb_size(op->number, false);
    case DW_OP_consts: return 1 + leb_size(op->number, true);
    case DW_OP_bregx:
        return 1 + leb_size(op->number, false) + leb_size(op->number2, true);
    default: return 1;
    }
}

/* The operation a skip or bra at index `at` jumps to (m->end for the
 * end of the expression). */
static enum eval jump(struct machine *m, size_t at, size_t *next)
{
    const Dwarf_Op *op = &m->ops[at];
    int64_t target = (int64_t)op->offset + 3 + (int16_t)op->number;
    if (target < 0)
        return fail(m, CFI_E_EXPR, "jump target outside the expression");
    for (size_t i = m->begin; i < m->end; i++)
        if (m->ops[i].offset == (uint64_t)target) {
            *next = i;
            return EVAL_OK;
        }
    const Dwarf_Op *last = &m->ops[m->end - 1];
    if ((uint64_t)target == last->offset + op_size(last)) {
        *next = m->end;
        return EVAL_OK;
    }
    return EVAL_NOT_COMPARABLE;
}

static int64_t as_signed(uint64_t v) { return (int64_t)v; }

/* Binary operations: the second entry (a) op the top (b). */
static enum eval binary(struct machine *m, uint8_t atom)
{
    uint64_t b, a;
    if (pop(m, &b) != EVAL_OK || pop(m, &a) != EVAL_OK)
        return EVAL_FAILED;
    uint64_t r;
    switch (atom) {
    case DW_OP_and: r = a & b; break;
    case DW_OP_or: r = a | b; break;
    case DW_OP_xor: r = a ^ b; break;
    case DW_OP_plus: r = a + b; break;
    case DW_OP_minus: r = a - b; break;
    case DW_OP_mul: r = a * b; break;
    case DW_OP_div:
        if (b == 0)
            return fail(m, CFI_E_EXPR, "division by zero");
        r = (as_signed(a) == INT64_MIN && as_signed(b) == -1)
            ? a : (uint64_t)(as_signed(a) / as_signed(b));
        break;
    case DW_OP_mod:
        if (b == 0)
            return fail(m, CFI_E_EXPR, "division by zero");
        r = a % b;
        break;
    case DW_OP_shl: r = b >= 64 ? 0 : a << b; break;
    case DW_OP_shr: r = b >= 64 ? 0 : a >> b; break;
    case DW_OP_shra:
        r = b >= 64 ? (as_signed(a) < 0 ? UINT64_MAX : 0)
                    : (uint64_t)(as_signed(a) >> b);
        break;
    case DW_OP_eq: r = a == b; break;
    case DW_OP_ne: r = a != b; break;
    case DW_OP_lt: r = as_signed(a) < as_signed(b); break;
    case DW_OP_le: r = as_signed(a) <= as_signed(b); break;
    case DW_OP_gt: r = as_signed(a) > as_signed(b); break;
    default: r = as_signed(a) >= as_signed(b); break; /* DW_OP_ge */
    }
    return push(m, r);
}

static bool is_binary(uint8_t a)
{
    switch (a) {
    case DW_OP_and: case DW_OP_or: case DW_OP_xor: case DW_OP_plus:
    case DW_OP_minus: case DW_OP_mul: case DW_OP_div: case DW_OP_mod:
    case DW_OP_shl: case DW_OP_shr: case DW_OP_shra: case DW_OP_eq:
    case DW_OP_ne: case DW_OP_lt: case DW_OP_le: case DW_OP_gt:
    case DW_OP_ge:
        return true;
    default:
        return false;
    }
}

/* Stack manipulation: dup, drop, over, pick, swap, rot. */
static enum eval stack_op(struct machine *m, const Dwarf_Op *op)
{
    uint64_t a, b, c;
    switch (op->atom) {
    case DW_OP_dup:
        return pop(m, &a) != EVAL_OK || push(m, a) != EVAL_OK ? EVAL_FAILED
                                                               : push(m, a);
    case DW_OP_drop:
        return pop(m, &a);
    case DW_OP_over:
    case DW_OP_pick: {
        uint64_t i = op->atom == DW_OP_over ? 1 : op->number;
        if (i >= m->depth)
            return fail(m, CFI_E_EXPR, "expression stack underflow");
        return push(m, m->stack[m->depth - 1 - i]);
    }
    case DW_OP_swap:
        if (pop(m, &b) != EVAL_OK || pop(m, &a) != EVAL_OK)
            return EVAL_FAILED;
        return push(m, b) != EVAL_OK ? EVAL_FAILED : push(m, a);
    default: /* DW_OP_rot: a b c (c on top) becomes c a b */
        if (pop(m, &c) != EVAL_OK || pop(m, &b) != EVAL_OK ||
            pop(m, &a) != EVAL_OK)
            return EVAL_FAILED;
        if (push(m, c) != EVAL_OK || push(m, a) != EVAL_OK)
            return EVAL_FAILED;
        return push(m, b);
    }
}

/* Operations of one operand or none that push or transform the top. */
static enum eval unary(struct machine *m, const Dwarf_Op *op)
{
    uint64_t a, v;
    if (pop(m, &a) != EVAL_OK)
        return EVAL_FAILED;
    switch (op->atom) {
    case DW_OP_abs: return push(m, as_signed(a) < 0 ? -a : a);
    case DW_OP_neg: return push(m, -a);
    case DW_OP_not: return push(m, ~a);
    case DW_OP_plus_uconst: return push(m, a + op->number);
    case DW_OP_deref:
        return read_memory(m, a, 8, &v) != EVAL_OK ? EVAL_FAILED : push(m, v);
    default: /* DW_OP_deref_size */
        return read_memory(m, a, op->number, &v) != EVAL_OK ? EVAL_FAILED
                                                             : push(m, v);
    }
}

/* One operation; *next is where execution goes on. */
static enum eval step(struct machine *m, size_t at, size_t *next)
{
    const Dwarf_Op *op = &m->ops[at];
    uint8_t a = op->atom;
    uint64_t v;
    *next = at + 1;
    if (a >= DW_OP_lit0 && a <= DW_OP_lit31)
        return push(m, (uint64_t)(a - DW_OP_lit0));
    if (a >= DW_OP_breg0 && a <= DW_OP_breg31)
        return callee_register(m, a - DW_OP_breg0, &v) != EVAL_OK
            ? EVAL_FAILED : push(m, v + op->number);
    if (is_binary(a))
        return binary(m, a);
    switch (a) {
    case DW_OP_addr: case DW_OP_const1u: case DW_OP_const1s:
    case DW_OP_const2u: case DW_OP_const2s: case DW_OP_const4u:
    case DW_OP_const4s: case DW_OP_const8u: case DW_OP_const8s:
    case DW_OP_constu: case DW_OP_consts:
        return push(m, op->number);
    case DW_OP_bregx:
        return callee_register(m, op->number, &v) != EVAL_OK
            ? EVAL_FAILED : push(m, v + op->number2);
    case DW_OP_dup: case DW_OP_drop: case DW_OP_over: case DW_OP_pick:
    case DW_OP_swap: case DW_OP_rot:
        return stack_op(m, op);
    case DW_OP_abs: case DW_OP_neg: case DW_OP_not: case DW_OP_plus_uconst:
    case DW_OP_deref: case DW_OP_deref_size:
        return unary(m, op);
    case DW_OP_nop:
        return EVAL_OK;
    case DW_OP_skip:
        return jump(m, at, next);
    case DW_OP_bra:
        if (pop(m, &v) != EVAL_OK)
            return EVAL_FAILED;
        return v != 0 ? jump(m, at, next) : EVAL_OK;
    default:
        return fail(m, CFI_E_EXPR, "operation not allowed in CFI");
    }
}

static enum eval run(struct machine *m, uint64_t *result)
{
    size_t at = m->begin;
    while (at < m->end) {
        if (++m->steps > CFI_EXPR_STEP_LIMIT)
            return fail(m, CFI_E_STEP_LIMIT, "expression step limit");
        enum eval e = step(m, at, &at);
        if (e != EVAL_OK)
            return e;
    }
    if (m->depth == 0)
        return fail(m, CFI_E_EXPR, "expression leaves an empty stack");
    *result = m->stack[m->depth - 1];
    return EVAL_OK;
}

static void machine_init(struct machine *m, const Dwarf_Op *ops, size_t nops,
                         const struct cfi_request *request)
{
    memset(m, 0, sizeof *m);
    m->ops = ops;
    m->end = nops;
    m->callee = request->callee;
    m->memory = request->memory;
    m->reg = -1;
}

static enum eval machine_error(const struct machine *m,
                               struct engine_answer *answer)
{
    engine_answer_error(answer, m->status, m->message, m->reg);
    return EVAL_FAILED;
}

/* ------------------------------------------------------------------ */
/* The CFA and the registers                                            */
/* ------------------------------------------------------------------ */

/* cfi.h step 4. dwarf_frame_cfa: [bregx r off] for reg+off, the
 * expression's operations otherwise, none when the row has no CFA rule. */
static enum eval eval_cfa(const struct engine_libdw *ld, Dwarf_Frame *frame,
                          const struct cfi_request *request,
                          struct engine_answer *answer)
{
    Dwarf_Op *ops = NULL;
    size_t nops = 0;
    if (ld->dw.dwarf_frame_cfa(frame, &ops, &nops) != 0) {
        libdw_error(ld, answer, CFI_E_MALFORMED, -1);
        return EVAL_FAILED;
    }
    if (nops == 0) {
        engine_answer_error(answer, CFI_E_MALFORMED, "row has no CFA rule", -1);
        return EVAL_FAILED;
    }
    struct machine m;
    machine_init(&m, ops, nops, request);
    enum eval e = run(&m, &answer->frame.cfa);
    return e == EVAL_FAILED ? machine_error(&m, answer) : e;
}

/* A register rule that reads a callee register as it is. */
static enum eval copy_register(uint64_t from, unsigned reg,
                               const struct cfi_request *request,
                               struct engine_answer *answer)
{
    if (from >= CFI_NREGS) {
        answer->reg_comparable[reg] = false;
        return EVAL_OK;
    }
    answer->frame.caller.value[reg] = request->callee->value[from];
    answer->frame.caller.status[reg] = request->callee->status[from];
    return EVAL_OK;
}

/* A location description from dwarf_frame_register, not empty. */
static enum eval eval_location(const Dwarf_Op *ops, size_t nops, unsigned reg,
                               const struct cfi_request *request,
                               struct engine_answer *answer)
{
    if (nops == 1 && ops[0].atom == DW_OP_regx)
        return copy_register(ops[0].number, reg, request, answer);
    bool value = ops[nops - 1].atom == DW_OP_stack_value;
    struct machine m;
    machine_init(&m, ops, nops - value, request);
    /* libdw puts DW_OP_call_frame_cfa first: the CFA pushed first. */
    if (ops[0].atom == DW_OP_call_frame_cfa) {
        m.begin = 1;
        push(&m, answer->frame.cfa);
    }
    uint64_t result;
    enum eval e = run(&m, &result);
    if (e == EVAL_OK && !value &&
        read_memory(&m, result, 8, &result) != EVAL_OK)
        e = EVAL_FAILED;
    if (e == EVAL_FAILED)
        return machine_error(&m, answer);
    if (e == EVAL_OK)
        cfi_regs_set(&answer->frame.caller, reg, result);
    else
        answer->reg_comparable[reg] = false;
    return EVAL_OK;
}

/* cfi.h step 5 for one register, as libdw describes it. */
static enum eval eval_register(const struct engine_libdw *ld,
                               Dwarf_Frame *frame, unsigned reg,
                               const struct cfi_request *request,
                               struct engine_answer *answer)
{
    Dwarf_Op ops_mem[3];
    Dwarf_Op *ops = NULL;
    size_t nops = 0;
    if (ld->dw.dwarf_frame_register(frame, (int)reg, ops_mem, &ops, &nops) !=
        0) {
        libdw_error(ld, answer, CFI_E_EXPR, (int)reg);
        return EVAL_FAILED;
    }
    if (nops == 0 && ops == NULL) /* same_value */
        return copy_register(reg, reg, request, answer);
    if (nops == 0) { /* undefined */
        answer->frame.caller.status[reg] = CFI_REG_UNDEFINED;
        return EVAL_OK;
    }
    return eval_location(ops, nops, reg, request, answer);
}

/* cfi.h step 6, with the return address column libdw read: the
 * caller's PC is that column's value as libdw gives it. libdw has no
 * return-address signing state: 0.188 runs AArch64's negate_ra_state
 * (0x2d) as nothing (libdw/cfi.c execute_cfi, "XXX not handled yet")
 * and its back end gives RA_SIGN_STATE (34) no rule, so what
 * dwarf_frame_register says of 34 is not libdw's word on the state (not
 * comparable), and the PC is never stripped of its signature
 * (libdw-no-pac-strip). */
static void return_address(const struct cfi_arch *arch, int ra,
                           struct engine_answer *answer)
{
    if (arch->ra_state != CFI_NO_RA_STATE)
        answer->reg_comparable[arch->ra_state] = false;
    if (ra < 0 || ra >= CFI_NREGS || (unsigned)ra == arch->pc)
        return;
    struct cfi_regs *caller = &answer->frame.caller;
    caller->status[arch->pc] = caller->status[ra];
    caller->value[arch->pc] = caller->value[ra];
    answer->reg_comparable[arch->pc] = answer->reg_comparable[ra];
}

static enum cfi_status eval_frame(const struct engine_libdw *ld,
                                  Dwarf_Frame *frame,
                                  const struct cfi_request *request,
                                  struct engine_answer *answer)
{
    enum eval e = eval_cfa(ld, frame, request, answer);
    if (e == EVAL_NOT_COMPARABLE)
        return engine_answer_not_comparable(
            answer,
            "libdw: a jump in the CFA expression lands inside an operation");
    if (e == EVAL_FAILED)
        return answer->frame.status;
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        answer->frame.caller.status[reg] = CFI_REG_UNDEFINED;
        if (eval_register(ld, frame, reg, request, answer) != EVAL_OK)
            return answer->frame.status;
    }
    bool signal = false;
    int ra = ld->dw.dwarf_frame_info(frame, NULL, NULL, &signal);
    answer->frame.signal_frame = signal;
    answer->frame.status = CFI_OK;
    return_address(ld->file->arch, ra, answer);
    return CFI_OK;
}

/* Whether a program of the FDE (or its CIE) names a register number
 * beyond CFI_NREGS: libdw then allocates and clears a register table that
 * large, up to gigabytes and seconds for one query
 * (fuzz/findings/README.md, elfutils libdw 0.188). Our decoder finds it:
 * it stops there with the register in diag.reg. */
static bool names_huge_register(const struct cfi_fde *fde)
{
    const struct cfi_cie *cie = fde->cie;
    const struct {
        const uint8_t *bytes;
        size_t len;
        bool in_cie;
    } programs[2] = {{cie->instructions, cie->instructions_len, true},
                     {fde->instructions, fde->instructions_len, false}};
    for (int i = 0; i < 2; i++) {
        struct sem_decode_env env = {
            cie->code_align, cie->data_align, fde->section,
            cie->address_size ? cie->address_size : 8, cie->fde_encoding,
            fde->instructions_addr, programs[i].in_cie, cie->arch};
        struct sem_program program = {0};
        struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
        sem_decode(programs[i].bytes, programs[i].len, &env, &program, &diag);
        sem_program_free(&program);
        if (diag.reg >= CFI_NREGS)
            return true;
    }
    return false;
}

enum cfi_status engine_libdw_answer(void *self,
                                    const struct cfi_request *request,
                                    struct engine_answer *answer)
{
    struct engine_libdw *ld = self;
    engine_answer_reset(answer);
    uint64_t pc = cfi_lookup_pc(request->pc, request->caller_frame);
    const char *overlap = engine_overlap_reason(ld->file, pc);
    if (overlap)
        return engine_answer_not_comparable(answer, overlap);
    const struct cfi_fde *fde = cfi_file_lookup(ld->file, pc);
    if (fde && names_huge_register(fde))
        return engine_answer_not_comparable(
            answer, "libdw: the CFI names a register number that would make "
                    "libdw allocate a table that large");
    if (ld->memo_frame && ld->memo_pc == pc)
        return eval_frame(ld, ld->memo_frame, request, answer);
    Dwarf_Frame *frame = NULL;
    enum cfi_status status = find_frame(ld, pc, &frame, answer);
    if (status != CFI_OK)
        return status;
    free(ld->memo_frame);
    ld->memo_frame = frame;
    ld->memo_pc = pc;
    return eval_frame(ld, frame, request, answer);
}
