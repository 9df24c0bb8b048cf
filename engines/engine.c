/* SPDX-License-Identifier: MIT */
/* engine.c — see engine.h. Our engines (il, interp, compiled) are wrapped
 * here; the outside ones go through their adapters
 * (engines/oracle_libdwarf.h, engines/oracle_libdw.h,
 * engines/oracle_libunwind.h), each of the form open / answer / close. An engine that is not part of this build opens with
 * CFI_E_UNSUPPORTED and the message "not built yet": the harness counts
 * its requests as errors and says so, it never skips it silently. */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include "compile/cg.h"
#include "engines/oracle_gdb.h"
#include "engines/oracle_libdw.h"
#include "engines/oracle_libdwarf.h"
#include "engines/oracle_libgcc.h"
#include "engines/oracle_libunwind.h"
#include "engines/oracle_llvmunwind.h"
#include "engines/oracle_sframe.h"
#include "interp/interp.h"
#include "semantics/sem.h"

static const struct {
    const char *name;
    const char *summary;
} engines[ENGINE_COUNT] = {
#define ENGINE_ROW(name, summary) {#name, summary},
    ENGINES(ENGINE_ROW)
#undef ENGINE_ROW
};

const char *engine_name(enum engine_id id)
{
    return (unsigned)id < ENGINE_COUNT ? engines[id].name : "?";
}

const char *engine_summary(enum engine_id id)
{
    return (unsigned)id < ENGINE_COUNT ? engines[id].summary : "?";
}

int engine_parse(const char *name, size_t len)
{
    for (int id = 0; id < ENGINE_COUNT; id++)
        if (strlen(engines[id].name) == len &&
            !memcmp(engines[id].name, name, len))
            return id;
    return -1;
}

void engine_answer_all_comparable(struct engine_answer *answer)
{
    answer->comparable = true;
    answer->not_comparable_reason = NULL;
    answer->cfa_comparable = true;
    answer->signal_comparable = true;
    memset(answer->reg_comparable, true, sizeof answer->reg_comparable);
}

void engine_answer_reset(struct engine_answer *answer)
{
    memset(&answer->frame, 0, sizeof answer->frame);
    answer->frame.diag = (struct cfi_diag){CFI_OK, NULL, CFI_NO_OFFSET, -1};
    engine_answer_all_comparable(answer);
}

enum cfi_status engine_answer_error(struct engine_answer *answer,
                                    enum cfi_status status, const char *message,
                                    int reg)
{
    answer->frame.status = status;
    answer->frame.diag = (struct cfi_diag){status, message, CFI_NO_OFFSET, reg};
    return status;
}

enum cfi_status engine_answer_not_comparable(struct engine_answer *answer,
                                             const char *reason)
{
    answer->comparable = false;
    answer->not_comparable_reason = reason;
    return engine_answer_error(answer, CFI_E_UNSUPPORTED, reason, -1);
}

static bool covers(const struct cfi_fde *fde, uint64_t pc)
{
    return fde->pc_begin <= pc && pc < fde->pc_end;
}

const char *engine_overlap_reason(const struct cfi_file *file,
                                  uint64_t lookup_pc)
{
    for (size_t i = 0; i < file->noverlaps; i++)
        if (covers(file->overlaps[i].first, lookup_pc) ||
            covers(file->overlaps[i].second, lookup_pc))
            return "the FDE at the address overlaps another (DWARF defines "
                   "no choice among overlapping FDEs)";
    return NULL;
}

/* ------------------------------------------------------------------ */
/* il: the IL evaluator, each FDE translated when it is first asked     */
/* ------------------------------------------------------------------ */

/* The IL of the FDE asked last is kept (sem_unwind_memo): one request
 * translates one FDE, not the whole file, and the harness, which asks
 * PCs FDE by FDE, translates each FDE once. */
struct il_engine {
    const struct cfi_file *file;
    struct sem_memo *memo;
};

static enum cfi_status il_unwind(void *self, const struct cfi_request *request,
                                 struct engine_answer *answer)
{
    struct il_engine *engine = self;
    engine_answer_all_comparable(answer);
    return sem_unwind_memo(engine->file, request, &answer->frame,
                           engine->memo);
}

static void il_close(void *self)
{
    struct il_engine *engine = self;
    sem_memo_free(engine->memo);
    free(engine);
}

static enum cfi_status il_open(const struct cfi_file *file,
                               struct engine_instance *engine,
                               struct cfi_diag *diag)
{
    struct il_engine *self = malloc(sizeof *self);
    struct sem_memo *memo = sem_memo_new();
    if (!self || !memo) {
        free(self);
        sem_memo_free(memo);
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    }
    self->file = file;
    self->memo = memo;
    engine->self = self;
    engine->unwind = il_unwind;
    engine->close = il_close;
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* interp: the direct interpreter, which needs nothing prepared         */
/* ------------------------------------------------------------------ */

/* The row of the last request is kept (interp_unwind_memo): the diff
 * harness asks each PC in several states one after the other, and the
 * row depends on the PC alone; each new PC runs both programs again. */
struct interp_engine {
    const struct cfi_file *file;
    struct interp_memo *memo;
};

static enum cfi_status interp_engine_unwind(void *self,
                                            const struct cfi_request *request,
                                            struct engine_answer *answer)
{
    struct interp_engine *engine = self;
    engine_answer_all_comparable(answer);
    return interp_unwind_memo(engine->file, request, &answer->frame,
                              engine->memo);
}

static void interp_close(void *self)
{
    struct interp_engine *engine = self;
    free(engine->memo);
    free(engine);
}

static enum cfi_status interp_open(const struct cfi_file *file,
                                   struct engine_instance *engine,
                                   struct cfi_diag *diag)
{
    struct interp_engine *self = malloc(sizeof *self);
    struct interp_memo *memo = malloc(interp_memo_size());
    if (!self || !memo) {
        free(self);
        free(memo);
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    }
    interp_memo_clear(memo);
    self->file = file;
    self->memo = memo;
    engine->self = self;
    engine->unwind = interp_engine_unwind;
    engine->close = interp_close;
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* The outside engines, through their adapters                          */
/* ------------------------------------------------------------------ */

static enum cfi_status not_built(struct cfi_diag *diag)
{
    return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                    "not built yet: this engine is not part of this build");
}

struct adapter {
    enum cfi_status (*open)(const struct cfi_file *file, void **self,
                            struct cfi_diag *diag);
    enum cfi_status (*answer)(void *self, const struct cfi_request *request,
                              struct engine_answer *answer);
    void (*close)(void *self);
    void (*answer_batch)(void *self, struct engine_batch_entry *entries,
                         size_t n, const struct engine_batch_progress *progress);
};

static const struct adapter adapters[ENGINE_COUNT] = {
    [ENGINE_libdwarf] = {engine_libdwarf_open, engine_libdwarf_answer,
                              engine_libdwarf_close},
    [ENGINE_libdw] = {engine_libdw_open, engine_libdw_answer,
                           engine_libdw_close},
    [ENGINE_libunwind] = {engine_libunwind_open, engine_libunwind_answer,
                               engine_libunwind_close},
    [ENGINE_llvmunwind] = {engine_llvmunwind_open, engine_llvmunwind_answer,
                           engine_llvmunwind_close},
    [ENGINE_libgcc] = {engine_libgcc_open, engine_libgcc_answer,
                       engine_libgcc_close},
    [ENGINE_sframe] = {engine_sframe_open, engine_sframe_answer,
                            engine_sframe_close},
    [ENGINE_gdb] = {engine_gdb_open, engine_gdb_answer, engine_gdb_close,
                    engine_gdb_answer_batch},
};

/* What an outside engine answers for a file of an architecture its
 * adapter does not read (libunwind is built for the host, x86-64): no
 * request of the file is comparable. */
static enum cfi_status other_architecture(void *self,
                                          const struct cfi_request *request,
                                          struct engine_answer *answer)
{
    (void)self;
    (void)request;
    engine_answer_reset(answer);
    return engine_answer_not_comparable(answer, "another architecture: "
                                        "this engine reads x86-64 only");
}

static enum cfi_status adapter_open(enum engine_id id,
                                    const struct cfi_file *file,
                                    struct engine_instance *engine,
                                    struct cfi_diag *diag)
{
    const struct adapter *adapter = &adapters[id];
    if (!adapter->open)
        return not_built(diag);
    /* libdwarf and libdw read the CFI of any machine: libdw chooses its
     * ABI back end from the file's e_machine, and the libdwarf adapter
     * takes the defaults from the file's descriptor. */
    bool reads_arch = file->arch == &cfi_arch_x86_64 ||
                      (file->arch == &cfi_arch_aarch64 &&
                       (id == ENGINE_libdwarf || id == ENGINE_libdw));
    if (!reads_arch) {
        engine->unwind = other_architecture;
        return CFI_OK;
    }
    enum cfi_status status = adapter->open(file, &engine->self, diag);
    if (status != CFI_OK)
        return status;
    engine->unwind = adapter->answer;
    engine->close = adapter->close;
    engine->unwind_batch = adapter->answer_batch;
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* compiled: an eh_elf of the full ABI, given or built into a cache      */
/* ------------------------------------------------------------------ */

/* An eh_elf and the registers it reports: those of its file's
 * architecture (eh_elf.h: x86-64's 0-16, AArch64's 0-34). */
struct compiled_engine {
    struct cg_eh_elf *eh;
    unsigned nreported;
};

static enum cfi_status compiled_unwind(void *self,
                                       const struct cfi_request *request,
                                       struct engine_answer *answer)
{
    const struct compiled_engine *engine = self;
    engine_answer_all_comparable(answer);
    memset(answer->reg_comparable + engine->nreported, false,
           CFI_NREGS - engine->nreported);
    return cg_unwind(engine->eh, request, &answer->frame);
}

static void compiled_close(void *self)
{
    struct compiled_engine *engine = self;
    cg_unload(engine->eh);
    free(engine);
}

static enum cfi_status compiled_open(const struct cfi_file *file,
                                     const struct engine_config *config,
                                     struct engine_instance *engine,
                                     struct cfi_diag *diag)
{
    char *built_path = NULL;
    const char *path = config ? config->eh_elf_path : NULL;
    if (!path) {
        struct cg_build_options options = {NULL, 0, true};
        bool built;
        enum cfi_status status = cg_cached_eh_elf(
            file, config ? config->cache_dir : NULL, CG_ABI_FULL, &options,
            &built_path, &built, diag);
        if (status != CFI_OK)
            return status;
        path = built_path;
    }
    /* CFI from memory has no file an eh_elf could be stale against. */
    struct eh_elf_object_id object;
    struct cg_eh_elf *eh;
    enum cfi_status status = cg_file_object_id(file, &object, diag);
    if (status == CFI_OK)
        status = object.kind == EH_ELF_OBJECT_ID_NONE
                     ? cg_load(path, &eh, diag)
                     : cg_load_for(path, &object, &eh, NULL, diag);
    free(built_path);
    if (status != CFI_OK)
        return status;
    if (cg_eh_elf_abi(eh) != CG_ABI_FULL) {
        cg_unload(eh);
        return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                        "a v1 eh_elf: the compiled engine needs the full ABI");
    }
    struct compiled_engine *self = malloc(sizeof *self);
    if (!self) {
        cg_unload(eh);
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    }
    *self = (struct compiled_engine){eh, file->arch->nreported};
    engine->self = self;
    engine->unwind = compiled_unwind;
    engine->close = compiled_close;
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Dispatch                                                             */
/* ------------------------------------------------------------------ */

enum cfi_status engine_open(enum engine_id id,
                            const struct cfi_file *file,
                            const struct engine_config *config,
                            struct engine_instance *engine,
                            struct cfi_diag *diag)
{
    *engine = (struct engine_instance){id, NULL, NULL, NULL, NULL};
    struct cfi_diag ignored;
    if (!diag)
        diag = &ignored;
    switch (id) {
    case ENGINE_il:
        return il_open(file, engine, diag);
    case ENGINE_interp:
        return interp_open(file, engine, diag);
    case ENGINE_compiled:
        return compiled_open(file, config, engine, diag);
    case ENGINE_libdwarf:
    case ENGINE_libdw:
    case ENGINE_libunwind:
    case ENGINE_llvmunwind:
    case ENGINE_libgcc:
    case ENGINE_sframe:
    case ENGINE_gdb:
        return adapter_open(id, file, engine, diag);
    case ENGINE_COUNT:
        break;
    }
    return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET, "no such engine");
}

void engine_close(struct engine_instance *engine)
{
    if (engine->close)
        engine->close(engine->self);
    *engine = (struct engine_instance){engine->id, NULL, NULL, NULL, NULL};
}
