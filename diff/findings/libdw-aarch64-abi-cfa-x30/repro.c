/* SPDX-License-Identifier: MIT */
/* elfutils libdw 0.188: on AArch64, a CIE that defines no CFA gets
 * CFA = x30 + 0 (the link register), not sp.
 *
 *   aarch64-linux-gnu-gcc -shared -nostdlib \
 *       -Wl,--section-start=.text=0x1000 -o x.so libdw-aarch64-abi-cfa-x30.S
 *   cc repro.c -o repro -ldw -lelf && ./repro x.so
 *
 * (The program runs on any host: libdw reads the AArch64 file.)
 * f's CIE (.cfi_startproc simple) has no instruction. DWARF 5 §6.4.1:
 * the CIE's initial instructions define the CFA; with none, there is no
 * CFA (libdw: nops 0), unless the ABI gives a default. aadwarf64 gives
 * none, and numbers sp 31 and the link register 30.
 * backends/aarch64_cfi.c starts its default program with DW_CFA_def_cfa,
 * ULEB128_7 (30), ULEB128_7 (0) under the comment "the value of the
 * Stack Pointer (r31)". The program asks dwarf_cfi_addrframe at 0x1000
 * and dwarf_frame_cfa. Exit 1 while the bug is present. */
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PC 0x1000

/* The CFA as "DW_OP_xxx reg, offset" (breg0-31 or bregx). */
static int show_cfa(Dwarf_Frame *frame, char *buf)
{
    Dwarf_Op *ops;
    size_t nops;
    if (dwarf_frame_cfa(frame, &ops, &nops) != 0)
        return sprintf(buf, "an error: %s", dwarf_errmsg(-1)), -2;
    if (nops == 0)
        return sprintf(buf, "none (nops 0)"), -1;
    if (ops[0].atom == 0x92) /* DW_OP_bregx */
        sprintf(buf, "DW_OP_bregx %lu %ld", (unsigned long)ops[0].number,
                (long)ops[0].number2);
    else
        sprintf(buf, "DW_OP_breg%d %ld", ops[0].atom - 0x70,
                (long)ops[0].number);
    if (nops > 1)
        strcat(buf, " ...");
    return ops[0].atom == 0x92 ? (int)ops[0].number : ops[0].atom - 0x70;
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
    char buf[128];
    int reg = show_cfa(frame, buf);
    printf("CFA: %s\n", buf);
    printf("DWARF: none (nops 0); the backend's comment: DW_OP_breg31 0\n");
    int ok = reg == -1 || reg == 31;
    printf("%s\n", ok ? "not the link register"
                       : "BUG: a CFA from a register other than sp");
    return !ok;
}
