/* SPDX-License-Identifier: MIT */
/* deviations_common.c — what the predicates of the deviation table
 * share (deviations_internal.h): questions over a mismatch, the walk over
 * the instructions the libraries run for the lookup PC, and the IL's
 * answer under a library's reading. */
#include "deviations_internal.h"

#include <stdlib.h>

#include "engines/eh_frame_hdr.h"
#include <string.h>

/* ------------------------------------------------------------------ */
/* Helpers over a mismatch                                              */
/* ------------------------------------------------------------------ */

/* The IL's rule of `reg` in the row at the lookup PC; false when there
 * is no row (the IL failed, or no FDE). */
bool engine_deviation_row_rule(const struct engine_mismatch *m, unsigned reg,
                               struct sem_rule *rule)
{
    if (!m->row || reg >= CFI_NREGS)
        return false;
    *rule = sem_row_rule(m->row, reg);
    return true;
}

bool engine_deviation_has_no_rule(const struct engine_mismatch *m, unsigned reg)
{
    struct sem_rule rule;
    return engine_deviation_row_rule(m, reg, &rule) &&
           rule.kind == SEM_RULE_UNSPECIFIED;
}

bool engine_deviation_both_unwound(const struct engine_mismatch *m)
{
    return m->expected->status == CFI_OK && m->got->status == CFI_OK;
}

/* A register item where the engine unwound and the IL did too. */
bool engine_deviation_reg_item(const struct engine_mismatch *m,
                               enum engine_id id)
{
    return m->engine == id && m->item == ENGINE_ITEM_REG &&
           engine_deviation_both_unwound(m) && m->reg < CFI_NREGS;
}

/* `frame`'s caller register `reg` is the callee's `from`, as it is. */
bool engine_deviation_is_callee_reg(const struct cfi_frame *frame,
                                    const struct cfi_request *request,
                                    unsigned reg, unsigned from)
{
    uint8_t status = frame->caller.status[reg];
    return status == request->callee->status[from] &&
           (status != CFI_REG_VALUE ||
            frame->caller.value[reg] == request->callee->value[from]);
}

bool engine_deviation_is_undefined(const struct cfi_frame *frame, unsigned reg)
{
    return frame->caller.status[reg] == CFI_REG_UNDEFINED;
}

/* ------------------------------------------------------------------ */
/* What the libraries run of a program                                  */
/* ------------------------------------------------------------------ */

/* The three libraries run the whole CIE program, then the FDE program
 * only while the location has not passed the lookup PC (libdwarf's
 * search_over, libdw's execute_cfi, libunwind's run_cfi_program). */

static uint64_t lookup_pc(const struct engine_mismatch *m)
{
    return cfi_lookup_pc(m->request->pc, m->request->caller_frame);
}

/* Decodes a program of the mismatch's FDE (its CIE's when in_cie) with
 * our decoder; on a decoding error, the instructions before it. */
static bool decode(const struct engine_mismatch *m, bool in_cie,
                   struct sem_program *program)
{
    const struct cfi_fde *fde = m->fde;
    const struct cfi_cie *cie = fde->cie;
    struct sem_decode_env env = {
        cie->code_align, cie->data_align, fde->section, cie->address_size,
        cie->fde_encoding, in_cie ? 0 : fde->instructions_addr, in_cie,
        cie->arch};
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
static bool walk(const struct engine_mismatch *m,
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
bool engine_deviation_runs(const struct engine_mismatch *m,
                           enum sem_opcode opcode)
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
    bool decoded;    /* an instruction starts there (opcode is its) */
    enum sem_opcode opcode;
};

/* An instruction that our decoder cannot read (an unknown opcode, a
 * truncated operand) ends the decoded program: it is run when the last
 * instruction before it is. */
static bool visit_faulty(const struct sem_insn *insn, bool run,
                         const void *env)
{
    struct faulty *f = (struct faulty *)env;
    if (insn->in_cie != f->in_cie || insn->at > f->offset)
        return false;
    f->run = run;
    if (insn->at < f->offset)
        return false;
    f->found = f->decoded = true;
    f->opcode = insn->opcode;
    return true;
}

/* The IL failed on an instruction of the FDE or its CIE: which one, and
 * whether the libraries run it. */
static bool il_faulty(const struct engine_mismatch *m, struct faulty *f)
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
    f->run = true;
    walk(m, visit_faulty, f);
    f->found = true;   /* decoded, or the instruction the decoding ended at */
    return f->found;
}

/* The IL says the FDE is an error because of an instruction with one of
 * `opcodes`, the libraries run it for the lookup PC, and the engine
 * unwound: it accepts what the IL rejects. */
bool engine_deviation_accepts(const struct engine_mismatch *m,
                              enum engine_id id, bool in_cie,
                              const enum sem_opcode *opcodes, size_t n)
{
    struct faulty f;
    if (m->engine != id || m->item != ENGINE_ITEM_STATUS ||
        m->got->status != CFI_OK || !il_faulty(m, &f) || !f.run ||
        !f.decoded || f.in_cie != in_cie)
        return false;
    for (size_t i = 0; i < n; i++)
        if (f.opcode == opcodes[i])
            return true;
    return false;
}

/* The IL says the FDE is an error because of an instruction with one of
 * `opcodes`, in the CIE or the FDE, and the libraries run it for the
 * lookup PC. */
bool engine_deviation_il_fails_at(const struct engine_mismatch *m,
                                  const enum sem_opcode *opcodes, size_t n)
{
    struct faulty f;
    if (!il_faulty(m, &f) || !f.run || !f.decoded)
        return false;
    for (size_t i = 0; i < n; i++)
        if (f.opcode == opcodes[i])
            return true;
    return false;
}

static void no_patch(uint8_t *bytes, size_t len, const struct sem_insn *insn)
{
    (void)bytes;
    (void)len;
    (void)insn;
}

/* The IL's error comes from an FDE instruction that the libraries do not
 * run for the lookup PC (it lies after it; one our decoder cannot read
 * included), and the engine unwound, or gave the answer of the row that
 * the program up to the lookup PC defines (an error of evaluating it:
 * memory fault, unknown register, expression error). */
bool engine_deviation_stops_at_lookup_pc(const struct engine_mismatch *m,
                                         enum engine_id id)
{
    struct faulty f;
    if (m->engine != id || m->item != ENGINE_ITEM_STATUS ||
        !il_faulty(m, &f) || f.in_cie || f.run)
        return false;
    if (m->got->status == CFI_OK)
        return true;
    struct cfi_frame *model = malloc(sizeof *model);
    bool explained = model && engine_deviation_eval_patched(m, no_patch,
                                                            model) &&
                     engine_deviation_same_item(m, model);
    free(model);
    return explained;
}

#define COUNT(array) (sizeof array / sizeof array[0])

bool engine_deviation_accepts_cfa_ops_on_expression(
    const struct engine_mismatch *m, enum engine_id id)
{
    static const enum sem_opcode cfa_rule_ops[] = {
        SEM_CFA_def_cfa_register, SEM_CFA_def_cfa_offset,
        SEM_CFA_def_cfa_offset_sf};
    return engine_deviation_accepts(m, id, false, cfa_rule_ops,
                                    COUNT(cfa_rule_ops));
}

static bool is_advance_op(enum sem_opcode opcode,
                          const enum sem_opcode *ops, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (opcode == ops[i] && opcode != SEM_CFA_set_loc)
            return true;
    return false;
}

/* An advance of the CIE's program (not set_loc, whose operand's size
 * depends on the encoding) overwritten with DW_CFA_nop bytes. */
static void cie_advance_as_nops(uint8_t *bytes, size_t len,
                                const struct sem_insn *insn)
{
    static const struct {
        uint8_t opcode;
        size_t size;
    } sizes[] = {{0x02, 2}, {0x03, 3}, {0x04, 5}, {0x1d, 9}};
    if (!insn->in_cie || insn->at >= len)
        return;
    size_t size = 0;
    if ((bytes[insn->at] & 0xc0) == 0x40)
        size = 1;
    for (size_t i = 0; i < COUNT(sizes); i++)
        if (bytes[insn->at] == sizes[i].opcode)
            size = sizes[i].size;
    for (size_t i = 0; i < size && insn->at + i < len; i++)
        bytes[insn->at + i] = 0x00;
}

bool engine_deviation_accepts_cie_restore_and_location(
    const struct engine_mismatch *m, enum engine_id id)
{
    static const enum sem_opcode restore_ops[] = {SEM_CFA_restore,
                                                  SEM_CFA_restore_extended};
    static const enum sem_opcode location_ops[] = {
        SEM_CFA_advance_loc, SEM_CFA_advance_loc1, SEM_CFA_advance_loc2,
        SEM_CFA_advance_loc4, SEM_CFA_MIPS_advance_loc8, SEM_CFA_set_loc};
    if (engine_deviation_accepts(m, id, true, restore_ops,
                                 COUNT(restore_ops)) ||
        engine_deviation_accepts(m, id, true, location_ops,
                                 COUNT(location_ops)))
        return true;
    /* An advance in the CIE changes no rule: the engine's answer is then
     * the row's with the CIE's advances read as nops (an error of
     * evaluating it). */
    struct faulty f;
    if (m->engine != id || m->item != ENGINE_ITEM_STATUS ||
        m->got->status == CFI_OK || !il_faulty(m, &f) || !f.in_cie ||
        !f.decoded || !is_advance_op(f.opcode, location_ops,
                                     COUNT(location_ops)))
        return false;
    struct cfi_frame *model = malloc(sizeof *model);
    bool explained = model &&
                     engine_deviation_eval_patched(m, cie_advance_as_nops,
                                                   model) &&
                     engine_deviation_same_item(m, model);
    free(model);
    return explained;
}

/* ------------------------------------------------------------------ */
/* The IL's answer under a library's reading                            */
/* ------------------------------------------------------------------ */

/* A library's deviation shows on more than the item it is about: a rule
 * read differently changes the memory read, so the status too. These
 * helpers compute what the library's reading gives for the whole
 * request, so that a predicate can check that the engine's answer on the
 * item is exactly that. */

/* `model` answers the mismatch's item as the engine did. */
bool engine_deviation_same_item(const struct engine_mismatch *m,
                                const struct cfi_frame *model)
{
    const struct cfi_frame *got = m->got;
    switch (m->item) {
    case ENGINE_ITEM_STATUS:
        return model->status == got->status &&
               (got->status != CFI_E_REG_UNKNOWN ||
                model->diag.reg == got->diag.reg);
    case ENGINE_ITEM_CFA:
        return model->status == CFI_OK && got->status == CFI_OK &&
               model->cfa == got->cfa;
    case ENGINE_ITEM_REG:
        return model->status == CFI_OK && got->status == CFI_OK &&
               m->reg < CFI_NREGS &&
               model->caller.status[m->reg] == got->caller.status[m->reg] &&
               (got->caller.status[m->reg] != CFI_REG_VALUE ||
                model->caller.value[m->reg] == got->caller.value[m->reg]);
    case ENGINE_ITEM_SIGNAL:
        return model->status == CFI_OK && got->status == CFI_OK &&
               model->signal_frame == got->signal_frame;
    }
    return false;
}

/* The engine's answer differs from the reference's on the item: the
 * predicates that compute a library's reading are meant for such items
 * only, and say so. */
bool engine_deviation_item_differs(const struct engine_mismatch *m)
{
    return !engine_deviation_same_item(m, m->expected);
}

/* The IL's answer (sem_eval_row) from its row at the lookup PC with
 * every rule passed through `edit`, which may rewrite it, or drop it by
 * returning false. */
bool engine_deviation_eval_edited_row(const struct engine_mismatch *m,
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
    sem_eval_row(m->file->arch, &row, m->request->callee, m->request->memory,
                 frame);
    return true;
}

/* A copy of a program with `patch` applied to each instruction. */
static uint8_t *patched_copy(const struct engine_mismatch *m, bool in_cie,
                             engine_deviation_patch_fn patch)
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

/* The first FDE instruction the libraries do not run: its offset. */
static bool first_not_run(const struct sem_insn *insn, bool run,
                          const void *env)
{
    if (run || insn->in_cie)
        return false;
    *(uint64_t *)env = insn->at;
    return true;
}

/* The length of the FDE program the libraries run for the lookup PC:
 * up to the advance that passes it, or the whole program. */
static size_t run_length(const struct engine_mismatch *m)
{
    uint64_t at = m->fde->instructions_len;
    walk(m, first_not_run, &at);
    return at < m->fde->instructions_len ? (size_t)at
                                         : m->fde->instructions_len;
}

/* The programs a library's reading gives: the CIE's, and the FDE's up to
 * `fde_run` (the part run for the lookup PC). */
struct read_programs {
    const uint8_t *cie;
    size_t cie_len;
    const uint8_t *fde;
    size_t fde_run;
};

/* The IL's answer (sem_eval_row on the row at the lookup PC, which the
 * last range of the program it translates then holds, then cfi.h step
 * 6) for the mismatch's FDE with `programs`. Where the programs do not
 * translate, the frame is that error: the library's reading fails
 * there too (a decoding error, an instruction it runs as cfi.h does). */
static bool eval_programs(const struct engine_mismatch *m,
                          const struct read_programs *programs,
                          struct cfi_frame *frame)
{
    struct cfi_cie cie = *m->fde->cie;
    struct cfi_fde fde = *m->fde;
    cie.instructions = programs->cie;
    cie.instructions_len = programs->cie_len;
    fde.instructions = programs->fde;
    fde.instructions_len = programs->fde_run;
    fde.cie = &cie;
    struct sem_arena *arena = sem_arena_new();
    if (!arena)
        return false;
    struct sem_fde_il il;
    struct cfi_diag diag;
    const struct sem_range *range = NULL;
    bool done = false;
    enum cfi_status status = sem_translate_fde(&fde, arena, &il, &diag);
    if (status != CFI_OK) {
        memset(frame, 0, sizeof *frame);
        frame->status = status;
        frame->diag = diag;
        frame->diag.message = "the program as the library reads it fails";
        done = true;
    } else if ((range = sem_fde_il_find(&il, lookup_pc(m)))) {
        /* As the adapters of libdwarf and libdw do: the row, then
         * cfi.h step 6. */
        if (sem_eval_row(cie.arch, range->row, m->request->callee,
                         m->request->memory, frame) == CFI_OK)
            sem_apply_return_column(cie.arch, frame, (unsigned)cie.ra_column,
                                    m->request->va_bits);
        done = true;
    }
    sem_arena_free(arena);
    return done;
}

/* The IL's answer when the CIE's program and the part of the FDE's the
 * libraries run are read with `patch` applied: a patched instruction
 * after the lookup PC, or one it makes malformed there, is not run. */
bool engine_deviation_eval_patched(const struct engine_mismatch *m,
                                   engine_deviation_patch_fn patch,
                                   struct cfi_frame *frame)
{
    if (!m->fde || !m->fde->cie)
        return false;
    uint8_t *cie_bytes = patched_copy(m, true, patch);
    uint8_t *fde_bytes = patched_copy(m, false, patch);
    bool done = false;
    if (cie_bytes && fde_bytes) {
        struct read_programs programs = {
            cie_bytes, m->fde->cie->instructions_len, fde_bytes,
            run_length(m)};
        done = eval_programs(m, &programs, frame);
    }
    free(cie_bytes);
    free(fde_bytes);
    return done;
}

/* A copy of a program where each one-byte instruction `expand` rewrites
 * is replaced by its sequence; *run becomes the offset in the copy of
 * the original offset *run. */
static uint8_t *expanded_copy(const struct engine_mismatch *m, bool in_cie,
                              engine_deviation_expand_fn expand,
                              size_t *len_out, size_t *run)
{
    const uint8_t *bytes = in_cie ? m->fde->cie->instructions
                                  : m->fde->instructions;
    size_t len = in_cie ? m->fde->cie->instructions_len
                        : m->fde->instructions_len;
    struct sem_program program;
    if (!decode(m, in_cie, &program))
        return NULL;
    size_t cap = len + program.count * ENGINE_DEVIATION_EXPAND_MAX + 1;
    uint8_t *copy = malloc(cap);
    size_t from = 0, to = 0, run_at = *run;
    for (size_t i = 0; copy && i < program.count; i++) {
        const struct sem_insn *insn = &program.insns[i];
        uint8_t seq[ENGINE_DEVIATION_EXPAND_MAX];
        size_t n = insn->at < len ? expand(m, insn, seq) : 0;
        if (n == 0)
            continue;
        memcpy(copy + to, bytes + from, (size_t)insn->at - from);
        to += (size_t)insn->at - from;
        memcpy(copy + to, seq, n);
        if (insn->at < run_at)
            *run += n - 1;
        to += n;
        from = (size_t)insn->at + 1;
    }
    if (copy) {
        memcpy(copy + to, bytes + from, len - from);
        *len_out = to + len - from;
    }
    sem_program_free(&program);
    return copy;
}

bool engine_deviation_eval_expanded(const struct engine_mismatch *m,
                                    engine_deviation_expand_fn expand,
                                    struct cfi_frame *frame)
{
    if (!m->fde || !m->fde->cie)
        return false;
    size_t cie_len = 0, fde_len = 0, cie_run = 0, fde_run = run_length(m);
    uint8_t *cie_bytes = expanded_copy(m, true, expand, &cie_len, &cie_run);
    uint8_t *fde_bytes = expanded_copy(m, false, expand, &fde_len, &fde_run);
    bool done = false;
    if (cie_bytes && fde_bytes) {
        struct read_programs programs = {cie_bytes, cie_len, fde_bytes,
                                         fde_run};
        done = eval_programs(m, &programs, frame);
    }
    free(cie_bytes);
    free(fde_bytes);
    return done;
}

/* The IL's answer when the instruction it fails at (decoded, run for
 * the lookup PC, not the last one decoded) is read as DW_CFA_nop bytes:
 * the reading of a library that runs it as nothing there, or whose
 * state it leaves is overwritten by a later instruction. */
bool engine_deviation_eval_faulty_as_nops(const struct engine_mismatch *m,
                                          struct cfi_frame *frame)
{
    struct faulty f;
    struct sem_program program;
    if (!m->fde || !m->fde->cie || !il_faulty(m, &f) || !f.run ||
        !f.decoded || !decode(m, f.in_cie, &program))
        return false;
    uint64_t end = 0;
    for (size_t i = 0; i + 1 < program.count; i++)
        if (program.insns[i].at == f.offset)
            end = program.insns[i + 1].at;
    sem_program_free(&program);
    const struct cfi_cie *cie = m->fde->cie;
    size_t len = f.in_cie ? cie->instructions_len : m->fde->instructions_len;
    uint8_t *copy = end > f.offset && end <= len ? malloc(len) : NULL;
    if (!copy)
        return false;
    memcpy(copy, f.in_cie ? cie->instructions : m->fde->instructions, len);
    memset(copy + f.offset, 0x00, (size_t)(end - f.offset));
    struct read_programs programs = {
        f.in_cie ? copy : cie->instructions, cie->instructions_len,
        f.in_cie ? m->fde->instructions : copy, run_length(m)};
    bool done = eval_programs(m, &programs, frame);
    free(copy);
    return done;
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
bool engine_deviation_stops_at_zero_length(const struct engine_mismatch *m,
                                           enum engine_id id)
{
    return m->engine == id && m->item == ENGINE_ITEM_STATUS && m->fde &&
           m->got->status == CFI_E_NO_FDE &&
           m->expected->status != CFI_E_NO_FDE && zero_length_before(m->fde);
}

/* ------------------------------------------------------------------ */
/* .eh_frame_hdr trusted                                                */
/* ------------------------------------------------------------------ */

/* Whether `addr` is the address of an FDE of .eh_frame that does not
 * cover `pc` (the libraries then answer "no FDE"). */
static bool fde_elsewhere(const struct cfi_file *file, uint64_t addr,
                          uint64_t pc)
{
    for (size_t i = 0; i < file->nfdes; i++) {
        const struct cfi_fde *fde = &file->fdes[i];
        if (fde->section == CFI_EH_FRAME &&
            file->eh_frame_addr + fde->offset == addr)
            return pc < fde->pc_begin || pc >= fde->pc_end;
    }
    return false;
}

/* The file has a searchable .eh_frame_hdr table, and where it leads for
 * the lookup PC is not the .eh_frame FDE cfi.h finds there: no entry
 * where .eh_frame has an FDE, an entry naming another FDE, or an address
 * that is no FDE. (An entry naming an FDE that does not cover the PC
 * gives "no FDE", as .eh_frame does when it has none; .debug_frame is
 * another lookup.) */
bool engine_deviation_trusts_eh_frame_hdr(const struct engine_mismatch *m,
                                          enum engine_id id)
{
    if (m->engine != id || !m->file || !m->file->eh_frame_hdr_addr)
        return false;
    uint64_t pc = lookup_pc(m), given = 0;
    bool table = false;
    bool entry = engine_hdr_lookup(m->file, pc, &table, &given);
    const struct cfi_fde *want = cfi_file_lookup_in(m->file, CFI_EH_FRAME, pc);
    if (!table)
        return false;
    if (!entry)
        return want != NULL;
    if (want)
        return given != m->file->eh_frame_addr + want->offset;
    return !fde_elsewhere(m->file, given, pc);
}
