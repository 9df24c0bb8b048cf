/* SPDX-License-Identifier: MIT */
/* afl.c — the structured mutator as an AFL++ custom mutator
 * (structured.h), built into build/fuzz/cfisem-mutator.so:
 *
 *   AFL_CUSTOM_MUTATOR_LIBRARY=build/fuzz/cfisem-mutator.so \
 *   CFISEM_FUZZ_SHAPE=cfi_bytes afl-fuzz ... -- fuzz_cfi_bytes
 *
 * CFISEM_FUZZ_SHAPE names the harness's input (cfi_bytes, elf, oracles);
 * without it the shape is guessed from each input (an ELF file; a
 * selector byte and one; else target 1's input). AFL++ runs its own
 * mutations too unless AFL_CUSTOM_MUTATOR_ONLY is set. The mutator's
 * state (its random stream and output buffer) lives in the object
 * afl_custom_init returns. */
#include <stdlib.h>
#include <string.h>

#include "robust/robust.h"
#include "structured.h"

struct afl_mutator {
    struct rb_rng rng;
    int shape;                 /* -1: guess */
    uint8_t *out;
    size_t capacity;
};

/* AFL++'s custom mutator interface (afl-fuzz loads these by name). */
void *afl_custom_init(void *afl, unsigned int seed);
size_t afl_custom_fuzz(void *data, uint8_t *buf, size_t buf_size,
                       uint8_t **out_buf, uint8_t *add_buf,
                       size_t add_buf_size, size_t max_size);
void afl_custom_deinit(void *data);

void *afl_custom_init(void *afl, unsigned int seed)
{
    (void)afl;
    struct afl_mutator *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    rb_rng_seed(&m->rng, seed, 0x6166);
    m->shape = fuzz_shape_parse(getenv("CFISEM_FUZZ_SHAPE"));
    return m;
}

static enum fuzz_shape guess(const uint8_t *buf, size_t size)
{
    if (size >= 4 && memcmp(buf, "\177ELF", 4) == 0)
        return FUZZ_SHAPE_ELF;
    if (size >= 5 && memcmp(buf + 1, "\177ELF", 4) == 0)
        return FUZZ_SHAPE_ORACLES;
    return FUZZ_SHAPE_CFI_BYTES;
}

size_t afl_custom_fuzz(void *data, uint8_t *buf, size_t buf_size,
                       uint8_t **out_buf, uint8_t *add_buf,
                       size_t add_buf_size, size_t max_size)
{
    (void)add_buf;
    (void)add_buf_size;
    struct afl_mutator *m = data;
    if (max_size > m->capacity) {
        uint8_t *grown = realloc(m->out, max_size);
        if (!grown) {
            *out_buf = buf;
            return buf_size;
        }
        m->out = grown;
        m->capacity = max_size;
    }
    size_t size = buf_size < max_size ? buf_size : max_size;
    memcpy(m->out, buf, size);
    enum fuzz_shape shape = m->shape >= 0 ? (enum fuzz_shape)m->shape
                                          : guess(buf, size);
    *out_buf = m->out;
    return fuzz_mutator_structured(shape, m->out, size, max_size,
                                   rb_next(&m->rng), NULL);
}

void afl_custom_deinit(void *data)
{
    struct afl_mutator *m = data;
    if (m)
        free(m->out);
    free(m);
}
