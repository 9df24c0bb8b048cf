/* SPDX-License-Identifier: MIT */
/* internal.h — what the files of runtime/ share. */
#ifndef CFISEM_RUNTIME_INTERNAL_H
#define CFISEM_RUNTIME_INTERNAL_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../cfi/arch.h"
#include "../cfi/cfi.h"
#include "../compile/eh_elf.h"
#include "cfisem-unwind.h"

/* The machine's registers (cfisem-unwind.h, the same as eh_elf.h's):
 * the PC, the stack pointer, and masks of them. */
_Static_assert(CFISEM_NREGS == EH_ELF_NREGS &&
                   sizeof(cfisem_regmask_t) == sizeof(eh_elf_mask_t),
               "the library's registers are the eh_elfs'");
#define RT_PC CFISEM_REG_PC
#define RT_SP CFISEM_REG_SP
#define RT_BIT(r) ((eh_elf_mask_t)1 << (r))
#define RT_ALL_REGS (RT_BIT(CFISEM_NREGS - 1) * 2 - 1)

/* The machine's CFI (cfi/arch.h), and, on AArch64, the virtual-address
 * bits of the walk's code addresses for stripping a signed return
 * address (the eh_elfs' env.va_bits, 0: 48, Linux's user addresses). */
#if defined(__aarch64__)
#define RT_ARCH (&cfi_arch_aarch64)
#define RT_VA_BITS(walk) ((walk)->env.va_bits)
#else
#define RT_ARCH (&cfi_arch_x86_64)
#define RT_VA_BITS(walk) 0u
#endif

/* A loaded object as the unwinder sees it. Entries of the table are
 * written once, before they are published, and never changed. */
struct rt_object {
    uint64_t start;           /* run-time range of its PT_LOAD segments */
    uint64_t end;
    uint64_t bias;            /* load bias: run-time minus file address */
    uint64_t eh_frame_hdr;    /* run-time address of .eh_frame_hdr, or 0 */
    /* The readable PT_LOAD segment holding .eh_frame_hdr: the fallback
     * reads the header, the table and the records inside it only (the
     * range above may hold unmapped holes), [eh_frame_hdr -
     * frame_below, eh_frame_hdr + frame_above); empty when unknown.
     * 32 bits each (a larger segment is read in part), to keep a walk
     * inside struct cfisem_cursor. */
    uint32_t frame_below;
    uint32_t frame_above;
    eh_elf_unwind_fn *unwind; /* its eh_elf's entry, or NULL: interp */
};

/* Everything a walk up one stack keeps besides the registers: where
 * memory comes from, the engine, and the objects of the last steps (a
 * walk goes back and forth between a few). */
struct rt_walk {
    /* What the eh_elfs are given: the caller's read for a remote walk;
     * for a local one rt_read_local on this walk (data, set again at
     * the start of each walk_up: a cursor may have been copied) and the
     * stack extent as the window of direct loads. */
    struct eh_elf_env env;
    uint64_t stack_lo;        /* local: [lo, hi) known readable */
    uint64_t stack_hi;
    /* The object of the last step, objects[current & 1], and the one
     * before it: switching back is a flip of `current`. */
    struct rt_object objects[2];
    uint32_t frames_eh_elf;
    uint32_t frames_interp;
    uint32_t interp_counted;  /* of frames_interp, in cfisem_stats already */
    /* (bytes, after the counters: no padding, so that a cursor holds a
     * walk and its registers in struct cfisem_cursor) */
    uint8_t remote;           /* reads through the caller's callback */
    uint8_t interp_only;      /* CFISEM_ENGINE_INTERP or _NO_CACHE */
    uint8_t row_cache;        /* the interpreter uses the row cache */
    uint8_t current;          /* objects[current & 1] */
    uint8_t frame_cache;      /* steps replay the frame cache's rows */
    uint8_t caller_frame;     /* a cursor's: its PC is a return address */
    /* The object table's entries of objects[0] and [1] (rt_find_object),
     * found valid by this walk; 0: none. */
    uint16_t entries[2];
};

static inline const struct rt_object *rt_walk_object(const struct rt_walk *w)
{
    return &w->objects[w->current & 1];
}

/* The private contents of struct cfisem_cursor. */
struct rt_cursor {
    struct eh_elf_regs regs;  /* the frame the cursor is on */
    struct rt_walk walk;      /* (walk.caller_frame: of this frame) */
};

/* The object holding run-time address pc: the table, then
 * _dl_find_object (no eh_elf: the interpreter). *entry: the object
 * table's entry, its index + 1 with RT_ENTRY_STAYS when its object is
 * one that stays (never unloaded, not checked), or 0 for an object
 * found by _dl_find_object. Async-signal-safe. */
enum { RT_ENTRY_STAYS = 0x8000 };
bool rt_find_object(uint64_t pc, struct rt_object *object, uint16_t *entry);

/* The object of table entry `entry` (rt_find_object's) into *object,
 * when it holds pc and is found valid there (its object is the one
 * loaded at pc now); false otherwise. Async-signal-safe. */
bool rt_entry_object(uint16_t entry, uint64_t pc, struct rt_object *object);

/* The link maps of the objects loaded with the program (startup.c),
 * which glibc never unloads: the program and the closure of its
 * DT_NEEDED entries; at most max of them. Not async-signal-safe. */
enum { RT_MAX_STARTUP = 512 };
size_t rt_startup_maps(const void **maps, size_t max);

/* The SHA-256 of the frame sections of the file at path (frame_id.c),
 * the stamp of an eh_elf of an object without build-id
 * (EH_ELF_OBJECT_ID_FRAME_SHA256), when the file's allocated .eh_frame is
 * the loaded object's (info: its program headers); false otherwise. Not
 * async-signal-safe. */
struct dl_phdr_info;
bool rt_frame_sha256(const char *path, const struct dl_phdr_info *info,
                     uint8_t digest[32]);

/* Loading an eh_elf (load.c). */
enum { RT_MAX_EH_ELFS = 256 }; /* loaded at once, at most */
enum rt_load {
    RT_LOAD_ABSENT,     /* no such file, or not an eh_elf of the full ABI
                           and of a version this library takes */
    RT_LOAD_OK,
    RT_LOAD_UNTRUSTED,  /* a folder on the way or the file is owned by
                           another user than the effective one or root,
                           or writable by group or others */
    RT_LOAD_STALE,      /* no stamp, or one that names another object
                           than the id given */
    RT_LOAD_LIMIT,      /* RT_MAX_EH_ELFS are loaded already */
};
/* Loads root/rel (rel: a relative path without "." or "..", whose
 * folders are checked as the root is) when every check passes; *entry
 * its eh_elf_unwind. id: the object's (its build-id, else the hash of
 * its frame sections; kind EH_ELF_OBJECT_ID_NONE: neither is known, and
 * no eh_elf is taken). *loads counts the eh_elfs loaded. Not
 * async-signal-safe. */
enum rt_load rt_load_eh_elf(const char *root, const char *rel,
                            const struct eh_elf_object_id *id,
                            unsigned *loads, eh_elf_unwind_fn **entry);

/* cfisem_getcontext's registers written into a register file, none
 * undefined (context.S: struct cfisem_context is struct eh_elf_regs
 * without `undefined`). */
void rt_getregs(struct eh_elf_regs *regs);
_Static_assert(offsetof(struct cfisem_context, known) ==
                       offsetof(struct eh_elf_regs, known) &&
                   offsetof(struct cfisem_context, known) +
                           sizeof(cfisem_regmask_t) ==
                       offsetof(struct eh_elf_regs, undefined),
               "struct cfisem_context starts struct eh_elf_regs");

/* Counts frames the interpreter unwound, or a failed step. */
void rt_count_interp(uint32_t frames);
void rt_count_failure(void);

/* Memory of a local walk: the readable stack extent around sp (per
 * thread, remembered), and a read that fails instead of faulting. */
void rt_stack_extent(uint64_t sp, uint64_t *lo, uint64_t *hi);
bool rt_readable(uint64_t addr, uint64_t size);
/* The read of a local walk (data: the struct rt_walk): an 8-byte read
 * inside the extent is a load, anything else rt_read_other. */
int rt_read_local(void *walk, uint64_t addr, unsigned size, uint64_t *value);
int rt_read_other(struct rt_walk *walk, uint64_t addr, unsigned size,
                  uint64_t *value);

/* The registers' values, those of `known` (the others 0). */
static inline void rt_copy_values(uint64_t *to, const uint64_t *from,
                                  eh_elf_mask_t known)
{
    for (unsigned r = 0; r < CFISEM_NREGS; r++)
        to[r] = known >> r & 1u ? from[r] : 0;
}

/* The window of a walk's memory its eh_elfs load directly (eh_elf.h,
 * version 3): a local walk's stack extent; none for a remote walk. */
static inline void rt_direct_window(struct rt_walk *walk)
{
    uint64_t extent = walk->stack_hi - walk->stack_lo;
    walk->env.direct_base = walk->stack_lo;
    walk->env.direct_span = !walk->remote && extent >= 8 ? extent - 7 : 0;
}

/* Sets object->frame_below and frame_above from the object's program
 * headers (bias: its load bias; object->eh_frame_hdr set already). */
void rt_frame_segment(const Elf64_Phdr *phdrs, unsigned phnum, uint64_t bias,
                      struct rt_object *object);

/* The FDE of lookup PC pc in the object, read from its mapped
 * .eh_frame_hdr and .eh_frame (run-time addresses). false: none, or
 * records the reader does not take (then the step fails). */
bool rt_find_fde(const struct rt_object *object, uint64_t pc,
                 struct cfi_cie *cie, struct cfi_fde *fde);

/* The interpreter's row cache (rows.c): the row decoded at lookup PC pc
 * of the object of table entry `entry` (rt_find_object's, found valid
 * by the walk) before, if it is still there; keeping one. Entry 0 (an
 * object found by _dl_find_object alone): nothing is kept or found.
 * Async-signal-safe, lock-free. */
struct interp_decoded_row;
bool rt_row_lookup(uint16_t entry, uint64_t pc,
                   struct interp_decoded_row *row);
void rt_row_keep(uint16_t entry, uint64_t pc,
                 const struct interp_decoded_row *row);

/* One step by the interpreter: the caller of `callee` into
 * frame->caller and frame->signal_frame. */
int rt_step_interp(struct rt_walk *walk, const struct eh_elf_regs *callee,
                   bool caller_frame, uint64_t lookup_pc,
                   struct eh_elf_frame *frame);

/* AArch64 signal frames (sigframe.c): when the instructions at the
 * callee's PC are the sigreturn trampoline (mov x8, #139; svc #0), its
 * caller is the interrupted frame of the kernel's struct rt_sigframe at
 * the callee's stack pointer, every register 0-32 read from its
 * sigcontext, frame->signal_frame set: true. false: not the trampoline,
 * or its frame cannot be read. Async-signal-safe. */
#if defined(__aarch64__)
bool rt_sigreturn_frame(struct rt_walk *walk, const struct eh_elf_regs *callee,
                        struct eh_elf_frame *frame);
#endif

/* The frame cache (frames.c): the rows of the PCs a walk met, when
 * they are simple, replayed instead of the eh_elf. Its rows are
 * x86-64's (rip, rsp, rbp and the callee-saved registers in the fast
 * form): on AArch64 every step calls the eh_elf, and these functions
 * keep and replay nothing. */
#if defined(__aarch64__)
#define RT_FRAME_CACHE 0
#else
#define RT_FRAME_CACHE 1
#endif
/* Learns the row of lookup PC pc in the walk's current object (table
 * entry `entry`) from its .eh_frame, given the frame its eh_elf has
 * just unwound from callee: keeps it when it is simple and gives that
 * very frame, else keeps a negative row. Async-signal-safe. */
void rt_frame_learn(const struct rt_walk *w, uint16_t entry,
                    uint64_t lookup_pc, const struct eh_elf_regs *callee,
                    const struct eh_elf_frame *frame);

/* One step by the frame cache, in place: the registers of the callee at
 * lookup PC pc become the caller's (not a signal frame), as its eh_elf
 * would give them, when a row is kept for pc, of an object that stays
 * or of one of the `valid` entries (two, 16 bits each, found valid by
 * the walk), and the CFA's register is known and the saved registers
 * lie in env's direct window. Returns RT_REPLAYED; RT_NO_ROW (nothing
 * kept for pc: learn it); RT_NOT_REPLAYED (the eh_elf decides; the
 * registers are unchanged); or RT_VALIDATE, *entry the row's object,
 * which the walk must find valid first. Async-signal-safe, lock-free. */
enum { RT_REPLAYED, RT_NO_ROW, RT_NOT_REPLAYED, RT_VALIDATE, RT_END,
       RT_BAD_FRAME };
int rt_frame_replay(uint64_t pc, struct eh_elf_regs *regs,
                    const struct eh_elf_env *env, uint32_t valid,
                    uint16_t *entry);

/* rt_frame_replay up the stack of the local walk w, from the frame regs
 * (whose PC is a return address when caller_frame), for as long as rows
 * are replayed and n < max: each caller's PC goes to pcs[n++], its
 * registers to regs. A row of an object that may be unloaded and is not
 * one of the walk's two is replayed when rt_walk_validate finds it
 * valid (the walk's object is then its). Returns n; *stop: why it
 * stopped (rt_frame_replay's answer for the frame regs is on, RT_VALIDATE
 * when the row's object was not found valid, or, after a replay: RT_END
 * when the caller's PC is undefined (the clean end of the stack),
 * RT_BAD_FRAME when the caller is not a frame (its PC or stack pointer
 * unknown, or its stack pointer not above the callee's), both with regs
 * the caller's; or RT_REPLAYED when n reached max or the PC is 0). */
int rt_frame_walk(struct rt_walk *w, struct eh_elf_regs *regs,
                  bool caller_frame, void **pcs, int n, int max, int *stop);

/* The walk's object becomes that of table entry `entry` (step.c), when
 * rt_entry_object finds it valid at lookup PC pc; it takes the place of
 * the one before the walk's object. Async-signal-safe. */
bool rt_walk_validate(struct rt_walk *w, uint64_t pc, uint16_t entry);

#endif
