/* SPDX-License-Identifier: MIT */
/* json.h — JSON text as every command writes it, one way: a string has
 * '"', '\' and the control characters escaped, well-formed UTF-8 passed
 * through, and each byte that is not part of well-formed UTF-8 (paths
 * and augmentation strings are arbitrary bytes) written as U+FFFD; an
 * address is a string of "0x" and lowercase hex digits (a JSON number
 * cannot hold every 64-bit value exactly in most readers). */
#ifndef CFISEM_CFI_JSON_H
#define CFISEM_CFI_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* text as a JSON string; NULL as null. */
void cfi_json_string(FILE *out, const char *text);
/* The first bytes of text, up to max or its NUL, as a JSON string. */
void cfi_json_string_n(FILE *out, const char *text, size_t max);
/* An address: "0x..." */
void cfi_json_address(FILE *out, uint64_t address);

/* The "schema_version" every JSON output of cfisem opens its top-level
 * object with: the version of the schemas in schemas/ that it follows.
 * Raised when a member is removed, renamed or changes its meaning, so
 * that a reader can refuse what it does not know; a member added to an
 * open object does not raise it. */
#define CFI_JSON_SCHEMA_VERSION 1

#endif
