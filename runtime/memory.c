/* SPDX-License-Identifier: MIT */
/* memory.c — reads of a local walk that fail instead of faulting.
 *
 * Reads inside the current thread's stack are plain loads: its readable
 * extent above the stack pointer is checked once, by one
 * process_vm_readv call that reads one byte of each page (the call stops
 * at the first page that cannot be read), and remembered in a
 * thread-local pair, so that a backtrace makes no system call in the
 * common case. Only the extent that holds the current stack pointer is
 * remembered: a thread's stack stays mapped while the thread runs on
 * it. Any other address is read by process_vm_readv itself (about a
 * microsecond), which reports a fault as an error. All of it is
 * async-signal-safe: no allocation, no lock; the thread-local pair uses
 * the initial-exec TLS model (the Makefile builds the shared library
 * with -ftls-model=initial-exec), so reaching it never allocates.
 *
 * qemu-user implements no process_vm_readv (ENOSYS). There a read is
 * checked with write(2) to descriptor -1 instead: qemu checks that the
 * guest may read the buffer (EFAULT) before the host looks at the
 * descriptor (EBADF), and the bytes are then loaded. A kernel looks at
 * the descriptor first, so the answer counts only when an address that
 * is surely unmapped (in page 0) gives EFAULT. */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

enum { PAGE = 4096, PROBE_PAGES = 256 };

static _Thread_local uint64_t known_lo, known_hi;

/* write(-1, addr, size)'s errno (0: it succeeded, which it cannot). The
 * system call itself: the compiler would see address 8 as an object
 * of no bytes. */
static int write_probe(uint64_t addr, size_t size)
{
    return syscall(SYS_write, -1, addr, size) < 0 ? errno : 0;
}

/* process_vm_readv failed with ENOSYS (errno), and write_probe tells
 * readable memory from unreadable: an emulator's (above). */
static bool emulated(void)
{
    return errno == ENOSYS && write_probe(8, 1) == EFAULT;
}

/* Whether [addr, addr + size) is readable, by write_probe. */
static bool probe_readable(uint64_t addr, size_t size)
{
    return write_probe(addr, size) == EBADF;
}

/* size bytes at addr into buf, or false: process_vm_readv, else, under
 * an emulator that has none, write_probe then a load. errno is kept. */
static bool read_bytes(uint64_t addr, void *buf, size_t size)
{
    int saved = errno;
    struct iovec local = {.iov_base = buf, .iov_len = size};
    struct iovec remote = {.iov_base = (void *)(uintptr_t)addr,
                           .iov_len = size};
    bool ok = process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
              (ssize_t)size;
    if (!ok && emulated() && probe_readable(addr, size)) {
        memcpy(buf, (const void *)(uintptr_t)addr, size);
        ok = true;
    }
    errno = saved;
    return ok;
}

/* The number of readable pages from page-aligned `from`, up to
 * PROBE_PAGES. */
static uint64_t probe_pages(uint64_t from)
{
    struct iovec remote[PROBE_PAGES];
    uint8_t sink[PROBE_PAGES];
    struct iovec local = {.iov_base = sink, .iov_len = sizeof sink};
    for (unsigned i = 0; i < PROBE_PAGES; i++) {
        remote[i].iov_base = (void *)(uintptr_t)(from + (uint64_t)i * PAGE);
        remote[i].iov_len = 1;
    }
    int saved = errno;
    ssize_t n = process_vm_readv(getpid(), &local, 1, remote, PROBE_PAGES, 0);
    if (n < 0 && emulated())
        for (n = 0; n < PROBE_PAGES &&
                    probe_readable(from + (uint64_t)n * PAGE, 1);)
            n++;
    errno = saved;
    return n > 0 ? (uint64_t)n : 0;
}

/* A signal handler may run between any two of these writes and look at
 * the pair: the extent is emptied first (hi = 0: no address is inside),
 * then rebuilt, so that the handler never sees a low end of one extent
 * with the high end of another. */
void rt_stack_extent(uint64_t sp, uint64_t *lo, uint64_t *hi)
{
    uint64_t known_from = known_lo, known_to = known_hi;
    if (!(sp >= known_from && sp < known_to)) {
        uint64_t from = sp & ~(uint64_t)(PAGE - 1);
        uint64_t to = from + probe_pages(from) * PAGE;
        known_hi = 0;
        atomic_signal_fence(memory_order_seq_cst);
        known_lo = from;
        atomic_signal_fence(memory_order_seq_cst);
        known_hi = to;
        known_from = from;
        known_to = to;
    }
    *lo = known_from;
    *hi = known_to;
}

bool rt_readable(uint64_t addr, uint64_t size)
{
    uint8_t sink[8];
    return size <= sizeof sink && read_bytes(addr, sink, size);
}

/* The stack goes on above the remembered extent: probe the pages above
 * and extend it (and the thread's copy, when it is the same stack). */
static bool extend(struct rt_walk *walk, uint64_t addr)
{
    if (addr < walk->stack_hi ||
        addr - walk->stack_hi >= (uint64_t)PROBE_PAGES * PAGE)
        return false;
    uint64_t pages = probe_pages(walk->stack_hi);
    if (pages == 0)
        return false;
    if (known_lo == walk->stack_lo && known_hi == walk->stack_hi)
        known_hi += pages * PAGE; /* one store: a handler sees either */
    walk->stack_hi += pages * PAGE;
    rt_direct_window(walk);
    return true;
}

/* Anything but an 8-byte read inside the remembered extent. In a
 * function of its own, apart from rt_read_local's load, which then
 * saves no register. */
int rt_read_other(struct rt_walk *walk, uint64_t addr, unsigned size,
                  uint64_t *value)
{
    *value = 0;
    if (size > 8 || addr + size < addr)
        return 1;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (addr >= walk->stack_lo && addr + size <= walk->stack_hi) {
            memcpy(value, (const void *)(uintptr_t)addr, size);
            return 0;
        }
        if (!extend(walk, addr + size))
            break;
    }
    uint8_t bytes[8];
    if (!read_bytes(addr, bytes, size))
        return 1;
    memcpy(value, bytes, size);
    return 0;
}

int rt_read_local(void *data, uint64_t addr, unsigned size, uint64_t *value)
{
    struct rt_walk *walk = data;
    uint64_t lo = walk->stack_lo, extent = walk->stack_hi - lo;
    /* The common read: a saved register or return address on the stack. */
    if (size == 8 && addr >= lo && extent >= 8 && addr - lo <= extent - 8) {
        memcpy(value, (const void *)(uintptr_t)addr, 8);
        return 0;
    }
    return rt_read_other(walk, addr, size, value);
}
