/* SPDX-License-Identifier: MIT */
/* pac.h — the recursions of pac.c, built with return-address signing. */
#ifndef CFISEM_TEST_PAC_H
#define CFISEM_TEST_PAC_H

#include <stdint.h>

/* Called at the bottom with the deepest frame's record (x29): {the
 * caller's record, the x30 the frame saved, signed: its
 * pointer-authentication code still in it}. */
typedef int pac_leaf_fn(void *arg, const uint64_t *record);

/* depth + 1 frames of pac.c, then leaf. pac_a signs with the A key,
 * pac_b with the B key. */
int pac_a(int depth, pac_leaf_fn *leaf, void *arg);
int pac_b(int depth, pac_leaf_fn *leaf, void *arg);

#endif
