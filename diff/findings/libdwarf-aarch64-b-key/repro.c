/* SPDX-License-Identifier: MIT */
/* libdwarf 20210528: an AArch64 CIE with augmentation "zRB" (the B key
 * signs the return address) makes the whole .eh_frame unreadable.
 *
 *   aarch64-linux-gnu-gcc -shared -nostdlib \
 *       -Wl,--section-start=.text=0x1000 -o x.so libdwarf-aarch64-b-key.S
 *   cc -I/usr/include/libdwarf repro.c -o repro -ldwarf && ./repro x.so
 *
 * (The program runs on any host: libdwarf reads the AArch64 file.)
 * .cfi_b_key_frame makes GCC and gas write "zRB", as
 * -mbranch-protection=pac-ret+b-key does. aadwarf64 ("Common
 * information entries"): 'B' has no augmentation data. dwarf_frame2.c
 * knows S, L, R and P after 'z' only and fails dwarf_get_fde_list_eh
 * with DW_DLE_FRAME_AUGMENTATION_UNKNOWN: no PC of the file can be
 * unwound. At 0x1008, after the stp, x30 (the return address) is saved
 * at CFA-8. The program asks dwarf_get_fde_info_for_reg3_b at 0x1008.
 * Exit 1 while the bug is present. */
#include <dwarf.h>
#include <libdwarf.h>
#include <stdio.h>

#define PC 0x1008

static const char *const types[] = {"offset", "val_offset", "expression",
                                    "val_expression"};

/* Prints regno's rule at PC; returns its offset if it is offset(N)
 * from the CFA, -1 if it has no rule, -2 otherwise. */
static long rule(Dwarf_Fde fde, int regno, const char *name)
{
    Dwarf_Small type;
    Dwarf_Signed relevant, reg, offset;
    Dwarf_Ptr block;
    Dwarf_Addr row;
    Dwarf_Bool more;
    Dwarf_Addr next;
    Dwarf_Error err = NULL;
    if (dwarf_get_fde_info_for_reg3_b(fde, regno, PC, &type, &relevant,
                                      &reg, &offset, &block, &row, &more,
                                      &next, &err) != DW_DLV_OK) {
        printf("%s: error %s\n", name, err ? dwarf_errmsg(err) : "");
        return -2;
    }
    if (type == DW_EXPR_OFFSET && reg == DW_FRAME_UNDEFINED_VAL) {
        printf("%s: no rule\n", name);
        return -1;
    }
    printf("%s: %s(%ld)\n", name, type < 4 ? types[type] : "?",
           (long)offset);
    return type == DW_EXPR_OFFSET ? (long)offset : -2;
}

int main(int argc, char **argv)
{
    Dwarf_Debug dbg;
    Dwarf_Error err = NULL;
    Dwarf_Cie *cies;
    Dwarf_Fde *fdes, fde;
    Dwarf_Signed ncies, nfdes;
    Dwarf_Addr lo, hi;
    if (dwarf_init_path(argc > 1 ? argv[1] : "x.so", NULL, 0, DW_DLC_READ,
                        DW_GROUPNUMBER_ANY, NULL, NULL, &dbg, NULL, 0,
                        NULL, &err) != DW_DLV_OK)
        return fprintf(stderr, "cannot open the file\n"), 2;
    dwarf_set_frame_rule_initial_value(dbg, DW_FRAME_UNDEFINED_VAL);
    if (dwarf_get_fde_list_eh(dbg, &cies, &ncies, &fdes, &nfdes, &err)
            != DW_DLV_OK
        || dwarf_get_fde_at_pc(fdes, PC, &fde, &lo, &hi, &err) != DW_DLV_OK) {
        printf("error %s\n", err ? dwarf_errmsg(err) : "");
        printf("DWARF: x30 (30): offset(-8)\nBUG: no FDE\n");
        return 1;
    }
    long x30 = rule(fde, 30, "x30 (30)");
    printf("DWARF: x30 (30): offset(-8)\n");
    int ok = x30 == -8;
    printf("%s\n", ok ? "as DWARF says" : "BUG: not what DWARF says");
    return !ok;
}
