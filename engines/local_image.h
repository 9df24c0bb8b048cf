/* SPDX-License-Identifier: MIT */
/* local_image.h — asking a library that unwinds only its own process
 * (LLVM's libunwind, libgcc) about a file's CFI.
 *
 * One long-lived child process per open engine: forked at open, it maps
 * the file's loadable segments at a bias B (all of them, at B + vaddr:
 * shared objects link at 0, which no process can map), writes a 4-byte
 * terminator after .eh_frame in that copy, loads the library and has it
 * register the frame section at B + the section's address. It then
 * answers questions (struct local_question) over a pipe, one at a time:
 * the library unwinds one frame whose registers are the question's, at
 * the IP `ip` (the lookup PC plus B), and the child sends back the frame
 * the library computed (struct local_frame).
 *
 * Memory. The child maps no memory of the request in advance: a read the
 * library makes outside the child's own mappings is a SIGSEGV, whose
 * handler asks the parent for the 4 KiB page holding the address. The
 * parent reads that page through the request's memory reader; when all
 * its bytes are readable the child maps it there (MAP_FIXED_NOREPLACE)
 * and the read is made again. Otherwise the question ends:
 *   - the faulting byte itself faults in the request's memory: a memory
 *     error (LOCAL_FAULT), which the adapter answers as CFI_E_MEMORY;
 *   - another byte of the page faults: a page cannot say that only part
 *     of it is unreadable (LOCAL_PARTIAL_PAGE, not comparable);
 *   - the address cannot be mapped at all: non-canonical (the kernel
 *     reports no address for those), below mmap_min_addr, or already
 *     taken by the child's own mappings (LOCAL_UNMAPPABLE, not
 *     comparable, with the reason).
 * A read that falls in one of the child's own mappings does not fault
 * at all: local_image_taken says which addresses those are, so that an
 * adapter refuses a request whose reads would land there. The pages are
 * unmapped after each question.
 *
 * A child that dies (the library crashed or aborted), says something
 * the protocol does not allow, or does not answer within
 * LOCAL_TIMEOUT_MS is killed and a new one started; the question is
 * answered LOCAL_DIED or LOCAL_TIMEOUT (not comparable, with the
 * reason), never a crash of the run.
 */
#ifndef CFISEM_ENGINES_LOCAL_IMAGE_H
#define CFISEM_ENGINES_LOCAL_IMAGE_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

#include "cfi/cfi.h"

#define LOCAL_NREGS 17        /* x86-64's 0..16: rax .. r15, rip */
#define LOCAL_TIMEOUT_MS 2000
#define LOCAL_PAGE 4096u

/* Where the image is mapped: B. A multiple of 2^16, so that a value
 * computed from rip keeps its low bits (the PLT's CFA expression masks
 * rip with 15); above AddressSanitizer's shadow (which ends at
 * 0x10007fff8000), below the libraries and the stack, away from the
 * poison values of engines/local_adapter.h. */
#define LOCAL_BIAS 0x400000000000ull

/* One frame to unwind: the callee's registers, rip = ip. `flags` are
 * the adapter's. */
struct local_question {
    uint64_t ip;
    uint32_t flags;
    uint32_t reserved;
    uint64_t value[LOCAL_NREGS];
};

enum local_outcome {
    LOCAL_DONE,           /* the library answered: code, registers */
    LOCAL_FAULT,          /* a read the request's memory says faults */
    LOCAL_PARTIAL_PAGE,   /* a read in a page only part of which faults */
    LOCAL_UNMAPPABLE,     /* a read at an address a process cannot map */
    LOCAL_TAKEN,          /* a read at an address the child already uses */
    LOCAL_TOO_MANY_PAGES, /* more than LOCAL_MAX_PAGES pages read */
    LOCAL_DIED,           /* the child died; restarted */
    LOCAL_TIMEOUT,        /* the child hung; killed and restarted */
};

#define LOCAL_MAX_PAGES 64

/* The library's frame. `code` is the library's own return code (its
 * meaning is the adapter's); `known` has bit r set when register r was
 * read back, `undefined` when the library says it has no value. */
struct local_frame {
    uint32_t outcome;     /* enum local_outcome */
    int32_t code;
    uint32_t known;
    uint32_t undefined;
    uint32_t signal_frame;
    uint32_t has_signal;  /* signal_frame says something */
    uint32_t unknown;     /* the parent's: registers found unknown */
    uint32_t reserved;
    uint64_t cfa;
    uint64_t fault_addr;  /* LOCAL_FAULT: the address that faulted */
    uint64_t value[LOCAL_NREGS];
};

/* What the child runs, supplied by an adapter. Both functions run in the
 * child only. */
struct local_library {
    const char *name;      /* for messages: "llvmunwind" */
    /* Loads the library and registers the file's frame section, mapped
     * (and terminated) at LOCAL_BIAS + file->eh_frame_addr. *state is
     * the adapter's. Returns NULL, or why it cannot (a fixed string). */
    const char *(*load)(void **state, const struct cfi_file *file);
    /* Unwinds one frame into *frame (outcome LOCAL_DONE). A fault the
     * child cannot serve leaves by siglongjmp to `escape`, after
     * `on_fault` (if not NULL) had its say. */
    void (*step)(void *state, const struct local_question *question,
                 struct local_frame *frame);
    /* Called in the SIGSEGV handler when the fault cannot be served:
     * true when the adapter has completed *frame nonetheless (the fault
     * came after the library had finished the frame asked about). */
    bool (*on_fault)(void *state, struct local_frame *frame);
};

struct local_image;

/* Starts the child for `file` (x86-64, with .eh_frame). CFI_E_UNSUPPORTED
 * with a message when it cannot be. */
enum cfi_status local_image_open(const struct cfi_file *file,
                                 const struct local_library *library,
                                 struct local_image **image,
                                 struct cfi_diag *diag);
void local_image_close(struct local_image *image);

/* Asks one question over `memory`. Always fills *frame; its outcome says
 * whether the library answered. */
void local_image_ask(struct local_image *image,
                     const struct local_question *question,
                     struct cfi_memory memory, struct local_frame *frame);

/* Whether [addr, addr + len) touches a mapping of the child's own (its
 * code, libraries, stack, heap, the image). */
bool local_image_taken(const struct local_image *image, uint64_t addr,
                       uint64_t len);

/* Why an outcome other than LOCAL_DONE and LOCAL_FAULT is not
 * comparable (a fixed string). */
const char *local_outcome_reason(enum local_outcome outcome);

#endif
