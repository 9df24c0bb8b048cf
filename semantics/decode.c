/* SPDX-License-Identifier: MIT */
/* decode.c — DW_CFA instruction bytes → struct sem_insn.
 *
 * DWARF 5 §6.4.2 and §7.24 define the encoding; .eh_frame adds the pointer
 * encodings of the LSB for DW_CFA_set_loc and the GNU opcodes. Every read
 * is bounded by the bytes left; every operand that is scaled is checked
 * for overflow. This decoder is semantics/'s own: interp/ has another.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sem.h"

/* Operand shapes, see SEM_CFA_OPCODES in sem.h. */
enum shape {
    SHAPE_NONE, SHAPE_DELTA, SHAPE_ADDR, SHAPE_REG, SHAPE_REG_REG,
    SHAPE_REG_UOFF, SHAPE_REG_SOFF, SHAPE_REG_NOFF, SHAPE_REG_ROFF,
    SHAPE_REG_SFOFF, SHAPE_UOFF, SHAPE_SOFF, SHAPE_ULEB, SHAPE_ULEB_CODE,
    SHAPE_EXPR, SHAPE_REG_EXPR,
};

struct opcode_info {
    const char *name;   /* NULL: not an opcode */
    enum shape shape;
};

static const struct opcode_info opcode_table[256] = {
#define SEM_OPCODE_INFO(name, number, shape) [number] = {#name, SHAPE_##shape},
    SEM_CFA_OPCODES(SEM_OPCODE_INFO)
#undef SEM_OPCODE_INFO
};

const char *sem_opcode_name(unsigned opcode)
{
    return opcode < 256 ? opcode_table[opcode].name : NULL;
}

/* a × b without overflow, in int64_t. */
static bool mul_s64(int64_t a, int64_t b, int64_t *out)
{
    if (a == 0 || b == 0) {
        *out = 0;
        return true;
    }
    if (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)
              : (b > 0 ? a < INT64_MIN / b : a < INT64_MAX / b))
        return false;
    *out = a * b;
    return true;
}

/* ------------------------------------------------------------------ */
/* Operands                                                             */
/* ------------------------------------------------------------------ */

/* Everything an operand decoder needs: where the bytes are, what produced
 * the opcode byte, and where to report. */
struct decoding {
    struct sem_cursor cur;
    const struct sem_decode_env *env;
    uint8_t low6;        /* the operand in the opcode byte, if any */
    bool has_low6;
    struct sem_insn *insn;
    struct cfi_diag *diag;
};

static enum cfi_status fail(struct decoding *d, enum cfi_status status,
                            const char *message)
{
    return cfi_fail(d->diag, status, d->insn->at, message);
}

static enum cfi_status get_uleb(struct decoding *d, uint64_t *value)
{
    bool overflow = false;
    if (sem_read_uleb(&d->cur, value, &overflow))
        return CFI_OK;
    return fail(d, CFI_E_MALFORMED, overflow ? "LEB128 operand overflows 64 bits"
                                             : "truncated operand");
}

static enum cfi_status get_sleb(struct decoding *d, int64_t *value)
{
    bool overflow = false;
    if (sem_read_sleb(&d->cur, value, &overflow))
        return CFI_OK;
    return fail(d, CFI_E_MALFORMED, overflow ? "LEB128 operand overflows 64 bits"
                                             : "truncated operand");
}

/* The first register operand: in the opcode byte (offset, restore) or a
 * ULEB128. */
static enum cfi_status get_reg(struct decoding *d, uint32_t *reg)
{
    uint64_t number = d->low6;
    if (!d->has_low6) {
        enum cfi_status status = get_uleb(d, &number);
        if (status != CFI_OK)
            return status;
    }
    if (number >= CFI_NREGS) {
        cfi_fail(d->diag, CFI_E_MALFORMED, d->insn->at,
                 "register number out of range");
        if (d->diag)
            d->diag->reg = number > INT_MAX ? INT_MAX : (int)number;
        return CFI_E_MALFORMED;
    }
    *reg = (uint32_t)number;
    return CFI_OK;
}

/* n × f exactly, for an unsigned n and a signed f: false when the product
 * is not an int64 (whatever n, it is 0 when f is). */
static bool mul_u64_s64(uint64_t n, int64_t f, int64_t *out)
{
    uint64_t m = f < 0 ? (uint64_t)0 - (uint64_t)f : (uint64_t)f;
    if (n == 0 || m == 0) {
        *out = 0;
        return true;
    }
    if (m > UINT64_MAX / n)
        return false;
    uint64_t p = n * m;
    if (f >= 0) {
        if (p > (uint64_t)INT64_MAX)
            return false;
        *out = (int64_t)p;
    } else {
        if (p > (uint64_t)INT64_MAX + 1)
            return false;
        *out = p == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)p;
    }
    return true;
}

static enum cfi_status get_factored(struct decoding *d, int64_t n,
                                    int64_t *offset)
{
    if (!mul_s64(n, d->env->data_align, offset))
        return fail(d, CFI_E_MALFORMED, "factored offset overflows");
    return CFI_OK;
}

/* ULEB128 × data alignment factor; for the GNU opcode, then negated. */
static enum cfi_status get_ufactored(struct decoding *d, bool negate)
{
    uint64_t n;
    enum cfi_status status = get_uleb(d, &n);
    if (status != CFI_OK)
        return status;
    if (!mul_u64_s64(n, d->env->data_align, &d->insn->offset))
        return fail(d, CFI_E_MALFORMED, "factored offset overflows");
    if (!negate)
        return CFI_OK;
    if (d->insn->offset == INT64_MIN)
        return fail(d, CFI_E_MALFORMED, "factored offset overflows");
    d->insn->offset = -d->insn->offset;
    return CFI_OK;
}

/* SLEB128 × code alignment factor: a code offset (set_ra_state). */
static enum cfi_status get_code_offset(struct decoding *d)
{
    int64_t n;
    enum cfi_status status = get_sleb(d, &n);
    if (status != CFI_OK)
        return status;
    if (!mul_u64_s64(d->env->code_align, n, &d->insn->offset))
        return fail(d, CFI_E_MALFORMED, "factored offset overflows");
    return CFI_OK;
}

static enum cfi_status get_sfactored(struct decoding *d)
{
    int64_t n;
    enum cfi_status status = get_sleb(d, &n);
    if (status != CFI_OK)
        return status;
    return get_factored(d, n, &d->insn->offset);
}

/* An unfactored unsigned offset (def_cfa, def_cfa_offset). The CFA is
 * computed mod 2^64, so an offset of 2^63 or more is the negative offset
 * with the same bits. */
static enum cfi_status get_unfactored(struct decoding *d)
{
    uint64_t n;
    enum cfi_status status = get_uleb(d, &n);
    if (status != CFI_OK)
        return status;
    d->insn->offset = (int64_t)n;
    return CFI_OK;
}

static enum cfi_status get_expr(struct decoding *d)
{
    uint64_t len;
    enum cfi_status status = get_uleb(d, &len);
    if (status != CFI_OK)
        return status;
    if (len > d->cur.len - d->cur.pos || len > UINT32_MAX)
        return fail(d, CFI_E_MALFORMED, "expression runs past the end");
    d->insn->expr.bytes = d->cur.bytes + d->cur.pos;
    d->insn->expr.len = (uint32_t)len;
    d->cur.pos += len;
    return CFI_OK;
}

/* The address delta of advance_loc*, scaled by the code alignment. */
static enum cfi_status get_delta(struct decoding *d)
{
    static const unsigned sizes[] = {
        [SEM_CFA_advance_loc1] = 1, [SEM_CFA_advance_loc2] = 2,
        [SEM_CFA_advance_loc4] = 4, [SEM_CFA_MIPS_advance_loc8] = 8,
    };
    uint64_t n = d->low6;
    if (!d->has_low6 && !sem_read_fixed(&d->cur, sizes[d->insn->opcode], &n))
        return fail(d, CFI_E_MALFORMED, "truncated operand");
    uint64_t align = d->env->code_align;
    if (align != 0 && n > UINT64_MAX / align)
        return fail(d, CFI_E_MALFORMED, "address advance overflows");
    d->insn->delta = n * align;
    return CFI_OK;
}

/* The value of an encoded pointer's format bits (low nibble). */
static enum cfi_status get_pointer_value(struct decoding *d, uint8_t format,
                                         uint64_t *value)
{
    static const unsigned fixed[16] = {
        [CFI_PE_UDATA2] = 2, [CFI_PE_UDATA4] = 4, [CFI_PE_UDATA8] = 8,
        [CFI_PE_SDATA2] = 2, [CFI_PE_SDATA4] = 4, [CFI_PE_SDATA8] = 8,
    };
    if (format == CFI_PE_ABSPTR)
        format = d->env->address_size == 4 ? CFI_PE_UDATA4 : CFI_PE_UDATA8;
    if (format == CFI_PE_ULEB128)
        return get_uleb(d, value);
    if (format == CFI_PE_SLEB128)
        return get_sleb(d, (int64_t *)value);
    unsigned size = fixed[format & 0x0f];
    if (size == 0)
        return fail(d, CFI_E_UNSUPPORTED, "unknown pointer encoding");
    if (!sem_read_fixed(&d->cur, size, value))
        return fail(d, CFI_E_MALFORMED, "truncated operand");
    if (format >= CFI_PE_SDATA2 && size < 8 && (*value >> (8 * size - 1)) & 1)
        *value |= ~(uint64_t)0 << (8 * size);
    return CFI_OK;
}

/* DW_CFA_set_loc's operand: a target address in .debug_frame, an encoded
 * pointer (the CIE's 'R' encoding) in .eh_frame. */
static enum cfi_status get_address(struct decoding *d)
{
    uint8_t encoding = d->env->section == CFI_EH_FRAME
                           ? d->env->pointer_encoding : CFI_PE_ABSPTR;
    uint64_t field_addr = d->env->bytes_addr + d->cur.pos;
    uint8_t application = encoding & 0x70;
    if (encoding == CFI_PE_OMIT || (encoding & CFI_PE_INDIRECT) ||
        (application != 0 && application != CFI_PE_PCREL))
        return fail(d, CFI_E_UNSUPPORTED, "set_loc address encoding not supported");
    uint64_t value;
    enum cfi_status status = get_pointer_value(d, encoding & 0x0f, &value);
    if (status != CFI_OK)
        return status;
    d->insn->address = application == CFI_PE_PCREL ? field_addr + value : value;
    return CFI_OK;
}

static enum cfi_status decode_operands(struct decoding *d, enum shape shape)
{
    struct sem_insn *insn = d->insn;
    enum cfi_status status = CFI_OK;
    switch (shape) {
    case SHAPE_NONE:
        return CFI_OK;
    case SHAPE_DELTA:
        return get_delta(d);
    case SHAPE_ADDR:
        return get_address(d);
    case SHAPE_REG:
        return get_reg(d, &insn->reg);
    case SHAPE_REG_REG:
        if ((status = get_reg(d, &insn->reg)) != CFI_OK)
            return status;
        d->has_low6 = false;
        return get_reg(d, &insn->reg2);
    case SHAPE_REG_UOFF:
    case SHAPE_REG_NOFF:
        if ((status = get_reg(d, &insn->reg)) != CFI_OK)
            return status;
        return get_ufactored(d, shape == SHAPE_REG_NOFF);
    case SHAPE_REG_SOFF:
    case SHAPE_REG_SFOFF:
        if ((status = get_reg(d, &insn->reg)) != CFI_OK)
            return status;
        return get_sfactored(d);
    case SHAPE_REG_ROFF:
        if ((status = get_reg(d, &insn->reg)) != CFI_OK)
            return status;
        return get_unfactored(d);
    case SHAPE_UOFF:
        return get_unfactored(d);
    case SHAPE_SOFF:
        return get_sfactored(d);
    case SHAPE_ULEB:
        return get_uleb(d, &insn->number);
    case SHAPE_ULEB_CODE:
        if ((status = get_uleb(d, &insn->number)) != CFI_OK)
            return status;
        return get_code_offset(d);
    case SHAPE_EXPR:
        return get_expr(d);
    case SHAPE_REG_EXPR:
        if ((status = get_reg(d, &insn->reg)) != CFI_OK)
            return status;
        return get_expr(d);
    }
    /* The opcode table gives only the shapes above. */
    return fail(d, CFI_E_INTERNAL,
                "internal error: an operand shape of no kind");
}

/* ------------------------------------------------------------------ */
/* Programs                                                             */
/* ------------------------------------------------------------------ */

static struct sem_insn *append(struct sem_program *program)
{
    if (program->count == program->capacity) {
        size_t capacity = program->capacity ? program->capacity * 2 : 16;
        struct sem_insn *grown =
            realloc(program->insns, capacity * sizeof *grown);
        if (!grown)
            return NULL;
        program->insns = grown;
        program->capacity = capacity;
    }
    struct sem_insn *insn = &program->insns[program->count];
    memset(insn, 0, sizeof *insn);
    return insn;
}

/* 0x2b and 0x2c are opcodes only where the architecture gives them a
 * meaning (AArch64); 0x2d, GNU_window_save, is one everywhere, and an
 * error of meaning where it has none. */
static bool vendor_opcode_exists(const struct cfi_arch *arch,
                                 unsigned opcode)
{
    if (opcode != SEM_CFA_AARCH64_set_ra_state &&
        opcode != SEM_CFA_AARCH64_negate_ra_state_with_pc)
        return true;
    return arch && cfi_arch_vendor_op(arch, opcode) != CFI_VENDOR_NONE;
}

/* Decodes the instruction at d->cur.pos into d->insn. */
static enum cfi_status decode_one(struct decoding *d)
{
    uint8_t byte = d->cur.bytes[d->cur.pos++];
    unsigned primary = byte & 0xc0 ? byte & 0xc0u : byte;
    d->has_low6 = (byte & 0xc0) != 0;
    d->low6 = byte & 0x3f;
    const struct opcode_info *info = &opcode_table[primary];
    if (!info->name || !vendor_opcode_exists(d->env->arch, primary))
        return fail(d, CFI_E_MALFORMED, "unknown opcode");
    d->insn->opcode = (enum sem_opcode)primary;
    return decode_operands(d, info->shape);
}

enum cfi_status sem_decode(const uint8_t *bytes, size_t len,
                           const struct sem_decode_env *env,
                           struct sem_program *program,
                           struct cfi_diag *diag)
{
    struct decoding d = {.cur = {bytes, len, 0}, .env = env, .diag = diag};
    while (d.cur.pos < len) {
        d.insn = append(program);
        if (!d.insn)
            return cfi_fail(diag, CFI_E_NOMEM, d.cur.pos, "out of memory");
        d.insn->at = d.cur.pos;
        d.insn->in_cie = env->in_cie;
        enum cfi_status status = decode_one(&d);
        if (status != CFI_OK)
            return status;
        program->count++;
    }
    return CFI_OK;
}

void sem_program_free(struct sem_program *program)
{
    free(program->insns);
    memset(program, 0, sizeof *program);
}
