/* SPDX-License-Identifier: MIT */
/* decode.c — the DW_CFA decoder (DWARF 5 §6.4.2 for the meaning of the
 * operands, §7.24 for the numbers), one instruction at a time.
 *
 * Every operand is bounds-checked; registers must be below CFI_NREGS;
 * factored offsets are multiplied by the data alignment factor and must
 * fit int64; deltas are multiplied by the code alignment factor and must
 * fit uint64. Any failure is CFI_E_MALFORMED, except a set_loc pointer
 * encoding we do not read (CFI_E_UNSUPPORTED). The vendor opcodes
 * 0x2b and 0x2c are opcodes only on an architecture that gives them a
 * meaning (AArch64); elsewhere they are unknown, as any number DWARF
 * leaves unused. */
#include "internal.h"

/* A read position in one program. */
struct cursor {
    const struct interp_program *program;
    size_t pos;
};

static enum cfi_status malformed(const char **message, const char *text)
{
    *message = text;
    return CFI_E_MALFORMED;
}

/* A state no input reaches (cfi.h): cfisem is wrong, not the input. */
static enum cfi_status internal(const char **message, const char *text)
{
    *message = text;
    return CFI_E_INTERNAL;
}

static enum cfi_status unsupported(const char **message, const char *text)
{
    *message = text;
    return CFI_E_UNSUPPORTED;
}

/* The status of a failed read. */
static enum cfi_status read_failure(enum interp_read read, const char **message)
{
    if (read == INTERP_READ_OVERFLOW)
        return malformed(message, "LEB128 operand overflows 64 bits");
    return malformed(message, "truncated operand");
}

static inline enum cfi_status read_fixed(struct cursor *cur, unsigned size,
                                         uint64_t *value, const char **message)
{
    const struct interp_program *p = cur->program;
    enum interp_read read =
        interp_read_fixed(p->bytes, p->len, &cur->pos, size, value);
    return read == INTERP_READ_OK ? CFI_OK : read_failure(read, message);
}

static inline enum cfi_status read_uleb(struct cursor *cur, uint64_t *value,
                                        const char **message)
{
    const struct interp_program *p = cur->program;
    enum interp_read read = interp_read_uleb(p->bytes, p->len, &cur->pos, value);
    return read == INTERP_READ_OK ? CFI_OK : read_failure(read, message);
}

static inline enum cfi_status read_sleb(struct cursor *cur, int64_t *value,
                                        const char **message)
{
    const struct interp_program *p = cur->program;
    enum interp_read read = interp_read_sleb(p->bytes, p->len, &cur->pos, value);
    return read == INTERP_READ_OK ? CFI_OK : read_failure(read, message);
}

static inline enum cfi_status read_reg(struct cursor *cur, unsigned *reg,
                                       const char **message)
{
    uint64_t number;
    enum cfi_status status = read_uleb(cur, &number, message);
    if (status != CFI_OK)
        return status;
    if (number >= CFI_NREGS)
        return malformed(message, "register number out of range");
    *reg = (unsigned)number;
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Scaling                                                             */
/* ------------------------------------------------------------------ */

static uint64_t magnitude(int64_t value)
{
    return value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
}

/* The exact product of two magnitudes with the given sign, when it fits
 * int64. */
static bool signed_product(bool negative, uint64_t a, uint64_t b,
                           int64_t *out)
{
    if (a != 0 && b > UINT64_MAX / a)
        return false;
    uint64_t p = a * b;
    uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (p > limit)
        return false;
    *out = negative ? interp_signed((uint64_t)0 - p) : (int64_t)p;
    return true;
}

/* ULEB n times the data alignment factor. */
static enum cfi_status factor_unsigned(const struct interp_program *p,
                                       uint64_t n, int64_t *offset,
                                       const char **message)
{
    if (!signed_product(p->data_align < 0, n, magnitude(p->data_align),
                        offset))
        return malformed(message, "factored offset overflows");
    return CFI_OK;
}

/* SLEB n times the data alignment factor. */
static enum cfi_status factor_signed(const struct interp_program *p,
                                     int64_t n, int64_t *offset,
                                     const char **message)
{
    if (!signed_product((n < 0) != (p->data_align < 0), magnitude(n),
                        magnitude(p->data_align), offset))
        return malformed(message, "factored offset overflows");
    return CFI_OK;
}

/* SLEB n times the code alignment factor (AARCH64_set_ra_state's
 * offset). */
static enum cfi_status factor_code(const struct interp_program *p, int64_t n,
                                   int64_t *offset, const char **message)
{
    if (!signed_product(n < 0, magnitude(n), p->code_align, offset))
        return malformed(message, "factored offset overflows");
    return CFI_OK;
}

/* An advance of `raw` code alignment units, in bytes. */
static enum cfi_status scale_delta(const struct interp_program *p,
                                   uint64_t raw, uint64_t *delta,
                                   const char **message)
{
    if (p->code_align != 0 && raw > UINT64_MAX / p->code_align)
        return malformed(message, "advance overflows");
    *delta = raw * p->code_align;
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Composite operands                                                  */
/* ------------------------------------------------------------------ */

/* ULEB length, then the expression's bytes, which must be in the
 * program. */
static enum cfi_status read_expr(struct cursor *cur, struct interp_insn *insn,
                                 const char **message)
{
    uint64_t len;
    enum cfi_status status = read_uleb(cur, &len, message);
    if (status != CFI_OK)
        return status;
    if (len > cur->program->len - cur->pos)
        return malformed(message, "expression runs past the end");
    insn->expr = cur->program->bytes + cur->pos;
    insn->expr_len = (size_t)len;
    cur->pos += (size_t)len;
    return CFI_OK;
}

/* A pointer in the format part of a DW_EH_PE encoding. */
static enum cfi_status read_pointer_format(struct cursor *cur, uint8_t format,
                                           uint64_t *value,
                                           const char **message)
{
    int64_t signed_value;
    enum cfi_status status;
    switch (format) {
    case CFI_PE_ABSPTR:
        if (cur->program->address_size != 4 && cur->program->address_size != 8)
            return unsupported(message, "address size not 4 or 8");
        return read_fixed(cur, cur->program->address_size, value, message);
    case CFI_PE_ULEB128:
        return read_uleb(cur, value, message);
    case CFI_PE_UDATA2:
        return read_fixed(cur, 2, value, message);
    case CFI_PE_UDATA4:
        return read_fixed(cur, 4, value, message);
    case CFI_PE_UDATA8:
        return read_fixed(cur, 8, value, message);
    case CFI_PE_SLEB128:
        status = read_sleb(cur, &signed_value, message);
        *value = (uint64_t)signed_value;
        return status;
    case CFI_PE_SDATA2:
    case CFI_PE_SDATA4:
    case CFI_PE_SDATA8: {
        unsigned size = format == CFI_PE_SDATA2 ? 2 : format == CFI_PE_SDATA4 ? 4 : 8;
        status = read_fixed(cur, size, value, message);
        if (status == CFI_OK && size < 8 && (*value >> (8 * size - 1)) & 1)
            *value |= ~(uint64_t)0 << (8 * size);
        return status;
    }
    default:
        return unsupported(message, "set_loc pointer format not supported");
    }
}

/* DW_CFA_set_loc's operand: in .debug_frame an address of the CIE's
 * address size; in .eh_frame a pointer in the CIE's 'R' encoding, plain
 * or pc-relative (relative to the address of the operand itself). */
static enum cfi_status read_address(struct cursor *cur, uint64_t *address,
                                    const char **message)
{
    const struct interp_program *p = cur->program;
    if (p->section == CFI_DEBUG_FRAME)
        return read_pointer_format(cur, CFI_PE_ABSPTR, address, message);
    uint8_t encoding = p->fde_encoding;
    uint8_t application = encoding & 0x70;
    if ((encoding & CFI_PE_INDIRECT) ||
        (application != 0 && application != CFI_PE_PCREL))
        return unsupported(message, "set_loc pointer application not supported");
    uint64_t field_addr = p->addr + cur->pos;
    enum cfi_status status =
        read_pointer_format(cur, encoding & 0x0f, address, message);
    if (status == CFI_OK && application == CFI_PE_PCREL)
        *address += field_addr;
    return status;
}

/* ------------------------------------------------------------------ */
/* Shapes                                                              */
/* ------------------------------------------------------------------ */

enum shape {
    SHAPE_UNKNOWN = 0, /* no such opcode */
    SHAPE_NONE, SHAPE_ADDRESS, SHAPE_DELTA_LOW, SHAPE_DELTA1, SHAPE_DELTA2,
    SHAPE_DELTA4, SHAPE_DELTA8, SHAPE_REG, SHAPE_LOW_REG, SHAPE_REG_REG,
    SHAPE_REG_UFACTORED, SHAPE_LOW_REG_UFACTORED, SHAPE_REG_SFACTORED,
    SHAPE_REG_NFACTORED, SHAPE_REG_UNSCALED, SHAPE_UNSCALED, SHAPE_SFACTORED,
    SHAPE_EXPR, SHAPE_REG_EXPR,
    /* From here on, an opcode only where the architecture says so. */
    SHAPE_VENDOR_NONE, SHAPE_VENDOR_STATE,
};

/* The shape of every opcode number (the three primary opcodes by their
 * high bits); SHAPE_UNKNOWN for the numbers that are no opcode. A table,
 * not a switch: one load instead of an indirect jump per instruction. */
static const uint8_t shapes[256] = {
#define CFA_SHAPE(name, number, shape_name) [number] = SHAPE_##shape_name,
    INTERP_CFA_OPCODES(CFA_SHAPE)
#undef CFA_SHAPE
};

/* A fixed-size delta of `size` bytes, scaled. */
static enum cfi_status read_delta(struct cursor *cur, unsigned size,
                                  struct interp_insn *insn,
                                  const char **message)
{
    uint64_t raw;
    enum cfi_status status = read_fixed(cur, size, &raw, message);
    if (status != CFI_OK)
        return status;
    return scale_delta(cur->program, raw, &insn->delta, message);
}

/* The offset operand of the *FACTORED shapes, after the register. */
static enum cfi_status read_factored(struct cursor *cur, enum shape shape,
                                     struct interp_insn *insn,
                                     const char **message)
{
    const struct interp_program *p = cur->program;
    uint64_t unsigned_n;
    int64_t signed_n;
    enum cfi_status status;
    if (shape == SHAPE_REG_SFACTORED || shape == SHAPE_SFACTORED) {
        status = read_sleb(cur, &signed_n, message);
        return status != CFI_OK ? status
                                : factor_signed(p, signed_n, &insn->offset, message);
    }
    status = read_uleb(cur, &unsigned_n, message);
    if (status == CFI_OK)
        status = factor_unsigned(p, unsigned_n, &insn->offset, message);
    if (status == CFI_OK && shape == SHAPE_REG_NFACTORED) {
        if (insn->offset == INT64_MIN)
            return malformed(message, "factored offset overflows");
        insn->offset = -insn->offset;
    }
    return status;
}

/* VENDOR_STATE: a ULEB number as written, then an SLEB offset times the
 * code alignment factor. */
static enum cfi_status read_state(struct cursor *cur, struct interp_insn *insn,
                                  const char **message)
{
    int64_t n;
    enum cfi_status status = read_uleb(cur, &insn->number, message);
    if (status == CFI_OK)
        status = read_sleb(cur, &n, message);
    if (status == CFI_OK)
        status = factor_code(cur->program, n, &insn->offset, message);
    return status;
}

/* Shapes that start with a ULEB register. */
static bool starts_with_reg(enum shape shape)
{
    return shape == SHAPE_REG || shape == SHAPE_REG_REG ||
           shape == SHAPE_REG_UFACTORED || shape == SHAPE_REG_SFACTORED ||
           shape == SHAPE_REG_NFACTORED || shape == SHAPE_REG_UNSCALED ||
           shape == SHAPE_REG_EXPR;
}

/* What follows the register, if any. */
static enum cfi_status read_rest(struct cursor *cur, enum shape shape,
                                 unsigned low, struct interp_insn *insn,
                                 const char **message)
{
    switch (shape) {
    case SHAPE_NONE:
    case SHAPE_REG:
    case SHAPE_LOW_REG:
    case SHAPE_VENDOR_NONE:
        return CFI_OK;
    case SHAPE_VENDOR_STATE:
        return read_state(cur, insn, message);
    case SHAPE_ADDRESS:
        return read_address(cur, &insn->address, message);
    case SHAPE_DELTA_LOW:
        return scale_delta(cur->program, low, &insn->delta, message);
    case SHAPE_DELTA1:
        return read_delta(cur, 1, insn, message);
    case SHAPE_DELTA2:
        return read_delta(cur, 2, insn, message);
    case SHAPE_DELTA4:
        return read_delta(cur, 4, insn, message);
    case SHAPE_DELTA8:
        return read_delta(cur, 8, insn, message);
    case SHAPE_REG_REG:
        return read_reg(cur, &insn->reg2, message);
    case SHAPE_REG_UFACTORED:
    case SHAPE_LOW_REG_UFACTORED:
    case SHAPE_REG_SFACTORED:
    case SHAPE_REG_NFACTORED:
    case SHAPE_SFACTORED:
        return read_factored(cur, shape, insn, message);
    case SHAPE_REG_UNSCALED:
    case SHAPE_UNSCALED:
        return read_uleb(cur, &insn->number, message);
    case SHAPE_EXPR:
    case SHAPE_REG_EXPR:
        return read_expr(cur, insn, message);
    default: /* the shape table gives only the shapes above */
        return internal(message, "internal error: an operand shape of no kind");
    }
}

enum cfi_status interp_decode(const struct interp_program *program, size_t at,
                              struct interp_insn *insn, const char **message)
{
    struct cursor cur = {program, at};
    if (at >= program->len)
        return internal(message, "internal error: no instruction here");
    uint8_t byte = program->bytes[cur.pos++];
    unsigned opcode = (byte & 0xc0) ? (byte & 0xc0u) : byte;
    unsigned low = byte & 0x3fu;
    enum shape shape = (enum shape)shapes[opcode];
    if (shape == SHAPE_UNKNOWN ||
        (shape >= SHAPE_VENDOR_NONE &&
         cfi_arch_vendor_op(program->arch, opcode) == CFI_VENDOR_NONE))
        return malformed(message, "unknown DW_CFA opcode");
    *insn = (struct interp_insn){
        .opcode = (enum interp_cfa_opcode)opcode,
        .at = at,
        .reg = low, /* LOW_REG shapes; replaced by a ULEB register */
    };
    enum cfi_status status = CFI_OK;
    if (starts_with_reg(shape))
        status = read_reg(&cur, &insn->reg, message);
    if (status == CFI_OK)
        status = read_rest(&cur, shape, low, insn, message);
    insn->next = cur.pos;
    return status;
}

enum cfi_status interp_decode_source(const struct interp_programs *programs,
                                     interp_source source,
                                     struct interp_insn *insn)
{
    size_t at = (size_t)source - 1;
    const struct interp_program *program = &programs->cie;
    if (at >= programs->cie.len) {
        at -= programs->cie.len;
        program = &programs->fde;
    }
    const char *message;
    if (source == 0 || interp_source_is_state(source) ||
        at >= program->len ||
        interp_decode(program, at, insn, &message) != CFI_OK)
        return CFI_E_INTERNAL;
    return CFI_OK;
}
