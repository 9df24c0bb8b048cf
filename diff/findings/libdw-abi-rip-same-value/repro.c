/* SPDX-License-Identifier: MIT */
/* elfutils libdw 0.188: on x86-64, the return address column (rip, 16)
 * with no CFI rule is same_value: the caller's pc is the callee's.
 *
 *   cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so \
 *       libdw-abi-rip-same-value.S
 *   cc repro.c -o repro -ldw -lelf && ./repro x.so
 *
 * Neither f's CIE (.cfi_startproc simple) nor its FDE gives rip a rule.
 * DWARF 5 §6.4.1: a register with no rule is undefined unless the ABI
 * says otherwise, and the x86-64 psABI gives the return address column
 * no default; §6.4.4: an undefined return address ends the stack.
 * backends/x86_64_cfi.c lists DW_CFA_same_value, ULEB128_7 (16) among
 * the call-saved registers, and libdw/cfi.c runs that program before
 * every CIE's. The program asks dwarf_cfi_addrframe at 0x1000 and
 * dwarf_frame_register for rip. Exit 1 while the bug is present. */
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#define PC 0x1000

enum rule { UNDEFINED, SAME_VALUE, OTHER, ERROR };
static const char *const names[] = {"undefined", "same_value", "a location",
                                    "an error"};

static enum rule rule(Dwarf_Frame *frame, int regno)
{
    Dwarf_Op mem[3], *ops;
    size_t nops;
    if (dwarf_frame_register(frame, regno, mem, &ops, &nops) != 0)
        return ERROR;
    if (nops != 0)
        return OTHER;
    return ops == NULL ? SAME_VALUE : UNDEFINED;
}

int main(int argc, char **argv)
{
    elf_version(EV_CURRENT);
    int fd = open(argc > 1 ? argv[1] : "x.so", O_RDONLY);
    Elf *elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
    Dwarf_CFI *cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
    Dwarf_Frame *frame;
    if (!cfi || dwarf_cfi_addrframe(cfi, PC, &frame) != 0) {
        fprintf(stderr, "libdw: %s\n", dwarf_errmsg(-1));
        return 2;
    }
    enum rule rip = rule(frame, 16);
    printf("rip (16): %s, DWARF: undefined (no rule, no ABI default)\n",
           names[rip]);
    int ok = rip == UNDEFINED;
    printf("%s\n", ok ? "as DWARF says" : "BUG: not what DWARF says");
    return !ok;
}
