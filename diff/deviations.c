/* deviations.c — see deviations.h.
 *
 * One entry per deviation observed, each shown by a test of
 * tests/check_deviations.c. A predicate recognises exactly its deviation:
 * the engine, the item, the IL's rule or status that the library reads
 * differently, and the library's answer being what its reading gives
 * (not merely "something else"). Where a deviation also changes what
 * is read (so the status), the predicate computes the whole answer the
 * library's reading gives: the IL's row edited as libdw reads it, the
 * program patched as libdwarf reads it, or the model of libunwind's step
 * (diff_libunwind_model, whose every behaviour is one flag: an entry
 * matches when its behaviour is needed to give libunwind's answer). A
 * difference on rip that only copies the one on a return address column
 * other than 16 (cfi.h step 6) is explained as that column's. The
 * reasons cite the library's source file (the Debian 12 versions:
 * libdwarf 20210528, elfutils 0.188, libunwind 1.6.2). */
#include "deviations.h"

#include <stdlib.h>
#include <string.h>

#include "diff/libunwind_model.h"

/* ------------------------------------------------------------------ */
/* Helpers over a mismatch                                              */
/* ------------------------------------------------------------------ */

/* The IL's rule of `reg` in the row at the lookup PC; false when there
 * is no row (the IL failed, or no FDE). */
static bool row_rule(const struct diff_mismatch *m, unsigned reg,
                     struct sem_rule *rule)
{
    if (!m->row || reg >= CFI_NREGS)
        return false;
    *rule = sem_row_rule(m->row, reg);
    return true;
}

static bool has_no_rule(const struct diff_mismatch *m, unsigned reg)
{
    struct sem_rule rule;
    return row_rule(m, reg, &rule) && rule.kind == SEM_RULE_UNSPECIFIED;
}

static bool both_unwound(const struct diff_mismatch *m)
{
    return m->expected->status == CFI_OK && m->got->status == CFI_OK;
}

/* A register item where the engine unwound and the IL did too. */
static bool reg_item(const struct diff_mismatch *m, enum diff_engine_id id)
{
    return m->engine == id && m->item == DIFF_ITEM_REG && both_unwound(m) &&
           m->reg < CFI_NREGS;
}

/* `frame`'s caller register `reg` is the callee's `from`, as it is. */
static bool is_callee_reg(const struct cfi_frame *frame,
                          const struct cfi_request *request, unsigned reg,
                          unsigned from)
{
    uint8_t status = frame->caller.status[reg];
    return status == request->callee->status[from] &&
           (status != CFI_REG_VALUE ||
            frame->caller.value[reg] == request->callee->value[from]);
}

static bool is_undefined(const struct cfi_frame *frame, unsigned reg)
{
    return frame->caller.status[reg] == CFI_REG_UNDEFINED;
}

/* ------------------------------------------------------------------ */
/* What the libraries run of a program                                  */
/* ------------------------------------------------------------------ */

/* The three libraries run the whole CIE program, then the FDE program
 * only while the location has not passed the lookup PC (libdwarf's
 * search_over, libdw's execute_cfi, libunwind's run_cfi_program). */

static uint64_t lookup_pc(const struct diff_mismatch *m)
{
    return cfi_lookup_pc(m->request->pc, m->request->caller_frame);
}

/* Decodes a program of the mismatch's FDE (its CIE's when in_cie) with
 * our decoder; on a decoding error, the instructions before it. */
static bool decode(const struct diff_mismatch *m, bool in_cie,
                   struct sem_program *program)
{
    const struct cfi_fde *fde = m->fde;
    const struct cfi_cie *cie = fde->cie;
    struct sem_decode_env env = {
        cie->code_align, cie->data_align, fde->section, cie->address_size,
        cie->fde_encoding, in_cie ? 0 : fde->instructions_addr, in_cie};
    memset(program, 0, sizeof *program);
    struct cfi_diag diag;
    enum cfi_status status = in_cie
        ? sem_decode(cie->instructions, cie->instructions_len, &env, program,
                     &diag)
        : sem_decode(fde->instructions, fde->instructions_len, &env, program,
                     &diag);
    return status == CFI_OK || status == CFI_E_MALFORMED ||
           status == CFI_E_UNSUPPORTED;
}

static bool is_advance(const struct sem_insn *insn)
{
    switch (insn->opcode) {
    case SEM_CFA_advance_loc: case SEM_CFA_advance_loc1:
    case SEM_CFA_advance_loc2: case SEM_CFA_advance_loc4:
    case SEM_CFA_MIPS_advance_loc8: case SEM_CFA_set_loc:
        return true;
    default:
        return false;
    }
}

/* Calls visit(insn, run, env) for each instruction of the CIE, then of
 * the FDE, `run` saying whether the libraries run it for the lookup PC;
 * stops when visit returns true, and returns that. */
static bool walk(const struct diff_mismatch *m,
                 bool (*visit)(const struct sem_insn *, bool, const void *),
                 const void *env)
{
    if (!m->fde || !m->fde->cie)
        return false;
    bool found = false;
    struct sem_program program;
    if (decode(m, true, &program))
        for (size_t i = 0; i < program.count && !found; i++)
            found = visit(&program.insns[i], true, env);
    sem_program_free(&program);
    if (found || !decode(m, false, &program)) {
        sem_program_free(&program);
        return found;
    }
    uint64_t loc = m->fde->pc_begin, pc = lookup_pc(m);
    bool run = true;
    for (size_t i = 0; i < program.count && !found; i++) {
        const struct sem_insn *insn = &program.insns[i];
        if (run && is_advance(insn)) {
            loc = insn->opcode == SEM_CFA_set_loc ? insn->address
                                                  : loc + insn->delta;
            run = loc <= pc;
        }
        found = visit(insn, run, env);
    }
    sem_program_free(&program);
    return found;
}

static bool runs_opcode(const struct sem_insn *insn, bool run,
                        const void *env)
{
    return run && insn->opcode == *(const enum sem_opcode *)env;
}

/* The libraries run an instruction `opcode` for the lookup PC. */
static bool runs(const struct diff_mismatch *m, enum sem_opcode opcode)
{
    return walk(m, runs_opcode, &opcode);
}

/* The instruction the IL's error names (diag.offset: its section
 * offset), and whether the libraries run it for the lookup PC. */
struct faulty {
    uint64_t offset;
    bool in_cie;
    bool found;
    bool run;
    enum sem_opcode opcode;
};

static bool visit_faulty(const struct sem_insn *insn, bool run,
                         const void *env)
{
    struct faulty *f = (struct faulty *)env;
    if (insn->in_cie != f->in_cie || insn->at != f->offset)
        return false;
    *f = (struct faulty){f->offset, f->in_cie, true, run, insn->opcode};
    return true;
}

/* The IL failed on an instruction of the FDE or its CIE: which one. */
static bool il_faulty(const struct diff_mismatch *m, struct faulty *f)
{
    if (m->translation == CFI_OK || !m->fde ||
        m->expected->status != m->translation)
        return false;
    const struct cfi_fde *fde = m->fde;
    const struct cfi_cie *cie = fde->cie;
    uint64_t at = m->expected->diag.offset;
    memset(f, 0, sizeof *f);
    if (at >= cie->instructions_offset &&
        at - cie->instructions_offset < cie->instructions_len) {
        f->in_cie = true;
        f->offset = at - cie->instructions_offset;
    } else if (at >= fde->instructions_offset &&
               at - fde->instructions_offset < fde->instructions_len) {
        f->offset = at - fde->instructions_offset;
    } else {
        return false;
    }
    walk(m, visit_faulty, f);
    return f->found;
}

/* The IL says the FDE is an error because of an instruction with one of
 * `opcodes`, the libraries run it for the lookup PC, and the engine
 * unwound: it accepts what the IL rejects. */
static bool accepts(const struct diff_mismatch *m, enum diff_engine_id id,
                    bool in_cie, const enum sem_opcode *opcodes, size_t n)
{
    struct faulty f;
    if (m->engine != id || m->item != DIFF_ITEM_STATUS ||
        m->got->status != CFI_OK || !il_faulty(m, &f) || !f.run ||
        f.in_cie != in_cie)
        return false;
    for (size_t i = 0; i < n; i++)
        if (f.opcode == opcodes[i])
            return true;
    return false;
}

/* The IL's error comes from an FDE instruction that the libraries do not
 * run for the lookup PC (it lies after it), and the engine unwound. */
static bool stops_at_lookup_pc(const struct diff_mismatch *m,
                               enum diff_engine_id id)
{
    struct faulty f;
    return m->engine == id && m->item == DIFF_ITEM_STATUS &&
           m->got->status == CFI_OK && il_faulty(m, &f) && !f.in_cie &&
           !f.run;
}

static const enum sem_opcode cie_location_ops[] = {
    SEM_CFA_advance_loc, SEM_CFA_advance_loc1, SEM_CFA_advance_loc2,
    SEM_CFA_advance_loc4, SEM_CFA_MIPS_advance_loc8, SEM_CFA_set_loc};
static const enum sem_opcode restore_ops[] = {SEM_CFA_restore,
                                              SEM_CFA_restore_extended};

#define COUNT(array) (sizeof array / sizeof array[0])

/* ------------------------------------------------------------------ */
/* The IL's answer under a library's reading                            */
/* ------------------------------------------------------------------ */

/* A library's deviation shows on more than the item it is about: a rule
 * read differently changes the memory read, so the status too. These
 * helpers compute what the library's reading gives for the whole
 * request, so that a predicate can check that the engine's answer on the
 * item is exactly that. */

/* `model` answers the mismatch's item as the engine did. */
static bool same_item(const struct diff_mismatch *m,
                      const struct cfi_frame *model)
{
    const struct cfi_frame *got = m->got;
    switch (m->item) {
    case DIFF_ITEM_STATUS:
        return model->status == got->status &&
               (got->status != CFI_E_REG_UNKNOWN ||
                model->diag.reg == got->diag.reg);
    case DIFF_ITEM_CFA:
        return model->status == CFI_OK && got->status == CFI_OK &&
               model->cfa == got->cfa;
    case DIFF_ITEM_REG:
        return model->status == CFI_OK && got->status == CFI_OK &&
               m->reg < CFI_NREGS &&
               model->caller.status[m->reg] == got->caller.status[m->reg] &&
               (got->caller.status[m->reg] != CFI_REG_VALUE ||
                model->caller.value[m->reg] == got->caller.value[m->reg]);
    case DIFF_ITEM_SIGNAL:
        return model->status == CFI_OK && got->status == CFI_OK &&
               model->signal_frame == got->signal_frame;
    }
    return false;
}

/* The engine's answer differs from the reference's on the item: the
 * predicates below are meant for such items only, and say so. */
static bool item_differs(const struct diff_mismatch *m)
{
    return !same_item(m, m->expected);
}

/* The IL's answer (sem_eval_row) from its row at the lookup PC with
 * every rule passed through `edit`, which may rewrite it, or drop it by
 * returning false. */
static bool eval_edited_row(const struct diff_mismatch *m,
                            bool (*edit)(struct sem_reg_rule *),
                            struct cfi_frame *frame)
{
    if (!m->row)
        return false;
    struct sem_reg_rule rules[CFI_NREGS];
    struct sem_row row = {m->row->cfa, 0, rules};
    for (uint32_t i = 0; i < m->row->nrules && i < CFI_NREGS; i++) {
        rules[row.nrules] = m->row->rules[i];
        row.nrules += edit(&rules[row.nrules]);
    }
    sem_eval_row(&row, m->request->callee, m->request->memory, frame);
    return true;
}

/* A rewrite of one instruction in a copy of its program's bytes. */
typedef void (*patch_fn)(uint8_t *bytes, size_t len,
                         const struct sem_insn *insn);

/* A copy of a program with `patch` applied to each instruction. */
static uint8_t *patched_copy(const struct diff_mismatch *m, bool in_cie,
                             patch_fn patch)
{
    const uint8_t *bytes = in_cie ? m->fde->cie->instructions
                                  : m->fde->instructions;
    size_t len = in_cie ? m->fde->cie->instructions_len
                        : m->fde->instructions_len;
    uint8_t *copy = malloc(len ? len : 1);
    struct sem_program program;
    if (!copy || !decode(m, in_cie, &program)) {
        free(copy);
        return NULL;
    }
    memcpy(copy, bytes, len);
    for (size_t i = 0; i < program.count; i++)
        patch(copy, len, &program.insns[i]);
    sem_program_free(&program);
    return copy;
}

/* The IL's answer (sem_eval_row on the row at the lookup PC) when the
 * CIE's and FDE's programs are read with `patch` applied. */
static bool eval_patched(const struct diff_mismatch *m, patch_fn patch,
                         struct cfi_frame *frame)
{
    if (!m->fde || !m->fde->cie)
        return false;
    struct cfi_cie cie = *m->fde->cie;
    struct cfi_fde fde = *m->fde;
    uint8_t *cie_bytes = patched_copy(m, true, patch);
    uint8_t *fde_bytes = patched_copy(m, false, patch);
    struct sem_arena *arena = sem_arena_new();
    bool done = false;
    if (cie_bytes && fde_bytes && arena) {
        cie.instructions = cie_bytes;
        fde.instructions = fde_bytes;
        fde.cie = &cie;
        struct sem_fde_il il;
        struct cfi_diag diag;
        const struct sem_range *range = NULL;
        if (sem_translate_fde(&fde, arena, &il, &diag) == CFI_OK)
            range = sem_fde_il_find(&il, lookup_pc(m));
        if (range) {
            /* As the adapters of libdwarf and libdw do: the row, then
             * cfi.h step 6. */
            if (sem_eval_row(range->row, m->request->callee,
                             m->request->memory, frame) == CFI_OK)
                sem_apply_return_column(frame, (unsigned)cie.ra_column);
            done = true;
        }
    }
    sem_arena_free(arena);
    free(cie_bytes);
    free(fde_bytes);
    return done;
}

/* ------------------------------------------------------------------ */
/* libunwind                                                            */
/* ------------------------------------------------------------------ */

/* The behaviours the model always applies: those the adapter answers
 * for (a fault on part of a word is not comparable, a trap refused). */
#define LU_BASE (DIFF_LU_WORD_READS | DIFF_LU_DIV_TRAP)

/* Whether the model with `quirks` answers the item as libunwind did. */
static bool libunwind_model_agrees(const struct diff_mismatch *m,
                                   unsigned quirks, struct cfi_frame *model)
{
    bool traps;
    diff_libunwind_model(m->row, (unsigned)m->fde->cie->ra_column,
                         m->request, quirks, model, &traps);
    return same_item(m, model);
}

/* libunwind's step as diff_libunwind_model describes it, with every
 * behaviour, answers the item as libunwind did, and `quirk` is one of
 * its causes: without it the model answers otherwise, or it alone
 * (beside LU_BASE) turns cfi.h's answer into libunwind's (two behaviours
 * may each explain an item: an address shifted by a huge count mod 64
 * instead of to 0, where 0 is no location). */
static bool libunwind_needs(const struct diff_mismatch *m, unsigned quirk)
{
    if (m->engine != DIFF_ENGINE_libunwind || !m->row || !m->fde ||
        !item_differs(m))
        return false;
    struct cfi_frame *model = malloc(sizeof *model);
    bool explained =
        model && libunwind_model_agrees(m, DIFF_LU_QUIRKS_ALL, model) &&
        (!libunwind_model_agrees(m, DIFF_LU_QUIRKS_ALL & ~quirk, model) ||
         (libunwind_model_agrees(m, LU_BASE | quirk, model) &&
          !libunwind_model_agrees(m, LU_BASE, model)));
    free(model);
    return explained;
}

static bool libunwind_deref_size(const struct diff_mismatch *m)
{
    return libunwind_needs(m, DIFF_LU_DEREF_SIZE);
}

static bool libunwind_div_by_zero(const struct diff_mismatch *m)
{
    return libunwind_needs(m, DIFF_LU_DIV_BY_ZERO);
}

static bool libunwind_shift_count(const struct diff_mismatch *m)
{
    return libunwind_needs(m, DIFF_LU_SHIFT_COUNT);
}

static bool libunwind_cfa_zero_pushed(const struct diff_mismatch *m)
{
    return libunwind_needs(m, DIFF_LU_CFA_ZERO_PUSHED);
}

static bool libunwind_null_address(const struct diff_mismatch *m)
{
    return libunwind_needs(m, DIFF_LU_NULL_ADDRESS);
}

static bool libunwind_expressions_first(const struct diff_mismatch *m)
{
    return m->item == DIFF_ITEM_STATUS &&
           libunwind_needs(m, DIFF_LU_EXPRESSIONS_FIRST);
}

/* A caller-saved register with no rule: the IL says undefined (the ABI
 * default), libunwind the callee's register. */
static bool libunwind_no_undefined_default(const struct diff_mismatch *m)
{
    if (reg_item(m, DIFF_ENGINE_libunwind) &&
        cfi_abi_default(m->reg) == CFI_DEFAULT_UNDEFINED &&
        has_no_rule(m, m->reg) && is_undefined(m->expected, m->reg) &&
        is_callee_reg(m->got, m->request, m->reg, m->reg))
        return true;
    /* Its consequences: the return address from such a register (a
     * return address column other than 16), the IP then read from an
     * unknown register. */
    return libunwind_needs(m, DIFF_LU_NO_RULE_SAME);
}

static bool drop_rsp_rule(struct sem_reg_rule *rule)
{
    return rule->reg != CFI_REG_RSP;
}

/* The IL's answer to the request when rsp's rule is left out of the row,
 * as libunwind leaves it out. */
static enum cfi_status status_without_rsp_rule(const struct diff_mismatch *m)
{
    struct cfi_frame *frame = malloc(sizeof *frame);
    if (!frame || !eval_edited_row(m, drop_rsp_rule, frame)) {
        free(frame);
        return CFI_E_NOMEM;
    }
    enum cfi_status status = frame->status;
    free(frame);
    return status;
}

/* rsp has a rule; libunwind's caller rsp is its CFA all the same. Seen on
 * rsp's value, and on the status when only rsp's rule fails (its saved
 * slot is unreadable): libunwind never reads that slot. */
static bool libunwind_rsp_is_cfa(const struct diff_mismatch *m)
{
    if (m->engine != DIFF_ENGINE_libunwind || !m->row)
        return false;
    /* rsp as the return address column: the IP is read from rsp's
     * location, the callee's rsp when it has no rule. */
    if (libunwind_needs(m, DIFF_LU_RSP_IS_CFA))
        return true;
    if (has_no_rule(m, CFI_REG_RSP))
        return false;
    if (m->item == DIFF_ITEM_STATUS)
        return m->got->status == CFI_OK &&
               m->expected->status == CFI_E_MEMORY &&
               status_without_rsp_rule(m) == CFI_OK;
    return reg_item(m, DIFF_ENGINE_libunwind) && m->reg == CFI_REG_RSP &&
           m->got->caller.status[CFI_REG_RSP] == CFI_REG_VALUE &&
           m->got->caller.value[CFI_REG_RSP] == m->got->cfa;
}

/* The caller's rip comes from a callee register (register rule, or
 * same_value) that the request left unknown: cfi.h says the caller's rip
 * is unknown; libunwind needs it as a value and fails reading that
 * register. */
static bool libunwind_needs_caller_rip(const struct diff_mismatch *m)
{
    if (m->item == DIFF_ITEM_STATUS &&
        libunwind_needs(m, DIFF_LU_IP_NEEDS_VALUE))
        return true;
    if (m->engine != DIFF_ENGINE_libunwind || m->item != DIFF_ITEM_STATUS ||
        !m->row || m->expected->status != CFI_OK ||
        m->got->status != CFI_E_REG_UNKNOWN ||
        m->expected->caller.status[CFI_REG_RIP] != CFI_REG_UNKNOWN)
        return false;
    struct sem_rule rip = sem_row_rule(m->row, CFI_REG_RIP);
    int source = rip.kind == SEM_RULE_REGISTER ? (int)rip.reg
               : rip.kind == SEM_RULE_SAME_VALUE ? CFI_REG_RIP : -1;
    return source >= 0 && source == m->got->diag.reg;
}

/* A val_offset or val_offset_sf ran: libunwind skips the opcode byte and
 * reads its operands as instructions, so anything may differ. */
static bool libunwind_val_offset_unknown(const struct diff_mismatch *m)
{
    return m->engine == DIFF_ENGINE_libunwind &&
           (runs(m, SEM_CFA_val_offset) || runs(m, SEM_CFA_val_offset_sf));
}

static bool libunwind_stops_at_lookup_pc(const struct diff_mismatch *m)
{
    return stops_at_lookup_pc(m, DIFF_ENGINE_libunwind);
}

static const enum sem_opcode cfa_rule_ops[] = {
    SEM_CFA_def_cfa_register, SEM_CFA_def_cfa_offset,
    SEM_CFA_def_cfa_offset_sf};

static bool libunwind_cfa_ops_on_expression(const struct diff_mismatch *m)
{
    return accepts(m, DIFF_ENGINE_libunwind, false, cfa_rule_ops,
                   COUNT(cfa_rule_ops));
}

static bool libunwind_cie_restore_and_location(const struct diff_mismatch *m)
{
    return accepts(m, DIFF_ENGINE_libunwind, true, restore_ops,
                   COUNT(restore_ops)) ||
           accepts(m, DIFF_ENGINE_libunwind, true, cie_location_ops,
                   COUNT(cie_location_ops));
}

/* rbp is undefined by the row: libunwind ends the stack (rip undefined)
 * where the IL gives rip a value. */
static bool libunwind_undefined_rbp_ends_stack(const struct diff_mismatch *m)
{
    struct sem_rule rule;
    if (reg_item(m, DIFF_ENGINE_libunwind) && m->reg == CFI_REG_RIP &&
        row_rule(m, CFI_REG_RBP, &rule) && rule.kind == SEM_RULE_UNDEFINED &&
        m->expected->caller.status[CFI_REG_RIP] == CFI_REG_VALUE &&
        is_undefined(m->got, CFI_REG_RIP))
        return true;
    return m->item == DIFF_ITEM_REG && m->reg == CFI_REG_RIP &&
           libunwind_needs(m, DIFF_LU_UNDEFINED_RBP_ENDS);
}

/* The return address column is not 16: libunwind's caller rip is the IP
 * it read from that column's location, and column 16's own rule is not
 * read (its slot's fault goes unseen). */
static bool libunwind_rip_is_ip(const struct diff_mismatch *m)
{
    return libunwind_needs(m, DIFF_LU_RIP_IS_IP);
}

/* register(r, m) with m < r and m given a rule of its own: libunwind
 * takes m's new location, i.e. the caller's m, not this frame's m. Seen
 * on r, and on the status when that location fails (the caller's rip
 * from an unknown register, a read). */
static bool libunwind_register_new_location(const struct diff_mismatch *m)
{
    if (m->item == DIFF_ITEM_STATUS)
        return libunwind_needs(m, DIFF_LU_REGISTER_NEW_LOCATION);
    struct sem_rule rule, source;
    if (!reg_item(m, DIFF_ENGINE_libunwind) || !row_rule(m, m->reg, &rule) ||
        rule.kind != SEM_RULE_REGISTER || rule.reg >= m->reg ||
        !row_rule(m, rule.reg, &source) ||
        source.kind == SEM_RULE_UNSPECIFIED ||
        source.kind == SEM_RULE_SAME_VALUE)
        return false;
    const struct cfi_regs *want = &m->expected->caller, *got = &m->got->caller;
    return got->status[m->reg] == want->status[rule.reg] &&
           (got->status[m->reg] != CFI_REG_VALUE ||
            got->value[m->reg] == want->value[rule.reg]);
}

/* ------------------------------------------------------------------ */
/* libdwarf                                                             */
/* ------------------------------------------------------------------ */

static bool libdwarf_stops_at_lookup_pc(const struct diff_mismatch *m)
{
    return stops_at_lookup_pc(m, DIFF_ENGINE_libdwarf);
}

/* libdwarf's answer is its "cannot decode this instruction" error. */
static bool libdwarf_decoding_error(const struct cfi_frame *got)
{
    return got->status == CFI_E_MALFORMED && got->diag.message &&
           strstr(got->diag.message, "DW_DLE_DF_FRAME_DECODING_ERROR");
}

/* DW_CFA_GNU_negative_offset_extended ran: libdwarf has no case for it
 * and fails the row with a decoding error, whatever the IL's row gives
 * there (registers, or the memory fault, unknown register or expression
 * error of evaluating it): the IL translated the FDE, so every status
 * but the decoding error comes from the row. */
static bool libdwarf_no_negative_offset(const struct diff_mismatch *m)
{
    return m->engine == DIFF_ENGINE_libdwarf &&
           m->item == DIFF_ITEM_STATUS && m->translation == CFI_OK &&
           m->row && m->expected->status != m->got->status &&
           libdwarf_decoding_error(m->got) &&
           runs(m, SEM_CFA_GNU_negative_offset_extended);
}

/* A CIE of the file has an augmentation without 'z' ("S": gas's signal
 * frame in .debug_frame), and libdwarf's answer is its refusal of it:
 * it refuses the whole section, so any PC gets that answer. */
static bool has_augmentation_without_z(const struct cfi_file *file)
{
    for (size_t i = 0; i < file->ncies; i++) {
        const char *augmentation = file->cies[i].augmentation;
        if (augmentation[0] != '\0' && augmentation[0] != 'z')
            return true;
    }
    return false;
}

static bool libdwarf_augmentation_without_z(const struct diff_mismatch *m)
{
    return m->engine == DIFF_ENGINE_libdwarf &&
           m->item == DIFF_ITEM_STATUS &&
           has_augmentation_without_z(m->file) && m->got->status != CFI_OK &&
           m->got->diag.message &&
           strstr(m->got->diag.message, "DW_DLE_FRAME_AUGMENTATION_UNKNOWN");
}

/* libdwarf's reading of DW_CFA_val_offset_sf: the rule goes to register
 * 0. The register operand, a ULEB128 right after the opcode, becomes a
 * ULEB128 0 of the same length. */
static void val_offset_sf_on_rax(uint8_t *bytes, size_t len,
                                 const struct sem_insn *insn)
{
    if (insn->opcode != SEM_CFA_val_offset_sf)
        return;
    size_t at = insn->at + 1;
    for (; at < len && (bytes[at] & 0x80); at++)
        bytes[at] = 0x80;
    if (at < len)
        bytes[at] = 0;
}

/* val_offset_sf ran: libdwarf gives its rule to rax, and its register
 * keeps the rule it had. Seen on rax, on that register, and on the
 * status (what is read changes): the item is what the row gives when the
 * program is read so. */
static bool libdwarf_val_offset_sf_rax(const struct diff_mismatch *m)
{
    if (m->engine != DIFF_ENGINE_libdwarf || m->translation != CFI_OK ||
        !item_differs(m) || !runs(m, SEM_CFA_val_offset_sf))
        return false;
    struct cfi_frame *model = malloc(sizeof *model);
    bool explained = model && eval_patched(m, val_offset_sf_on_rax, model) &&
                     same_item(m, model);
    free(model);
    return explained;
}

static bool libdwarf_cfa_ops_on_expression(const struct diff_mismatch *m)
{
    return accepts(m, DIFF_ENGINE_libdwarf, false, cfa_rule_ops,
                   COUNT(cfa_rule_ops));
}

static bool libdwarf_cie_restore_and_location(const struct diff_mismatch *m)
{
    return accepts(m, DIFF_ENGINE_libdwarf, true, restore_ops,
                   COUNT(restore_ops)) ||
           accepts(m, DIFF_ENGINE_libdwarf, true, cie_location_ops,
                   COUNT(cie_location_ops));
}

/* ------------------------------------------------------------------ */
/* libdw                                                                */
/* ------------------------------------------------------------------ */

/* rax (0) with no rule: libdw gives the callee's rax (same_value); rbx
 * (3) with no rule: libdw gives undefined. */
static bool libdw_abi_rax_for_rbx(const struct diff_mismatch *m)
{
    if (!reg_item(m, DIFF_ENGINE_libdw) || !has_no_rule(m, m->reg))
        return false;
    if (m->reg == CFI_REG_RAX)
        return is_undefined(m->expected, m->reg) &&
               is_callee_reg(m->got, m->request, m->reg, m->reg);
    if (m->reg == CFI_REG_RBX)
        return is_callee_reg(m->expected, m->request, m->reg, m->reg) &&
               is_undefined(m->got, m->reg);
    return false;
}

/* rip (16) with no rule: the IL says undefined (the ABI default), libdw
 * the callee's rip (same_value). */
static bool libdw_abi_rip_same_value(const struct diff_mismatch *m)
{
    return reg_item(m, DIFF_ENGINE_libdw) && m->reg == CFI_REG_RIP &&
           has_no_rule(m, CFI_REG_RIP) &&
           is_undefined(m->expected, CFI_REG_RIP) &&
           is_callee_reg(m->got, m->request, CFI_REG_RIP, CFI_REG_RIP);
}

static bool libdw_stops_at_lookup_pc(const struct diff_mismatch *m)
{
    return stops_at_lookup_pc(m, DIFF_ENGINE_libdw);
}

static bool is_empty_expression(const struct sem_rule *rule)
{
    return (rule->kind == SEM_RULE_EXPRESSION ||
            rule->kind == SEM_RULE_VAL_EXPRESSION) &&
           rule->expr.len == 0;
}

/* libdw's reading of a row: an empty expression rule is undefined. */
static bool empty_expression_undefined(struct sem_reg_rule *rule)
{
    if (is_empty_expression(&rule->rule))
        rule->rule = (struct sem_rule){.kind = SEM_RULE_UNDEFINED};
    return true;
}

/* expression or val_expression with an empty expression: libdw says
 * undefined. Seen on the register, and on the status when reading the
 * CFA's slot (expression) fails or a later rule fails first: the status
 * is then what the row gives with those rules undefined. */
static bool libdw_empty_expression(const struct diff_mismatch *m)
{
    struct sem_rule rule;
    if (m->engine != DIFF_ENGINE_libdw || !m->row)
        return false;
    if (m->item == DIFF_ITEM_STATUS) {
        bool any = false;
        if (!item_differs(m))
            return false;
        for (uint32_t i = 0; i < m->row->nrules; i++)
            any |= is_empty_expression(&m->row->rules[i].rule);
        struct cfi_frame *model = malloc(sizeof *model);
        bool explained = any && model &&
                         eval_edited_row(m, empty_expression_undefined,
                                         model) &&
                         same_item(m, model);
        free(model);
        return explained;
    }
    return reg_item(m, DIFF_ENGINE_libdw) && row_rule(m, m->reg, &rule) &&
           is_empty_expression(&rule) && is_undefined(m->got, m->reg);
}

/* The reference failed evaluating the CFA expression, which does not
 * decode (an unknown operation, a truncated operand); libdw, which
 * decodes each expression when it reads the rule, calls the frame
 * invalid DWARF. */
static bool libdw_expression_decoded_with_rule(const struct diff_mismatch *m)
{
    const char *expected = m->expected->diag.message;
    const char *got = m->got->diag.message;
    return m->engine == DIFF_ENGINE_libdw && m->item == DIFF_ITEM_STATUS &&
           m->expected->status == CFI_E_EXPR &&
           m->got->status == CFI_E_MALFORMED && expected && got &&
           (!strcmp(expected, "unknown operation") ||
            !strcmp(expected, "truncated expression operand")) &&
           !strcmp(got, "invalid DWARF");
}

/* set_loc to a location before the current one (or to it): the IL fails
 * there, libdw runs it and goes on. A location past the FDE's end is
 * never run for a PC inside the FDE: *-stops-at-lookup-pc explains it. */
static bool libdw_location_backwards(const struct diff_mismatch *m)
{
    static const enum sem_opcode set_loc[] = {SEM_CFA_set_loc};
    return accepts(m, DIFF_ENGINE_libdw, false, set_loc, COUNT(set_loc));
}

/* The FDE's CIE says addresses are 4 bytes (version 4's address_size):
 * libdw finds no FDE where the IL found this one. */
static bool libdw_address_size_4(const struct diff_mismatch *m)
{
    return m->engine == DIFF_ENGINE_libdw && m->item == DIFF_ITEM_STATUS &&
           m->fde && m->fde->cie && m->fde->cie->address_size == 4 &&
           m->got->status == CFI_E_NO_FDE &&
           m->expected->status != CFI_E_NO_FDE;
}

/* ------------------------------------------------------------------ */
/* libunwind: what it reads                                             */
/* ------------------------------------------------------------------ */

/* The FDE that covers the lookup PC is in .debug_frame: libunwind, which
 * reads only .eh_frame (through .eh_frame_hdr), finds none. */
static bool libunwind_no_debug_frame(const struct diff_mismatch *m)
{
    return m->engine == DIFF_ENGINE_libunwind &&
           m->item == DIFF_ITEM_STATUS && m->fde &&
           m->fde->section == CFI_DEBUG_FRAME &&
           m->got->status == CFI_E_NO_FDE &&
           m->expected->status != CFI_E_NO_FDE;
}

/* The IL's error is an expression stack underflow (semantics/
 * expr_eval.c's message), libunwind's the malformed input it reports
 * for every bad operand. */
static bool libunwind_underflow_malformed(const struct diff_mismatch *m)
{
    const char *message = m->expected->diag.message;
    return m->engine == DIFF_ENGINE_libunwind &&
           m->item == DIFF_ITEM_STATUS &&
           m->expected->status == CFI_E_EXPR && message &&
           strcmp(message, "expression stack underflow") == 0 &&
           m->got->status == CFI_E_MALFORMED;
}

/* ------------------------------------------------------------------ */
/* .debug_frame after a zero length word                                */
/* ------------------------------------------------------------------ */

/* A zero length word comes before the FDE or its CIE in .debug_frame
 * (the section's records, walked from its start up to the later of the
 * two: our parser accepted them, so each lies inside the section). */
static bool zero_length_before(const struct cfi_fde *fde)
{
    if (fde->section != CFI_DEBUG_FRAME || !fde->cie)
        return false;
    const uint8_t *section = fde->instructions - fde->instructions_offset;
    uint64_t until = fde->offset > fde->cie->offset ? fde->offset
                                                    : fde->cie->offset;
    uint64_t pos = 0;
    while (until - pos >= 4) {
        uint64_t length = cfi_load_le(section + pos, 4), header = 4;
        if (length == 0)
            return true;
        if (length == 0xffffffff) {
            if (until - pos < 12)
                return false;
            length = cfi_load_le(section + pos + 4, 8);
            header = 12;
        }
        if (length > until - pos - header)
            return false;
        pos += header + length;
    }
    return false;
}

/* libdwarf and libdw stop reading .debug_frame at a zero length word:
 * the FDE after it is "no FDE" for them. */
static bool stops_at_zero_length(const struct diff_mismatch *m,
                                 enum diff_engine_id id)
{
    return m->engine == id && m->item == DIFF_ITEM_STATUS && m->fde &&
           m->got->status == CFI_E_NO_FDE &&
           m->expected->status != CFI_E_NO_FDE && zero_length_before(m->fde);
}

static bool libdwarf_zero_length(const struct diff_mismatch *m)
{
    return stops_at_zero_length(m, DIFF_ENGINE_libdwarf);
}

static bool libdw_zero_length(const struct diff_mismatch *m)
{
    return stops_at_zero_length(m, DIFF_ENGINE_libdw);
}

/* ------------------------------------------------------------------ */
/* sframe: what SFrame carries                                          */
/* ------------------------------------------------------------------ */

static bool carried_by_sframe(struct sem_reg_rule *rule)
{
    return rule->reg == CFI_REG_RBP || rule->reg == CFI_REG_RIP;
}

/* The IL's answer with the rules of every register but rbp and rip left
 * out is the engine's on the item: the difference is a register SFrame
 * does not carry (its saved slot faults, its source is unknown). */
static bool sframe_three_columns(const struct diff_mismatch *m)
{
    if (m->engine != DIFF_ENGINE_sframe || m->item != DIFF_ITEM_STATUS ||
        !m->row || !item_differs(m))
        return false;
    struct cfi_frame *model = malloc(sizeof *model);
    bool explained = model && eval_edited_row(m, carried_by_sframe, model) &&
                     same_item(m, model);
    free(model);
    return explained;
}

/* A caller frame in a row whose CFA is an expression (the PLT's, which
 * reads rip): SFrame's pc-mask FDE matches the lookup PC, PC-1, where the
 * expression reads the callee's rip, PC. The engine's answer is the IL's
 * row evaluated with rip = PC-1. */
static bool sframe_pc_mask_lookup_pc(const struct diff_mismatch *m)
{
    if (m->engine != DIFF_ENGINE_sframe || !m->row ||
        !m->request->caller_frame || m->row->cfa.kind != SEM_CFA_RULE_EXPR ||
        !item_differs(m))
        return false;
    struct cfi_regs *callee = malloc(sizeof *callee);
    struct cfi_frame *model = malloc(sizeof *model);
    bool explained = false;
    if (callee && model) {
        *callee = *m->request->callee;
        cfi_regs_set(callee, CFI_REG_RIP, m->request->pc - 1);
        struct sem_reg_rule rules[CFI_NREGS];
        struct sem_row row = {m->row->cfa, 0, rules};
        for (uint32_t i = 0; i < m->row->nrules && i < CFI_NREGS; i++)
            if (carried_by_sframe((struct sem_reg_rule *)&m->row->rules[i]))
                rules[row.nrules++] = m->row->rules[i];
        sem_eval_row(&row, callee, m->request->memory, model);
        explained = same_item(m, model);
    }
    free(callee);
    free(model);
    return explained;
}

/* ------------------------------------------------------------------ */
/* The table                                                            */
/* ------------------------------------------------------------------ */

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

static const struct diff_deviation table[] = {
    {"libunwind-no-undefined-default", DIFF_ENGINE_libunwind,
     "libunwind keeps the callee's value of a caller-saved register that "
     "has no rule, instead of making it undefined",
     "The x86-64 psABI (3.2.1, 3.6.3) makes rax, rcx, rdx, rsi, rdi and "
     "r8-r11 caller-saved: with no rule their caller's value is not "
     "recoverable, and cfi.h applies 'undefined' to them. libunwind's "
     "dwarf/Gparser.c starts every register at DWARF_WHERE_SAME, so a "
     "register with no rule keeps its location and unw_get_reg returns "
     "the callee's value; with a return address column other than 16 that "
     "is the column's the IP is read from.",
     libunwind_no_undefined_default},
    {"libunwind-rsp-is-cfa", DIFF_ENGINE_libunwind,
     "libunwind's caller rsp is always the CFA, whatever rule rsp has",
     "DWARF 5 6.4.1 gives rsp its own column like any register; cfi.h "
     "applies 'rsp = CFA' only when rsp has no rule. libunwind's "
     "x86_64/Gregs.c answers UNW_X86_64_RSP with c->dwarf.cfa and never "
     "reads rsp's location (seen in libc's and ld.so's setcontext-like "
     "FDEs: 'rsp=r8'). rsp's location with no rule stays the callee's "
     "rsp: with rsp as the return address column, the IP is read from "
     "it.",
     libunwind_rsp_is_cfa},
    {"libunwind-needs-caller-rip", DIFF_ENGINE_libunwind,
     "libunwind fails when the caller's rip would be a callee register the "
     "request left unknown",
     "cfi.h carries an unknown callee register over to the caller through "
     "a register or same_value rule (an unknown is the harness's way of "
     "saying 'not given'). libunwind's step must produce the caller's IP "
     "as a value (x86_64/Gstep.c reads it through dwarf_get), so it reads "
     "the source register and fails. Seen in libc's setcontext-like FDEs "
     "('rip=rdx') in states where rdx is not given. Not a defect of "
     "libunwind: the reference's 'unknown' has no counterpart there.",
     libunwind_needs_caller_rip},
    {"libunwind-val-offset-unknown", DIFF_ENGINE_libunwind,
     "libunwind has no DW_CFA_val_offset / val_offset_sf: it skips the "
     "opcode and runs its operands as instructions",
     "DWARF 5 6.4.2.3 defines val_offset (0x14) and val_offset_sf (0x15). "
     "dwarf/Gparser.c run_cfi_program has no case for them and its switch "
     "no default: the opcode byte is dropped, the register and offset "
     "bytes are decoded as opcodes (diff/findings/libunwind-val-offset).",
     libunwind_val_offset_unknown},
    {"libunwind-stops-at-lookup-pc", DIFF_ENGINE_libunwind,
     "libunwind does not see an error in the FDE program after the lookup "
     "PC",
     STOPS_AT_LOOKUP_PC("libunwind", "dwarf/Gparser.c run_cfi_program: "
                        "while (*ip <= end_ip)"),
     libunwind_stops_at_lookup_pc},
    {"libunwind-cfa-ops-on-expression", DIFF_ENGINE_libunwind,
     "libunwind accepts def_cfa_register / def_cfa_offset when the CFA is "
     "an expression",
     "DWARF 5 6.4.2.2: def_cfa_register and def_cfa_offset are valid only "
     "if the CFA rule is register+offset; cfi.h makes them malformed. "
     "libunwind sets the register or offset column anyway: def_cfa_register "
     "switches back to register + the last offset (as libgcc does, which "
     "libgcrypt's FDEs at .eh_frame 0xeb30, 0xec10 rely on), "
     "def_cfa_offset leaves the expression in force.",
     libunwind_cfa_ops_on_expression},
    {"libunwind-cie-restore-and-location", DIFF_ENGINE_libunwind,
     "libunwind accepts DW_CFA_restore and location changes in a CIE",
     "DWARF 5 6.4.2.3: restore gives back the rule of the CIE's initial "
     "instructions, which do not exist yet inside them; the CIE's program "
     "has no location (6.4.1). cfi.h rejects both. libunwind runs the CIE "
     "with rs_initial set to its all-same_value start (restore gives "
     "same_value) and end_ip = ~0 (advances are accepted).",
     libunwind_cie_restore_and_location},
    {"libunwind-undefined-rbp-ends-stack", DIFF_ENGINE_libunwind,
     "libunwind ends the stack (rip undefined) when rbp is undefined",
     "DWARF 5 6.4.4: only an undefined return address column ends the "
     "stack. x86_64/Gstep.c unw_step sets ip = 0 and returns 0 whenever "
     "the caller's rbp has no location (its reading of the psABI's "
     "'rbp = 0 marks the outermost frame').",
     libunwind_undefined_rbp_ends_stack},
    {"libunwind-register-new-location", DIFF_ENGINE_libunwind,
     "libunwind's register(r, m) takes m's caller location when m < r has "
     "a rule",
     "DWARF 5 6.4.2.3: register(R) means the previous value is in register "
     "R of this frame; cfi.h: the callee's m. dwarf/Gparser.c "
     "apply_reg_state sets new_loc[r] = new_loc[m] in increasing order, so "
     "when m < r already has its new location, r gets the caller's m.",
     libunwind_register_new_location},
    {"libunwind-rip-is-return-address", DIFF_ENGINE_libunwind,
     "with a return address column other than 16, libunwind never reads "
     "rip's own rule",
     "cfi.h step 6 (DWARF 5 6.4.1, return_address_register): the caller's "
     "rip is the return address column's value, and rip's own rule is "
     "evaluated like any other in step 5, its errors included. "
     "x86_64/Gregs.c answers UNW_X86_64_RIP with the IP that "
     "dwarf/Gparser.c apply_reg_state read from the return address "
     "column's location: column 16's location is never read, so a fault "
     "in its slot goes unseen.",
     libunwind_rip_is_ip},
    {"libunwind-deref-size-high-bytes", DIFF_ENGINE_libunwind,
     "libunwind's DW_OP_deref_size 5, 6 and 7 keep the high bytes of an "
     "8-byte read; size 3 reads 4 bytes",
     "DWARF 5 2.5.1.3: deref_size n reads n bytes and zero-extends them. "
     "dwarf/Gexpr.c reads 8 bytes for sizes 5..8 and masks them with "
     "'tmp2 &= (~0) << (8 * operand1)', which clears the n low bytes it "
     "should keep (diff/findings/libunwind-deref-size); for size 3 it reads "
     "4 bytes and masks to 3 (the value is right; the extra byte can be "
     "unreadable). Seen on the value, and on what a rule then reads.",
     libunwind_deref_size},
    {"libunwind-div-by-zero", DIFF_ENGINE_libunwind,
     "libunwind's DW_OP_div and DW_OP_mod by zero push 0",
     "cfi.h makes a division by zero an expression error (DWARF 5 2.5.1.4 "
     "gives it no value). dwarf/Gexpr.c computes 'if (tmp1) tmp1 = tmp2 / "
     "tmp1; push (tmp1)': the divisor, 0, is pushed and the expression "
     "goes on.",
     libunwind_div_by_zero},
    {"libunwind-shift-count-mod-64", DIFF_ENGINE_libunwind,
     "libunwind's DW_OP_shl, shr and shra by 64 or more shift by the count "
     "mod 64",
     "cfi.h: a shift by 64 or more gives 0 (shra: the sign), the value "
     "shifted that far. dwarf/Gexpr.c shifts with C's << and >>, undefined "
     "for such counts; x86-64's shift instructions take the count mod 64.",
     libunwind_shift_count},
    {"libunwind-cfa-expression-zero-pushed", DIFF_ENGINE_libunwind,
     "libunwind evaluates DW_CFA_def_cfa_expression with 0 pushed first",
     "DWARF 5 6.4.2.2: the CFA expression is evaluated with an empty stack "
     "(only register rules get the CFA pushed, 6.4.2.3). dwarf/Gparser.c "
     "apply_reg_state calls eval_location_expr (c, 0, ...) for the CFA, "
     "which pushes that 0: an operation reaching below the expression's "
     "own values reads it instead of failing, and the stack holds one "
     "value less.",
     libunwind_cfa_zero_pushed},
    {"libunwind-null-address-undefined", DIFF_ENGINE_libunwind,
     "libunwind makes a register saved at address 0 undefined",
     "DWARF 5 6.4.2.3: offset(N) and expression(E) say where the value is "
     "saved, whatever the address; cfi.h reads it (a fault is a memory "
     "error). libunwind stores a location as an address and uses address "
     "0 as DWARF_NULL_LOC, 'no location': dwarf_get fails on it and "
     "unw_get_reg gives nothing, so nothing is read.",
     libunwind_null_address},
    {"libunwind-expressions-before-reads", DIFF_ENGINE_libunwind,
     "libunwind evaluates every register's expression before it reads any "
     "saved register: of two failing rules it reports another",
     "cfi.h step 5 evaluates the registers in increasing number, each "
     "rule to its end (its expression, then the read it says), and "
     "reports the first error. dwarf/Gparser.c apply_reg_state evaluates "
     "the expressions of registers 0..16 first, then reads the return "
     "address; the other saved registers are read when asked for "
     "(unw_get_reg): an expression of a later register fails before an "
     "earlier register's slot is read.",
     libunwind_expressions_first},
    {"libdwarf-stops-at-lookup-pc", DIFF_ENGINE_libdwarf,
     "libdwarf does not see an error in the FDE program after the lookup "
     "PC",
     STOPS_AT_LOOKUP_PC("libdwarf", "dwarf_frame.c _dwarf_exec_frame_instr: "
                        "search_over"),
     libdwarf_stops_at_lookup_pc},
    {"libdwarf-no-negative-offset-extended", DIFF_ENGINE_libdwarf,
     "libdwarf rejects DW_CFA_GNU_negative_offset_extended",
     "The GNU extension 0x2f (offset with the factored offset negated) is "
     "read by GCC's unwinder, elfutils and libunwind; cfi.h includes it. "
     "dwarf_frame.c _dwarf_exec_frame_instr has no case for it and fails "
     "with DW_DLE_DF_FRAME_DECODING_ERROR wherever it runs: the status "
     "differs from every answer of the IL's row there, a value or an "
     "error of evaluating the row (memory fault, unknown register).",
     libdwarf_no_negative_offset},
    {"libdwarf-augmentation-without-z", DIFF_ENGINE_libdwarf,
     "libdwarf refuses a CIE whose augmentation is \"S\" without 'z'",
     "The augmentation string is the producer's (DWARF 5 6.4.1); gas "
     "writes \"S\" alone for a signal frame in .debug_frame, a string "
     "without augmentation data, which libgcc and readelf read. libdwarf "
     "20210528 fails the whole section with "
     "DW_DLE_FRAME_AUGMENTATION_UNKNOWN (corpus/cases/signal_debug_frame).",
     libdwarf_augmentation_without_z},
    {"libdwarf-val-offset-sf-rax", DIFF_ENGINE_libdwarf,
     "libdwarf gives a DW_CFA_val_offset_sf rule to rax instead of its "
     "register",
     "DWARF 5 6.4.2.3: val_offset_sf(R, N) gives register R the rule "
     "val_offset(N * data_alignment_factor). dwarf_frame.c reads the "
     "register into lreg but indexes localregtab with reg_no, still 0 "
     "(diff/findings/libdwarf-val-offset-sf): rax gets the rule, the "
     "register keeps the one it had. Seen on both registers and on the "
     "status (the slot read changes); matched as what the row gives with "
     "each val_offset_sf's register operand made 0.",
     libdwarf_val_offset_sf_rax},
    {"libdwarf-cfa-ops-on-expression", DIFF_ENGINE_libdwarf,
     "libdwarf accepts def_cfa_register / def_cfa_offset when the CFA is "
     "an expression",
     "DWARF 5 6.4.2.2: valid only if the CFA rule is register+offset; "
     "cfi.h makes them malformed. dwarf_frame.c sets the fields anyway: "
     "def_cfa_register changes a register the expression rule ignores "
     "(the expression stays), def_cfa_offset switches to register+offset "
     "with whatever register was there before the expression.",
     libdwarf_cfa_ops_on_expression},
    {"libdwarf-cie-restore-and-location", DIFF_ENGINE_libdwarf,
     "libdwarf accepts DW_CFA_restore and location changes in a CIE",
     "DWARF 5 6.4.2.3 and 6.4.1 as for libunwind; cfi.h rejects both. "
     "dwarf_frame.c runs the CIE with its initial table already allocated "
     "(restore copies the initial rule, the sentinel 'no rule') and "
     "search_pc false (advances are accepted).",
     libdwarf_cie_restore_and_location},
    {"libdw-abi-rax-for-rbx", DIFF_ENGINE_libdw,
     "elfutils' x86-64 ABI defaults say same_value for DWARF register 0 "
     "(rax) where rbx (3) is meant",
     "The psABI makes rbx callee-saved and rax caller-saved; DWARF "
     "numbers them 3 and 0 (psABI table 3.36). elfutils' "
     "backends/x86_64_cfi.c (0.188) starts its default program with "
     "'DW_CFA_same_value, ULEB128_7 (0), /* %rbx */': with no rule, "
     "dwarf_frame_register gives rax as same_value and rbx as undefined "
     "(diff/findings/libdw-abi-rax-rbx).",
     libdw_abi_rax_for_rbx},
    {"libdw-abi-rip-same-value", DIFF_ENGINE_libdw,
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
     libdw_abi_rip_same_value},
    {"libdw-stops-at-lookup-pc", DIFF_ENGINE_libdw,
     "libdw does not see an error in the FDE program after the lookup PC",
     STOPS_AT_LOOKUP_PC("libdw", "libdw/cfi.c execute_cfi: find_pc"),
     libdw_stops_at_lookup_pc},
    {"libdw-empty-expression-undefined", DIFF_ENGINE_libdw,
     "libdw reports an expression rule with an empty expression as "
     "undefined",
     "DWARF 5 6.4.2.3: expression(E) pushes the CFA, then evaluates E: an "
     "empty E leaves the CFA, the address of the saved value (cfi.h). "
     "libdw's __libdw_intern_expression returns no operations for an "
     "empty block (not even the DW_OP_call_frame_cfa it prepends), and "
     "dwarf_frame_register's 'nops 0, ops = ops_mem' means undefined. Seen "
     "on the register, and on the status when the CFA's slot is unreadable "
     "(libdw reads nothing) or a later rule fails first.",
     libdw_empty_expression},
    {"libdw-expression-decoded-with-rule", DIFF_ENGINE_libdw,
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
     libdw_expression_decoded_with_rule},
    {"libdw-location-backwards", DIFF_ENGINE_libdw,
     "libdw accepts a DW_CFA_set_loc that does not move the location "
     "forward",
     "DWARF 5 6.4.2.1: 'The new location value is always greater than the "
     "current one'; cfi.h makes a set_loc to the current location or "
     "before it malformed. libdw/cfi.c execute_cfi assigns the new "
     "location without comparing it, and runs the rest of the program "
     "while it is not past the lookup PC. (A location past the FDE's end "
     "is never run for a PC inside the FDE: libdw-stops-at-lookup-pc.)",
     libdw_location_backwards},
    {"libdw-address-size-4", DIFF_ENGINE_libdw,
     "libdw finds no FDE whose CIE has address_size 4",
     "DWARF 5 6.4.1: a version 4 CIE gives the size of the FDE's "
     "initial_location and address_range (address_size); cfi.h reads "
     "4-byte addresses so. libdw's .debug_frame lookup in an ELF64 file "
     "does not find such an FDE (dwarf_cfi_addrframe fails at every PC it "
     "covers), so the frame is 'no FDE'.",
     libdw_address_size_4},
    {"libunwind-no-debug-frame", DIFF_ENGINE_libunwind,
     "libunwind does not read .debug_frame: an FDE there is 'no FDE'",
     "cfi.h step 2 looks in .eh_frame, then .debug_frame. libunwind's "
     "remote lookup (dwarf/Gfind_proc_info-lsb.c, as this harness drives "
     "it through the .eh_frame_hdr table) reads .eh_frame only; its "
     ".debug_frame reader needs the file on disk, which a remote address "
     "space does not give it.",
     libunwind_no_debug_frame},
    {"libunwind-underflow-malformed", DIFF_ENGINE_libunwind,
     "libunwind reports a DWARF expression stack underflow as malformed "
     "CFI",
     "cfi.h: popping an empty expression stack is an expression fault "
     "(CFI_E_EXPR), an error of evaluating the rule. dwarf/Gexpr.c "
     "checks the depth before each pop and returns -UNW_EINVAL ('unsupported "
     "operation or bad value'), which the adapter, as every code it has no "
     "other class for, reads as malformed CFI.",
     libunwind_underflow_malformed},
    {"libdwarf-debug-frame-zero-length", DIFF_ENGINE_libdwarf,
     "libdwarf stops reading .debug_frame at a zero length word",
     ZERO_LENGTH("dwarf_frame.c _dwarf_get_fde_list_internal"),
     libdwarf_zero_length},
    {"libdw-debug-frame-zero-length", DIFF_ENGINE_libdw,
     "libdw stops reading .debug_frame at a zero length word",
     ZERO_LENGTH("libdw/dwarf_next_cfi.c"),
     libdw_zero_length},
    {"sframe-three-columns", DIFF_ENGINE_sframe,
     "SFrame carries the CFA, rbp and rip only: an error of another "
     "register's rule is not seen",
     "cfi.h step 5 evaluates every register's rule and reports the first "
     "error (a saved slot that faults, a source register that is unknown). "
     "SFrame (binutils' SFrame format) has no column for the other "
     "registers, so the sframe engine unwinds where the IL fails; matched "
     "as the IL's row with only the rules of rbp and rip kept.",
     sframe_three_columns},
    {"sframe-pc-mask-lookup-pc", DIFF_ENGINE_sframe,
     "in a caller frame, SFrame's pc-mask (PLT) FDE matches PC-1 where the "
     "DWARF expression reads rip",
     "cfi.h step 1 looks the row up at PC-1 for a caller frame, and the "
     "PLT's CFA expression (breg16: the callee's rip, PC) then runs on PC. "
     "SFrame's pc-mask FDE has no expression: it matches the lookup PC "
     "modulo the block size. Both agree for an innermost frame; at a "
     "block's first byte a caller frame differs (no real call returns into "
     "a PLT). Matched as the IL's row evaluated with rip = PC-1.",
     sframe_pc_mask_lookup_pc},
};

const struct diff_deviation *diff_deviation_table(size_t *count)
{
    *count = sizeof table / sizeof table[0];
    return table;
}

static const struct diff_deviation *find_in_table(const struct diff_mismatch *m)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].engine == m->engine && table[i].matches(m))
            return &table[i];
    return NULL;
}

/* `frame`'s caller rip is its register `column`, as it is. */
static bool rip_is_column(const struct cfi_frame *frame, unsigned column)
{
    const struct cfi_regs *caller = &frame->caller;
    return caller->status[CFI_REG_RIP] == caller->status[column] &&
           (caller->status[column] != CFI_REG_VALUE ||
            caller->value[CFI_REG_RIP] == caller->value[column]);
}

/* cfi.h step 6: when the CIE's return address column is not 16, the
 * caller's rip is that column's value, in the reference and in the
 * engine (each adapter applies the step with the column its library
 * read). A difference on rip that is the difference on that column is
 * explained by what explains the column's. */
static bool return_column_item(const struct diff_mismatch *m,
                               struct diff_mismatch *column)
{
    if (m->item != DIFF_ITEM_REG || m->reg != CFI_REG_RIP || !m->fde ||
        !m->fde->cie || !both_unwound(m))
        return false;
    uint64_t ra = m->fde->cie->ra_column;
    if (ra == CFI_REG_RIP || ra >= CFI_NREGS ||
        !rip_is_column(m->expected, (unsigned)ra) ||
        !rip_is_column(m->got, (unsigned)ra))
        return false;
    *column = *m;
    column->reg = (unsigned)ra;
    return true;
}

const struct diff_deviation *diff_deviation_find(const struct diff_mismatch *mismatch)
{
    const struct diff_deviation *found = find_in_table(mismatch);
    struct diff_mismatch column;
    if (!found && return_column_item(mismatch, &column))
        found = find_in_table(&column);
    return found;
}
