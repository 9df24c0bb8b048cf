/* SPDX-License-Identifier: MIT */
/* analyse.h — the transfer function and merge (transfer.c), used by the
 * fixpoint (analyse.c). */
#ifndef CFISEM_SYNTH_ANALYSE_H
#define CFISEM_SYNTH_ANALYSE_H

#include "internal.h"

/* The state after instruction `in`, from the state before it. */
void synth_transfer(const struct synth_machine *machine,
                    struct synth_state *state, const struct synth_insn *in);
/* into := into ⊔ in (into not reached: in). True when into changed.
 * When a call's fall-through state lost to a jump's (the call is then
 * taken not to return), *lost_call is that call's instruction index;
 * else it is left alone. */
bool synth_merge(struct synth_state *into, const struct synth_state *in,
                 long *lost_call);

/* The comparison of analysed states with the IL (compare.c). */
enum cfi_status synth_compare(struct synth_fde *out,
                              const struct sem_fde_il *il);

/* The RA_SIGN_STATE of an IL row (the IL writes state s as the rule
 * val(lit<s>); no rule: 0), with the CIE's key (enum synth_ra_sign);
 * SYNTH_RA_CONFLICT for a rule that is no state. NOT_SIGNED on an
 * architecture without one. */
uint8_t synth_row_ra_sign(const struct synth_machine *machine,
                          const struct cfi_cie *cie,
                          const struct sem_row *row);

#endif
