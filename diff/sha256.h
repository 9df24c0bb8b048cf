/* sha256.h — SHA-256 (FIPS 180-4) of a file, to know when two files of a
 * run have the same contents and when a stored result is still the
 * file's (diff/batch.h). */
#ifndef CFISEM_DIFF_SHA256_H
#define CFISEM_DIFF_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "cfi/cfi.h"

#define DIFF_SHA256_HEX 65   /* 64 hex digits and the NUL */

struct diff_sha256 {
    uint32_t h[8];
    uint8_t block[64];
    size_t used;             /* bytes in block */
    uint64_t length;         /* bytes hashed */
};

void diff_sha256_init(struct diff_sha256 *s);
void diff_sha256_add(struct diff_sha256 *s, const void *bytes, size_t n);
/* The digest as 64 lowercase hex digits. */
void diff_sha256_hex(struct diff_sha256 *s, char hex[DIFF_SHA256_HEX]);

/* The digest of a regular file's contents. CFI_E_IO (diag says why) when
 * it is not one or cannot be read. */
enum cfi_status diff_sha256_file(const char *path, char hex[DIFF_SHA256_HEX],
                                 struct cfi_diag *diag);

#endif
