/* SPDX-License-Identifier: MIT */
/* leb.c — bounded readers of fixed-size and LEB128 fields (DWARF 5
 * §7.6). A LEB128 may be padded with redundant bytes (0x80 ... 0x00) as
 * long as it stays in the bytes given; it overflows when a bit that does
 * not fit 64 bits is significant. */
#include "internal.h"

enum interp_read interp_read_fixed(const uint8_t *bytes, size_t len,
                                   size_t *pos, unsigned size,
                                   uint64_t *value)
{
    if (*pos > len || len - *pos < size)
        return INTERP_READ_TRUNCATED;
    *value = cfi_load_le(bytes + *pos, size);
    *pos += size;
    return INTERP_READ_OK;
}

/* Bits 0..63 come from the bytes at shifts 0..63; at shift 63 only the
 * lowest payload bit fits; above, payload bits must be zero. */
enum interp_read interp_read_uleb_long(const uint8_t *bytes, size_t len,
                                       size_t *pos, uint64_t *value)
{
    uint64_t result = 0;
    bool overflow = false;
    unsigned shift = 0;
    for (size_t at = *pos; at < len; at++) {
        uint8_t payload = bytes[at] & 0x7f;
        if (shift <= 63)
            result |= (uint64_t)payload << shift;
        if (shift >= 63)
            overflow |= payload >> (shift == 63 ? 1 : 0) != 0;
        if (!(bytes[at] & 0x80)) {
            if (overflow)
                return INTERP_READ_OVERFLOW;
            *value = result;
            *pos = at + 1;
            return INTERP_READ_OK;
        }
        shift = shift < 70 ? shift + 7 : 70; /* 70 stands for "beyond" */
    }
    return INTERP_READ_TRUNCATED;
}

/* The value fits int64 when every bit from 63 up is equal: the bytes at
 * shift 63 and beyond must all be 0x00 or all 0x7f, and then bit 63 is
 * their bit. Below, the last byte's bit 6 is the sign, extended. */
enum interp_read interp_read_sleb_long(const uint8_t *bytes, size_t len,
                                       size_t *pos, int64_t *value)
{
    uint64_t result = 0;
    int high = -1; /* payload of the bytes at shift >= 63, once seen */
    bool overflow = false;
    unsigned shift = 0;
    for (size_t at = *pos; at < len; at++) {
        uint8_t payload = bytes[at] & 0x7f;
        if (shift < 63) {
            result |= (uint64_t)payload << shift;
        } else {
            overflow |= (payload != 0 && payload != 0x7f) ||
                        (high >= 0 && payload != high);
            high = payload;
            result |= (uint64_t)(payload & 1) << 63;
        }
        if (!(bytes[at] & 0x80)) {
            if (overflow)
                return INTERP_READ_OVERFLOW;
            if (shift < 63 && (payload & 0x40) && shift + 7 < 64)
                result |= ~(uint64_t)0 << (shift + 7);
            *value = interp_signed(result);
            *pos = at + 1;
            return INTERP_READ_OK;
        }
        shift = shift < 70 ? shift + 7 : 70;
    }
    return INTERP_READ_TRUNCATED;
}
