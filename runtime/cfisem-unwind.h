/* SPDX-License-Identifier: MIT */
/* cfisem-unwind.h — libcfisem-unwind: unwinding the running process (or a
 * sample of it) through eh_elfs.
 *
 * An eh_elf (compile/eh_elf.h) is a shared object compiled from one ELF
 * file's call frame information; it unwinds one frame of that file
 * without reading DWARF. This library walks a stack with them:
 *
 *   - the object holding a PC is found in a table filled by
 *     cfisem_prepare (dl_iterate_phdr), else with glibc's
 *     _dl_find_object (glibc 2.35 and later), which also sees objects
 *     loaded after cfisem_prepare;
 *   - its eh_elf is the one cfisem_prepare loaded for it: beside the
 *     object (OBJECT.eh_elf.so), or in the user's cache folder keyed by
 *     the object's GNU build-id (CACHE/.build-id/xx/rest.eh_elf.so, as
 *     /usr/lib/debug does; `cfisem cache` fills it), or in the system
 *     folder of the same layout (cfisem_system_eh_elf_dir), or, for a
 *     build tree, in a folder keyed by file name (NAME.full.eh_elf.so);
 *     any layout of the full ABI (compile --layout tree or table);
 *   - an eh_elf is used only when its stamp (eh_elf.h, eh_elf_object_id)
 *     names the object it is found for: its build-id, or for an object
 *     without one the SHA-256 of its file's .eh_frame and .debug_frame,
 *     read by cfisem_prepare from the object's path, and taken only when
 *     the file's .eh_frame is byte for byte the one loaded (a file
 *     replaced since it was loaded is not the object). One without a
 *     stamp, or of another object, is not used (cfisem_stats counts it
 *     as stale);
 *   - an entry of the table is used only while its object is loaded
 *     (checked against _dl_find_object, with the build-id in the
 *     object's headers): after dlclose its PCs go to the object loaded
 *     there now, unwound by the interpreter until cfisem_prepare runs
 *     again; an eh_elf of an unloaded object is never called. The
 *     objects glibc never unloads (the program and the libraries it
 *     was linked with, loaded with it) and this library's own are not
 *     checked;
 *   - an object with no eh_elf is unwound by cfisem's interpreter
 *     (interp/) on the object's own .eh_frame, found through its
 *     .eh_frame_hdr and read inside the readable segment holding that
 *     header only; cfisem_stats counts those frames. The rows the
 *     interpreter decodes are kept in a process-wide cache of 256 rows
 *     keyed by lookup PC and object (lock-free, no allocation), so that
 *     a PC met again is not decoded again; errors are never kept. A row
 *     is found only for the object the walk found still loaded, never
 *     after dlclose; an object loaded after cfisem_prepare has its rows
 *     decoded at every step until cfisem_prepare runs again;
 *   - the frame cache (x86-64; on AArch64 every step calls the eh_elf
 *     or the interpreter): after an eh_elf unwound a frame, the row of its
 *     PC is decoded from the object's .eh_frame and, when it is simple
 *     (the CFA a register plus an offset, registers saved at fixed
 *     offsets from it, the others at their ABI default) and gives that
 *     very frame, kept in a process-wide cache of 1,024 rows keyed by
 *     lookup PC (lock-free, no allocation); the steps at that PC then
 *     replay the row instead of calling the eh_elf, with the same
 *     result for every register. A row is tagged with its object: it
 *     is replayed for an object that may be unloaded only after the
 *     walk found that object still loaded, never after dlclose.
 *
 * Trust. An eh_elf is code: cfisem_prepare dlopens it and the steps
 * call it, with the process's privileges. It loads one only when the
 * file and every folder from the root of the place searched down to it
 * (the object's folder; the cache folder; name_dir) are owned by the
 * effective user or root and writable by no one else (no group or
 * other write bit); the checks are made on the opened file, which is
 * the one loaded (through /proc/self/fd). Refusals are counted
 * (cfisem_stats). The user's cache comes from the environment
 * ($CFISEM_CACHE, $XDG_CACHE_HOME, $HOME): a secure process (setuid,
 * setgid, file capabilities: getauxval(AT_SECURE)) has no user cache:
 * besides the objects' folders and the folders the program names in
 * cfisem_options, the system folder only. Loading needs /proc (the
 * file is loaded through /proc/self/fd). An eh_elf's symbols count only
 * when it defines them itself. At most 256 eh_elfs are loaded; each
 * keeps its file descriptor (close-on-exec) open.
 *
 * Async-signal safety. cfisem_prepare loads shared objects (dlopen) and
 * is not async-signal-safe: call it at start-up, and again after loading
 * a library with dlopen. Everything else (cfisem_backtrace, the cursor
 * functions, cfisem_stats) allocates nothing, takes no lock and does no
 * I/O: it may run in a signal handler (SIGPROF) and in several threads
 * at once. The interpreter fallback uses about 48 KiB of stack.
 *
 * Corrupt stacks. A local cursor reads memory directly only inside the
 * current thread's stack, whose readable extent is checked with one
 * process_vm_readv call and remembered per thread; any other address is
 * read with process_vm_readv, which fails instead of faulting (under
 * qemu-user, which has none, the address is checked with write(2) on
 * descriptor -1, which qemu answers EFAULT for memory the guest cannot
 * read, first: docs/runtime.md). A step
 * also fails when the caller's stack pointer does not grow (outside
 * signal frames) or its PC lies in no object. A corrupt stack thus ends
 * the walk with an error, never with a crash. A remote cursor reads only
 * through the caller's callback.
 *
 * Registers are the DWARF numbers of the machine the library is built
 * for, as in eh_elf.h: on x86-64 0-16 (rax rdx rcx rbx rsi rdi rbp rsp
 * r8-r15 rip; the PC is 16, rip); on AArch64 0-34 (x0-x30 0-30, sp 31,
 * the PC 32, elr_mode 33, ra_sign_state 34). On AArch64 the PC of a
 * frame (32) is its caller's return address with the pointer-
 * authentication code stripped when the frame's row says the return
 * address was signed (RA_SIGN_STATE); x30 (30) keeps the value the
 * CFI restored, signed or not. A signal frame on AArch64 is the
 * sigreturn trampoline's (mov x8, #139; svc #0, in the vDSO or qemu's
 * copy), whose caller's registers are read from the sigcontext of the
 * kernel's rt_sigframe. */
#ifndef CFISEM_UNWIND_H
#define CFISEM_UNWIND_H

#include <stdint.h>
#include <ucontext.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Results. Step: 1 one frame up, 0 the end of the stack (the caller's
 * PC is undefined or zero), negative an error. */
enum cfisem_result {
    CFISEM_OK = 0,
    CFISEM_E_NO_OBJECT = -1,  /* the PC lies in no loaded object */
    CFISEM_E_NO_CFI = -2,     /* no FDE covers the PC */
    CFISEM_E_MEMORY = -3,     /* a read failed (outside the stack) */
    CFISEM_E_BAD_FRAME = -4,  /* the CFI failed, or gave a frame that does
                                 not move up the stack */
    CFISEM_E_ARGUMENT = -5,   /* a bad argument (register number, NULL) */
    CFISEM_E_NOT_READY = -6,  /* cfisem_prepare failed or the object table
                                 is full */
};

/* A fixed-size text for a result ("no FDE covers the PC"). */
const char *cfisem_strerror(int result);

/* The registers a frame has: CFISEM_NREGS of them, bit r of a
 * cfisem_regmask_t for register r; CFISEM_REG_PC and CFISEM_REG_SP name
 * the PC and the stack pointer on either machine. */
#if defined(__aarch64__)
#define CFISEM_NREGS 35
typedef uint64_t cfisem_regmask_t;
enum {
    CFISEM_REG_X29 = 29,      /* the frame pointer */
    CFISEM_REG_X30 = 30,      /* the link register (the return address
                                 column of the CFI) */
    CFISEM_REG_SP = 31,
    CFISEM_REG_PC = 32,
    CFISEM_REG_RA_SIGN_STATE = 34,
};
#define CFISEM_CURSOR_WORDS 96
#else
#define CFISEM_NREGS 17
typedef uint32_t cfisem_regmask_t;
enum { CFISEM_REG_RBP = 6, CFISEM_REG_RSP = 7, CFISEM_REG_RIP = 16 };
enum { CFISEM_REG_SP = CFISEM_REG_RSP, CFISEM_REG_PC = CFISEM_REG_RIP };
#define CFISEM_CURSOR_WORDS 40
#endif

/* Where cfisem_prepare looks for eh_elfs, beside the objects first.
 * Zero-initialise it: later versions may add fields at the end. */
struct cfisem_options {
    /* The user's folder keyed by build-id; NULL: $CFISEM_CACHE, else
     * ${XDG_CACHE_HOME:-$HOME/.cache}/cfisem (none in a secure
     * process). */
    const char *cache_dir;
    /* Folder of NAME.FLAVOUR.eh_elf.so keyed by the object's file name,
     * or NULL. The caller vouches that they were built from these very
     * files (a build tree's make eh-elfs). */
    const char *name_dir;
    /* FLAVOUR above: NULL for "full" (the tree layout); "table" for the
     * eh_elfs of cfisem compile --layout table (make eh-elfs builds
     * both). */
    const char *name_flavour;
    /* The system folder keyed by build-id, searched after cache_dir;
     * NULL: cfisem_system_eh_elf_dir(); "": none. */
    const char *system_dir;
};

/* The system-wide folder of eh_elfs keyed by build-id,
 * PREFIX/lib/MULTIARCH/cfisem/eh_elf (make install creates it; `cfisem
 * cache --cache` with this folder fills it). */
const char *cfisem_system_eh_elf_dir(void);

/* Loads the eh_elfs of every object loaded now that has one (objects
 * already prepared are kept). Not async-signal-safe; thread-safe.
 * options may be NULL. Returns CFISEM_OK, or CFISEM_E_NOT_READY when the
 * table is full (the other objects then use the interpreter). */
int cfisem_prepare(const struct cfisem_options *options);

/* What cfisem_prepare found and what the steps used, process-wide. */
struct cfisem_stats {
    uint64_t objects;         /* objects in the table */
    uint64_t objects_eh_elf;  /* of which with an eh_elf */
    uint64_t frames_interp;   /* frames unwound by the interpreter (a
                                 walk adds its own when it ends, and every
                                 32 meanwhile) */
    uint64_t frames_failed;   /* steps that ended with an error */
    uint64_t objects_unloaded;  /* entries retired: the object is gone */
    uint64_t eh_elfs_untrusted; /* eh_elfs refused: owner or mode of the
                                   file or a folder above it */
    uint64_t eh_elfs_stale;     /* eh_elfs refused: not stamped with the
                                   object's build-id */
};
/* In C++, a function named as a struct hides the struct's constructor,
 * which -Wshadow reports in the program that includes this header. */
#if defined(__cplusplus) && defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#endif
void cfisem_stats(struct cfisem_stats *stats);
#if defined(__cplusplus) && defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/* glibc's backtrace(), through eh_elfs: the return addresses of the
 * callers of cfisem_backtrace, innermost first, at most max. Returns the
 * number stored (an error ends the list where it happened). */
int cfisem_backtrace(void **pcs, int max);

/* The registers of the function calling cfisem_getcontext, as they are
 * when the call returns (x86-64: the callee-saved registers, rsp, and
 * rip the return address; AArch64: x19-x29, x30 and the PC the return
 * address, sp). Written in assembly: it changes no register of its
 * caller (but rax on x86-64). */
struct cfisem_context {
    uint64_t regs[CFISEM_NREGS];
    cfisem_regmask_t known;   /* bit r: regs[r] holds register r */
};
void cfisem_getcontext(struct cfisem_context *context);

/* A cursor: caller-allocated, no heap. Its contents are private. */
struct cfisem_cursor {
    uint64_t opaque[CFISEM_CURSOR_WORDS];
};

/* Reads size (1, 2, 4 or 8) bytes at addr into *value (zero-extended);
 * returns 0, or anything else when the memory cannot be read. */
typedef int cfisem_read_fn(void *data, uint64_t addr, unsigned size,
                           uint64_t *value);

/* A cursor on the frame of the function that called cfisem_getcontext
 * (which must still be running). */
int cfisem_init_local(struct cfisem_cursor *cursor,
                      const struct cfisem_context *context);
/* A cursor on the interrupted frame of a signal handler's ucontext (its
 * PC is exact; every register 0-16 known on x86-64, 0-32 on AArch64). */
int cfisem_init_ucontext(struct cfisem_cursor *cursor,
                         const ucontext_t *context);
/* A cursor on a frame of this process captured earlier (a perf-style
 * sample: registers, and memory through `read`). regs[r] holds register
 * r when bit r of known is set; the PC and the stack pointer are
 * needed. pc_is_exact:
 * the PC is the interrupted instruction (not a return address). The
 * objects are this process's (they must still be loaded). */
int cfisem_init_remote(struct cfisem_cursor *cursor,
                       const uint64_t regs[CFISEM_NREGS],
                       cfisem_regmask_t known,
                       int pc_is_exact, cfisem_read_fn *read, void *data);

/* One frame up. 1: done, the cursor is on the caller; 0: the end of the
 * stack; negative: an error (the cursor is unchanged). */
int cfisem_step(struct cfisem_cursor *cursor);

/* Register r (below CFISEM_NREGS) of the cursor's frame. CFISEM_OK, or
 * CFISEM_E_ARGUMENT when r is out of range or its value is not known. */
int cfisem_get_reg(const struct cfisem_cursor *cursor, unsigned r,
                   uint64_t *value);

/* Which engine the cursor's steps use. CFISEM_ENGINE_AUTO (the start):
 * the object's eh_elf, else the interpreter; CFISEM_ENGINE_INTERP: the
 * interpreter on .eh_frame for every frame (to compare the two on the
 * same stack); CFISEM_ENGINE_INTERP_NO_CACHE: the same, every row
 * decoded afresh (the interpreter's rows are otherwise kept in its
 * row cache, above).
 * Returns CFISEM_OK or CFISEM_E_ARGUMENT. */
enum cfisem_engine {
    CFISEM_ENGINE_AUTO = 0,
    CFISEM_ENGINE_INTERP = 1,
    CFISEM_ENGINE_INTERP_NO_CACHE = 2,
};
int cfisem_set_engine(struct cfisem_cursor *cursor, enum cfisem_engine engine);

/* How the cursor's steps so far were made (frames_eh_elf: by an
 * eh_elf, or by the frame cache's row of its PC). */
struct cfisem_cursor_stats {
    uint32_t frames_eh_elf;
    uint32_t frames_interp;
};
#if defined(__cplusplus) && defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#endif
void cfisem_cursor_stats(const struct cfisem_cursor *cursor,
                         struct cfisem_cursor_stats *stats);
#if defined(__cplusplus) && defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#ifdef __cplusplus
}
#endif

#endif
