/* SPDX-License-Identifier: MIT */
/* deviations.c — see deviations.h. The table: the one place where the
 * known deviations are listed, each with its reason.
 *
 * One entry per deviation observed, each shown by a test of
 * tests/check_deviations.c. A predicate recognises exactly its deviation:
 * the engine, the item, the IL's rule or status that the library reads
 * differently, and the library's answer being what its reading gives
 * (not merely "something else"). Where a deviation also changes what
 * is read (so the status), the predicate computes the whole answer the
 * library's reading gives: the IL's row edited as libdw reads it, the
 * program patched as libdwarf reads it, or the model of libunwind's step
 * (engines/libunwind_model.h, whose every behaviour is one flag: an entry
 * matches when its behaviour is needed to give libunwind's answer). The
 * predicates live beside the library they describe (deviations_internal.h
 * says where). A difference on rip that only copies the one on a return
 * address column other than 16 (cfi.h step 6) is explained as that
 * column's. The reasons cite the library's source file (the Debian 12
 * versions: libdwarf 20210528, elfutils 0.188, libunwind 1.6.2). */
#include "deviations_internal.h"

#define STOPS_AT_LOOKUP_PC(lib, where)                                      \
    "DWARF 5 6.4.2: the table is defined by the whole program, and cfi.h " \
    "step 3 makes an error anywhere in the CIE or FDE program an error of " \
    "the FDE. " lib " runs the FDE program only up to the lookup PC ("    \
    where "), so an error after it goes unseen."

#define ZERO_LENGTH(where)                                                 \
    "DWARF 5 6.4.1 defines no terminator in .debug_frame (the LSB's zero " \
    "length ends .eh_frame only); cfi/section.c reads a zero length word " \
    "there as 4 bytes of padding and goes on, as readelf and gimli do "   \
    "(producers write one at the start or the end: Free Pascal, Go). "    \
    where " takes it as the end of the section: the records after it are " \
    "not seen, and their PCs are 'no FDE'."

#define TRUSTS_HDR(where)                                                  \
    "cfi.h step 2 finds the FDE in .eh_frame itself; .eh_frame_hdr (LSB " \
    "Core) is the linker's index of it, a binary search table of (initial " \
    "location, FDE address), which `cfisem validate --hdr` checks. "      \
    where " takes the table's entry for the PC as the FDE: where the "    \
    "table does not index .eh_frame (an entry naming another FDE or an "  \
    "address inside one, an FDE without entry, a wrong count), the "      \
    "library reads another FDE, garbage, or none."

static const struct engine_deviation table[] = {
    {"libunwind-no-undefined-default", ENGINE_libunwind,
     "libunwind keeps the callee's value of a caller-saved register that "
     "has no rule, instead of making it undefined",
     "The x86-64 psABI (3.2.1, 3.6.3) makes rax, rcx, rdx, rsi, rdi and "
     "r8-r11 caller-saved: with no rule their caller's value is not "
     "recoverable, and cfi.h applies 'undefined' to them. libunwind's "
     "dwarf/Gparser.c starts every register at DWARF_WHERE_SAME, so a "
     "register with no rule keeps its location and unw_get_reg returns "
     "the callee's value; with a return address column other than 16 that "
     "is the column's the IP is read from.",
     engine_deviation_libunwind_no_undefined_default},
    {"libunwind-rsp-is-cfa", ENGINE_libunwind,
     "libunwind's caller rsp is always the CFA, whatever rule rsp has",
     "DWARF 5 6.4.1 gives rsp its own column like any register; cfi.h "
     "applies 'rsp = CFA' only when rsp has no rule. libunwind's "
     "x86_64/Gregs.c answers UNW_X86_64_RSP with c->dwarf.cfa and never "
     "reads rsp's location (seen in libc's and ld.so's setcontext-like "
     "FDEs: 'rsp=r8'). rsp's location with no rule stays the callee's "
     "rsp: with rsp as the return address column, the IP is read from "
     "it.",
     engine_deviation_libunwind_rsp_is_cfa},
    {"libunwind-needs-caller-rip", ENGINE_libunwind,
     "libunwind fails when the caller's rip would be a callee register the "
     "request left unknown",
     "cfi.h carries an unknown callee register over to the caller through "
     "a register or same_value rule (an unknown is the harness's way of "
     "saying 'not given'). libunwind's step must produce the caller's IP "
     "as a value (x86_64/Gstep.c reads it through dwarf_get), so it reads "
     "the source register and fails. Seen in libc's setcontext-like FDEs "
     "('rip=rdx') in states where rdx is not given. Not a defect of "
     "libunwind: the reference's 'unknown' has no counterpart there.",
     engine_deviation_libunwind_needs_caller_rip},
    {"libunwind-val-offset-unknown", ENGINE_libunwind,
     "libunwind has no DW_CFA_val_offset / val_offset_sf: it skips the "
     "opcode and runs its operands as instructions",
     "DWARF 5 6.4.2.3 defines val_offset (0x14) and val_offset_sf (0x15). "
     "dwarf/Gparser.c run_cfi_program has no case for them and its switch "
     "no default: the opcode byte is dropped, the register and offset "
     "bytes are decoded as opcodes (diff/findings/libunwind-val-offset).",
     engine_deviation_libunwind_val_offset_unknown},
    {"libunwind-stops-at-lookup-pc", ENGINE_libunwind,
     "libunwind does not see an error in the FDE program after the lookup "
     "PC",
     STOPS_AT_LOOKUP_PC("libunwind", "dwarf/Gparser.c run_cfi_program: "
                        "while (*ip <= end_ip)"),
     engine_deviation_libunwind_stops_at_lookup_pc},
    {"libunwind-cfa-ops-on-expression", ENGINE_libunwind,
     "libunwind accepts def_cfa_register / def_cfa_offset when the CFA is "
     "an expression",
     "DWARF 5 6.4.2.2: def_cfa_register and def_cfa_offset are valid only "
     "if the CFA rule is register+offset; cfi.h makes them malformed. "
     "libunwind sets the register or offset column anyway: def_cfa_register "
     "switches back to register + the last offset (as libgcc does, which "
     "libgcrypt's FDEs at .eh_frame 0xeb30, 0xec10 rely on), "
     "def_cfa_offset leaves the expression in force.",
     engine_deviation_libunwind_cfa_ops_on_expression},
    {"libunwind-cie-restore-and-location", ENGINE_libunwind,
     "libunwind accepts DW_CFA_restore and location changes in a CIE",
     "DWARF 5 6.4.2.3: restore gives back the rule of the CIE's initial "
     "instructions, which do not exist yet inside them; the CIE's program "
     "has no location (6.4.1). cfi.h rejects both. libunwind runs the CIE "
     "with rs_initial set to its all-same_value start (restore gives "
     "same_value) and end_ip = ~0 (advances are accepted).",
     engine_deviation_libunwind_cie_restore_and_location},
    {"libunwind-undefined-rbp-ends-stack", ENGINE_libunwind,
     "libunwind ends the stack (rip undefined) when rbp is undefined",
     "DWARF 5 6.4.4: only an undefined return address column ends the "
     "stack. x86_64/Gstep.c unw_step sets ip = 0 and returns 0 whenever "
     "the caller's rbp has no location (its reading of the psABI's "
     "'rbp = 0 marks the outermost frame').",
     engine_deviation_libunwind_undefined_rbp_ends_stack},
    {"libunwind-register-new-location", ENGINE_libunwind,
     "libunwind's register(r, m) takes m's caller location when m < r has "
     "a rule",
     "DWARF 5 6.4.2.3: register(R) means the previous value is in register "
     "R of this frame; cfi.h: the callee's m. dwarf/Gparser.c "
     "apply_reg_state sets new_loc[r] = new_loc[m] in increasing order, so "
     "when m < r already has its new location, r gets the caller's m.",
     engine_deviation_libunwind_register_new_location},
    {"libunwind-rip-is-return-address", ENGINE_libunwind,
     "with a return address column other than 16, libunwind never reads "
     "rip's own rule",
     "cfi.h step 6 (DWARF 5 6.4.1, return_address_register): the caller's "
     "rip is the return address column's value, and rip's own rule is "
     "evaluated like any other in step 5, its errors included. "
     "x86_64/Gregs.c answers UNW_X86_64_RIP with the IP that "
     "dwarf/Gparser.c apply_reg_state read from the return address "
     "column's location: column 16's location is never read, so a fault "
     "in its slot goes unseen.",
     engine_deviation_libunwind_rip_is_ip},
    {"libunwind-deref-size-high-bytes", ENGINE_libunwind,
     "libunwind's DW_OP_deref_size 5, 6 and 7 keep the high bytes of an "
     "8-byte read; size 3 reads 4 bytes",
     "DWARF 5 2.5.1.3: deref_size n reads n bytes and zero-extends them. "
     "dwarf/Gexpr.c reads 8 bytes for sizes 5..8 and masks them with "
     "'tmp2 &= (~0) << (8 * operand1)', which clears the n low bytes it "
     "should keep (diff/findings/libunwind-deref-size); for size 3 it reads "
     "4 bytes and masks to 3 (the value is right; the extra byte can be "
     "unreadable). Seen on the value, and on what a rule then reads.",
     engine_deviation_libunwind_deref_size},
    {"libunwind-div-by-zero", ENGINE_libunwind,
     "libunwind's DW_OP_div and DW_OP_mod by zero push 0",
     "cfi.h makes a division by zero an expression error (DWARF 5 2.5.1.4 "
     "gives it no value). dwarf/Gexpr.c computes 'if (tmp1) tmp1 = tmp2 / "
     "tmp1; push (tmp1)': the divisor, 0, is pushed and the expression "
     "goes on.",
     engine_deviation_libunwind_div_by_zero},
    {"libunwind-shift-count-mod-64", ENGINE_libunwind,
     "libunwind's DW_OP_shl, shr and shra by 64 or more shift by the count "
     "mod 64",
     "cfi.h: a shift by 64 or more gives 0 (shra: the sign), the value "
     "shifted that far. dwarf/Gexpr.c shifts with C's << and >>, undefined "
     "for such counts; x86-64's shift instructions take the count mod 64.",
     engine_deviation_libunwind_shift_count},
    {"libunwind-cfa-expression-zero-pushed", ENGINE_libunwind,
     "libunwind evaluates DW_CFA_def_cfa_expression with 0 pushed first",
     "DWARF 5 6.4.2.2: the CFA expression is evaluated with an empty stack "
     "(only register rules get the CFA pushed, 6.4.2.3). dwarf/Gparser.c "
     "apply_reg_state calls eval_location_expr (c, 0, ...) for the CFA, "
     "which pushes that 0: an operation reaching below the expression's "
     "own values reads it instead of failing, and the stack holds one "
     "value less.",
     engine_deviation_libunwind_cfa_zero_pushed},
    {"libunwind-null-address-undefined", ENGINE_libunwind,
     "libunwind makes a register saved at address 0 undefined",
     "DWARF 5 6.4.2.3: offset(N) and expression(E) say where the value is "
     "saved, whatever the address; cfi.h reads it (a fault is a memory "
     "error). libunwind stores a location as an address and uses address "
     "0 as DWARF_NULL_LOC, 'no location': dwarf_get fails on it and "
     "unw_get_reg gives nothing, so nothing is read.",
     engine_deviation_libunwind_null_address},
    {"libunwind-expressions-before-reads", ENGINE_libunwind,
     "libunwind evaluates every register's expression before it reads any "
     "saved register: of two failing rules it reports another",
     "cfi.h step 5 evaluates the registers in increasing number, each "
     "rule to its end (its expression, then the read it says), and "
     "reports the first error. dwarf/Gparser.c apply_reg_state evaluates "
     "the expressions of registers 0..16 first, then reads the return "
     "address; the other saved registers are read when asked for "
     "(unw_get_reg): an expression of a later register fails before an "
     "earlier register's slot is read.",
     engine_deviation_libunwind_expressions_first},
    {"libdwarf-stops-at-lookup-pc", ENGINE_libdwarf,
     "libdwarf does not see an error in the FDE program after the lookup "
     "PC",
     STOPS_AT_LOOKUP_PC("libdwarf", "dwarf_frame.c _dwarf_exec_frame_instr: "
                        "search_over"),
     engine_deviation_libdwarf_stops_at_lookup_pc},
    {"libdwarf-no-negative-offset-extended", ENGINE_libdwarf,
     "libdwarf rejects DW_CFA_GNU_negative_offset_extended",
     "The GNU extension 0x2f (offset with the factored offset negated) is "
     "read by GCC's unwinder, elfutils and libunwind; cfi.h includes it. "
     "dwarf_frame.c _dwarf_exec_frame_instr has no case for it and fails "
     "with DW_DLE_DF_FRAME_DECODING_ERROR wherever it runs: the status "
     "differs from every answer of the IL's row there, a value or an "
     "error of evaluating the row (memory fault, unknown register).",
     engine_deviation_libdwarf_no_negative_offset},
    {"libdwarf-augmentation-without-z", ENGINE_libdwarf,
     "libdwarf refuses a CIE whose augmentation is \"S\" without 'z'",
     "The augmentation string is the producer's (DWARF 5 6.4.1); gas "
     "writes \"S\" alone for a signal frame in .debug_frame, a string "
     "without augmentation data, which libgcc and readelf read. libdwarf "
     "20210528 fails the whole section with "
     "DW_DLE_FRAME_AUGMENTATION_UNKNOWN (corpus/cases/signal_debug_frame).",
     engine_deviation_libdwarf_augmentation_without_z},
    {"libdwarf-val-offset-sf-rax", ENGINE_libdwarf,
     "libdwarf gives a DW_CFA_val_offset_sf rule to register 0 instead "
     "of its register",
     "DWARF 5 6.4.2.3: val_offset_sf(R, N) gives register R the rule "
     "val_offset(N * data_alignment_factor). dwarf_frame.c reads the "
     "register into lreg but indexes localregtab with reg_no, still 0 "
     "(diff/findings/libdwarf-val-offset-sf): DWARF register 0 (rax on "
     "x86-64, x0 on AArch64) gets the rule, the register keeps the one "
     "it had. Seen on both registers and on the status (the slot read "
     "changes); matched as what the row gives with each val_offset_sf's "
     "register operand made 0.",
     engine_deviation_libdwarf_val_offset_sf_rax},
    {"libdwarf-cfa-ops-on-expression", ENGINE_libdwarf,
     "libdwarf accepts def_cfa_register / def_cfa_offset when the CFA is "
     "an expression",
     "DWARF 5 6.4.2.2: valid only if the CFA rule is register+offset; "
     "cfi.h makes them malformed. dwarf_frame.c sets the fields anyway: "
     "def_cfa_register changes a register the expression rule ignores "
     "(the expression stays), def_cfa_offset switches to register+offset "
     "with whatever register was there before the expression.",
     engine_deviation_libdwarf_cfa_ops_on_expression},
    {"libdwarf-cie-restore-and-location", ENGINE_libdwarf,
     "libdwarf accepts DW_CFA_restore and location changes in a CIE",
     "DWARF 5 6.4.2.3 and 6.4.1 as for libunwind; cfi.h rejects both. "
     "dwarf_frame.c runs the CIE with its initial table already allocated "
     "(restore copies the initial rule, the sentinel 'no rule') and "
     "search_pc false (advances are accepted).",
     engine_deviation_libdwarf_cie_restore_and_location},
    {"libdw-abi-rax-for-rbx", ENGINE_libdw,
     "elfutils' x86-64 ABI defaults say same_value for DWARF register 0 "
     "(rax) where rbx (3) is meant",
     "The psABI makes rbx callee-saved and rax caller-saved; DWARF "
     "numbers them 3 and 0 (psABI table 3.36). elfutils' "
     "backends/x86_64_cfi.c (0.188) starts its default program with "
     "'DW_CFA_same_value, ULEB128_7 (0), /* %rbx */': with no rule, "
     "dwarf_frame_register gives rax as same_value and rbx as undefined "
     "(diff/findings/libdw-abi-rax-rbx).",
     engine_deviation_libdw_abi_rax_for_rbx},
    {"libdw-abi-rip-same-value", ENGINE_libdw,
     "elfutils' x86-64 ABI defaults make rip (16) same_value: with no rule "
     "the caller's rip is the callee's",
     "DWARF 5 6.4.1: the default rule of every column is undefined unless "
     "the ABI says otherwise; the psABI gives the return address column "
     "(16) no default, and cfi.h makes it undefined (6.4.4: no return "
     "address, the end of the stack). elfutils' backends/x86_64_cfi.c "
     "(0.188) lists 'DW_CFA_same_value, ULEB128_7 (16), /* %r16 */' among "
     "the call-saved registers, and libdw/cfi.c cie_cache_initial_state "
     "runs that program before every CIE's initial instructions: "
     "dwarf_frame_register gives rip same_value when neither the CIE nor "
     "the FDE gives it a rule (or restore brings back that default) "
     "(diff/findings/libdw-abi-rip-same-value).",
     engine_deviation_libdw_abi_rip_same_value},
    {"libdw-stops-at-lookup-pc", ENGINE_libdw,
     "libdw does not see an error in the FDE program after the lookup PC",
     STOPS_AT_LOOKUP_PC("libdw", "libdw/cfi.c execute_cfi: find_pc"),
     engine_deviation_libdw_stops_at_lookup_pc},
    {"libdw-empty-expression-undefined", ENGINE_libdw,
     "libdw reports an expression rule with an empty expression as "
     "undefined",
     "DWARF 5 6.4.2.3: expression(E) pushes the CFA, then evaluates E: an "
     "empty E leaves the CFA, the address of the saved value (cfi.h). "
     "libdw's __libdw_intern_expression returns no operations for an "
     "empty block (not even the DW_OP_call_frame_cfa it prepends), and "
     "dwarf_frame_register's 'nops 0, ops = ops_mem' means undefined. Seen "
     "on the register, and on the status when the CFA's slot is unreadable "
     "(libdw reads nothing) or a later rule fails first.",
     engine_deviation_libdw_empty_expression},
    {"libdw-expression-decoded-with-rule", ENGINE_libdw,
     "libdw calls a CFA expression that does not decode invalid DWARF "
     "(malformed), where its evaluation fails (expr)",
     "cfi.h: an expression is checked only when it is evaluated, and an "
     "unknown operation or a truncated operand is an expression fault "
     "(DWARF 5 6.4.2 does not make the FDE malformed for it: the table "
     "is still defined, the rule's value is not). libdw/cfi.c "
     "execute_cfi does not look inside expressions either, but "
     "dwarf_frame_cfa and dwarf_frame_register decode the whole block "
     "with __libdw_intern_expression before anything is evaluated, and "
     "fail with DWARF_E_INVALID_DWARF.",
     engine_deviation_libdw_expression_decoded_with_rule},
    {"libdw-location-backwards", ENGINE_libdw,
     "libdw accepts a DW_CFA_set_loc that does not move the location "
     "forward",
     "DWARF 5 6.4.2.1: 'The new location value is always greater than the "
     "current one'; cfi.h makes a set_loc to the current location or "
     "before it malformed. libdw/cfi.c execute_cfi assigns the new "
     "location without comparing it, and runs the rest of the program "
     "while it is not past the lookup PC. (A location past the FDE's end "
     "is never run for a PC inside the FDE: libdw-stops-at-lookup-pc.)",
     engine_deviation_libdw_location_backwards},
    {"libdw-address-size-4", ENGINE_libdw,
     "libdw finds no FDE whose CIE has address_size 4",
     "DWARF 5 6.4.1: a version 4 CIE gives the size of the FDE's "
     "initial_location and address_range (address_size); cfi.h reads "
     "4-byte addresses so. libdw's .debug_frame lookup in an ELF64 file "
     "does not find such an FDE (dwarf_cfi_addrframe fails at every PC it "
     "covers), so the frame is 'no FDE'.",
     engine_deviation_libdw_address_size_4},
    {"libunwind-no-debug-frame", ENGINE_libunwind,
     "libunwind does not read .debug_frame: an FDE there is 'no FDE'",
     "cfi.h step 2 looks in .eh_frame, then .debug_frame. libunwind's "
     "remote lookup (dwarf/Gfind_proc_info-lsb.c, as this harness drives "
     "it through the .eh_frame_hdr table) reads .eh_frame only; its "
     ".debug_frame reader needs the file on disk, which a remote address "
     "space does not give it.",
     engine_deviation_libunwind_no_debug_frame},
    {"libunwind-underflow-malformed", ENGINE_libunwind,
     "libunwind reports a DWARF expression stack underflow as malformed "
     "CFI",
     "cfi.h: popping an empty expression stack is an expression fault "
     "(CFI_E_EXPR), an error of evaluating the rule. dwarf/Gexpr.c "
     "checks the depth before each pop and returns -UNW_EINVAL ('unsupported "
     "operation or bad value'), which the adapter, as every code it has no "
     "other class for, reads as malformed CFI.",
     engine_deviation_libunwind_underflow_malformed},
    {"libunwind-pc-outside-text", ENGINE_libunwind,
     "libunwind finds no FDE for a PC outside the object's executable "
     "segments",
     "cfi.h step 2 takes the FDE of .eh_frame whose [initial_location, "
     "+address_range) covers the PC, wherever the range lies (DWARF 5 "
     "6.4.1 ties it to no segment). libunwind's remote lookup is a table "
     "(unw_dyn_info_t) whose [start_ip, end_ip) its caller sets to the "
     "text segment, as perf and libunwind's own dwarf_callback "
     "(dwarf/Gfind_proc_info-lsb.c: p_text->p_vaddr + p_memsz) do; "
     "dwarf_search_unwind_table asserts the IP inside it, so find_proc_info "
     "answers -UNW_ENOINFO ('no FDE') for a PC outside, even where an FDE "
     "covers it.",
     engine_deviation_libunwind_pc_outside_text},
    {"libdw-window-save-sparc", ENGINE_libdw,
     "libdw runs DW_CFA_GNU_window_save on x86-64 as SPARC's register "
     "window: it inserts rules for registers 8-31",
     "DW_CFA_GNU_window_save (0x2d) is a GNU extension for SPARC, outside "
     "DWARF 5 6.4.2; the x86-64 psABI gives it no meaning, and cfi.h makes "
     "such an FDE unsupported. elfutils 0.188 libdw/cfi.c execute_cfi runs "
     "it on every machine but AArch64 as SPARC's window: registers 8-15 "
     "get register(r + 16), 16-31 offset((r - 16) * 8) from the CFA. On "
     "x86-64 that is r8-r15 taken from xmm7-xmm14, rip read at CFA+0 and "
     "xmm0-xmm14 saved above it. Matched as the IL's answer with each "
     "window_save replaced by those 24 rules.",
     engine_deviation_libdw_window_save_sparc},
    {"libdw-cfa-ops-invalidate", ENGINE_libdw,
     "libdw accepts def_cfa_register / def_cfa_offset on a CFA that is not "
     "register+offset when a later instruction defines the CFA again",
     "DWARF 5 6.4.2.2: def_cfa_register and def_cfa_offset are valid only "
     "if the CFA rule is register+offset; cfi.h makes the FDE malformed. "
     "elfutils 0.188 libdw/cfi.c require_cfa_offset turns the CFA rule "
     "into cfa_invalid (dwarf_frame_cfa: 'invalid CFI') and goes on, so a "
     "later def_cfa, def_cfa_sf or def_cfa_expression makes the row valid "
     "again. Matched as the IL's answer with the instruction read as "
     "nops, where that row unwinds.",
     engine_deviation_libdw_cfa_ops_invalidate},
    {"libdwarf-cie-ra-register-refused", ENGINE_libdwarf,
     "libdwarf refuses the whole section when a CIE's return address "
     "register is above its rule table",
     "DWARF 5 6.4.1 bounds return_address_register by nothing but the "
     "architecture's registers; cfi.h makes an FDE whose CIE names one "
     "outside x86-64's or AArch64's malformed, and a PC no FDE covers is "
     "'no FDE'. libdwarf 20210528 dwarf_frame2.c checks each CIE's "
     "register against de_frame_reg_rules_entry_count (the rule table "
     "size the caller sets) while it reads the section's CIEs, and fails "
     "with DW_DLE_CIE_RET_ADDR_REG_ERROR: every PC of the file gets that "
     "error.",
     engine_deviation_libdwarf_cie_ra_register_refused},
    {"libdw-trusts-eh-frame-hdr", ENGINE_libdw,
     "libdw looks the PC up in .eh_frame_hdr's table and trusts the FDE "
     "it names",
     TRUSTS_HDR("libdw/fde.c __libdw_find_fde (binary_search_fde, then "
                "the FDE at the entry's offset; no linear search when the "
                "table has no entry)"),
     engine_deviation_libdw_trusts_eh_frame_hdr},
    {"libunwind-trusts-eh-frame-hdr", ENGINE_libunwind,
     "libunwind looks the PC up in .eh_frame_hdr's table and trusts the "
     "FDE it names",
     TRUSTS_HDR("dwarf/Gfind_proc_info-lsb.c "
                "dwarf_search_unwind_table (lookup, then the FDE at the "
                "entry's address, 'no FDE' when it does not cover the PC)"),
     engine_deviation_libunwind_trusts_eh_frame_hdr},
    {"libdwarf-debug-frame-zero-length", ENGINE_libdwarf,
     "libdwarf stops reading .debug_frame at a zero length word",
     ZERO_LENGTH("dwarf_frame.c _dwarf_get_fde_list_internal"),
     engine_deviation_libdwarf_zero_length},
    {"libdw-debug-frame-zero-length", ENGINE_libdw,
     "libdw stops reading .debug_frame at a zero length word",
     ZERO_LENGTH("libdw/dwarf_next_cfi.c"),
     engine_deviation_libdw_zero_length},
    {"libdwarf-negate-ra-state-ignored", ENGINE_libdwarf,
     "on AArch64, libdwarf runs DW_CFA_AARCH64_negate_ra_state (0x2d) as "
     "nothing: RA_SIGN_STATE keeps its rule, the caller's PC is not "
     "stripped",
     "aadwarf64 'Call frame instructions': 0x2d is "
     "DW_CFA_AARCH64_negate_ra_state on AArch64, which toggles "
     "RA_SIGN_STATE (34); cfi.h step 6 then strips the pointer "
     "authentication code from the caller's PC when the state says "
     "signed. libdwarf 20210528 reads 0x2d as DW_CFA_GNU_window_save "
     "whatever the machine, and dwarf_frame.c _dwarf_exec_frame_instr "
     "runs it as nothing ('No information'): column 34 keeps the rule it "
     "had (none, the ABI's 0), so the return address stays signed. Seen "
     "on 34, on the PC and on what they change; matched as what the row "
     "gives with every 0x2d read as DW_CFA_nop in the program libdwarf "
     "runs (search_over: up to the lookup PC, so that a later "
     "instruction this reading makes malformed, a 0x2c finding the "
     "state a negate would have cleared, is not run). Nor does it check the "
     "instruction: where aadwarf64 forbids a negate (mixed with another "
     "rule of RA_SIGN_STATE, or of a state signed with the PC) and cfi.h "
     "rejects the FDE, libdwarf unwinds.",
     engine_deviation_libdwarf_negate_ra_state_ignored},
    {"libdwarf-window-save-ignored", ENGINE_libdwarf,
     "on a machine other than AArch64, libdwarf runs "
     "DW_CFA_GNU_window_save (0x2d) as nothing",
     "0x2d is DW_CFA_GNU_window_save, SPARC's shorthand for restoring the "
     "register window (the GNU extensions to DWARF); it has no meaning on "
     "x86-64, and cfi.h makes an FDE that runs it unsupported there. "
     "libdwarf 20210528's dwarf_frame.c _dwarf_exec_frame_instr runs it "
     "as nothing on every machine ('No information'), so it unwinds with "
     "the row the other instructions give. Matched as what that row "
     "gives with every 0x2d read as DW_CFA_nop, in the part of the "
     "program libdwarf runs for the lookup PC.",
     engine_deviation_libdwarf_window_save_ignored},
    {"libdwarf-aarch64-ra-state-ops", ENGINE_libdwarf,
     "libdwarf rejects AArch64's DW_CFA_AARCH64_set_ra_state (0x2b) and "
     "negate_ra_state_with_pc (0x2c)",
     "aadwarf64 'Call frame instructions' defines 0x2b (set_ra_state: a "
     "ULEB128 state and a factored offset) and 0x2c (toggle between not "
     "signed and signed with SP and PC); cfi.h reads both on AArch64 (a "
     "reserved state, 3 and above, is unsupported). libdwarf 20210528's "
     "_dwarf_exec_frame_instr has no case for either and fails with "
     "DW_DLE_DF_FRAME_DECODING_ERROR wherever one runs.",
     engine_deviation_libdwarf_aarch64_ra_state_ops},
    {"libdwarf-augmentation-b-key", ENGINE_libdwarf,
     "libdwarf refuses a CIE whose augmentation has AArch64's 'B' (\"zRB\")",
     "aadwarf64 'Common information entries': 'B' says the frames sign "
     "their return address with the B key; it has no augmentation data "
     "and changes no rule. libdwarf 20210528's dwarf_frame2.c "
     "_dwarf_gnu_aug_fill (case aug_gcc_eh_z) knows S, L, R and P only "
     "and fails the whole section with DW_DLE_FRAME_AUGMENTATION_UNKNOWN "
     "(GCC's -mbranch-protection=pac-ret+b-key, corpus/cases-aarch64/"
     "pac_ret_b_key).",
     engine_deviation_libdwarf_augmentation_b_key},
    {"libdw-no-pac-strip", ENGINE_libdw,
     "libdw's caller PC is the return address column's value with its "
     "pointer authentication code: libdw has no RA_SIGN_STATE",
     "cfi.h step 6 (aadwarf64 Note 8, 'Call frame instructions'): when "
     "RA_SIGN_STATE (34) says the return address is signed, the caller's "
     "PC is x30's value with its pointer authentication code stripped. "
     "elfutils 0.188's libdw/cfi.c execute_cfi runs "
     "DW_CFA_AARCH64_negate_ra_state as nothing on AArch64 ('XXX not "
     "handled yet'), so libdw knows no signing state (the adapter does "
     "not compare 34), and neither libdw nor libdwfl strips a return "
     "address: the PC is the signed value.",
     engine_deviation_libdw_no_pac_strip},
    {"libdw-aarch64-ra-state-ops", ENGINE_libdw,
     "libdw rejects AArch64's DW_CFA_AARCH64_set_ra_state (0x2b) and "
     "negate_ra_state_with_pc (0x2c)",
     "aadwarf64 'Call frame instructions' defines 0x2b and 0x2c; cfi.h "
     "reads both on AArch64 (a reserved state, 3 and above, is "
     "unsupported). elfutils 0.188's libdw/cfi.c execute_cfi has no case "
     "for them (its default is cfi_assert (false)): dwarf_cfi_addrframe "
     "fails with DWARF_E_INVALID_CFI wherever one runs.",
     engine_deviation_libdw_aarch64_ra_state_ops},
    {"libdw-negate-ra-state-unchecked", ENGINE_libdw,
     "libdw accepts DW_CFA_AARCH64_negate_ra_state where aadwarf64 "
     "forbids it",
     "aadwarf64 'Call frame instructions': negate_ra_state must not be "
     "mixed with other rules of RA_SIGN_STATE (34), and toggles between "
     "not signed and signed with SP only; cfi.h makes an FDE that breaks "
     "either malformed. elfutils 0.188's libdw/cfi.c execute_cfi runs "
     "0x2d as nothing on AArch64 ('XXX not handled yet'), checks "
     "nothing, and unwinds.",
     engine_deviation_libdw_negate_ra_state_unchecked},
    {"libdw-aarch64-abi-cfa-x30", ENGINE_libdw,
     "elfutils' AArch64 ABI defaults define the CFA as x30 + 0: a row "
     "with no CFA rule unwinds",
     "DWARF 5 6.4.1: the CIE's initial instructions define the CFA; "
     "aadwarf64 gives no default CFA rule, and cfi.h makes a row without "
     "one malformed. elfutils' backends/aarch64_cfi.c (0.188) starts its "
     "default program with 'DW_CFA_def_cfa, ULEB128_7 (30), ULEB128_7 "
     "(0)' under a comment that names the stack pointer (r31): a CIE "
     "that defines no CFA gets x30, the link register "
     "(diff/findings/libdw-aarch64-abi-cfa-x30).",
     engine_deviation_libdw_aarch64_abi_cfa_x30},
    {"sframe-three-columns", ENGINE_sframe,
     "SFrame carries the CFA, rbp and rip only: an error of another "
     "register's rule is not seen",
     "cfi.h step 5 evaluates every register's rule and reports the first "
     "error (a saved slot that faults, a source register that is unknown). "
     "SFrame (binutils' SFrame format) has no column for the other "
     "registers, so the sframe engine unwinds where the IL fails; matched "
     "as the IL's row with only the rules of rbp and rip kept.",
     engine_deviation_sframe_three_columns},
    {"sframe-pc-mask-lookup-pc", ENGINE_sframe,
     "in a caller frame, SFrame's pc-mask (PLT) FDE matches PC-1 where the "
     "DWARF expression reads rip",
     "cfi.h step 1 looks the row up at PC-1 for a caller frame, and the "
     "PLT's CFA expression (breg16: the callee's rip, PC) then runs on PC. "
     "SFrame's pc-mask FDE has no expression: it matches the lookup PC "
     "modulo the block size. Both agree for an innermost frame; at a "
     "block's first byte a caller frame differs (no real call returns into "
     "a PLT). Matched as the IL's row evaluated with rip = PC-1.",
     engine_deviation_sframe_pc_mask_lookup_pc},
    {"gdb-unspecified-same-value", ENGINE_gdb,
     "gdb gives a register without a rule the callee's value, also a "
     "caller-saved one the x86-64 ABI leaves undefined",
     "DWARF 5 §6.4.1 leaves the rule of a register the CIE does not name "
     "to the ABI, and the x86-64 psABI preserves only rbx, rbp, r12-r15 "
     "(and rsp) across a call: the caller's rax, rdx, rcx, rsi, rdi, "
     "r8-r11 are undefined. gdb 13's dwarf2/frame.c takes "
     "DWARF2_FRAME_REG_UNSPECIFIED as same value (its comment: GCC omits "
     "same-value registers), and amd64_init_reg marks only rip and rsp.",
     engine_deviation_gdb_unspecified_same_value},
    {"gdb-rip-own-column", ENGINE_gdb,
     "with a return address column other than 16, gdb takes the caller's "
     "rip from column 16's own rule",
     "DWARF 5 §6.4.1: return_address_register names the column that holds "
     "the return address, the caller's PC (cfi.h step 6). gdb 13's "
     "dwarf2/frame.c gives rip (16) the return address column's rule only "
     "when rip has none of its own (DWARF2_FRAME_REG_RA); with a rule, "
     "rip is column 16's value. It reads the return address column only "
     "to tell the outermost frame (an undefined column).",
     engine_deviation_gdb_rip_own_column},
    {"gdb-signal-frame-at-pc", ENGINE_gdb,
     "gdb looks up a caller frame whose own FDE has the 'S' augmentation "
     "at its PC, not at PC-1",
     "DWARF 5 does not define 'S' (a GCC augmentation, LSB: the CIE of a "
     "signal frame). cfi.h, as libgcc, reads it as saying that the frame "
     "above the signal frame resumes at its PC: that frame is looked up at "
     "PC, every other caller frame at PC-1. gdb 13 makes a frame whose "
     "own FDE has 'S' a SIGTRAMP_FRAME, and get_frame_address_in_block "
     "gives PC-1 only for normal frames: the signal frame itself is looked "
     "up at PC. Matched as the request asked as an innermost frame.",
     engine_deviation_gdb_signal_frame_at_pc},
    {"gdb-stops-at-lookup-pc", ENGINE_gdb,
     "gdb does not see an error in the FDE program after the lookup PC",
     STOPS_AT_LOOKUP_PC("gdb 13", "dwarf2/frame.c execute_cfa_program: "
                        "while (insn_ptr < insn_end && fs->pc <= pc)"),
     engine_deviation_gdb_stops_at_lookup_pc},
    {"gdb-cfa-ops-on-expression", ENGINE_gdb,
     "gdb accepts def_cfa_register / def_cfa_offset when the CFA is an "
     "expression",
     "DWARF 5 6.4.2.2: def_cfa_register and def_cfa_offset are valid only "
     "if the CFA rule is register+offset; cfi.h makes them malformed. gdb "
     "13's execute_cfa_program sets the register or offset and makes the "
     "rule register+offset again (as libgcc does, which libgcrypt's FDEs "
     "at .eh_frame 0xeb30, 0xec10 rely on).",
     engine_deviation_gdb_cfa_ops_on_expression},
};

const struct engine_deviation *engine_deviation_table(size_t *count)
{
    *count = sizeof table / sizeof table[0];
    return table;
}

static const struct engine_deviation *find_in_table(
    const struct engine_mismatch *m)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].engine == m->engine && table[i].matches(m))
            return &table[i];
    return NULL;
}

/* `frame`'s caller PC (register `pc`) is its register `column`, as it
 * is. */
static bool pc_is_column(const struct cfi_frame *frame, unsigned pc,
                         unsigned column)
{
    const struct cfi_regs *caller = &frame->caller;
    return caller->status[pc] == caller->status[column] &&
           (caller->status[column] != CFI_REG_VALUE ||
            caller->value[pc] == caller->value[column]);
}

/* `frame`'s caller PC is its register `column`'s value with the
 * pointer authentication code stripped, as cfi.h step 6 does when the
 * architecture's signing state (ra_state) says signed. */
static bool pc_is_stripped_column(const struct cfi_frame *frame,
                                  const struct cfi_arch *arch,
                                  unsigned column, unsigned va_bits)
{
    const struct cfi_regs *caller = &frame->caller;
    unsigned state = arch->ra_state;
    return state != CFI_NO_RA_STATE &&
           caller->status[state] == CFI_REG_VALUE &&
           caller->value[state] != CFI_RA_NOT_SIGNED &&
           caller->status[column] == CFI_REG_VALUE &&
           caller->status[arch->pc] == CFI_REG_VALUE &&
           caller->value[arch->pc] ==
               cfi_strip_pac(caller->value[column], va_bits);
}

/* cfi.h step 6: when the CIE's return address column is not the PC
 * register (rip, 16, on x86-64), the caller's PC is that column's value,
 * in the reference and in the engine (each adapter applies the step with
 * the column its library read). A difference on the PC that is the
 * difference on that column is explained by what explains the column's.
 * So is one where the reference stripped the column's signed value and
 * the engine's column has no value (undefined, unknown): there is no
 * value the engine could have stripped, the PC only copies the column. */
static bool return_column_item(const struct engine_mismatch *m,
                               struct engine_mismatch *column)
{
    if (m->item != ENGINE_ITEM_REG || !m->fde || !m->fde->cie ||
        m->reg != m->fde->cie->arch->pc || !engine_deviation_both_unwound(m))
        return false;
    const struct cfi_arch *arch = m->fde->cie->arch;
    unsigned pc = arch->pc;
    uint64_t ra = m->fde->cie->ra_column;
    if (ra == pc || ra >= CFI_NREGS ||
        !pc_is_column(m->got, pc, (unsigned)ra))
        return false;
    bool copied = pc_is_column(m->expected, pc, (unsigned)ra);
    bool stripped = m->got->caller.status[ra] != CFI_REG_VALUE &&
                    pc_is_stripped_column(m->expected, arch, (unsigned)ra,
                                          m->request->va_bits);
    if (!copied && !stripped)
        return false;
    *column = *m;
    column->reg = (unsigned)ra;
    return true;
}

const struct engine_deviation *engine_deviation_find(const struct engine_mismatch *mismatch)
{
    const struct engine_deviation *found = find_in_table(mismatch);
    struct engine_mismatch column;
    if (!found && return_column_item(mismatch, &column))
        found = find_in_table(&column);
    return found;
}
