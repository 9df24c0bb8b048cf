/* SPDX-License-Identifier: MIT */
/* engines.h — the engines module's public header: the engine contract
 * and its registry (engine.h), the memory model (memory.h) and the
 * states (state.h) a request is asked in, the comparison of two answers
 * and the known deviations it consults (compare.h, deviations.h), the
 * eh_elf v1 adapter (eh_elf_v1.h), an engine asked in a child process
 * (ask.h), the .eh_frame_hdr check (eh_frame_hdr.h), and the printing of
 * answers and states (print.h).
 *
 * The adapters of the outside engines (oracle_*.h) and their helpers
 * are the module's own; only white-box tests, fuzz targets and
 * benchmarks of an adapter include them. */
#ifndef CFISEM_ENGINES_ENGINES_H
#define CFISEM_ENGINES_ENGINES_H

#include "engines/ask.h"
#include "engines/compare.h"
#include "engines/deviations.h"
#include "engines/eh_elf_v1.h"
#include "engines/eh_frame_hdr.h"
#include "engines/engine.h"
#include "engines/memory.h"
#include "engines/print.h"
#include "engines/state.h"

#endif
