/* SPDX-License-Identifier: MIT */
/* sha256.h — SHA-256 (FIPS 180-4): of a file, to know when two files of a
 * run have the same contents and when a stored result is still the
 * file's (diff/batch.h); of a file's frame sections, the stamp of an
 * eh_elf built from a file without build-id (compile/eh_elf.h). */
#ifndef CFISEM_CFI_SHA256_H
#define CFISEM_CFI_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "cfi.h"

#define CFI_SHA256_HEX 65   /* 64 hex digits and the NUL */
#define CFI_SHA256_BYTES 32

struct cfi_sha256 {
    uint32_t h[8];
    uint8_t block[64];
    size_t used;             /* bytes in block */
    uint64_t length;         /* bytes hashed */
};

void cfi_sha256_init(struct cfi_sha256 *s);
void cfi_sha256_add(struct cfi_sha256 *s, const void *bytes, size_t n);
/* The digest, 32 bytes. Ends the computation. */
void cfi_sha256_digest(struct cfi_sha256 *s, uint8_t digest[CFI_SHA256_BYTES]);
/* The digest as 64 lowercase hex digits. Ends the computation. */
void cfi_sha256_hex(struct cfi_sha256 *s, char hex[CFI_SHA256_HEX]);

/* The digest of a regular file's contents. CFI_E_IO (diag says why) when
 * it is not one or cannot be read. */
enum cfi_status cfi_sha256_file(const char *path, char hex[CFI_SHA256_HEX],
                                 struct cfi_diag *diag);

#endif
