/* libunwind.h — libunwind (nongnu, 1.6) as an outside engine.
 *
 * The remote API: an address space whose accessors read the harness's
 * memory model and the request's registers. libunwind finds and parses
 * .eh_frame_hdr and .eh_frame itself, in the ELF image mapped in that
 * memory (the FDE search goes through _Ux86_64_dwarf_search_unwind_table
 * over the .eh_frame_hdr table, as perf does). One unw_step per request.
 *
 * What it cannot say: a file without .eh_frame_hdr (or with a table
 * encoding other than the one every linker writes) is not supported; its
 * first step looks up the exact PC (a remote cursor's first frame), so a
 * caller frame is given to it as PC-1 with rip = PC (see
 * diff_libunwind_unwind). Registers above 16 are not reported.
 */
#ifndef CFISEM_DIFF_LIBUNWIND_H
#define CFISEM_DIFF_LIBUNWIND_H

#include <stdbool.h>

#include "cfi/cfi.h"

struct diff_libunwind;

/* CFI_E_UNSUPPORTED when the file has no usable .eh_frame_hdr. `cache`
 * selects UNW_CACHE_GLOBAL, else UNW_CACHE_NONE. */
enum cfi_status diff_libunwind_new(const struct cfi_file *file, bool cache,
                                   struct diff_libunwind **libunwind);
void diff_libunwind_free(struct diff_libunwind *libunwind);

/* One step. The result is a cfi_frame: status CFI_OK with the CFA and the
 * caller's registers 0-16 (a register libunwind cannot read after the
 * step is undefined), or an error whose message is libunwind's. */
enum cfi_status diff_libunwind_unwind(struct diff_libunwind *libunwind,
                                      const struct cfi_request *request,
                                      struct cfi_frame *frame);

#endif
