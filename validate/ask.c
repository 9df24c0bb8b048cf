/* SPDX-License-Identifier: MIT */
/* validate/ask.c — one question asked of a v1 eh_elf in a child process
 * (validate.h, validate_v1_ask): what `cfisem unwind --engine compiled`
 * needs to reproduce a wrong answer of `cfisem validate --abi v1` or
 * `--abi v1-direct`. */
#include "internal.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define ASK_SECONDS 10

struct ask_shared {
    bool done, loaded;
    struct engine_v1_context got;
    bool faulted;
    char error[320];
};

/* v1-direct: REGION_SIZE bytes at the callee's stack, REGION_STACK below
 * its rsp, filled from the memory model. */
static uint8_t *map_stack(const struct cfi_regs *callee,
                          struct cfi_memory memory)
{
    uint64_t rsp = callee->status[CFI_REG_RSP] == CFI_REG_VALUE
                       ? callee->value[CFI_REG_RSP] : 0;
    uint64_t base = (rsp & ~(uint64_t)0xfff) - REGION_STACK;
    if (rsp < REGION_STACK + 0x10000)
        return NULL;
    void *region = mmap((void *)(uintptr_t)base, REGION_SIZE,
                        PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (region == MAP_FAILED || (uint64_t)(uintptr_t)region != base) {
        if (region != MAP_FAILED)
            munmap(region, REGION_SIZE);
        return NULL;
    }
    uint8_t *bytes = region;
    for (uint64_t off = 0; off < REGION_SIZE; off += 8) {
        uint64_t word = 0;
        memory.read(memory.env, base + off, 8, &word);
        memcpy(bytes + off, &word, 8);
    }
    return bytes;
}

static _Noreturn void ask_child(const char *path, enum validate_abi abi,
                                const struct cfi_regs *callee, uint64_t pc,
                                struct cfi_memory memory,
                                struct ask_shared *shared, int text_fd)
{
    dup2(text_fd, 1);
    dup2(text_fd, 2);
    alarm(ASK_SECONDS);
    struct engine_v1 *v1;
    struct cfi_diag diag;
    enum engine_v1_variant variant =
        abi == VALIDATE_ABI_V1 ? ENGINE_V1_DEREF : ENGINE_V1_DIRECT;
    if (engine_v1_open(path, variant, &v1, &diag) != CFI_OK) {
        const char *why = diag.status == CFI_E_IO ? dlerror() : NULL;
        snprintf(shared->error, sizeof shared->error, "%s%s%s", diag.message,
                 why ? ": " : "", why ? why : "");
        _exit(0);
    }
    shared->loaded = true;
    struct engine_v1_context ctx = engine_v1_context_of(callee);
    shared->got = engine_v1_call(v1, ctx, pc, memory, &shared->faulted);
    shared->done = true;
    _exit(0);
}

static void read_text(int fd, char *text, size_t size)
{
    ssize_t n = pread(fd, text, size - 1, 0);
    text[n > 0 ? n : 0] = 0;
    unsigned lines = 0;
    for (char *c = text; *c; c++)
        if (*c == '\n' && ++lines == 4) {
            *c = 0;
            break;
        }
    size_t len = strlen(text);
    while (len > 0 && text[len - 1] == '\n')
        text[--len] = 0;
}

static enum cfi_status run_ask(const char *path, enum validate_abi abi,
                               const struct cfi_regs *callee, uint64_t pc,
                               struct cfi_memory memory, struct ask_shared *shared,
                               struct validate_v1_answer *answer,
                               struct cfi_diag *diag, char *detail, size_t size)
{
    FILE *text = tmpfile();
    if (!text)
        return cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET, "cannot make a file");
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        ask_child(path, abi, callee, pc, memory, shared, fileno(text));
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0)
        ;
    enum cfi_status result = CFI_OK;
    if (pid < 0) {
        result = cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "cannot fork");
    } else if (!shared->loaded && !WIFSIGNALED(status)) {
        snprintf(detail, size, "%s", shared->error);
        result = cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET,
                          "cannot be asked");
    } else {
        answer->got = shared->got;
        answer->faulted = shared->faulted;
        answer->crashed = !shared->done;
        answer->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        if (answer->crashed)
            read_text(fileno(text), answer->text, sizeof answer->text);
    }
    fclose(text);
    return result;
}

enum cfi_status validate_v1_ask(const char *eh_elf_path,
                                enum validate_abi abi,
                                const struct cfi_regs *callee,
                                uint64_t lookup_pc, struct cfi_memory memory,
                                struct validate_v1_answer *answer,
                                struct cfi_diag *diag, char *detail,
                                size_t size)
{
    memset(answer, 0, sizeof *answer);
    detail[0] = 0;
    uint8_t *region = NULL;
    if (abi == VALIDATE_ABI_V1_DIRECT &&
        !(region = map_stack(callee, memory))) {
        snprintf(detail, size, "the stack around rsp cannot be mapped at its "
                 "own addresses here");
        return cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET,
                        "cannot ask a v1-direct eh_elf");
    }
    struct ask_shared *shared = mmap(NULL, sizeof *shared,
                                     PROT_READ | PROT_WRITE,
                                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    enum cfi_status status =
        shared == MAP_FAILED
            ? cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory")
            : run_ask(eh_elf_path, abi, callee, lookup_pc, memory, shared,
                      answer, diag, detail, size);
    if (shared != MAP_FAILED)
        munmap(shared, sizeof *shared);
    if (region)
        munmap(region, REGION_SIZE);
    return status;
}
