/* SPDX-License-Identifier: MIT */
/* ask.h — one request asked of one engine in a child process, watched:
 * what `cfisem unwind` does with the engines whose code is not cfisem's
 * (the outside libraries, an eh_elf), so that their crash or hang is
 * reported, never a crash or a hang of cfisem.
 *
 * The engine is opened and asked in the child; the answer comes back
 * through a pipe with its texts copied, since they may point into a
 * library the parent never loaded. */
#ifndef CFISEM_ENGINES_ASK_H
#define CFISEM_ENGINES_ASK_H

#include "engines/engine.h"

enum engine_ask_end {
    ENGINE_ASK_ANSWERED,   /* *answer holds the engine's answer */
    ENGINE_ASK_OPEN_FAILED,  /* the engine could not be opened: open_diag */
    ENGINE_ASK_CRASHED,    /* the child died: signal (0: it exited badly) */
    ENGINE_ASK_TIMED_OUT,  /* no answer within the timeout: the child was
                              killed */
};

#define ENGINE_ASK_TEXT_MAX 256

struct engine_ask_result {
    enum engine_ask_end end;
    struct engine_answer answer; /* its texts point into the arrays below */
    struct cfi_diag open_diag;
    int signal;
    char message[ENGINE_ASK_TEXT_MAX];
    char reason[ENGINE_ASK_TEXT_MAX];
};

/* Opens engine `id` for `file` with `config`, asks `request`, in a child
 * process given `timeout_seconds` (> 0) to answer. *result is filled in
 * every case; false only when no child could be started (then nothing
 * was asked). */
bool engine_ask_isolated(enum engine_id id, const struct cfi_file *file,
                         const struct engine_config *config,
                         const struct cfi_request *request,
                         double timeout_seconds,
                         struct engine_ask_result *result);

/* In a child process that runs code cfisem does not trust: the signals
 * of a crash get their default action back, so that the crash ends the
 * child with that signal (which the parent names) rather than with a
 * sanitizer's report and exit status (the sanitizers install handlers
 * of their own). */
void engine_child_default_signals(void);

/* "SIGSEGV", "SIGABRT", ... or "a signal". */
const char *engine_signal_name(int signal);

#endif
