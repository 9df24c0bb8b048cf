/* SPDX-License-Identifier: MIT */
/* encoding.c — bounds-checked readers for the fields of CIEs and FDEs:
 * fixed-size little-endian values, LEB128 (DWARF 5 §7.6), DW_EH_PE
 * pointers (LSB Core, "DWARF Exception Header Encoding") and the 'z'
 * augmentation data of a CIE (LSB Core, ".eh_frame section"). */
#include "internal.h"

#include <string.h>

enum cfi_read cfi_read_u8(struct cfi_cursor *cur, uint8_t *value)
{
    if (cur->pos >= cur->end)
        return CFI_READ_PAST_END;
    *value = cur->bytes[cur->pos++];
    return CFI_READ_OK;
}

enum cfi_read cfi_read_fixed(struct cfi_cursor *cur, unsigned size,
                             uint64_t *value)
{
    if (cur->pos > cur->end || cur->end - cur->pos < size)
        return CFI_READ_PAST_END;
    *value = cfi_load_le(cur->bytes + cur->pos, size);
    cur->pos += size;
    return CFI_READ_OK;
}

/* `shift` counts the bits consumed and stops growing at 70: past 64 every
 * further payload must be zero, so its exact value no longer matters. */
enum cfi_read cfi_read_uleb(struct cfi_cursor *cur, uint64_t *value)
{
    uint64_t result = 0;
    unsigned shift = 0;
    uint8_t byte;
    do {
        if (cfi_read_u8(cur, &byte) != CFI_READ_OK)
            return CFI_READ_PAST_END;
        uint64_t payload = byte & 0x7f;
        if (shift < 64)
            result |= payload << shift;
        if (shift + 7 > 64 && (payload >> (shift < 64 ? 64 - shift : 0)))
            return CFI_READ_OVERFLOW;
        if (shift < 64)
            shift += 7;
    } while (byte & 0x80);
    *value = result;
    return CFI_READ_OK;
}

/* A signed value fits in 64 bits when every bit from 63 up is a copy of
 * bit 63: the payload bits at positions >= 63 must be all zeros or all
 * ones, and the same in every byte that holds such bits. */
enum cfi_read cfi_read_sleb(struct cfi_cursor *cur, int64_t *value)
{
    uint64_t result = 0;
    unsigned shift = 0;
    int high_sign = -1; /* the value of the bits at >= 63, once seen */
    uint8_t byte;
    do {
        if (cfi_read_u8(cur, &byte) != CFI_READ_OK)
            return CFI_READ_PAST_END;
        uint64_t payload = byte & 0x7f;
        if (shift < 64)
            result |= payload << shift;
        if (shift + 7 > 63) {
            unsigned from = shift <= 63 ? 63 - shift : 0;
            uint64_t high = payload >> from;
            uint64_t ones = (UINT64_C(1) << (7 - from)) - 1;
            int sign = high != 0;
            if ((high != 0 && high != ones) ||
                (high_sign >= 0 && sign != high_sign))
                return CFI_READ_OVERFLOW;
            high_sign = sign;
        }
        if (shift < 64)
            shift += 7;
    } while (byte & 0x80);
    if (shift < 64 && (byte & 0x40))
        result |= ~UINT64_C(0) << shift;
    *value = (int64_t)result;
    return CFI_READ_OK;
}

/* The format part (low nibble) of a DW_EH_PE encoding. */
enum cfi_status cfi_read_pointer_format(struct cfi_cursor *cur,
                                        uint8_t encoding,
                                        const struct cfi_pointer_context *ctx,
                                        uint64_t *value, const char **message)
{
    const struct cfi_pointer_context *context = ctx;
    enum cfi_section section = context->section;
    enum cfi_read read;
    int64_t sleb;
    switch (encoding & 0x0f) {
    case CFI_PE_ABSPTR:
        read = cfi_read_fixed(cur, context->address_size, value);
        break;
    case CFI_PE_ULEB128:
        read = cfi_read_uleb(cur, value);
        break;
    case CFI_PE_UDATA2:
        read = cfi_read_fixed(cur, 2, value);
        break;
    case CFI_PE_UDATA4:
        read = cfi_read_fixed(cur, 4, value);
        break;
    case CFI_PE_UDATA8:
        read = cfi_read_fixed(cur, 8, value);
        break;
    case CFI_PE_SLEB128:
        read = cfi_read_sleb(cur, &sleb);
        *value = (uint64_t)sleb;
        break;
    case CFI_PE_SDATA2:
    case CFI_PE_SDATA4:
    case CFI_PE_SDATA8:
    case 0x08: /* DW_EH_PE_signed: a signed absptr */ {
        unsigned size = (encoding & 0x0f) == 0x08 ? context->address_size
                      : (encoding & 0x0f) == CFI_PE_SDATA2 ? 2
                      : (encoding & 0x0f) == CFI_PE_SDATA4 ? 4 : 8;
        read = cfi_read_fixed(cur, size, value);
        if (read == CFI_READ_OK && size < 8 && (*value >> (8 * size - 1)))
            *value |= ~UINT64_C(0) << (8 * size);
        break;
    }
    default:
        *message = SECTION_MESSAGE(section, "unsupported pointer encoding");
        return CFI_E_UNSUPPORTED;
    }
    if (read == CFI_READ_PAST_END) {
        *message = SECTION_MESSAGE(section, "pointer runs past the record");
        return CFI_E_MALFORMED;
    }
    if (read == CFI_READ_OVERFLOW) {
        *message = SECTION_MESSAGE(section, "LEB128 pointer overflows 64 bits");
        return CFI_E_MALFORMED;
    }
    return CFI_OK;
}

enum cfi_status cfi_read_pointer(struct cfi_cursor *cur, uint8_t encoding,
                                 const struct cfi_pointer_context *context,
                                 uint64_t *value, const char **message)
{
    uint64_t field_addr = context->base_addr + cur->pos;
    uint64_t base;
    switch (encoding & 0x70) {
    case 0:
        base = 0;
        break;
    case CFI_PE_PCREL:
        base = field_addr;
        break;
    default: /* textrel, datarel, funcrel, aligned: need more than the
              * section to decode */
        *message = SECTION_MESSAGE(context->section,
                                   "unsupported pointer encoding");
        return CFI_E_UNSUPPORTED;
    }
    if ((encoding & CFI_PE_INDIRECT) && !context->allow_indirect) {
        *message = SECTION_MESSAGE(context->section,
                                   "unsupported pointer encoding");
        return CFI_E_UNSUPPORTED;
    }
    enum cfi_status status =
        cfi_read_pointer_format(cur, encoding, context, value, message);
    if (status == CFI_OK)
        *value += base; /* modulo 2^64, as a pcrel address wraps */
    return status;
}

/* aadwarf64 "Common information entries": 'B' (the B key signs the
 * return address) and 'G' (the frames may tag their stack), letters
 * with no data, on an architecture with return-address signing. False
 * elsewhere: the letter is unknown there. */
static bool apply_signing_letter(struct cfi_cie *cie, char letter)
{
    if (!cie->arch || cie->arch->ra_state == CFI_NO_RA_STATE)
        return false;
    if (letter == 'B')
        cie->ra_b_key = true;
    else
        cie->mte_tagged = true;
    return true;
}

/* The augmentation letters after 'z', each with its data (LSB Core):
 * R = FDE pointer encoding, L = LSDA encoding, P = personality encoding
 * and pointer, S = signal frame. Interpretation stops at an unknown
 * letter, whose data layout is unknown: the 'z' length still delimits
 * the data, and libgcc stops the same way. */
static enum cfi_status apply_letters(struct cfi_cie *cie,
                                     struct cfi_cursor *data,
                                     const struct cfi_pointer_context *context,
                                     const char **message)
{
    for (const char *letter = cie->augmentation + 1; *letter; letter++) {
        enum cfi_read read = CFI_READ_OK;
        switch (*letter) {
        case 'R':
            read = cfi_read_u8(data, &cie->fde_encoding);
            break;
        case 'L':
            read = cfi_read_u8(data, &cie->lsda_encoding);
            break;
        case 'P': {
            read = cfi_read_u8(data, &cie->personality_encoding);
            if (read != CFI_READ_OK)
                break;
            enum cfi_status status =
                cfi_read_pointer(data, cie->personality_encoding, context,
                                 &cie->personality, message);
            if (status != CFI_OK)
                return status;
            break;
        }
        case 'S':
            cie->signal_frame = true;
            break;
        case 'B':
        case 'G':
            if (!apply_signing_letter(cie, *letter))
                return CFI_OK;
            break;
        default:
            return CFI_OK;
        }
        if (read != CFI_READ_OK) {
            *message = SECTION_MESSAGE(cie->section,
                                       "augmentation data too short");
            return CFI_E_MALFORMED;
        }
    }
    return CFI_OK;
}

enum cfi_status cfi_cie_apply_augmentation(struct cfi_cie *cie,
                                           uint64_t data_offset,
                                           uint64_t section_addr,
                                           const char **message)
{
    cie->fde_encoding = CFI_PE_ABSPTR;
    cie->lsda_encoding = CFI_PE_OMIT;
    cie->personality_encoding = CFI_PE_OMIT;
    cie->personality = 0;
    cie->signal_frame = false;
    cie->ra_b_key = false;
    cie->mte_tagged = false;
    if (cie->augmentation[0] == '\0')
        return CFI_OK;
    if (cie->augmentation[0] != 'z') {
        /* Only letters without data are read without 'z' (see section.c). */
        if (strspn(cie->augmentation, "S") == strlen(cie->augmentation)) {
            cie->signal_frame = true;
            return CFI_OK;
        }
        *message = SECTION_MESSAGE(cie->section, "unsupported augmentation");
        return CFI_E_UNSUPPORTED;
    }
    struct cfi_cursor data = {
        .bytes = cie->augmentation_data,
        .pos = 0,
        .end = cie->augmentation_data_len,
    };
    struct cfi_pointer_context context = {
        .section = cie->section,
        .base_addr = section_addr + data_offset,
        .address_size = cie->address_size,
        .allow_indirect = true,
    };
    return apply_letters(cie, &data, &context, message);
}
