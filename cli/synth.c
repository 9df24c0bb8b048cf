/* SPDX-License-Identifier: MIT */
/* synth.c — `cfisem synth FILE [--emit-il] [--no-fde-code] [--json OUT]
 * [--limits]`: CFI synthesised from the machine code and compared with the
 * file's; with --no-fde-code, also for the code no FDE covers. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cfi/json.h"
#include "cli.h"
#include "semantics/sem.h"
#include "synth/synth.h"

static const char usage[] =
    "usage: cfisem synth FILE [--emit-il] [--no-fde-code] [--json OUT]\n"
    "                    [--limits]\n"
    "\n"
    "Disassembles every FDE's range of FILE (capstone; x86-64 or AArch64),\n"
    "recovers the CFA (rsp+h, or rbp+f once the frame pointer is set up;\n"
    "AArch64: sp+h, x29+f), the return address slot and the save slots of\n"
    "rbx rbp r12-r15 (AArch64: x19-x30 and d8-d15, and RA_SIGN_STATE) at\n"
    "every instruction by abstract interpretation over the control-flow\n"
    "graph, and compares them with the file's CFI (its IL) at every\n"
    "instruction.\n"
    "Prints each disagreeing range, by FDE:\n"
    "  [0x1004,0x1008)  cfa_height  il=rsp+16  code=rsp+24\n"
    "  [0x1010,0x1011)  restored_early  rbx  il=unspecified  code=[cfa-16]\n"
    "kinds: cfa_height, save_slot (rip: the return address rule),\n"
    "restored_early, restored_late, ra_sign_state (AArch64), no_fde (code\n"
    "between FDEs that is not padding), no_fde_crtstuff (a known deviation:\n"
    "such code that is GCC's crtstuff.c, deregister_tm_clones to\n"
    "frame_dummy, which crtbegin.o and crtbeginS.o build without CFI;\n"
    "printed and counted, but not a disagreement), no_fde_call_weak_fn\n"
    "(AArch64: the same for glibc's call_weak_fn of crti.o and crt1.o),\n"
    "not_analysable (with its\n"
    "reason; printed with --limits), then a summary: FDEs, the share fully\n"
    "analysed, the time.\n"
    "\n"
    "  --emit-il   print the synthesised table instead, in the text format\n"
    "              of `cfisem il` (an instruction without a known CFA has\n"
    "              cfa=undef)\n"
    "  --no-fde-code  also analyse the code no FDE covers, function by\n"
    "              function, from the symbol table (.symtab, .dynsym), the\n"
    "              entry point, the init and fini arrays, the executable\n"
    "              sections' starts and the direct calls and jumps into it\n"
    "              (a file with no CFI at all is read too): with --emit-il\n"
    "              their tables follow the FDEs', each headed\n"
    "              `fde no-fde cie=none [BEGIN,END) found=HOW [NAME]`;\n"
    "              else one summary line\n"
    "  --json OUT  write the report as JSON to OUT\n"
    "  --limits    print the not-analysable ranges too\n"
    "\n"
    "Example: cfisem synth /lib/x86_64-linux-gnu/libc.so.6\n"
    "         cfisem synth /usr/aarch64-linux-gnu/lib/libc.so.6\n"
    "\n"
        "The static complement of checking the CFI where a run goes (cfisem trace):\n"
        "every instruction of every FDE. synth/ disassembles each FDE's range with\n"
        "capstone 4 (Debian's libcapstone-dev: a table-driven decoder generated from\n"
        "LLVM's x86 tables, with operand details and the registers each instruction\n"
        "reads and writes, implicit ones included, which the clobber tracking needs),\n"
        "builds the control-flow graph, and runs an abstract interpretation over it:\n"
        "the CFA as rsp+h, or rbp+f once the frame pointer is set up, and any other\n"
        "register known to hold CFA-a (mov %rsp,%r15 kept across a call whose\n"
        "arguments point into the frame, then mov %r15,%rsp; a call forgets the\n"
        "registers the ABI does not preserve); for rbx, rbp and r12-r15 whether the\n"
        "caller's value is still in the register, at a slot CFA+s, both, or lost; the\n"
        "return address at CFA-8. It follows push/pop (of registers, immediates,\n"
        "flags), add/sub/lea on rsp, mov/lea between rsp and rbp, and $-N,%rsp (rsp\n"
        "unknown from there: the CFA must come from rbp), leave, enter, saves and\n"
        "restores with mov to and from rsp- or rbp-relative slots (the red zone\n"
        "included), calls (rsp unchanged after them), ret, hlt/ud2/int3, conditional\n"
        "and unconditional jumps, tail calls (a jump out of the FDE, or an indirect\n"
        "jump with the frame torn down), jump tables (gcc's and clang's PIC form lea\n"
        "T(%rip); movslq (T,i,4); add base; jmp, with add or lea, the base the table\n"
        "or another label as in vfprintf's computed gotos; the non-PIC jmp *T(,i,8);\n"
        "bounded by a cmp $N of the index itself, followed back through copies and a\n"
        "load of a compared memory operand, and a conditional jump after it: a\n"
        "compare of another register is no bound, as in mesa's cmp $0xef,%cl when the\n"
        "index is cl >> 4; else read while the entries land on instructions of the\n"
        "FDE, and no further than the next data the code addresses, where clang puts\n"
        "the next table), landing pads (from the FDE's LSDA, .gcc_except_table:\n"
        "successors of the calls of their call-site range), and clone (a syscall with\n"
        "eax 56 and a new stack, or clone3: the child runs on the stack it was given,\n"
        "so the analysis stops there). At a join, different heights make rsp unknown\n"
        "(\"stack heights conflict at a join\"); different slots lose the register. A\n"
        "call's fall-through loses to a jump's edge when the two disagree: the call\n"
        "is taken not to return (counted), and the fixpoint starts again without that\n"
        "fall-through, so that no state it left (in a loop it entered) survives. A\n"
        "call's fall-through that runs straight into a trap (call fancy_abort; mov\n"
        "0x0,%rax; ud2) is dead code: a difference there is a limit. An FDE whose\n"
        "first IL row is not the ABI's entry state (a function's cold part, split off\n"
        "with its frame built) starts from that row (\"entered mid-frame\"); GCC's nop\n"
        "in front of a cold part that starts with a landing pad is skipped.\n"
        "\n"
        "An AArch64 file (e_machine EM_AARCH64) is read with capstone's ARM64 mode and\n"
        "AAPCS64, the registers from the file's architecture descriptor: the CFA as\n"
        "sp+h or x29+f (sp+0 at entry: the return address is in x30), x19-x29, x30\n"
        "and v8-v15 (d8-d15) followed as saved registers (x30 written by bl and blr),\n"
        "stp/str/ldp/ldr (and stur, ldur, stnp, ldnp) relative to sp or x29 with\n"
        "their pre-index writeback (stp x29, x30, [sp, #-N]!: sp moves, then two\n"
        "saves) and post-index (ldp x29, x30, [sp], #N: the loads, then sp), sub and\n"
        "add of sp (an immediate, lsl #12 included, or a register set by a mov of an\n"
        "immediate just before: mov x12, #N; sub sp, sp, x12), mov x29, sp and add\n"
        "x29, sp, #N, ret, b (a tail call when it leaves the FDE), b.cond, cbz, tbz,\n"
        "br (GCC's jump tables: adrp and add of the table, ldrb or ldrh of the entry,\n"
        "adr of the base, add base, entry, sxtb #2, bounded by a cmp of the index or\n"
        "of the register it was copied from), brk and udf (traps; zeros are padding),\n"
        "svc (x0 written; clone with x8 220 and a new stack in x1, or clone3), and\n"
        "the LSE atomics and retaa/retab, which capstone 4 does not decode (known by\n"
        "their encodings). Pointer authentication: paciasp and pacibsp (hint #25 and\n"
        "#27, as capstone prints them) sign x30, autiasp, autibsp and xpaclri (hint\n"
        "#29, #31, #7) leave it unsigned; at every instruction the state is compared\n"
        "with the IL's RA_SIGN_STATE (column 34) and the key with the CIE's 'B':\n"
        "ra_sign_state when they differ (il=1 (a key) code=1 (b key): pacibsp under a\n"
        "CIE without 'B'), the limit ra_sign_conflict where paths with different\n"
        "states join. RA_SIGN_STATE 2 (negate_ra_state_with_pc) is rule_not_compared.\n"
        "Not decoded by capstone 4, and so undecodable: SVE (the a64fx and sve string\n"
        "functions) and MTE (ldg, stg) instructions. The outermost limit reads x30\n"
        "undefined where it says rip. Code no FDE covers that is exactly glibc's\n"
        "call_weak_fn (adrp x0; ldr x0, [x0, #..]; cbz x0, 1f; b ..; 1: ret, in\n"
        "every program and library linked with glibc's crt1.o or crti.o, written\n"
        "without CFI) is no_fde_call_weak_fn, a known deviation as no_fde_crtstuff\n"
        "is.\n"
        "\n"
        "At every instruction the state is compared with the IL's row: the CFA (rsp+h\n"
        "or rbp+f, whichever the IL uses), the return address rule ([cfa-8]), and\n"
        "each callee-saved register's rule. Disagreeing runs of instructions are\n"
        "printed, per FDE, with their kind:\n"
        "\n"
        "  fde .eh_frame+0x4114 [0x4c6e0,0x4c7cb)\n"
        "  [0x4c6e1,0x4c748)  cfa_height  il=rsp+8  code=rsp+16\n"
        "  [0x4c6e5,0x4c748)  save_slot  rbx  il=unspecified  code=[cfa-16]\n"
        "\n"
        "cfa_height (the CFA is not where the code has it), save_slot (a register's\n"
        "rule names another slot, or none where the register has been overwritten and\n"
        "no rule was ever given; rip: the return address rule), restored_early (no\n"
        "rule any more while the value is still only in its slot), restored_late (a\n"
        "slot rule after the register was restored and the slot overwritten, or where\n"
        "a path that never saved it joins: LLVM's shrink-wrapped shared ret), no_fde\n"
        "(code, not padding, between two FDEs of an executable segment),\n"
        "no_fde_crtstuff (a known deviation, printed and counted apart but not a\n"
        "disagreement: such code that is GCC's crtstuff.c, deregister_tm_clones,\n"
        "register_tm_clones, __do_global_dtors_aux and frame_dummy, which every\n"
        "program and library the system's cc links holds and whose crtbegin.o and\n"
        "crtbeginS.o carry no .eh_frame; recognised by deregister_tm_clones' first\n"
        "instructions, __TMC_END__ compared with itself, in a range no longer than\n"
        "crtbeginS.o's .text, 192 bytes; the exit status is 0 when these are the only\n"
        "findings: on Debian 12, libm, libz and /bin/ls each had one such range as\n"
        "their only finding), and not_analysable with its reason (printed with\n"
        "--limits; counted in the summary): undecodable (capstone 4 lacks some\n"
        "AVX-512 and newer instructions: kmovq VEX forms, rdpkru), unreached (a\n"
        "second entry point, as in PLT sections; code after an unresolved indirect\n"
        "jump is indirect_jump), join_conflict, rsp_unknown, realigned (no frame\n"
        "pointer to take the CFA from), mid_insn_target, cfa_expression (PLT, signal\n"
        "frames), cfa_other_reg (longjmp's cfa=rdi), outermost (rip undefined: no CFA\n"
        "needed), rule_not_compared (register or expression rules, rip=rdi in vfork),\n"
        "rsp_rule (rsp has its own rule, so the CFA is not the caller's rsp: GHC's\n"
        "StgRun), new_stack (clone's child), after_noreturn (the dead code above),\n"
        "reg_lost, regs_conflict, no_il, entry_unknown, fixpoint_limit, too_large,\n"
        "ra_sign_conflict (AArch64, above);\n"
        "cfa_other_reg also when the CFA is on rbp and rbp holds a value the analysis\n"
        "does not know (libffi's ffi_call_unix64). A slot rule kept after the pop\n"
        "that restored the register is accepted while the slot is not overwritten\n"
        "(the value is still there). An FDE is fully analysed when no instruction of\n"
        "it is not_analysable.\n"
        "\n"
        "--emit-il prints the synthesised table instead, in cfisem il's text format\n"
        "(header lines included): it parses back with the IL parser (the suite checks\n"
        "that, and that the parsed table, taken as CFI, agrees with the code). --json\n"
        "OUT writes every range and the totals.\n"
        "\n"
        "--no-fde-code also analyses the code that no FDE covers, function by\n"
        "function, and opens a file with no CFI at all. The functions start at the\n"
        "function symbols (.symtab, .dynsym), the entry point, the entries of\n"
        ".init_array, .fini_array and .preinit_array (crtstuff's frame_dummy and\n"
        "__do_global_dtors_aux, stripped or not), the start of each executable\n"
        "section (.init, .fini), and the direct calls and jumps of the analysed code\n"
        "(FDEs and functions alike) that land in code no FDE covers, to a fixpoint.\n"
        "Each runs from its start to the next start, FDE, symbol end or segment end,\n"
        "is analysed from the ABI entry state (a jump out of a function with its\n"
        "frame built, to a cold part, gives the jump's state instead, the part\n"
        "analysed again if it was analysed first), and ends after its last\n"
        "instruction reached. The entry point's table says rip is undefined: the\n"
        "outermost frame. With --emit-il each function's table follows the FDEs'\n"
        "(which do not change), headed fde no-fde cie=none [BEGIN,END) found=HOW\n"
        "[NAME] (HOW: symbol, entry, array, call, jump); without it one line counts\n"
        "them:\n"
        "\n"
        "  $ cfisem synth /usr/lib/x86_64-linux-gnu/libstdc++.so.6 --no-fde-code\n"
        "  ...\n"
        "  code no FDE covers: 6 functions (0 from symbols, 0 the entry point, 4 from init/fini arrays and section starts, 1 from calls, 1 from jumps), 52 instructions: 6 fully analysed\n"
        "\n"
        "(_init, _fini and crtstuff's four.)\n"
        "\n"
    "Exit status: 0 the CFI agrees with the code wherever it was analysed\n"
    "(no_fde_crtstuff ranges do not count); 1 a disagreement was found; 2\n"
    "bad input file; 64 usage error.\n";

struct options {
    const char *path;
    const char *json;
    bool emit_il;
    bool limits;
    bool no_fde_code;
};

static int parse_options(int argc, char **argv, struct options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h"))
            return -1;
        if (!strcmp(arg, "--emit-il")) {
            o->emit_il = true;
        } else if (!strcmp(arg, "--limits")) {
            o->limits = true;
        } else if (!strcmp(arg, "--no-fde-code")) {
            o->no_fde_code = true;
        } else if (!strcmp(arg, "--json")) {
            if (i + 1 >= argc)
                return cli_usage_error("synth", "missing value for", arg);
            o->json = argv[++i];
        } else if (arg[0] == '-' && arg[1] != '\0') {
            return cli_usage_error("synth", "unknown option", arg);
        } else if (o->path) {
            return cli_usage_error("synth", "more than one file:", arg);
        } else {
            o->path = arg;
        }
    }
    if (!o->path)
        return cli_usage_error("synth", "missing FILE", NULL);
    return CLI_OK;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct run {
    const struct options *o;
    const struct cfi_file *file;
    const struct sem_file_il *il;
    struct synth_decoder *decoder;
    struct synth_report report;
    struct sem_printer *printer;
    FILE *json;
    size_t json_ranges;
    size_t disagreements;
    uint64_t *targets;        /* --no-fde-code: the FDEs' exits */
    size_t ntargets, targets_capacity;
    size_t code_functions;
};

/* The FDE's calls and jumps out, where code no FDE covers may start. */
static enum cfi_status keep_exits(struct run *r, const struct synth_fde *s)
{
    for (size_t i = 0; i < s->nexits; i++) {
        if (r->ntargets == r->targets_capacity) {
            size_t capacity =
                r->targets_capacity ? 2 * r->targets_capacity : 256;
            uint64_t *grown = realloc(r->targets, capacity * sizeof *grown);
            if (!grown)
                return CFI_E_NOMEM;
            r->targets = grown;
            r->targets_capacity = capacity;
        }
        r->targets[r->ntargets++] = s->exits[i].target;
    }
    return CFI_OK;
}

static void json_range(struct run *r, const struct cfi_fde *fde,
                       const struct synth_range *x)
{
    char buf[8];
    fprintf(r->json, "%s\n    {\"fde\": %" PRIu64 ", \"begin\": ",
            r->json_ranges++ ? "," : "", fde ? fde->offset : 0);
    cfi_json_address(r->json, x->begin);
    fputs(", \"end\": ", r->json);
    cfi_json_address(r->json, x->end);
    fprintf(r->json, ", \"kind\": \"%s\"", synth_kind_name(x->kind));
    if (x->kind == SYNTH_NOT_ANALYSABLE)
        fprintf(r->json, ", \"reason\": \"%s\"", synth_reason_name(x->reason));
    if (x->reg >= 0)
        fprintf(r->json, ", \"reg\": \"%s\"",
                cfi_arch_reg_label(r->file->arch, (unsigned)x->reg, buf,
                                   sizeof buf));
    if (x->il[0]) {
        fputs(", \"il\": ", r->json);
        cfi_json_string(r->json, x->il);
        fputs(", \"code\": ", r->json);
        cfi_json_string(r->json, x->synth);
    }
    fputc('}', r->json);
}

static void print_fde(struct run *r, const struct synth_fde *s)
{
    bool header = false;
    for (size_t i = 0; i < s->nranges; i++) {
        const struct synth_range *x = &s->ranges[i];
        if (r->json)
            json_range(r, s->fde, x);
        if (x->kind == SYNTH_NOT_ANALYSABLE && !r->o->limits)
            continue;
        if (x->kind != SYNTH_NOT_ANALYSABLE)
            r->disagreements++;
        if (r->o->emit_il)
            continue;
        if (!header)
            printf("fde %s+0x%" PRIx64 " [0x%" PRIx64 ",0x%" PRIx64 ")\n",
                   cfi_section_name(s->fde->section), s->fde->offset,
                   s->fde->pc_begin, s->fde->pc_end);
        header = true;
        synth_print_range(stdout, r->file->arch, x);
    }
}

static enum cfi_status one_fde(struct run *r, size_t i)
{
    const struct sem_fde_il *il =
        r->il->status[i] == CFI_OK ? &r->il->fdes[i] : NULL;
    struct synth_fde s;
    enum cfi_status status = synth_analyse_fde(r->decoder, r->file,
                                               &r->file->fdes[i], il, &s);
    if (status != CFI_OK)
        return status;
    synth_report_add(&r->report, &s);
    r->report.not_translated += il == NULL;
    print_fde(r, &s);
    if (r->o->no_fde_code)
        status = keep_exits(r, &s);
    if (r->o->emit_il && status == CFI_OK) {
        struct synth_table t;
        status = synth_fde_table(&s, &t);
        if (status == CFI_OK)
            sem_printer_fde(r->printer, &t.il);
        synth_table_free(&t);
    }
    synth_fde_free(&s);
    return status;
}

static enum cfi_status uncovered(struct run *r)
{
    struct synth_range *ranges = NULL;
    size_t n = 0;
    enum cfi_status status = synth_uncovered(r->decoder, r->file, &ranges, &n);
    for (size_t i = 0; i < n && status == CFI_OK; i++) {
        r->report.kind_ranges[ranges[i].kind]++;
        r->disagreements += !synth_kind_known(ranges[i].kind);
        if (r->json)
            json_range(r, NULL, &ranges[i]);
        if (!r->o->emit_il)
            synth_print_range(stdout, r->file->arch, &ranges[i]);
    }
    free(ranges);
    return status;
}

static void code_header(const struct synth_code_function *fn)
{
    printf("fde no-fde cie=none [0x%" PRIx64 ",0x%" PRIx64 ") found=%s%s%s\n",
           fn->range.pc_begin, fn->range.pc_end,
           synth_origin_name(fn->origin), fn->name ? " " : "",
           fn->name ? fn->name : "");
}

/* The code no FDE covers: each function's table (--emit-il) or a line. */
static enum cfi_status code(struct run *r)
{
    struct synth_code c;
    enum cfi_status status =
        synth_code_find(r->decoder, r->file, r->targets, r->ntargets, &c);
    if (status != CFI_OK)
        return status;
    size_t by_origin[SYNTH_FROM_JUMP + 1] = {0}, insns = 0, fully = 0;
    for (size_t i = 0; i < c.count; i++) {
        const struct synth_code_function *fn = &c.functions[i];
        by_origin[fn->origin]++;
        insns += fn->ninsns;
        fully += fn->fully_analysed;
        if (r->o->emit_il) {
            code_header(fn);
            /* code no FDE covers has no CIE: the file's architecture */
            for (size_t k = 0; k < fn->table.il.nranges; k++)
                sem_print_range_text(stdout, r->file->arch,
                                     &fn->table.il.ranges[k]);
            putchar('\n');
        }
    }
    r->code_functions = c.count;
    if (!r->o->emit_il)
        printf("code no FDE covers: %zu functions (%zu from symbols, %zu the "
               "entry point, %zu from init/fini arrays and section starts, "
               "%zu from calls, %zu from jumps), %zu instructions: %zu fully "
               "analysed\n",
               c.count, by_origin[SYNTH_FROM_SYMBOL],
               by_origin[SYNTH_FROM_ENTRY], by_origin[SYNTH_FROM_ARRAY],
               by_origin[SYNTH_FROM_CALL], by_origin[SYNTH_FROM_JUMP], insns,
               fully);
    synth_code_free(&c);
    return CFI_OK;
}

static void summary(FILE *out, const struct synth_report *rep, double secs)
{
    fprintf(out,
            "%zu FDEs, %zu instructions: %zu fully analysed (%.1f%%), %zu "
            "entered mid-frame, %zu with a disagreement; %zu jump tables; "
            "%zu call fall-throughs taken not to return; %.2f s\n",
            rep->nfdes, rep->ninsns, rep->fully_analysed,
            rep->nfdes ? 100.0 * (double)rep->fully_analysed /
                             (double)rep->nfdes
                       : 100.0,
            rep->entered_mid_frame, rep->fdes_with_disagreement,
            rep->jump_tables, rep->noreturn_calls, secs);
    for (int k = 0; k < SYNTH_KIND_COUNT; k++)
        if (rep->kind_ranges[k])
            fprintf(out, "  %-16s %zu ranges%s\n",
                    synth_kind_name((enum synth_kind)k), rep->kind_ranges[k],
                    synth_kind_known((enum synth_kind)k)
                        ? " (known deviation, not a disagreement)" : "");
    for (int k = 1; k < SYNTH_REASON_COUNT; k++)
        if (rep->reason_fdes[k])
            fprintf(out, "  limit %-18s %zu FDEs (%s)\n",
                    synth_reason_name((enum synth_reason)k),
                    rep->reason_fdes[k],
                    synth_reason_text((enum synth_reason)k));
}

static void json_end(struct run *r, double secs)
{
    const struct synth_report *rep = &r->report;
    fprintf(r->json,
            "\n  ],\n  \"fdes\": %zu, \"instructions\": %zu, "
            "\"fully_analysed\": %zu, \"entered_mid_frame\": %zu, "
            "\"fdes_with_disagreement\": %zu, \"jump_tables\": %zu, "
            "\"noreturn_calls\": %zu, \"seconds\": %.3f,\n  \"kinds\": {",
            rep->nfdes, rep->ninsns, rep->fully_analysed,
            rep->entered_mid_frame, rep->fdes_with_disagreement,
            rep->jump_tables, rep->noreturn_calls, secs);
    const struct cfi_arch *arch = r->file->arch;
    for (int k = 0; k < SYNTH_KIND_COUNT; k++)
        if (synth_kind_applies((enum synth_kind)k, arch))
            fprintf(r->json, "%s\"%s\": %zu", k ? ", " : "",
                    synth_kind_name((enum synth_kind)k),
                    rep->kind_ranges[k]);
    fputs("},\n  \"limit_fdes\": {", r->json);
    for (int k = 1; k < SYNTH_REASON_COUNT; k++)
        if (synth_reason_applies((enum synth_reason)k, arch))
            fprintf(r->json, "%s\"%s\": %zu", k > 1 ? ", " : "",
                    synth_reason_name((enum synth_reason)k),
                    rep->reason_fdes[k]);
    fputs("}", r->json);
    if (r->o->no_fde_code)
        fprintf(r->json, ",\n  \"no_fde_functions\": %zu", r->code_functions);
    fputs("\n}\n", r->json);
}

static int analyse_all(struct run *r)
{
    double start = now();
    enum cfi_status status = CFI_OK;
    for (size_t i = 0; i < r->file->nfdes && status == CFI_OK; i++)
        status = one_fde(r, i);
    if (status == CFI_OK)
        status = uncovered(r);
    if (status == CFI_OK && r->o->no_fde_code)
        status = code(r);
    double secs = now() - start;
    if (status != CFI_OK) {
        fprintf(stderr, "cfisem: %s: %s\n", r->o->path,
                cfi_status_text(status));
        return CLI_BAD_INPUT;
    }
    if (r->json)
        json_end(r, secs);
    if (!r->o->emit_il)
        summary(stdout, &r->report, secs);
    return r->disagreements ? CLI_MISMATCH : CLI_OK;
}

static FILE *open_json(const struct options *o, const char *file_name)
{
    FILE *f = fopen(o->json, "w");
    if (!f)
        return NULL;
    fprintf(f, "{\n  \"schema_version\": %d,\n  \"file\": ",
            CFI_JSON_SCHEMA_VERSION);
    cfi_json_string(f, file_name);
    fputs(",\n  \"ranges\": [", f);
    return f;
}

static int run(const struct options *o, const struct cfi_file *file)
{
    struct run r = {.o = o, .file = file};
    struct sem_file_il *il = NULL;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    int status = CLI_BAD_INPUT;
    if (sem_file_il_build(file, &il) != CFI_OK ||
        synth_decoder_new(&r.decoder, file->arch, &diag) != CFI_OK) {
        fprintf(stderr, "cfisem: %s: %s\n", o->path,
                diag.message ? diag.message : "out of memory");
        goto out;
    }
    r.il = il;
    if (o->emit_il &&
        !(r.printer = sem_printer_new(stdout, SEM_FORMAT_TEXT, o->path,
                                      file->arch)))
        goto out;
    if (o->json && !(r.json = open_json(o, o->path))) {
        diag = (struct cfi_diag){CFI_E_IO, "cannot open file for writing",
                                 CFI_NO_OFFSET, -1};
        cli_report_file_error(o->json, &diag);
        goto out;
    }
    status = analyse_all(&r);
out:
    if (r.json)
        fclose(r.json);
    sem_printer_end(r.printer);
    synth_decoder_free(r.decoder);
    sem_file_il_free(il);
    free(r.targets);
    return status;
}

int cli_synth(int argc, char **argv)
{
    struct options o = {NULL, NULL, false, false, false};
    int status = parse_options(argc, argv, &o);
    if (status == -1) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    if (status != CLI_OK)
        return status;
    struct cfi_file *file = NULL;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    enum cfi_status opened = o.no_fde_code
                                 ? cfi_file_open_code(o.path, &file, &diag)
                                 : cfi_file_open(o.path, &file, &diag);
    if (opened != CFI_OK) {
        cli_report_file_error(o.path, &diag);
        return CLI_BAD_INPUT;
    }
    status = run(&o, file);
    cfi_file_close(file);
    return status;
}
