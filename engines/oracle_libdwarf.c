/* SPDX-License-Identifier: MIT */
/* oracle_libdwarf.c — see oracle_libdwarf.h.
 *
 * libdwarf is always given a Dwarf_Error*: its default handler aborts.
 * Its error messages come from dwarf_errmsg_by_number, a fixed table. */
#include "oracle_libdwarf.h"
#include "scan.h"

#include <dwarf.h>
#include <libdwarf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "cfi/dwarf_object.h"
#include "semantics/sem.h"

/* The initial rule of every column and of the CFA: a register rule
 * naming this number means "no rule". Above libdwarf's table (191
 * columns, which a DW_CFA_register operand may reach), apart from
 * DW_FRAME_UNDEFINED_VAL (1034), DW_FRAME_SAME_VAL (1035) and
 * DW_FRAME_CFA_COL3 (1436). */
enum { NO_RULE = 1200 };

/* One frame section as libdwarf loaded it. */
struct section_list {
    int status;              /* DW_DLV_OK, DW_DLV_NO_ENTRY, DW_DLV_ERROR */
    const char *error;       /* libdwarf's message when DW_DLV_ERROR */
    struct cfi_dwarf_fde_list list;
};

struct engine_libdwarf {
    const struct cfi_file *file;
    struct cfi_dwarf_object object;
    Dwarf_Debug dbg;
    struct section_list sections[2]; /* enum cfi_section */
    Dwarf_Half table_size;
    Dwarf_Regtable_Entry3 *table;    /* table_size columns */
    struct sem_reg_rule rules[CFI_NREGS];
    /* The row of the last lookup PC that gave one. libdwarf's row is a
     * function of the PC alone and the states of one PC are asked one
     * after another, so it is computed once for all of them. */
    bool memo_valid;
    uint64_t memo_pc;
    struct sem_row memo_row;             /* its rules are `rules` */
    bool memo_signal_frame;
    unsigned memo_ra_column;
    bool memo_comparable[CFI_NREGS];
};


/* .eh_frame and .debug_frame as the loader read them (cfi.h's
 * frame_bytes: relocated in a relocatable object, whose sections libdwarf
 * would otherwise read with their relocations not applied). libdwarf
 * only reads section data. */
static void show_sections(struct engine_libdwarf *ld)
{
    cfi_dwarf_object_init(&ld->object);
    for (int s = 0; s < 2; s++) {
        const struct cfi_section_bytes *shown = &ld->file->frame_bytes[s];
        if (shown->bytes && shown->size > 0)
            cfi_dwarf_object_add(&ld->object, cfi_section_name(s),
                                 shown->addr, shown->bytes, shown->size);
    }
}

/* libdwarf's text for an error, freeing the error. */
static const char *error_text(Dwarf_Debug dbg, Dwarf_Error error,
                              Dwarf_Unsigned *number)
{
    Dwarf_Unsigned code = error ? dwarf_errno(error) : 0;
    if (error)
        dwarf_dealloc_error(dbg, error);
    if (number)
        *number = code;
    const char *text = dwarf_errmsg_by_number(code);
    return text ? text : "libdwarf: unknown error";
}

static void load_section(struct engine_libdwarf *ld, enum cfi_section section)
{
    struct section_list *list = &ld->sections[section];
    Dwarf_Error error = NULL;
    list->status =
        cfi_dwarf_fde_list_get(ld->dbg, section, &list->list, &error);
    if (list->status == DW_DLV_ERROR)
        list->error = error_text(ld->dbg, error, NULL);
    if (list->status == DW_DLV_OK && list->list.nfdes == 0)
        list->status = DW_DLV_NO_ENTRY;
}

/* Frame defaults, before any CIE is read (FACTS.md). libdwarf has no
 * ABI defaults of its own: every column starts at NO_RULE, which the
 * row's evaluation (sem_eval_row) reads as the ABI default of the
 * file's descriptor, x86-64's or AArch64's. CFI_NREGS columns hold
 * every register number either names (AArch64's v0-v31 are 64-95,
 * RA_SIGN_STATE 34); the CFA, same value and undefined sentinels lie
 * above them. */
static void set_frame_defaults(Dwarf_Debug dbg)
{
    dwarf_set_frame_rule_initial_value(dbg, NO_RULE);
    dwarf_set_frame_rule_table_size(dbg, CFI_NREGS);
    dwarf_set_frame_cfa_value(dbg, DW_FRAME_CFA_COL3);
    dwarf_set_frame_same_value(dbg, DW_FRAME_SAME_VAL);
    dwarf_set_frame_undefined_value(dbg, DW_FRAME_UNDEFINED_VAL);
}

void engine_libdwarf_close(void *self)
{
    struct engine_libdwarf *ld = self;
    if (!ld)
        return;
    for (int s = 0; s < 2; s++)
        if (ld->sections[s].status == DW_DLV_OK)
            cfi_dwarf_fde_list_free(ld->dbg, &ld->sections[s].list);
    if (ld->dbg)
        cfi_dwarf_object_finish(ld->dbg);
    free(ld->table);
    free(ld);
}

static enum cfi_status open_failed(struct engine_libdwarf *ld,
                                   struct cfi_diag *diag,
                                   enum cfi_status status, const char *text)
{
    engine_libdwarf_close(ld);
    return cfi_fail(diag, status, CFI_NO_OFFSET, text);
}

/* libdwarf's own init on the shown sections, the frame defaults, the FDE
 * lists. */
static enum cfi_status start_libdwarf(struct engine_libdwarf *ld,
                                      struct cfi_diag *diag)
{
    Dwarf_Error error = NULL;
    int res = cfi_dwarf_object_open(&ld->object, &ld->dbg, &error);
    if (res != DW_DLV_OK) {
        const char *text = res == DW_DLV_ERROR
            ? error_text(NULL, error, NULL)
            : "libdwarf: no frame sections";
        ld->dbg = NULL;
        return open_failed(ld, diag, CFI_E_UNSUPPORTED, text);
    }
    set_frame_defaults(ld->dbg);
    /* Setting the size again returns the size in force (libdwarf keeps
     * at least 191 columns). */
    ld->table_size = dwarf_set_frame_rule_table_size(ld->dbg, CFI_NREGS);
    ld->table = calloc(ld->table_size, sizeof *ld->table);
    if (!ld->table || ld->table_size < CFI_NREGS)
        return open_failed(ld, diag, CFI_E_NOMEM, "out of memory");
    load_section(ld, CFI_EH_FRAME);
    load_section(ld, CFI_DEBUG_FRAME);
    if (ld->sections[0].status == DW_DLV_NO_ENTRY &&
        ld->sections[1].status == DW_DLV_NO_ENTRY)
        return open_failed(ld, diag, CFI_E_UNSUPPORTED,
                           "libdwarf: no FDE in .eh_frame or .debug_frame");
    return CFI_OK;
}

enum cfi_status engine_libdwarf_open(const struct cfi_file *file, void **self,
                                     struct cfi_diag *diag)
{
    *self = NULL;
    struct engine_libdwarf *ld = calloc(1, sizeof *ld);
    if (!ld)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    ld->file = file;
    show_sections(ld);
    if (ld->object.count == 1)
        return open_failed(ld, diag, CFI_E_UNSUPPORTED,
                           "libdwarf: no .eh_frame or .debug_frame");
    enum cfi_status status = start_libdwarf(ld, diag);
    if (status == CFI_OK)
        *self = ld;
    return status;
}

/* ------------------------------------------------------------------ */
/* The safety check: DW_CFA_expression on a register above 2^32         */
/* ------------------------------------------------------------------ */

/* dwarf_frame.c checks (unsigned)register against the table size but
 * stores DW_CFA_expression and DW_CFA_val_expression rules at
 * localregtab[register] with the full 64-bit number: a register operand
 * above UINT32_MAX writes outside the heap block
 * (diff/findings/libdwarf-expression-register). Such programs are
 * refused. The reader decodes as _dwarf_exec_frame_instr does: its
 * operand shapes, and it stops where libdwarf stops with an error. */
static bool scan_leb(struct engine_scan *s, uint64_t *value)
{
    return engine_scan_leb(s, ENGINE_LEB_OVERLONG_FAILS, value);
}

/* The operands of an opcode below 0x40; false where libdwarf stops. */
static bool scan_operands(struct engine_scan *s, uint8_t op, bool *hazard)
{
    uint64_t a, b;
    switch (op) {
    case DW_CFA_nop: case DW_CFA_remember_state: case DW_CFA_restore_state:
    case DW_CFA_GNU_window_save:
        return true;
    case DW_CFA_set_loc: case DW_CFA_MIPS_advance_loc8:
        return engine_scan_skip(s, 8);
    case DW_CFA_advance_loc1: return engine_scan_skip(s, 1);
    case DW_CFA_advance_loc2: return engine_scan_skip(s, 2);
    case DW_CFA_advance_loc4: return engine_scan_skip(s, 4);
    case DW_CFA_restore_extended: case DW_CFA_undefined:
    case DW_CFA_same_value: case DW_CFA_def_cfa_register:
    case DW_CFA_def_cfa_offset: case DW_CFA_def_cfa_offset_sf:
    case DW_CFA_GNU_args_size: case DW_CFA_METAWARE_info:
        return scan_leb(s, &a);
    case DW_CFA_offset_extended: case DW_CFA_register: case DW_CFA_def_cfa:
    case DW_CFA_offset_extended_sf: case DW_CFA_def_cfa_sf:
    case DW_CFA_val_offset: case DW_CFA_val_offset_sf:
        return scan_leb(s, &a) && scan_leb(s, &b);
    case DW_CFA_def_cfa_expression:
        return scan_leb(s, &a) && engine_scan_skip(s, a);
    case DW_CFA_expression: case DW_CFA_val_expression:
        if (!scan_leb(s, &a) || !scan_leb(s, &b))
            return false;
        *hazard |= a > UINT32_MAX;
        return engine_scan_skip(s, b);
    default:
        return false;
    }
}

static bool scan_program(const uint8_t *bytes, size_t len)
{
    struct engine_scan s = {bytes, bytes + len};
    bool hazard = false;
    while (s.p < s.end && !hazard) {
        uint8_t op = *s.p++;
        uint64_t offset;
        if ((op & 0xc0) == DW_CFA_offset ? !scan_leb(&s, &offset)
            : (op & 0xc0) == DW_CFA_extended &&
                  !scan_operands(&s, op, &hazard))
            break;
    }
    return hazard;
}

/* The hazard in the programs of the FDE libdwarf found, as libdwarf
 * itself reads them: which FDE that is, and where its bytes lie, is
 * libdwarf's business (in a relocatable object, say, it need not be the
 * FDE cfisem finds at the PC). A program libdwarf cannot give is not
 * run by it either. */
static bool expression_register_hazard(Dwarf_Fde fde)
{
    Dwarf_Ptr fde_bytes = NULL, cie_bytes = NULL;
    Dwarf_Unsigned fde_len = 0, cie_len = 0;
    Dwarf_Error error = NULL;
    if (dwarf_get_fde_instr_bytes(fde, &fde_bytes, &fde_len, &error) !=
        DW_DLV_OK) {
        dwarf_dealloc_error(NULL, error);
        fde_len = 0;
    }
    Dwarf_Cie cie = NULL;
    error = NULL;
    if (dwarf_get_cie_of_fde(fde, &cie, &error) == DW_DLV_OK) {
        Dwarf_Unsigned length, code_align;
        Dwarf_Small version;
        char *augmentation;
        Dwarf_Signed data_align;
        Dwarf_Half ra, offset_size;
        if (dwarf_get_cie_info_b(cie, &length, &version, &augmentation,
                                 &code_align, &data_align, &ra, &cie_bytes,
                                 &cie_len, &offset_size, &error) != DW_DLV_OK)
            cie_len = 0;
    }
    if (error)
        dwarf_dealloc_error(NULL, error);
    return (cie_len && scan_program(cie_bytes, cie_len)) ||
           (fde_len && scan_program(fde_bytes, fde_len));
}

/* ------------------------------------------------------------------ */
/* Answers                                                              */
/* ------------------------------------------------------------------ */

/* The closest class for an error libdwarf reports on a row. */
static enum cfi_status row_error(Dwarf_Debug dbg, Dwarf_Error error,
                                 struct engine_answer *answer)
{
    Dwarf_Unsigned number;
    const char *text = error_text(dbg, error, &number);
    enum cfi_status status = number == DW_DLE_ALLOC_FAIL ? CFI_E_NOMEM
                           : number == DW_DLE_PC_NOT_IN_FDE_RANGE
                               ? CFI_E_NO_FDE
                               : CFI_E_MALFORMED;
    return engine_answer_error(answer, status, text, -1);
}

/* cfi.h step 2: .eh_frame first, then .debug_frame. NO_ENTRY when
 * neither has an FDE there; ERROR (with *message) when the section
 * that would be searched could not be loaded. */
static int find_fde(struct engine_libdwarf *ld, uint64_t pc, Dwarf_Fde *fde,
                    const char **message)
{
    for (int s = 0; s < 2; s++) {
        struct section_list *list = &ld->sections[s];
        if (list->status == DW_DLV_ERROR) {
            *message = list->error;
            return DW_DLV_ERROR;
        }
        if (list->status != DW_DLV_OK)
            continue;
        Dwarf_Addr low, high;
        Dwarf_Error error = NULL;
        int res = dwarf_get_fde_at_pc(list->list.fdes, pc, fde, &low, &high,
                                      &error);
        if (res == DW_DLV_OK)
            return res;
        if (res == DW_DLV_ERROR) {
            *message = error_text(ld->dbg, error, NULL);
            return res;
        }
    }
    return DW_DLV_NO_ENTRY;
}

/* What libdwarf read in the FDE's CIE: the 'S' augmentation and the
 * return address column. */
struct cie_facts {
    bool signal_frame;
    unsigned ra_column;
};

static struct cie_facts cie_facts(const struct cfi_arch *arch, Dwarf_Fde fde)
{
    struct cie_facts facts = {false, arch->ra_column};
    Dwarf_Cie cie = NULL;
    Dwarf_Error error = NULL;
    if (dwarf_get_cie_of_fde(fde, &cie, &error) != DW_DLV_OK) {
        dwarf_dealloc_error(NULL, error);
        return facts;
    }
    Dwarf_Unsigned length = 0, code_align = 0, instr_len = 0;
    Dwarf_Small version = 0;
    char *augmentation = NULL;
    Dwarf_Signed data_align = 0;
    Dwarf_Half ra = 0, offset_size = 0;
    Dwarf_Ptr instr = NULL;
    if (dwarf_get_cie_info_b(cie, &length, &version, &augmentation,
                             &code_align, &data_align, &ra, &instr,
                             &instr_len, &offset_size, &error) != DW_DLV_OK) {
        dwarf_dealloc_error(NULL, error);
        return facts;
    }
    facts.signal_frame = augmentation && augmentation[0] == 'z' &&
                         strchr(augmentation, 'S') != NULL;
    facts.ra_column = ra;
    return facts;
}

/* ------------------------------------------------------------------ */
/* libdwarf's table → IL row                                            */
/* ------------------------------------------------------------------ */

static struct sem_expr block(const Dwarf_Regtable_Entry3 *entry)
{
    return (struct sem_expr){(const uint8_t *)entry->dw_block_ptr,
                             (uint32_t)entry->dw_offset_or_block_len};
}

/* An expression block libdwarf gives must lie inside a section it was
 * shown: its length can run past the section's end
 * (fuzz/findings: dwarf_get_fde_info_for_cfa_reg3_b), and it is read. */
static bool block_fits(const struct cfi_dwarf_object *object,
                       const Dwarf_Regtable_Entry3 *entry)
{
    uint64_t len = entry->dw_offset_or_block_len;
    if (len == 0)
        return true;
    if (len > UINT32_MAX || !entry->dw_block_ptr)
        return false;
    const uint8_t *block = entry->dw_block_ptr;
    for (unsigned i = 1; i < object->count; i++) {
        const uint8_t *bytes = object->sections[i].bytes;
        uint64_t size = object->sections[i].size;
        if (bytes && block >= bytes && (uint64_t)(block - bytes) <= size &&
            len <= size - (uint64_t)(block - bytes))
            return true;
    }
    return false;
}

/* One column. False when the rule cannot be said in the IL (a register
 * outside 0..CFI_NREGS-1, an unknown kind). */
static bool column_rule(const struct cfi_dwarf_object *object,
                        const Dwarf_Regtable_Entry3 *entry,
                        struct sem_rule *rule)
{
    memset(rule, 0, sizeof *rule);
    switch (entry->dw_value_type) {
    case DW_EXPR_OFFSET:
        if (entry->dw_regnum == NO_RULE)
            rule->kind = SEM_RULE_UNSPECIFIED;
        else if (entry->dw_regnum == DW_FRAME_UNDEFINED_VAL)
            rule->kind = SEM_RULE_UNDEFINED;
        else if (entry->dw_regnum == DW_FRAME_SAME_VAL)
            rule->kind = SEM_RULE_SAME_VALUE;
        else if (entry->dw_offset_relevant) {
            /* offset(N): the register is the CFA column. */
            if (entry->dw_regnum != DW_FRAME_CFA_COL3)
                return false;
            rule->kind = SEM_RULE_OFFSET;
            rule->offset = (int64_t)entry->dw_offset_or_block_len;
        } else {
            if (entry->dw_regnum >= CFI_NREGS)
                return false;
            rule->kind = SEM_RULE_REGISTER;
            rule->reg = entry->dw_regnum;
        }
        return true;
    case DW_EXPR_VAL_OFFSET:
        rule->kind = SEM_RULE_VAL_OFFSET;
        rule->offset = (int64_t)entry->dw_offset_or_block_len;
        return true;
    case DW_EXPR_EXPRESSION:
    case DW_EXPR_VAL_EXPRESSION:
        if (!block_fits(object, entry))
            return false;
        rule->kind = entry->dw_value_type == DW_EXPR_EXPRESSION
            ? SEM_RULE_EXPRESSION : SEM_RULE_VAL_EXPRESSION;
        rule->expr = block(entry);
        return true;
    default:
        return false;
    }
}

/* The CFA rule. False when it cannot be said in the IL. */
static bool cfa_rule(const struct cfi_dwarf_object *object,
                     const Dwarf_Regtable_Entry3 *entry, struct sem_cfa *cfa)
{
    memset(cfa, 0, sizeof *cfa);
    switch (entry->dw_value_type) {
    case DW_EXPR_OFFSET:
        if (entry->dw_regnum == NO_RULE) {
            cfa->kind = SEM_CFA_RULE_INVALID;
            return true;
        }
        if (entry->dw_regnum >= CFI_NREGS)
            return false;
        cfa->kind = SEM_CFA_RULE_REG_OFFSET;
        cfa->reg = entry->dw_regnum;
        cfa->offset = entry->dw_offset_relevant
            ? (int64_t)entry->dw_offset_or_block_len : 0;
        return true;
    case DW_EXPR_EXPRESSION:
        if (!block_fits(object, entry))
            return false;
        cfa->kind = SEM_CFA_RULE_EXPR;
        cfa->expr = block(entry);
        return true;
    default:
        return false;
    }
}

/* The row libdwarf gives; columns it cannot say are left without a rule
 * and marked not comparable. */
static bool build_row(struct engine_libdwarf *ld, const Dwarf_Regtable3 *table,
                      struct sem_row *row, struct engine_answer *answer)
{
    if (!cfa_rule(&ld->object, &table->rt3_cfa_rule, &row->cfa))
        return false;
    uint32_t n = 0;
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        struct sem_rule rule;
        if (!column_rule(&ld->object, &table->rt3_rules[reg], &rule)) {
            answer->reg_comparable[reg] = false;
            continue;
        }
        if (rule.kind == SEM_RULE_UNSPECIFIED)
            continue;
        ld->rules[n++] = (struct sem_reg_rule){reg, rule};
    }
    row->nrules = n;
    row->rules = ld->rules;
    return true;
}

/* The memo's row evaluated in the request's state. */
static enum cfi_status answer_row(struct engine_libdwarf *ld,
                                  const struct cfi_request *request,
                                  struct engine_answer *answer)
{
    memcpy(answer->reg_comparable, ld->memo_comparable,
           sizeof ld->memo_comparable);
    const struct cfi_arch *arch = ld->file->arch;
    sem_eval_row(arch, &ld->memo_row, request->callee, request->memory,
                 &answer->frame);
    answer->frame.signal_frame = ld->memo_signal_frame;
    /* cfi.h step 6, with the column libdwarf read. */
    unsigned ra = ld->memo_ra_column;
    if (answer->frame.status == CFI_OK && ra < CFI_NREGS) {
        sem_apply_return_column(arch, &answer->frame, ra, request->va_bits);
        answer->reg_comparable[arch->pc] = answer->reg_comparable[ra];
    }
    return answer->frame.status;
}

enum cfi_status engine_libdwarf_answer(void *self,
                                       const struct cfi_request *request,
                                       struct engine_answer *answer)
{
    struct engine_libdwarf *ld = self;
    engine_answer_reset(answer);
    uint64_t pc = cfi_lookup_pc(request->pc, request->caller_frame);
    if (ld->memo_valid && ld->memo_pc == pc)
        return answer_row(ld, request, answer);
    const char *overlap = engine_overlap_reason(ld->file, pc);
    if (overlap)
        return engine_answer_not_comparable(answer, overlap);
    Dwarf_Fde fde = NULL;
    const char *message = NULL;
    int res = find_fde(ld, pc, &fde, &message);
    if (res == DW_DLV_NO_ENTRY)
        return engine_answer_error(answer, CFI_E_NO_FDE,
                                   "no FDE covers the address", -1);
    if (res == DW_DLV_ERROR)
        return engine_answer_error(answer, CFI_E_MALFORMED, message, -1);
    if (expression_register_hazard(fde))
        return engine_answer_not_comparable(answer,
                              "libdwarf: DW_CFA_expression on a register "
                              "above 2^32 (out-of-bounds write in libdwarf)");
    Dwarf_Regtable3 table = {.rt3_reg_table_size = ld->table_size,
                             .rt3_rules = ld->table};
    Dwarf_Addr row_pc = 0;
    Dwarf_Error error = NULL;
    if (dwarf_get_fde_info_for_all_regs3(fde, pc, &table, &row_pc, &error) !=
        DW_DLV_OK)
        return row_error(ld->dbg, error, answer);
    struct sem_row row;
    ld->memo_valid = false;
    if (!build_row(ld, &table, &row, answer))
        return engine_answer_not_comparable(
            answer, "libdwarf: the CFA is defined on a register above 127");
    struct cie_facts facts = cie_facts(ld->file->arch, fde);
    ld->memo_valid = true;
    ld->memo_pc = pc;
    ld->memo_row = row;
    ld->memo_signal_frame = facts.signal_frame;
    ld->memo_ra_column = facts.ra_column;
    memcpy(ld->memo_comparable, answer->reg_comparable,
           sizeof ld->memo_comparable);
    return answer_row(ld, request, answer);
}
