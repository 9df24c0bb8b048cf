/* internal.h — what the files of runtime/ share. */
#ifndef CFISEM_RUNTIME_INTERNAL_H
#define CFISEM_RUNTIME_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../cfi/cfi.h"
#include "../compile/eh_elf.h"
#include "cfisem-unwind.h"

/* A loaded object as the unwinder sees it. Entries of the table are
 * written once, before they are published, and never changed. */
struct rt_object {
    uint64_t start;           /* run-time range of its PT_LOAD segments */
    uint64_t end;
    uint64_t bias;            /* load bias: run-time minus file address */
    uint64_t eh_frame_hdr;    /* run-time address of .eh_frame_hdr, or 0 */
    eh_elf_unwind_fn *unwind; /* its eh_elf's entry, or NULL: interp */
};

/* The private contents of struct cfisem_cursor. */
struct rt_cursor {
    struct eh_elf_regs regs;  /* the frame the cursor is on */
    uint32_t caller_frame;    /* its PC is a return address (PC-1) */
    uint32_t frames_eh_elf;
    uint32_t frames_interp;
    uint32_t interp_only;     /* CFISEM_ENGINE_INTERP */
    cfisem_read_fn *read;     /* remote reads; NULL for a local cursor */
    void *read_data;
    uint64_t stack_lo;        /* local: [lo, hi) known readable */
    uint64_t stack_hi;
    struct rt_object object;  /* the object of the last step */
};

/* The object holding run-time address pc: the table, then
 * _dl_find_object (no eh_elf: the interpreter). Async-signal-safe. */
bool rt_find_object(uint64_t pc, struct rt_object *object);

/* Counts a frame the interpreter unwound, or a failed step. */
void rt_count_interp(void);
void rt_count_failure(void);

/* Memory of a local cursor: the readable stack extent around sp (per
 * thread, remembered), and a read that fails instead of faulting. */
void rt_stack_extent(uint64_t sp, uint64_t *lo, uint64_t *hi);
int rt_read_local(void *cursor, uint64_t addr, unsigned size,
                  uint64_t *value);
bool rt_readable(uint64_t addr, uint64_t size);

/* The FDE of lookup PC pc in the object, read from its mapped
 * .eh_frame_hdr and .eh_frame (run-time addresses). false: none, or
 * records the reader does not take (then the step fails). */
bool rt_find_fde(const struct rt_object *object, uint64_t pc,
                 struct cfi_cie *cie, struct cfi_fde *fde);

/* One step by the interpreter: callee registers in, caller's out. */
int rt_step_interp(const struct rt_cursor *cursor, uint64_t lookup_pc,
                   struct eh_elf_regs *caller, uint32_t *signal_frame);

#endif
