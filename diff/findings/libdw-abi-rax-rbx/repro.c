/* SPDX-License-Identifier: MIT */
/* elfutils libdw 0.188: on x86-64, a register with no CFI rule is
 * same_value for rax and undefined for rbx: the ABI's roles swapped.
 *
 *   cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so \
 *       libdw-abi-rax-rbx.S
 *   cc repro.c -o repro -ldw -lelf && ./repro x.so
 *
 * f is a leaf: no rule for rax (DWARF 0) nor rbx (DWARF 3). DWARF 5
 * §6.4.1: a register with no rule takes the ABI's default. The x86-64
 * psABI (3.2.1, figure 3.4) makes rbx callee-saved (its value is the
 * caller's: same_value) and rax caller-saved (undefined).
 * backends/x86_64_cfi.c's default program writes
 * DW_CFA_same_value, ULEB128_7 (0), with the comment "%rbx": register 0
 * is rax. The program asks dwarf_cfi_addrframe at 0x1000 and
 * dwarf_frame_register for both. Exit 1 while the bug is present. */
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
    enum rule rax = rule(frame, 0), rbx = rule(frame, 3);
    printf("rax (0): %s, psABI: undefined (caller-saved)\n", names[rax]);
    printf("rbx (3): %s, psABI: same_value (callee-saved)\n", names[rbx]);
    int ok = rax == UNDEFINED && rbx == SAME_VALUE;
    printf("%s\n", ok ? "as the ABI says" : "BUG: not what the ABI says");
    return !ok;
}
