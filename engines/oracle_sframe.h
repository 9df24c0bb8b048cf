/* SPDX-License-Identifier: MIT */
/* oracle_sframe.h — the file's own .sframe as an engine (sframe/sframe.h).
 *
 * It speaks for what SFrame carries and for nothing else: the CFA, the
 * caller's rbp and rip; every other register is not comparable, and so is
 * the signal frame flag (SFrame v1 and v2 have none). A PC that no SFrame
 * FDE covers is not comparable either ("SFrame has no FDE here": gas
 * leaves out the FDEs it cannot express; cfisem validate FILE --sframe
 * lists them). A file without .sframe cannot be opened
 * (CFI_E_UNSUPPORTED). */
#ifndef CFISEM_ENGINES_ORACLE_SFRAME_H
#define CFISEM_ENGINES_ORACLE_SFRAME_H

#include "cfi/cfi.h"
#include "engines/engine.h"

enum cfi_status engine_sframe_open(const struct cfi_file *file, void **self,
                                   struct cfi_diag *diag);
enum cfi_status engine_sframe_answer(void *self,
                                     const struct cfi_request *request,
                                     struct engine_answer *answer);
void engine_sframe_close(void *self);

#endif
