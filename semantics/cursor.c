/* SPDX-License-Identifier: MIT */
/* cursor.c — bounded reading of little-endian and LEB128 numbers, for the
 * decoders of semantics/ (instructions, expressions). */
#include "internal.h"

bool sem_read_fixed(struct sem_cursor *c, unsigned size, uint64_t *value)
{
    if (c->len - c->pos < size)
        return false;
    *value = cfi_load_le(c->bytes + c->pos, size);
    c->pos += size;
    return true;
}

bool sem_read_uleb(struct sem_cursor *c, uint64_t *value, bool *overflow)
{
    uint64_t result = 0;
    for (unsigned shift = 0;; shift += 7) {
        if (c->pos >= c->len)
            return false;
        uint8_t byte = c->bytes[c->pos++];
        uint64_t bits = byte & 0x7f;
        if (shift >= 64 ? bits != 0 : (bits << shift) >> shift != bits)
            *overflow = true;
        else if (shift < 64)
            result |= bits << shift;
        if (!(byte & 0x80))
            break;
    }
    *value = result;
    return !*overflow;
}

bool sem_read_sleb(struct sem_cursor *c, int64_t *value, bool *overflow)
{
    uint64_t result = 0;
    unsigned shift = 0;
    uint8_t byte;
    do {
        if (c->pos >= c->len)
            return false;
        byte = c->bytes[c->pos++];
        uint64_t bits = byte & 0x7f;
        if (shift < 63) {
            result |= bits << shift;
        } else if (shift == 63) {
            /* Only bit 63 is left: the six bits above must copy it. */
            if (bits != 0 && bits != 0x7f)
                *overflow = true;
            result |= (bits & 1) << 63;
        } else if (bits != ((result >> 63) ? 0x7fu : 0u)) {
            *overflow = true;
        }
        shift += 7;
    } while (byte & 0x80);
    if (shift < 64 && (byte & 0x40))
        result |= ~(uint64_t)0 << shift;
    *value = (int64_t)result;
    return !*overflow;
}
