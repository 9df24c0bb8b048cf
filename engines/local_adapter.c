/* SPDX-License-Identifier: MIT */
/* local_adapter.c — see local_adapter.h. */
#include "local_adapter.h"

#include <stdlib.h>
#include <string.h>

#include "cfi/arch.h"
#include "engines/compare.h"

enum cfi_status local_adapter_open(const struct cfi_file *file,
                                   const struct local_library *library,
                                   struct local_adapter **out,
                                   struct cfi_diag *diag)
{
    *out = NULL;
    struct local_adapter *adapter = calloc(1, sizeof *adapter);
    if (!adapter)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    adapter->file = file;
    if (sem_file_il_build(file, &adapter->il) != CFI_OK) {
        free(adapter);
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET,
                        "cannot build the file's IL");
    }
    enum cfi_status status =
        local_image_open(file, library, &adapter->image, diag);
    if (status != CFI_OK) {
        local_adapter_close(adapter);
        return status;
    }
    *out = adapter;
    return CFI_OK;
}

void local_adapter_close(struct local_adapter *adapter)
{
    if (!adapter)
        return;
    local_image_close(adapter->image);
    sem_file_il_free(adapter->il);
    free(adapter);
}

/* ------------------------------------------------------------------ */
/* Before asking                                                        */
/* ------------------------------------------------------------------ */

/* A reader that notes whether a read touches the child's mappings. */
struct recorder {
    struct cfi_memory base;
    const struct local_image *image;
    bool taken;
};

static enum cfi_status recorder_read(void *env, uint64_t addr, unsigned size,
                                     uint64_t *value)
{
    struct recorder *r = env;
    if (local_image_taken(r->image, addr, size))
        r->taken = true;
    return r->base.read(r->base.env, addr, size, value);
}

/* Whether the reference's frame depends on rip being `ip` rather than the
 * request's, or reads the child's own memory. NULL, or the reason. */
static const char *reference_check(const struct local_adapter *adapter,
                                   const struct cfi_request *request,
                                   uint64_t ip)
{
    struct recorder recorder = {request->memory, adapter->image, false};
    struct cfi_request asked = *request;
    asked.memory = (struct cfi_memory){recorder_read, &recorder};
    struct cfi_frame plain, biased;
    sem_unwind(adapter->il, &asked, &plain);
    struct cfi_regs callee = *request->callee;
    cfi_regs_set(&callee, CFI_REG_RIP, ip);
    asked.callee = &callee;
    sem_unwind(adapter->il, &asked, &biased);
    if (recorder.taken)
        return local_outcome_reason(LOCAL_TAKEN);
    if (!engine_frames_agree(&plain, &biased))
        return "local unwinder: the image is mapped at a bias, and a value "
               "of the frame depends on rip";
    return NULL;
}

/* Why the FDE at `pc` cannot be asked about at pc + after, or NULL. */
static const char *fde_check(const struct cfi_file *file, uint64_t pc,
                             unsigned after)
{
    const char *overlap = engine_overlap_reason(file, pc);
    if (overlap)
        return overlap;
    const struct cfi_fde *fde = cfi_file_lookup_in(file, CFI_EH_FRAME, pc);
    if (after && cfi_file_lookup_in(file, CFI_EH_FRAME, pc + after) != fde)
        return "local unwinder: the library would look the FDE up at the "
               "address after the lookup PC, which another FDE or none "
               "covers";
    if (!fde)
        return cfi_file_lookup(file, pc)
                   ? "local unwinder: the FDE is in .debug_frame, which "
                     "the library is not given"
                   : NULL;
    if ((fde->cie->fde_encoding & 0x70) != CFI_PE_PCREL)
        return "local unwinder: the FDE's addresses are not pc-relative, "
               "so the library would see them without the image's bias";
    return NULL;
}

/* The row at the lookup PC, or NULL. */
static const struct sem_row *row_at(const struct local_adapter *adapter,
                                    uint64_t pc)
{
    const struct cfi_fde *fde =
        cfi_file_lookup_in(adapter->file, CFI_EH_FRAME, pc);
    if (!fde)
        return NULL;
    size_t index = (size_t)(fde - adapter->file->fdes);
    if (adapter->il->status[index] != CFI_OK)
        return NULL;
    const struct sem_range *range =
        sem_fde_il_find(&adapter->il->fdes[index], pc);
    return range ? range->row : NULL;
}

/* Whether a rule of that kind carries a callee register over. */
static bool carries(enum sem_rule_kind kind)
{
    return kind == SEM_RULE_UNSPECIFIED || kind == SEM_RULE_UNDEFINED ||
           kind == SEM_RULE_SAME_VALUE || kind == SEM_RULE_REGISTER;
}

/* Registers the libraries cannot say "undefined" for (local_adapter.h). */
static void narrow_registers(const struct sem_row *row,
                             struct engine_answer *answer, uint32_t *flags,
                             uint32_t *carried)
{
    for (unsigned reg = LOCAL_NREGS; reg < CFI_NREGS; reg++)
        answer->reg_comparable[reg] = false;
    if (!row)
        return;
    for (unsigned reg = 0; reg < LOCAL_NREGS; reg++) {
        enum sem_rule_kind kind = sem_row_rule(row, reg).kind;
        if (carries(kind))
            *carried |= 1u << reg;
        bool loses = cfi_arch_default(&cfi_arch_x86_64, reg) ==
                     CFI_DEFAULT_UNDEFINED;
        if ((kind == SEM_RULE_UNSPECIFIED && loses) ||
            (kind == SEM_RULE_UNDEFINED && reg != CFI_REG_RIP))
            answer->reg_comparable[reg] = false;
    }
    enum sem_rule_kind rsp = sem_row_rule(row, CFI_REG_RSP).kind;
    if (rsp == SEM_RULE_UNDEFINED)
        *flags |= LOCAL_FLAG_RSP_UNDEFINED;
    else if (rsp != SEM_RULE_UNSPECIFIED)
        *flags |= LOCAL_FLAG_RSP_RULE;
}

bool local_adapter_prepare(struct local_adapter *adapter,
                           const struct cfi_request *request, unsigned after,
                           struct local_question *question,
                           struct engine_answer *answer)
{
    engine_answer_reset(answer);
    memset(question, 0, sizeof *question);
    adapter->unknown = 0;
    for (unsigned reg = 0; reg < LOCAL_NREGS; reg++) {
        uint8_t status = request->callee->status[reg];
        if (status == CFI_REG_UNKNOWN && reg != CFI_REG_RIP) {
            adapter->unknown |= 1u << reg;
            question->value[reg] = LOCAL_POISON_A + ((uint64_t)reg << 20);
        } else if (status != CFI_REG_VALUE) {
            engine_answer_not_comparable(
                answer, "local unwinder: a callee register of 0-16 is "
                        "undefined, and a process's registers all hold "
                        "values");
            return false;
        } else {
            question->value[reg] = request->callee->value[reg];
        }
    }
    uint64_t pc = cfi_lookup_pc(request->pc, request->caller_frame);
    question->ip = pc + after + LOCAL_BIAS;
    question->value[CFI_REG_RIP] = question->ip;
    const char *why = fde_check(adapter->file, pc, after);
    if (!why)
        why = reference_check(adapter, request, question->ip);
    if (why) {
        engine_answer_not_comparable(answer, why);
        return false;
    }
    adapter->carried = 0;
    narrow_registers(row_at(adapter, pc), answer, &question->flags,
                     &adapter->carried);
    return true;
}

static bool row_high(const struct sem_row *row)
{
    if (row->cfa.kind == SEM_CFA_RULE_REG_OFFSET &&
        row->cfa.reg >= LOCAL_NREGS)
        return true;
    for (uint32_t i = 0; i < row->nrules; i++)
        if (row->rules[i].reg >= LOCAL_NREGS ||
            (row->rules[i].rule.kind == SEM_RULE_REGISTER &&
             row->rules[i].rule.reg >= LOCAL_NREGS))
            return true;
    return false;
}

bool local_adapter_high_registers(struct local_adapter *adapter,
                                  const struct cfi_request *request)
{
    uint64_t pc = cfi_lookup_pc(request->pc, request->caller_frame);
    const struct cfi_fde *fde =
        cfi_file_lookup_in(adapter->file, CFI_EH_FRAME, pc);
    if (!fde)
        return false;
    if (fde == adapter->scanned)
        return adapter->scanned_high;
    size_t index = (size_t)(fde - adapter->file->fdes);
    const struct sem_fde_il *il = &adapter->il->fdes[index];
    bool high = false;
    for (size_t i = 0; adapter->il->status[index] == CFI_OK &&
                       i < il->nranges && !high; i++)
        high = row_high(il->ranges[i].row);
    adapter->scanned = fde;
    adapter->scanned_high = high;
    return high;
}

/* ------------------------------------------------------------------ */
/* Asking, and the answer                                               */
/* ------------------------------------------------------------------ */

static const char unknown_reason[] =
    "local unwinder: the frame depends on a callee register the request "
    "left unknown in a way the library cannot say (the CFA, a read)";

/* The same question with the unknown registers' other poison: the
 * registers whose values differ are unknown. False: not comparable. */
static bool ask_again(struct local_adapter *adapter,
                      const struct cfi_request *request,
                      const struct local_question *question,
                      struct local_frame *frame)
{
    struct local_question other = *question;
    for (unsigned reg = 0; reg < LOCAL_NREGS; reg++)
        if (adapter->unknown & 1u << reg)
            other.value[reg] = LOCAL_POISON_B + ((uint64_t)reg << 20);
    struct local_frame second;
    local_image_ask(adapter->image, &other, request->memory, &second);
    if (second.outcome != frame->outcome || second.code != frame->code)
        return false;
    if (frame->outcome != LOCAL_DONE)
        return frame->outcome != LOCAL_FAULT ||
               second.fault_addr == frame->fault_addr;
    if (second.cfa != frame->cfa || second.undefined != frame->undefined)
        return false;
    for (unsigned reg = 0; reg < LOCAL_NREGS; reg++) {
        if (!(frame->known & 1u << reg) || !(second.known & 1u << reg) ||
            second.value[reg] == frame->value[reg])
            continue;
        if (!(adapter->carried & 1u << reg))
            return false;
        frame->unknown |= 1u << reg;
    }
    return true;
}

bool local_adapter_ask(struct local_adapter *adapter,
                       const struct cfi_request *request,
                       const struct local_question *question,
                       struct local_frame *frame,
                       struct engine_answer *answer)
{
    local_image_ask(adapter->image, question, request->memory, frame);
    if (adapter->unknown &&
        !ask_again(adapter, request, question, frame)) {
        engine_answer_not_comparable(answer, unknown_reason);
        return false;
    }
    switch ((enum local_outcome)frame->outcome) {
    case LOCAL_DONE:
        return true;
    case LOCAL_FAULT:
        engine_answer_error(answer, CFI_E_MEMORY,
                            "local unwinder: the library read memory that "
                            "faults", -1);
        return false;
    default:
        engine_answer_not_comparable(
            answer, local_outcome_reason((enum local_outcome)frame->outcome));
        return false;
    }
}

enum cfi_status local_adapter_fill(const struct local_frame *frame,
                                   struct engine_answer *answer)
{
    struct cfi_frame *out = &answer->frame;
    memset(out->caller.status, CFI_REG_UNDEFINED, sizeof out->caller.status);
    for (unsigned reg = 0; reg < LOCAL_NREGS; reg++) {
        if (frame->undefined & 1u << reg)
            continue;
        if (frame->unknown & 1u << reg)
            out->caller.status[reg] = CFI_REG_UNKNOWN;
        else if (frame->known & 1u << reg)
            cfi_regs_set(&out->caller, reg, frame->value[reg]);
        else
            answer->reg_comparable[reg] = false;
    }
    out->cfa = frame->cfa;
    out->signal_frame = frame->signal_frame != 0;
    answer->signal_comparable = frame->has_signal != 0;
    out->status = CFI_OK;
    return CFI_OK;
}
