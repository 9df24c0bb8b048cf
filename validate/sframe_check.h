/* SPDX-License-Identifier: MIT */
/* sframe_check.h — a file's own .sframe checked against its .eh_frame
 * (`cfisem validate FILE --sframe`). gas derives both from the same
 * .cfi_* directives, whichever section they go to: the DWARF FDEs are
 * those of .eh_frame, and those of .debug_frame where .eh_frame has none.
 *
 * At every address of every DWARF FDE that SFrame covers too, as an
 * innermost frame, in `nstates` states (engine_state_make's full and
 * partial states, in the synthetic memory of engines/state.h): SFrame's
 * answer (sframe_unwind) against the IL's row there with only its rules
 * for rbp and rip kept (SFrame has no column for the others): the same
 * status, CFA, caller's rbp and rip. Consecutive addresses of one FDE
 * with the same first differing item are one wrong range.
 *
 * And the coverage:
 *   range     an SFrame FDE that covers addresses of an .eh_frame FDE
 *             and reaches out of it, or an .eh_frame FDE that SFrame
 *             covers in part only (SFrame may split one FDE in several,
 *             as it does the PLT's);
 *   dropped   an .eh_frame FDE no SFrame FDE covers, with the reason the
 *             DWARF shows when it shows one (the FDE does not translate;
 *             a CFA that is an expression or not from rsp or rbp; a
 *             return address not at CFA-8; an rbp rule SFrame cannot
 *             say); with none, the object may have been assembled without
 *             --gsframe (crt files, the linker's PLT stubs);
 *   alone     addresses an SFrame FDE covers and no .eh_frame FDE does.
 * Wrong ranges, range problems and addresses SFrame covers alone are
 * problems; dropped FDEs are listed, not counted as problems. */
#ifndef CFISEM_VALIDATE_SFRAME_CHECK_H
#define CFISEM_VALIDATE_SFRAME_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cfi/cfi.h"
#include "sframe/sframe.h"

#define VALIDATE_SFRAME_KEPT 200

enum validate_sframe_item {
    VALIDATE_SF_STATUS,
    VALIDATE_SF_CFA,
    VALIDATE_SF_RBP,
    VALIDATE_SF_RIP
};

struct validate_sframe_wrong {
    uint64_t begin, end;             /* the wrong addresses */
    enum validate_sframe_item item;      /* the first differing item */
    const struct cfi_fde *fde;       /* the .eh_frame FDE */
    const struct sframe_fde *sfde;
    unsigned state;                  /* of the first wrong answer */
    struct cfi_frame expected, got;  /* its two answers */
};

struct validate_sframe_coverage {
    const struct cfi_fde *fde;       /* range, dropped */
    const struct sframe_fde *sfde;   /* range (NULL: covered in part), alone */
    uint64_t begin, end;             /* alone: the addresses */
    const char *reason;              /* dropped: NULL when none is seen */
};

struct validate_sframe_result {
    const struct sframe_table *table;
    size_t n_eh_frame, nfdes;
    unsigned nstates;
    uint64_t addresses, compared, agree;
    uint64_t nwrong, nrange, ndropped, ndropped_reason, nalone;
    size_t kept_wrong, kept_range, kept_dropped, kept_alone;
    struct validate_sframe_wrong wrong[VALIDATE_SFRAME_KEPT];
    struct validate_sframe_coverage range[VALIDATE_SFRAME_KEPT];
    struct validate_sframe_coverage dropped[VALIDATE_SFRAME_KEPT];
    struct validate_sframe_coverage alone[VALIDATE_SFRAME_KEPT];
};

/* Fills *v (allocated by the caller) for `file` and its SFrame `table`.
 * CFI_OK, or CFI_E_NOMEM. */
enum cfi_status validate_sframe_check(const struct cfi_file *file,
                                      const struct sframe_table *table,
                                      unsigned nstates, uint64_t seed,
                                      struct validate_sframe_result *v);

/* Problems: wrong ranges, range problems, addresses SFrame covers alone. */
uint64_t validate_sframe_problems(const struct validate_sframe_result *v);

/* The result as text, up to `show` entries of each list. */
void validate_sframe_text(FILE *out, const char *path,
                          const struct validate_sframe_result *v, size_t show);

#endif
