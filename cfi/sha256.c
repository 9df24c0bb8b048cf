/* SPDX-License-Identifier: MIT */
/* sha256.c — see sha256.h; FIPS 180-4 §6.2, written for clarity. The
 * digest of a file is in sha256_file.c, so that the run-time library
 * takes this file alone. */
#include "sha256.h"

#include <stdio.h>
#include <string.h>

static const uint32_t k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, unsigned n)
{
    return x >> n | x << (32 - n);
}

static void compress(uint32_t h[8], const uint8_t block[64])
{
    uint32_t w[64], v[8];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)block[4 * t] << 24 | (uint32_t)block[4 * t + 1] << 16 |
               (uint32_t)block[4 * t + 2] << 8 | block[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ w[t - 15] >> 3;
        uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ w[t - 2] >> 10;
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    memcpy(v, h, sizeof v);
    for (int t = 0; t < 64; t++) {
        uint32_t e = v[4], a = v[0];
        uint32_t t1 = v[7] + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) +
                      ((e & v[5]) ^ (~e & v[6])) + k[t] + w[t];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) +
                      ((a & v[1]) ^ (a & v[2]) ^ (v[1] & v[2]));
        memmove(v + 1, v, 7 * sizeof v[0]);
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++)
        h[i] += v[i];
}

void cfi_sha256_init(struct cfi_sha256 *s)
{
    static const uint32_t initial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                        0xa54ff53a, 0x510e527f, 0x9b05688c,
                                        0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, initial, sizeof s->h);
    s->used = 0;
    s->length = 0;
}

void cfi_sha256_add(struct cfi_sha256 *s, const void *bytes, size_t n)
{
    const uint8_t *p = bytes;
    s->length += n;
    while (n > 0) {
        size_t take = 64 - s->used < n ? 64 - s->used : n;
        memcpy(s->block + s->used, p, take);
        s->used += take;
        p += take;
        n -= take;
        if (s->used == 64) {
            compress(s->h, s->block);
            s->used = 0;
        }
    }
}

void cfi_sha256_digest(struct cfi_sha256 *s, uint8_t digest[CFI_SHA256_BYTES])
{
    uint64_t bits = s->length * 8;
    uint8_t pad = 0x80, zero = 0, length[8];
    cfi_sha256_add(s, &pad, 1);
    while (s->used != 56)
        cfi_sha256_add(s, &zero, 1);
    for (int i = 0; i < 8; i++)
        length[i] = (uint8_t)(bits >> (56 - 8 * i));
    cfi_sha256_add(s, length, 8);
    for (int i = 0; i < 32; i++)
        digest[i] = (uint8_t)(s->h[i / 4] >> (24 - 8 * (i % 4)));
}

void cfi_sha256_hex(struct cfi_sha256 *s, char hex[CFI_SHA256_HEX])
{
    uint8_t digest[CFI_SHA256_BYTES];
    cfi_sha256_digest(s, digest);
    for (int i = 0; i < CFI_SHA256_BYTES; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
}
