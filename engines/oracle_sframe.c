/* SPDX-License-Identifier: MIT */
/* oracle_sframe.c — see oracle_sframe.h. */
#include "oracle_sframe.h"

#include <string.h>

#include "sframe/sframe.h"

enum cfi_status engine_sframe_open(const struct cfi_file *file, void **self,
                                   struct cfi_diag *diag)
{
    struct sframe_table *table = NULL;
    enum cfi_status status = sframe_open(file, &table, diag);
    if (status == CFI_E_NO_CFI)
        return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                        "sframe: no .sframe section");
    *self = table;
    return status;
}

enum cfi_status engine_sframe_answer(void *self,
                                     const struct cfi_request *request,
                                     struct engine_answer *answer)
{
    const struct sframe_table *table = self;
    engine_answer_reset(answer);
    uint64_t pc = cfi_lookup_pc(request->pc, request->caller_frame);
    if (!sframe_lookup(table, pc)) {
        answer->comparable = false;
        answer->not_comparable_reason = "sframe: no SFrame FDE covers the "
                                        "address";
        return CFI_E_NO_FDE;
    }
    memset(answer->reg_comparable, false, sizeof answer->reg_comparable);
    answer->reg_comparable[CFI_REG_RBP] = true;
    answer->reg_comparable[CFI_REG_RIP] = true;
    answer->signal_comparable = false;
    return sframe_unwind(table, request, &answer->frame);
}

void engine_sframe_close(void *self)
{
    sframe_free(self);
}
