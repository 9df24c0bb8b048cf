/* SPDX-License-Identifier: MIT */
/* oracle_libgcc.c — see oracle_libgcc.h.
 *
 * The signal handler reaches the child's state through a thread-local
 * pointer, set in the child (one thread) before each question. */
#define _GNU_SOURCE
#include "oracle_libgcc.h"

#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "engines/local_adapter.h"

/* The unwind ABI's (LSB, Itanium C++ ABI) reason codes used here. */
enum {
    GCC_URC_NO_REASON = 0,
    GCC_URC_FATAL_PHASE1_ERROR = 3,
    GCC_URC_END_OF_STACK = 5,
};

/* frame->code. */
enum gcc_code {
    GCC_ANSWERED = 0,
    GCC_NO_FDE = 1,        /* the trace ended at the frame asked about */
    GCC_MALFORMED = 2,     /* the frame asked about has no frame state */
    GCC_CALLER_FAILED = 3, /* the caller's own lookup failed first */
    GCC_LOST = 4,          /* the frame asked about never came */
};

typedef int (*gcc_trace_fn)(void *context, void *argument);

struct gcc_state {
    int (*backtrace)(gcc_trace_fn trace, void *argument);
    uint64_t (*get_ip)(void *context);
    uint64_t (*get_ip_info)(void *context, int *before);
    uint64_t (*get_cfa)(void *context);
    uint64_t (*get_gr)(void *context, int reg);
    const struct local_question *question;
    struct local_frame *frame;
    void *context;         /* the frame asked about's, once seen */
    int phase;             /* 0 before it, 1 at it, 2 caller read */
    unsigned frames;
    int code;              /* what _Unwind_Backtrace returned */
    sigjmp_buf back;
};

static _Thread_local struct gcc_state *current_gcc;

/* DWARF 0-16 → the ucontext's gregs. */
static const int gregs_of[LOCAL_NREGS] = {
    REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
    REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
    REG_RIP,
};

/* The caller's frame from libgcc's context of it. */
static void gcc_read_back(struct gcc_state *s, void *context)
{
    struct local_frame *frame = s->frame;
    uint32_t flags = s->question->flags;
    frame->cfa = s->get_cfa(context);
    for (int reg = 0; reg < 16; reg++) {
        if (reg == CFI_REG_RSP && (flags & LOCAL_FLAG_RSP_UNDEFINED))
            continue;
        frame->value[reg] = reg == CFI_REG_RSP &&
                                    !(flags & LOCAL_FLAG_RSP_RULE)
                                ? frame->cfa
                                : s->get_gr(context, reg);
        frame->known |= 1u << reg;
    }
    /* rip's own column, when it is not the return address's, is read
     * only to meet the fault its rule may make (cfi.h step 5). */
    s->get_gr(context, CFI_REG_RIP);
    frame->value[CFI_REG_RIP] = s->get_ip(context);
    frame->known |= 1u << CFI_REG_RIP;
    if (frame->value[CFI_REG_RIP] == 0)
        frame->undefined |= 1u << CFI_REG_RIP;
    int before = 0;
    s->get_ip_info(context, &before);
    frame->signal_frame = before != 0;
    frame->has_signal = 1;
    frame->code = GCC_ANSWERED;
    s->phase = 2;
}

static int gcc_trace(void *context, void *argument)
{
    struct gcc_state *s = argument;
    if (s->phase == 1) {
        gcc_read_back(s, context);
        return 1; /* stop */
    }
    if (s->get_ip(context) == s->question->ip) {
        s->phase = 1;
        s->context = context;
    } else if (++s->frames > 8) {
        return 1;
    }
    return GCC_URC_NO_REASON;
}

static void gcc_on_signal(int sig, siginfo_t *info, void *context)
{
    (void)sig;
    (void)info;
    struct gcc_state *s = current_gcc;
    ucontext_t *uc = context;
    for (unsigned reg = 0; reg < LOCAL_NREGS; reg++)
        uc->uc_mcontext.gregs[gregs_of[reg]] =
            (greg_t)s->question->value[reg];
    uc->uc_mcontext.gregs[REG_RIP] = (greg_t)s->question->ip;
    s->code = s->backtrace(gcc_trace, s);
    siglongjmp(s->back, 1); /* the ucontext is no one's to return to */
}

static const char *gcc_load(void **out, const struct cfi_file *file)
{
    void *lib = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return "cannot load libgcc_s.so.1";
    struct gcc_state *s = calloc(1, sizeof *s);
    if (!s)
        return "out of memory";
    void (*register_frame)(void *);
    *(void **)&register_frame = dlsym(lib, "__register_frame");
    *(void **)&s->backtrace = dlsym(lib, "_Unwind_Backtrace");
    *(void **)&s->get_ip = dlsym(lib, "_Unwind_GetIP");
    *(void **)&s->get_ip_info = dlsym(lib, "_Unwind_GetIPInfo");
    *(void **)&s->get_cfa = dlsym(lib, "_Unwind_GetCFA");
    *(void **)&s->get_gr = dlsym(lib, "_Unwind_GetGR");
    if (!register_frame || !s->backtrace || !s->get_ip || !s->get_ip_info ||
        !s->get_cfa || !s->get_gr)
        return "libgcc_s lacks a function the adapter needs";
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = gcc_on_signal;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGUSR2, &action, NULL) != 0)
        return "cannot install the signal handler";
    register_frame((void *)(uintptr_t)(LOCAL_BIAS + file->eh_frame_addr));
    current_gcc = s;
    *out = s;
    return NULL;
}

static void gcc_step(void *state, const struct local_question *question,
                     struct local_frame *frame)
{
    struct gcc_state *s = state;
    s->question = question;
    s->frame = frame;
    s->context = NULL;
    s->phase = 0;
    s->frames = 0;
    s->code = GCC_URC_NO_REASON;
    if (sigsetjmp(s->back, 1) == 0)
        raise(SIGUSR2);
    if (s->phase == 2)
        return;
    if (s->phase == 1)
        frame->code = s->code == GCC_URC_END_OF_STACK ? GCC_NO_FDE
                                                      : GCC_CALLER_FAILED;
    else
        frame->code = s->code == GCC_URC_FATAL_PHASE1_ERROR ? GCC_MALFORMED
                                                            : GCC_LOST;
}

/* A fault once the frame asked about is unwound (libgcc's IP is the
 * caller's now): its sigreturn check of the caller's code. */
static bool gcc_on_fault(void *state, struct local_frame *frame)
{
    (void)frame;
    struct gcc_state *s = state;
    if (s->phase != 1 || s->get_ip(s->context) == s->question->ip)
        return false;
    gcc_read_back(s, s->context);
    return true;
}

static const struct local_library gcc_library = {
    "libgcc", gcc_load, gcc_step, gcc_on_fault,
};

/* ------------------------------------------------------------------ */
/* The parent's side                                                    */
/* ------------------------------------------------------------------ */

enum cfi_status engine_libgcc_open(const struct cfi_file *file, void **self,
                                   struct cfi_diag *diag)
{
    return local_adapter_open(file, &gcc_library,
                              (struct local_adapter **)self, diag);
}

void engine_libgcc_close(void *self)
{
    local_adapter_close(self);
}

enum cfi_status engine_libgcc_answer(void *self,
                                     const struct cfi_request *request,
                                     struct engine_answer *answer)
{
    struct local_adapter *adapter = self;
    struct local_question question;
    struct local_frame frame;
    if (!local_adapter_prepare(adapter, request, 0, &question, answer) ||
        !local_adapter_ask(adapter, request, &question, &frame, answer))
        return answer->frame.status;
    switch ((enum gcc_code)frame.code) {
    case GCC_ANSWERED:
        return local_adapter_fill(&frame, answer);
    case GCC_NO_FDE:
        return engine_answer_error(answer, CFI_E_NO_FDE,
                                   "libgcc: no FDE covers the address", -1);
    case GCC_MALFORMED:
        return engine_answer_error(answer, CFI_E_MALFORMED,
                                   "libgcc: cannot build the frame state",
                                   -1);
    case GCC_CALLER_FAILED:
        return engine_answer_not_comparable(
            answer, "libgcc: the caller's own FDE lookup failed before the "
                    "caller's registers could be read");
    default:
        return engine_answer_not_comparable(
            answer, "libgcc: the frame asked about never came in the trace");
    }
}
