/* SPDX-License-Identifier: MIT */
/* scan.c — see scan.h. */
#include "scan.h"

bool engine_scan_leb(struct engine_scan *s, enum engine_leb_overlong overlong,
                     uint64_t *value)
{
    *value = 0;
    for (unsigned shift = 0; s->p < s->end; shift += 7) {
        uint8_t byte = *s->p++;
        if (shift >= 64 && overlong == ENGINE_LEB_OVERLONG_FAILS)
            return false;
        if (shift < 64)
            *value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return true;
    }
    return false;
}

bool engine_scan_skip(struct engine_scan *s, uint64_t n)
{
    if (n > (uint64_t)(s->end - s->p))
        return false;
    s->p += n;
    return true;
}
