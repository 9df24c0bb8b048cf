/* SPDX-License-Identifier: MIT */
/* mutate_stats.c — how many mutants cfi/ still loads, the structured
 * mutator's (fuzz/mutator/structured.h) against a plain byte mutator's.
 *
 *   mutate_stats N SHAPE SEED_FOLDER
 *
 * Mutant i is seed file i mod (number of files) mutated once, with seed
 * i, by each mutator. SHAPE cfi_bytes: loaded means cfi_file_from_section
 * accepts the section after the header; elf: cfi_file_open accepts the
 * file. Prints, per mutator: mutants, unchanged, loaded, loaded with at
 * least one FDE (a share of the mutants).
 *
 * The byte mutator makes one to four of libFuzzer's basic byte mutations
 * (a bit flipped, a byte changed, an "interesting" integer of 1, 2, 4 or 8
 * bytes written, bytes erased, random bytes inserted, a block copied over
 * another) at places drawn uniformly over the input, without dictionary
 * or comparison feedback. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfi/cfi.h"
#include "fuzz/mutator/structured.h"
#include "fuzz/targets.h"
#include "robust/robust.h"

enum { MAX_FILES = 512, MAX_SIZE = 1 << 20 };

struct seed {
    uint8_t *bytes;
    size_t size;
};

static size_t byte_mutate(uint8_t *d, size_t size, size_t max,
                          uint64_t seed)
{
    static const uint64_t interesting[] = {0, 1, 0x7f, 0x80, 0xff, 0x7fff,
                                           0x8000, 0xffff, 0x7fffffff,
                                           0x80000000, 0xffffffff,
                                           UINT64_MAX};
    struct rb_rng rng;
    rb_rng_seed(&rng, seed, size);
    unsigned n = 1 + (unsigned)rb_below(&rng, 4);
    for (unsigned i = 0; i < n && size > 0; i++) {
        size_t at = (size_t)rb_below(&rng, size);
        size_t len = 1 + (size_t)rb_below(&rng, 16);
        switch (rb_below(&rng, 7)) {
        case 0: d[at] ^= (uint8_t)(1u << rb_below(&rng, 8)); break;
        case 1: d[at] = (uint8_t)rb_next(&rng); break;
        case 2: rb_store(d, size, at, 1u << rb_below(&rng, 4),
                         interesting[rb_below(&rng, 12)]);
                break;
        case 3:
            if (len > size - at)
                len = size - at;
            memmove(d + at, d + at + len, size - at - len);
            size -= len;
            break;
        case 4:
            if (len > max - size)
                break;
            memmove(d + at + len, d + at, size - at);
            for (size_t k = 0; k < len; k++)
                d[at + k] = (uint8_t)rb_next(&rng);
            size += len;
            break;
        default: {
            size_t from = (size_t)rb_below(&rng, size);
            if (len > size - at)
                len = size - at;
            if (len > size - from)
                len = size - from;
            memmove(d + at, d + from, len);
        }
        }
    }
    return size;
}

struct counts {
    size_t mutants, unchanged, loaded, with_fdes;
};

static void load(enum fuzz_shape shape, struct fuzz_context *context,
                 const uint8_t *d, size_t size, struct counts *c)
{
    struct cfi_file *file = NULL;
    struct cfi_diag diag;
    enum cfi_status st = CFI_E_MALFORMED;
    if (shape == FUZZ_SHAPE_CFI_BYTES) {
        if (size >= FUZZ_CFI_HEADER_SIZE)
            st = cfi_file_from_section(
                d + FUZZ_CFI_HEADER_SIZE, size - FUZZ_CFI_HEADER_SIZE,
                d[0] & FUZZ_CFI_DEBUG_FRAME ? CFI_DEBUG_FRAME : CFI_EH_FRAME,
                cfi_load_le(d + 12, 4), &file, &diag);
    } else if (fuzz_context_write(context, d, size) == FUZZ_OK) {
        st = cfi_file_open(context->path, &file, &diag);
    }
    if (st != CFI_OK)
        return;
    c->loaded++;
    c->with_fdes += file->nfdes > 0;
    cfi_file_close(file);
}

static size_t read_seeds(const char *dir, struct seed *seeds)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d)) && n < MAX_FILES;) {
        if (e->d_name[0] == '.' || !strncmp(e->d_name, "README", 6))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *in = fopen(path, "rb");
        if (!in)
            continue;
        seeds[n].bytes = malloc(MAX_SIZE);
        seeds[n].size = seeds[n].bytes ? fread(seeds[n].bytes, 1, MAX_SIZE,
                                               in) : 0;
        fclose(in);
        n += seeds[n].size > 0;
    }
    if (d)
        closedir(d);
    return n;
}

static void print(const char *what, const struct counts *c)
{
    double n = c->mutants ? (double)c->mutants : 1.0;
    printf("  %-10s mutants %6zu  unchanged %5.1f%%  loaded %5.1f%%  "
           "with FDEs %5.1f%%\n", what, c->mutants,
           100.0 * (double)c->unchanged / n, 100.0 * (double)c->loaded / n,
           100.0 * (double)c->with_fdes / n);
}

int main(int argc, char **argv)
{
    int shape = argc == 4 ? fuzz_shape_parse(argv[2]) : -1;
    if (shape != FUZZ_SHAPE_CFI_BYTES && shape != FUZZ_SHAPE_ELF) {
        fprintf(stderr, "usage: mutate_stats N cfi_bytes|elf SEED_FOLDER\n");
        return 1;
    }
    size_t n = strtoul(argv[1], NULL, 10);
    static struct seed seeds[MAX_FILES];
    size_t nseeds = read_seeds(argv[3], seeds);
    struct fuzz_context context;
    uint8_t *buf = malloc(MAX_SIZE);
    if (!nseeds || !buf || fuzz_context_open(&context) != FUZZ_OK) {
        fprintf(stderr, "mutate_stats: no seeds in %s\n", argv[3]);
        return 2;
    }
    struct counts structured = {0}, bytes = {0};
    for (size_t i = 0; i < n; i++) {
        const struct seed *s = &seeds[i % nseeds];
        for (int k = 0; k < 2; k++) {
            memcpy(buf, s->bytes, s->size);
            size_t size =
                k == 0 ? fuzz_mutator_structured((enum fuzz_shape)shape, buf,
                                                 s->size, MAX_SIZE, i, NULL)
                       : byte_mutate(buf, s->size, MAX_SIZE, i);
            struct counts *c = k == 0 ? &structured : &bytes;
            c->mutants++;
            c->unchanged += size == s->size && !memcmp(buf, s->bytes, size);
            load((enum fuzz_shape)shape, &context, buf, size, c);
        }
    }
    printf("%s: %zu mutants of %zu seeds (%s)\n", argv[2], n, nseeds,
           argv[3]);
    print("structured", &structured);
    print("bytes", &bytes);
    fuzz_context_close(&context);
    return 0;
}
