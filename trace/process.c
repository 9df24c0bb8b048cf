/* SPDX-License-Identifier: MIT */
/* process.c — reading the traced process: its memory through
 * process_vm_readv (one call per 512-byte block, cached for the current
 * stop: the engines' reads of one frame fall in one or two blocks), its
 * registers in DWARF order. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/uio.h>

#include "internal.h"

void trace_mem_reset(struct trace_mem *mem)
{
    for (unsigned i = 0; i < TRACE_MEM_BLOCKS; i++)
        mem->block[i].valid = false;
}

/* Reads [addr, addr+len) from the process: the count of bytes read. */
static size_t read_remote(struct trace_mem *mem, uint64_t addr, void *out,
                          size_t len)
{
    if (mem->read) {
        mem->syscalls++;
        return mem->read(mem->read_env, addr, out, len);
    }
    struct iovec local = {out, len};
    struct iovec remote = {(void *)(uintptr_t)addr, len};
    mem->syscalls++;
    ssize_t n = process_vm_readv(mem->pid, &local, 1, &remote, 1, 0);
    return n > 0 ? (size_t)n : 0;
}

/* The cached block holding addr, loading it when needed; NULL when the
 * block's first byte cannot be read. */
static const uint8_t *block_for(struct trace_mem *mem, uint64_t addr,
                                size_t *avail)
{
    uint64_t base = addr & ~(uint64_t)(TRACE_MEM_BLOCK - 1);
    for (unsigned i = 0; i < TRACE_MEM_BLOCKS; i++)
        if (mem->block[i].valid && mem->block[i].base == base) {
            if (addr - base >= mem->block[i].len)
                return NULL;
            *avail = mem->block[i].len - (addr - base);
            return mem->block[i].bytes + (addr - base);
        }
    unsigned victim = mem->next++ % TRACE_MEM_BLOCKS;
    mem->block[victim].base = base;
    mem->block[victim].len = read_remote(mem, base, mem->block[victim].bytes,
                                         TRACE_MEM_BLOCK);
    mem->block[victim].valid = true;
    if (addr - base >= mem->block[victim].len)
        return NULL;
    *avail = mem->block[victim].len - (addr - base);
    return mem->block[victim].bytes + (addr - base);
}

size_t trace_mem_read(struct trace_mem *mem, uint64_t addr, void *out,
                      size_t len)
{
    size_t done = 0;
    /* Bounded: each round consumes at least one byte or stops. */
    while (done < len) {
        size_t avail;
        const uint8_t *bytes = block_for(mem, addr + done, &avail);
        if (!bytes)
            break;
        size_t n = avail < len - done ? avail : len - done;
        memcpy((uint8_t *)out + done, bytes, n);
        done += n;
    }
    return done;
}

static enum cfi_status read_for_engine(void *env, uint64_t addr,
                                       unsigned size, uint64_t *value)
{
    uint8_t bytes[8];
    if (size > 8 || addr + size < addr ||
        trace_mem_read(env, addr, bytes, size) != size)
        return CFI_E_MEMORY;
    *value = cfi_load_le(bytes, size);
    return CFI_OK;
}

struct cfi_memory trace_mem_reader(struct trace_mem *mem)
{
    return (struct cfi_memory){read_for_engine, mem};
}

void trace_regs_from_user(const struct user_regs_struct *u,
                          struct cfi_regs *regs)
{
    const unsigned long long values[CFI_NGPRS] = {
        u->rax, u->rdx, u->rcx, u->rbx, u->rsi, u->rdi, u->rbp, u->rsp,
        u->r8, u->r9, u->r10, u->r11, u->r12, u->r13, u->r14, u->r15,
        u->rip,
    };
    cfi_regs_clear(regs);
    for (unsigned reg = 0; reg < CFI_NGPRS; reg++)
        cfi_regs_set(regs, reg, values[reg]);
}
