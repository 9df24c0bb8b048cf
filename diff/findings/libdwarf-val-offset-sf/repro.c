/* SPDX-License-Identifier: MIT */
/* libdwarf 20210528: DW_CFA_val_offset_sf r12 gives its rule to
 * register 0 (rax) and leaves r12 without one.
 *
 *   cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so \
 *       libdwarf-val-offset-sf.S
 *   cc -I/usr/include/libdwarf repro.c -o repro -ldwarf && ./repro x.so
 *
 * f's FDE: DW_CFA_val_offset_sf r12, -2 (bytes 15 0c 7e). DWARF 5
 * §6.4.2.3: r12's rule is val_offset(-2 x data_alignment_factor -8 =
 * 16); rax keeps no rule. In _dwarf_exec_frame_instr (dwarf_frame.c)
 * the DW_CFA_val_offset_sf case reads the register into lreg but indexes
 * the table with reg_no, still 0. The program asks
 * dwarf_get_fde_info_for_reg3_b at 0x1000 for both (a register with no
 * rule reads as DW_FRAME_UNDEFINED_VAL). Exit 1 while the bug is
 * present. */
#include <dwarf.h>
#include <libdwarf.h>
#include <stdio.h>

#define PC 0x1000

static const char *const types[] = {"offset", "val_offset", "expression",
                                    "val_expression"};

/* Prints regno's rule at PC; returns its offset if it is val_offset(N)
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
    return type == DW_EXPR_VAL_OFFSET ? (long)offset : -2;
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
        || dwarf_get_fde_at_pc(fdes, PC, &fde, &lo, &hi, &err) != DW_DLV_OK)
        return printf("error %s\n", err ? dwarf_errmsg(err) : ""), 2;
    long r12 = rule(fde, 12, "r12 (12)"), rax = rule(fde, 0, "rax (0)");
    printf("DWARF: r12 (12): val_offset(16); rax (0): no rule\n");
    int ok = r12 == 16 && rax == -1;
    printf("%s\n", ok ? "as DWARF says" : "BUG: not what DWARF says");
    return !ok;
}
