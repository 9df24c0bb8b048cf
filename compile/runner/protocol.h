/* SPDX-License-Identifier: MIT */
/* protocol.h — how cfisem talks to the eh_elf runner: the program that
 * loads an eh_elf of a machine other than the host's (AArch64, under
 * qemu-aarch64) and unwinds with it on the host's behalf
 * (compile/runner/eh_elf_runner.c, compile/remote.c).
 *
 * The runner reads its standard input and writes its standard output,
 * one stream socket of the host's. Records are these structs as they
 * lie in memory: both ends are 64-bit little-endian programs built from
 * this header, whose fields are naturally aligned (no padding), and the
 * sizes are checked at compile time on both sides.
 *
 *   runner  struct rn_hello, once: the eh_elf loaded and checked, or
 *           why not (enum rn_hello_status);
 *   host    struct rn_request: one frame to unwind;
 *   runner  zero or more struct rn_read (a memory read the eh_elf asks),
 *           each answered by the host with struct rn_memory;
 *   runner  struct rn_read with tag RN_FRAME, then struct rn_frame.
 * The host closing its end ends the runner. Anything else (a record cut
 * short, an unknown tag) is a broken conversation: the host gives up on
 * that runner. */
#ifndef CFISEM_RUNNER_PROTOCOL_H
#define CFISEM_RUNNER_PROTOCOL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#define RN_MAGIC 0x314e5245u /* "ERN1" */
#define RN_NREGS 128         /* the callee's registers sent: CFI_NREGS */
#define RN_REPORTED_MAX 64   /* the caller's registers a frame can carry */

enum rn_hello_status {
    RN_READY = 0,
    RN_E_LOAD = 1,        /* dlopen failed */
    RN_E_NOT_EH_ELF = 2,  /* no eh_elf_ident, or not the full ABI's */
    RN_E_VERSION = 3,     /* eh_elf_abi_version outside the runner's */
    RN_E_MACHINE = 4,     /* eh_elf_machine is not the runner's machine */
    RN_E_ENTRY = 5,       /* no eh_elf_unwind */
    RN_E_USAGE = 6,       /* the runner was started without an eh_elf */
};

struct rn_hello {
    uint32_t magic;       /* RN_MAGIC */
    uint32_t status;      /* enum rn_hello_status */
    uint32_t nregs;       /* the eh_elf's EH_ELF_NREGS */
    uint32_t machine;     /* the runner's EH_ELF_MACHINE */
};

/* A register's status in a request: enum cfi_reg_status's numbers. */
enum rn_reg_status {
    RN_REG_UNKNOWN = 0,
    RN_REG_VALUE = 1,
    RN_REG_UNDEFINED = 2,
};

/* One frame: the lookup PC (cfi.h step 1 already applied) and the
 * callee's registers, each with its enum rn_reg_status. */
struct rn_request {
    uint32_t magic;       /* RN_MAGIC */
    uint32_t va_bits;
    uint64_t pc;
    uint64_t value[RN_NREGS];
    uint8_t status[RN_NREGS];
};

enum rn_tag {
    RN_READ = 1,          /* read `size` bytes at `addr` */
    RN_FRAME = 2,         /* a struct rn_frame follows */
};

struct rn_read {
    uint32_t tag;         /* enum rn_tag */
    uint32_t size;
    uint64_t addr;
};

struct rn_memory {
    uint32_t failed;      /* nonzero: the read faults */
    uint32_t reserved;
    uint64_t value;
};

/* struct eh_elf_frame, with the caller's registers 0 .. nregs-1. */
struct rn_frame {
    uint32_t error;
    int32_t error_reg;
    uint64_t error_offset;
    uint64_t cfa;
    uint64_t known;
    uint64_t undefined;
    uint32_t signal_frame;
    uint32_t ra_b_key;
    uint32_t nregs;
    uint32_t reserved;
    uint64_t value[RN_REPORTED_MAX];
};

_Static_assert(sizeof(struct rn_hello) == 16, "rn_hello has no padding");
_Static_assert(sizeof(struct rn_request) == 16 + 9 * RN_NREGS,
               "rn_request has no padding");
_Static_assert(sizeof(struct rn_read) == 16, "rn_read has no padding");
_Static_assert(sizeof(struct rn_memory) == 16, "rn_memory has no padding");
_Static_assert(sizeof(struct rn_frame) == 56 + 8 * RN_REPORTED_MAX,
               "rn_frame has no padding");

/* Reads exactly `size` bytes from fd (both sides of the conversation);
 * false at the end of the stream or on an error. */
static inline bool rn_read_all(int fd, void *buffer, size_t size)
{
    unsigned char *bytes = buffer;
    while (size > 0) {
        ssize_t n = read(fd, bytes, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        bytes += n;
        size -= (size_t)n;
    }
    return true;
}

/* Writes all `size` bytes to the socket fd (a peer that has gone away
 * is an error, not SIGPIPE); false on an error. */
static inline bool rn_send_all(int fd, const void *buffer, size_t size)
{
    const unsigned char *bytes = buffer;
    while (size > 0) {
        ssize_t n = send(fd, bytes, size, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        bytes += n;
        size -= (size_t)n;
    }
    return true;
}

#endif
