/* SPDX-License-Identifier: MIT */
/* text.c — growing buffers: C text, key bytes, and the interning table
 * that maps keys to dense indices. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

static bool text_reserve(struct cg_text *text, size_t more)
{
    if (text->failed)
        return false;
    if (more < text->cap - text->len)
        return true;
    size_t cap = text->cap ? text->cap : 4096;
    while (cap - text->len <= more) {
        if (cap > SIZE_MAX / 2) {
            text->failed = true;
            return false;
        }
        cap *= 2;
    }
    char *data = realloc(text->data, cap);
    if (!data) {
        text->failed = true;
        return false;
    }
    text->data = data;
    text->cap = cap;
    return true;
}

void cg_vprintf(struct cg_text *text, const char *format, va_list args)
{
    va_list copy;
    va_copy(copy, args);
    int n = vsnprintf(NULL, 0, format, copy);
    va_end(copy);
    if (n < 0) {
        text->failed = true;
        return;
    }
    if (!text_reserve(text, (size_t)n + 1))
        return;
    vsnprintf(text->data + text->len, (size_t)n + 1, format, args);
    text->len += (size_t)n;
}

void cg_printf(struct cg_text *text, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    cg_vprintf(text, format, args);
    va_end(args);
}

void cg_puts(struct cg_text *text, const char *string)
{
    size_t n = strlen(string);
    if (!text_reserve(text, n + 1))
        return;
    memcpy(text->data + text->len, string, n + 1);
    text->len += n;
}

void cg_text_free(struct cg_text *text)
{
    free(text->data);
    *text = (struct cg_text){0};
}

void cg_emit_u64(struct cg_text *text, uint64_t value)
{
    if (value < 10)
        cg_printf(text, "UINT64_C(%u)", (unsigned)value);
    else
        cg_printf(text, "UINT64_C(0x%llx)", (unsigned long long)value);
}

double cg_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ */
/* Key bytes                                                            */
/* ------------------------------------------------------------------ */

void cg_bytes_put(struct cg_bytes *bytes, const void *data, size_t len)
{
    if (bytes->failed)
        return;
    if (len > bytes->cap - bytes->len) {
        size_t cap = bytes->cap ? bytes->cap : 256;
        while (cap - bytes->len < len && cap <= SIZE_MAX / 2)
            cap *= 2;
        uint8_t *data_new = cap - bytes->len >= len ? realloc(bytes->data, cap)
                                                    : NULL;
        if (!data_new) {
            bytes->failed = true;
            return;
        }
        bytes->data = data_new;
        bytes->cap = cap;
    }
    if (len)
        memcpy(bytes->data + bytes->len, data, len);
    bytes->len += len;
}

void cg_bytes_u64(struct cg_bytes *bytes, uint64_t value)
{
    uint8_t le[8];
    for (unsigned i = 0; i < 8; i++)
        le[i] = (uint8_t)(value >> (8 * i));
    cg_bytes_put(bytes, le, sizeof le);
}

/* ------------------------------------------------------------------ */
/* Interning                                                            */
/* ------------------------------------------------------------------ */

static uint64_t hash_bytes(const uint8_t *bytes, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ bytes[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

static bool same_key(const struct cg_intern *t, size_t index,
                     const void *key, size_t len)
{
    return t->key_len[index] == len &&
           (len == 0 || !memcmp(t->blob + t->key_offset[index], key, len));
}

/* The slot of `key`: its index + 1, or an empty slot (0). */
static size_t find_slot(const struct cg_intern *t, const void *key,
                        size_t len)
{
    size_t mask = t->nslots - 1;
    size_t slot = (size_t)hash_bytes(key, len) & mask;
    while (t->slots[slot] && !same_key(t, t->slots[slot] - 1, key, len))
        slot = (slot + 1) & mask;
    return slot;
}

static bool grow_slots(struct cg_intern *t)
{
    size_t nslots = t->nslots ? t->nslots * 2 : 64;
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return false;
    uint32_t *old = t->slots;
    t->slots = slots;
    t->nslots = nslots;
    for (size_t i = 0; i < t->count; i++)
        t->slots[find_slot(t, t->blob + t->key_offset[i], t->key_len[i])] =
            (uint32_t)i + 1;
    free(old);
    return true;
}

static bool add_key(struct cg_intern *t, const void *key, size_t len)
{
    if (t->count == t->count_cap) {
        size_t cap = t->count_cap ? t->count_cap * 2 : 64;
        size_t *offsets = realloc(t->key_offset, cap * sizeof *offsets);
        if (offsets)
            t->key_offset = offsets;
        size_t *lens = realloc(t->key_len, cap * sizeof *lens);
        if (lens)
            t->key_len = lens;
        if (!offsets || !lens)
            return false;
        t->count_cap = cap;
    }
    struct cg_bytes blob = {t->blob, t->blob_len, t->blob_cap, false};
    cg_bytes_put(&blob, key, len);
    t->blob = blob.data;
    t->blob_cap = blob.cap;
    if (blob.failed)
        return false;
    t->key_offset[t->count] = t->blob_len;
    t->key_len[t->count] = len;
    t->blob_len = blob.len;
    t->count++;
    return true;
}

long cg_intern(struct cg_intern *t, const void *key, size_t len, bool *added)
{
    *added = false;
    if (t->count >= UINT32_MAX / 2)
        return -1;
    if ((t->count + 1) * 2 > t->nslots && !grow_slots(t))
        return -1;
    size_t slot = find_slot(t, key, len);
    if (t->slots[slot])
        return (long)t->slots[slot] - 1;
    if (!add_key(t, key, len))
        return -1;
    t->slots[slot] = (uint32_t)t->count;
    *added = true;
    return (long)t->count - 1;
}

void cg_intern_free(struct cg_intern *t)
{
    free(t->blob);
    free(t->key_offset);
    free(t->key_len);
    free(t->slots);
    *t = (struct cg_intern){0};
}
