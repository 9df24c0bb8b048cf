/* SPDX-License-Identifier: MIT */
/* eh_elf_runner.c — an eh_elf of another machine, called on the host's
 * behalf (protocol.h).
 *
 * cfisem builds eh_elfs for the machine of the file they come from; one
 * for AArch64 cannot be loaded by an x86-64 cfisem. This program, built
 * for that machine (make: build/aarch64/eh_elf_runner, run under
 * qemu-aarch64), loads one eh_elf, checks that it is one of ours, of a
 * version eh_elf.h can call and of this machine, says so, then answers
 * requests until its input ends. The eh_elf's memory reads become
 * questions to the host, which reads its own memory model: a read that
 * faults there faults here. Registers past the eh_elf's register file
 * come from the request.
 *
 * usage: eh_elf_runner EH_ELF.so   (standard input and output: the host)
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "../eh_elf.h"
#include "protocol.h"

_Static_assert(EH_ELF_NREGS <= RN_REPORTED_MAX &&
                   EH_ELF_DWARF_REGS == RN_NREGS,
               "the protocol carries the register file");

static bool write_all(int fd, const void *buffer, size_t size)
{
    const unsigned char *bytes = buffer;
    while (size > 0) {
        ssize_t n = write(fd, bytes, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        bytes += n;
        size -= (size_t)n;
    }
    return true;
}

/* The request being served: what the callbacks see as `data`. */
struct call {
    const struct rn_request *request;
    bool broken;          /* the host stopped answering */
};

static int read_memory(void *data, uint64_t addr, unsigned size,
                       uint64_t *value)
{
    struct call *call = data;
    struct rn_read ask = {RN_READ, size, addr};
    struct rn_memory answer;
    if (call->broken || !write_all(1, &ask, sizeof ask) ||
        !rn_read_all(0, &answer, sizeof answer)) {
        call->broken = true;
        return 1;
    }
    *value = answer.value;
    return answer.failed != 0;
}

static int read_register(void *data, unsigned reg, uint64_t *value)
{
    const struct call *call = data;
    if (reg >= RN_NREGS)
        return EH_ELF_REG_UNKNOWN;
    *value = call->request->value[reg];
    switch (call->request->status[reg]) {
    case RN_REG_VALUE: return EH_ELF_REG_VALUE;
    case RN_REG_UNDEFINED: return EH_ELF_REG_UNDEFINED;
    default: return EH_ELF_REG_UNKNOWN;
    }
}

static void callee_regs(const struct rn_request *request,
                        struct eh_elf_regs *in)
{
    in->known = 0;
    in->undefined = 0;
    for (unsigned r = 0; r < EH_ELF_NREGS; r++) {
        in->value[r] = request->value[r];
        if (request->status[r] == RN_REG_VALUE)
            in->known |= (eh_elf_mask_t)1 << r;
        else if (request->status[r] == RN_REG_UNDEFINED)
            in->undefined |= (eh_elf_mask_t)1 << r;
    }
}

/* One request: false when the conversation is over. */
static bool serve(eh_elf_unwind_fn *unwind)
{
    static struct rn_request request; /* 1.2 KB: off the small stack */
    if (!rn_read_all(0, &request, sizeof request) || request.magic != RN_MAGIC)
        return false;
    struct call call = {&request, false};
    struct eh_elf_regs in;
    struct eh_elf_frame out;
    struct eh_elf_env env;
    memset(&env, 0, sizeof env);
    env.read_memory = read_memory;
    env.read_register = read_register;
    env.data = &call;
#if defined(__aarch64__)
    env.va_bits = request.va_bits;
#endif
    callee_regs(&request, &in);
    memset(&out, 0, sizeof out);
    unwind(request.pc, &in, &env, &out);
    if (call.broken)
        return false;
    struct rn_read tag = {RN_FRAME, 0, 0};
    struct rn_frame frame;
    memset(&frame, 0, sizeof frame);
    frame.error = out.error;
    frame.error_reg = out.error_reg;
    frame.error_offset = out.error_offset;
    frame.cfa = out.cfa;
    frame.known = out.caller.known;
    frame.undefined = out.caller.undefined;
    frame.signal_frame = out.signal_frame;
#if defined(__aarch64__)
    frame.ra_b_key = out.ra_b_key;
#endif
    frame.nregs = EH_ELF_NREGS;
    memcpy(frame.value, out.caller.value, sizeof out.caller.value);
    return write_all(1, &tag, sizeof tag) &&
           write_all(1, &frame, sizeof frame);
}

/* The eh_elf of argv[1], checked as compile/load.c checks one. */
static enum rn_hello_status open_eh_elf(int argc, char **argv,
                                        eh_elf_unwind_fn **unwind)
{
    if (argc != 2)
        return RN_E_USAGE;
    void *handle = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!handle)
        return RN_E_LOAD;
    const char *ident = dlsym(handle, "eh_elf_ident");
    const uint32_t *version = dlsym(handle, "eh_elf_abi_version");
    const uint16_t *machine = dlsym(handle, "eh_elf_machine");
    if (!ident || strcmp(ident, EH_ELF_IDENT_FULL) != 0)
        return RN_E_NOT_EH_ELF;
    if (!version || *version < EH_ELF_ABI_VERSION_MIN ||
        *version > EH_ELF_ABI_VERSION)
        return RN_E_VERSION;
    if (!machine || *machine != EH_ELF_MACHINE)
        return RN_E_MACHINE;
    *unwind = (eh_elf_unwind_fn *)dlsym(handle, "eh_elf_unwind");
    return *unwind ? RN_READY : RN_E_ENTRY;
}

int main(int argc, char **argv)
{
    eh_elf_unwind_fn *unwind = NULL;
    struct rn_hello hello = {RN_MAGIC, open_eh_elf(argc, argv, &unwind),
                             EH_ELF_NREGS, EH_ELF_MACHINE};
    if (!write_all(1, &hello, sizeof hello) || hello.status != RN_READY)
        return 1;
    while (serve(unwind))
        continue;
    return 0;
}
