/* SPDX-License-Identifier: MIT */
/* libdwarf 20210528: DW_CFA_expression on register 2^32+1 writes far
 * outside the register table (a crash, or heap corruption).
 *
 *   cc -shared -nostdlib -Wl,--section-start=.text=0x1000 -o x.so \
 *       libdwarf-expression-register.S
 *   cc -I/usr/include/libdwarf repro.c -o repro -ldwarf && ./repro x.so
 *
 * f's FDE: DW_CFA_expression, register ULEB 81 80 80 80 10 (2^32+1),
 * expression DW_OP_nop. DWARF 5 §6.4.2.3: the operand is a register
 * number; one the ABI does not have is an error. In
 * _dwarf_exec_frame_instr (dwarf_frame.c) the bound check compares
 * (unsigned)reg, 1, with the table size, and the store indexes
 * localregtab with the 64-bit number: valgrind reports an invalid write.
 * DW_CFA_val_expression does the same. The query
 * (dwarf_get_fde_info_for_reg3_b at 0x1000 for rax) runs in a child
 * under a 5 s alarm; the parent reports how it ended. Exit 1 while the
 * bug is present. */
#include <dwarf.h>
#include <libdwarf.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

static int query(const char *path)
{
    Dwarf_Debug dbg;
    Dwarf_Error err = NULL;
    Dwarf_Cie *cies;
    Dwarf_Fde *fdes, fde;
    Dwarf_Signed ncies, nfdes;
    Dwarf_Addr lo, hi;
    if (dwarf_init_path(path, NULL, 0, DW_DLC_READ, DW_GROUPNUMBER_ANY,
                        NULL, NULL, &dbg, NULL, 0, NULL, &err) != DW_DLV_OK)
        return fprintf(stderr, "cannot open the file\n"), 2;
    dwarf_set_frame_rule_initial_value(dbg, DW_FRAME_UNDEFINED_VAL);
    if (dwarf_get_fde_list_eh(dbg, &cies, &ncies, &fdes, &nfdes, &err)
            != DW_DLV_OK
        || dwarf_get_fde_at_pc(fdes, PC, &fde, &lo, &hi, &err) != DW_DLV_OK)
        return printf("error %s\n", err ? dwarf_errmsg(err) : ""), 0;
    rule(fde, 0, "rax (0)");
    return 0;
}

int main(int argc, char **argv)
{
    printf("DWARF: an error (DW_DLV_ERROR: no register 2^32+1)\n");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(5);
        int r = query(argc > 1 ? argv[1] : "x.so");
        fflush(stdout);
        _exit(r);
    }
    int status;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        printf("BUG: the query %s (signal %d, %s)\n",
               sig == SIGALRM ? "did not return within 5 s"
                              : "killed the process",
               sig, strsignal(sig));
        return 1;
    }
    printf("%s\n", WEXITSTATUS(status) ? "setup failed"
                                       : "the query returned");
    return WEXITSTATUS(status) != 0;
}
