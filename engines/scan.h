/* SPDX-License-Identifier: MIT */
/* scan.h — reading CFA program bytes for the adapters' safety checks.
 *
 * An adapter refuses the programs known to crash its library
 * (diff/findings): it decodes them as that library decodes, its own
 * operand shapes and the places it stops, in a scanner of its own
 * (engines/oracle_libdwarf.c, engines/oracle_libunwind.c). What they
 * share is this reading of bytes. The engines' decoders are not these: each engine has its own,
 * by design (DESIGN.md). */
#ifndef CFISEM_ENGINES_SCAN_H
#define CFISEM_ENGINES_SCAN_H

#include <stdbool.h>
#include <stdint.h>

struct engine_scan {
    const uint8_t *p, *end;
};

/* How a library reads a LEB128 longer than 64 bits. */
enum engine_leb_overlong {
    /* libdwarf (dwarf_leb.c's _dwarf_decode_u_leb128_chk): an error, and
     * the program stops there. */
    ENGINE_LEB_OVERLONG_FAILS,
    /* libunwind (dwarf/Gparser.c read_uleb128): the bits past 64 are
     * dropped, and the program goes on. */
    ENGINE_LEB_OVERLONG_DROPPED,
};

/* An unsigned LEB128 into *value; false when the bytes end first, or, as
 * `overlong` says, when it is longer than 64 bits. */
bool engine_scan_leb(struct engine_scan *s, enum engine_leb_overlong overlong,
                     uint64_t *value);
/* Skips n bytes; false when fewer are left. */
bool engine_scan_skip(struct engine_scan *s, uint64_t n);

#endif
