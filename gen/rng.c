/* SPDX-License-Identifier: MIT */
/* rng.c — the generator's random numbers: xoshiro256** (Blackman and
 * Vigna), its state seeded from --seed through splitmix64, so that a seed
 * gives the same program on every machine. The state is the caller's. */
#include "internal.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

void gen_rng_seed(struct gen_rng *rng, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t gen_rng_next(struct gen_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Rejection sampling: no bias, whatever n. */
uint64_t gen_rng_below(struct gen_rng *rng, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = gen_rng_next(rng);
    while (x >= limit);
    return x % n;
}

uint64_t gen_rng_range(struct gen_rng *rng, uint64_t lo, uint64_t hi)
{
    if (hi - lo == UINT64_MAX)
        return gen_rng_next(rng);
    return lo + gen_rng_below(rng, hi - lo + 1);
}

bool gen_rng_chance(struct gen_rng *rng, unsigned percent)
{
    return gen_rng_below(rng, 100) < percent;
}

size_t gen_rng_pick(struct gen_rng *rng, const unsigned *weights, size_t n)
{
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += weights[i];
    uint64_t x = gen_rng_below(rng, total);
    for (size_t i = 0; i < n; i++) {
        if (x < weights[i])
            return i;
        x -= weights[i];
    }
    return n - 1; /* not reached: the weights sum to total */
}
