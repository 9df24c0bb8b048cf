/* SPDX-License-Identifier: MIT */
/* oracle_llvmunwind.c — see oracle_llvmunwind.h. */
#define _GNU_SOURCE
#include "oracle_llvmunwind.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "engines/local_adapter.h"

/* LLVM libunwind's ABI (libunwind.h, x86-64): unw_word_t is 64 bits,
 * unw_context_t 21 words and unw_cursor_t 33 (room is left), the
 * registers 0-15 are DWARF's, and these: */
enum {
    LLVM_REG_IP = -1,
    LLVM_REG_SP = -2,
    LLVM_CONTEXT_WORDS = 64,
    LLVM_CURSOR_WORDS = 128,
};

/* unw_proc_info_t, and room. */
struct llvm_proc_info {
    uint64_t start_ip, end_ip, lsda, handler, gp, flags;
    uint32_t format, unwind_info_size;
    uint64_t unwind_info, extra;
    uint64_t room[8];
};

/* The child's side. */
struct llvm_state {
    int (*getcontext)(void *context);
    int (*init_local)(void *cursor, void *context);
    int (*set_reg)(void *cursor, int reg, uint64_t value);
    int (*get_reg)(void *cursor, int reg, uint64_t *value);
    int (*step)(void *cursor);
    int (*get_proc_info)(void *cursor, struct llvm_proc_info *info);
    int (*is_signal_frame)(void *cursor);
    bool stepping;
    uint64_t ip;
    uint64_t context[LLVM_CONTEXT_WORDS];
    uint64_t cursor[LLVM_CURSOR_WORDS];
};

/* code, when the IP has no unwind information. */
#define LLVM_NO_INFO (-100000)

/* AddressSanitizer refuses RTLD_DEEPBIND (its interceptors would be
 * bypassed); the library's own calls go to its hidden __unw_* then. */
#if defined(__SANITIZE_ADDRESS__)
#define LLVM_DLOPEN_FLAGS (RTLD_NOW | RTLD_LOCAL)
#else
#define LLVM_DLOPEN_FLAGS (RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND)
#endif

static const char *llvm_load(void **out, const struct cfi_file *file)
{
    void *lib = dlopen(CFISEM_LLVMUNWIND_PATH, LLVM_DLOPEN_FLAGS);
    if (!lib)
        return "cannot load " CFISEM_LLVMUNWIND_PATH " (package libunwind-14)";
    struct llvm_state *s = calloc(1, sizeof *s);
    void (*add)(uint64_t);
    *(void **)&add = dlsym(lib, "__unw_add_dynamic_fde");
    if (!s)
        return "out of memory";
    *(void **)&s->getcontext = dlsym(lib, "unw_getcontext");
    *(void **)&s->init_local = dlsym(lib, "unw_init_local");
    *(void **)&s->set_reg = dlsym(lib, "unw_set_reg");
    *(void **)&s->get_reg = dlsym(lib, "unw_get_reg");
    *(void **)&s->step = dlsym(lib, "unw_step");
    *(void **)&s->get_proc_info = dlsym(lib, "unw_get_proc_info");
    *(void **)&s->is_signal_frame = dlsym(lib, "unw_is_signal_frame");
    if (!add || !s->getcontext || !s->init_local || !s->set_reg ||
        !s->get_reg || !s->step || !s->get_proc_info || !s->is_signal_frame)
        return "LLVM libunwind lacks a function the adapter needs";
    for (size_t i = 0; i < file->nfdes; i++)
        if (file->fdes[i].cie->section == CFI_EH_FRAME)
            add(LOCAL_BIAS + file->eh_frame_addr + file->fdes[i].offset);
    *out = s;
    return NULL;
}

/* The caller's registers, as the cursor holds them. */
static void llvm_read_back(struct llvm_state *s, struct local_frame *frame)
{
    for (int reg = 0; reg < 16; reg++)
        if (s->get_reg(s->cursor, reg, &frame->value[reg]) == 0)
            frame->known |= 1u << reg;
    if (s->get_reg(s->cursor, LLVM_REG_IP, &frame->value[16]) == 0)
        frame->known |= 1u << 16;
    if (frame->value[16] == 0) /* the end of the stack */
        frame->undefined |= 1u << 16;
    s->get_reg(s->cursor, LLVM_REG_SP, &frame->cfa);
    frame->signal_frame = s->is_signal_frame(s->cursor) > 0;
    frame->has_signal = 1;
}

static void llvm_step(void *state, const struct local_question *question,
                      struct local_frame *frame)
{
    struct llvm_state *s = state;
    s->stepping = false;
    s->ip = question->ip;
    s->getcontext(s->context);
    if (s->init_local(s->cursor, s->context) != 0) {
        frame->code = LLVM_NO_INFO;
        return;
    }
    for (int reg = 0; reg < 16; reg++)
        s->set_reg(s->cursor, reg, question->value[reg]);
    s->set_reg(s->cursor, LLVM_REG_IP, question->ip);
    struct llvm_proc_info info;
    if (s->get_proc_info(s->cursor, &info) != 0 || info.end_ip == 0) {
        frame->code = LLVM_NO_INFO;
        return;
    }
    s->stepping = true;
    frame->code = s->step(s->cursor);
    s->stepping = false;
    if (frame->code >= 0)
        llvm_read_back(s, frame);
}

/* A fault after the step had set the caller's IP (the lookup of the
 * caller's own information): the frame is complete. */
static bool llvm_on_fault(void *state, struct local_frame *frame)
{
    struct llvm_state *s = state;
    uint64_t ip;
    if (!s->stepping || s->get_reg(s->cursor, LLVM_REG_IP, &ip) != 0 ||
        ip == s->ip)
        return false;
    frame->code = 0;
    llvm_read_back(s, frame);
    return true;
}

static const struct local_library llvm_library = {
    "llvmunwind", llvm_load, llvm_step, llvm_on_fault,
};

/* ------------------------------------------------------------------ */
/* The parent's side                                                    */
/* ------------------------------------------------------------------ */

enum cfi_status engine_llvmunwind_open(const struct cfi_file *file,
                                       void **self, struct cfi_diag *diag)
{
    return local_adapter_open(file, &llvm_library,
                              (struct local_adapter **)self, diag);
}

void engine_llvmunwind_close(void *self)
{
    local_adapter_close(self);
}

enum cfi_status engine_llvmunwind_answer(void *self,
                                         const struct cfi_request *request,
                                         struct engine_answer *answer)
{
    struct local_adapter *adapter = self;
    struct local_question question;
    struct local_frame frame;
    if (!local_adapter_prepare(adapter, request, 1, &question, answer))
        return answer->frame.status;
    if (local_adapter_high_registers(adapter, request))
        return engine_answer_not_comparable(
            answer, "llvmunwind: the FDE names a register above 16, outside "
                    "the library's register set (it rejects the FDE)");
    if (!local_adapter_ask(adapter, request, &question, &frame, answer))
        return answer->frame.status;
    if (frame.code == LLVM_NO_INFO)
        return engine_answer_error(answer, CFI_E_NO_FDE,
                                   "llvmunwind: no unwind information at "
                                   "the address", -1);
    if (frame.code < 0)
        return engine_answer_error(answer, CFI_E_MALFORMED,
                                   "llvmunwind: unw_step failed", -1);
    answer->cfa_comparable = !(question.flags & LOCAL_FLAG_RSP_RULE);
    return local_adapter_fill(&frame, answer);
}
