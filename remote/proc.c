/* SPDX-License-Identifier: MIT */
/* proc.c — see proc.h. */
#define _GNU_SOURCE
#include "remote/proc.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <limits.h>
#include <unistd.h>

#include "cfi/sha256.h"
#include <time.h>

/* Page reads cached per stop: the engines read a few words per frame,
 * mostly from the same stack pages. */
#define PROC_PAGE 4096
#define PROC_CACHE 16

struct proc_page {
    uint64_t base;
    bool valid;
    uint8_t bytes[PROC_PAGE];
};

struct remote_proc {
    pid_t pid;
    pid_t *threads;
    size_t nthreads;
    size_t cap;
    struct remote_thread *records; /* nthreads, once all are stopped */
    struct proc_page cache[PROC_CACHE];
    unsigned next;                /* the slot replaced next */
    int seize_error;              /* errno of the first refused seize */
};

static bool has_thread(const struct remote_proc *proc, pid_t tid)
{
    for (size_t i = 0; i < proc->nthreads; i++)
        if (proc->threads[i] == tid)
            return true;
    return false;
}

/* How long a thread may take to stop: one in uninterruptible sleep
 * (a D state: a hung file system) may never; it is then left out. */
#define PROC_STOP_WAIT_MS 2000

/* Waits for tid's stop: false when it does not stop in time, or ends. */
static bool wait_stopped(pid_t tid)
{
    struct timespec tick = {0, 50000};
    for (int ticks = 0; ticks < PROC_STOP_WAIT_MS * 20; ticks++) {
        int status;
        pid_t got = waitpid(tid, &status, __WALL | WNOHANG);
        if (got == tid)
            return WIFSTOPPED(status);
        if (got < 0)
            return false;
        nanosleep(&tick, NULL);
    }
    return false;
}

/* Seizes and stops one thread: false when it is gone or does not stop
 * (it is then detached, running). */
static bool stop_thread(struct remote_proc *proc, pid_t tid)
{
    if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0) {
        if (!proc->seize_error)
            proc->seize_error = errno;
        return false;
    }
    if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) != 0
        || !wait_stopped(tid)) {
        ptrace(PTRACE_DETACH, tid, NULL, NULL);
        return false;
    }
    proc->threads[proc->nthreads++] = tid;
    return true;
}

/* One pass over /proc/PID/task: the number of threads newly stopped,
 * -1 when the folder cannot be read. */
static int attach_pass(struct remote_proc *proc)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)proc->pid);
    DIR *dir = opendir(path);
    if (!dir)
        return -1;
    int added = 0;
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        char *end;
        long tid = strtol(entry->d_name, &end, 10);
        if (*end || tid <= 0 || has_thread(proc, (pid_t)tid))
            continue;
        if (proc->nthreads == proc->cap) {
            size_t cap = proc->cap ? 2 * proc->cap : 16;
            void *grown = realloc(proc->threads, cap * sizeof(pid_t));
            if (!grown)
                break;
            proc->threads = grown;
            proc->cap = cap;
        }
        added += stop_thread(proc, (pid_t)tid);
    }
    closedir(dir);
    return added;
}

/* The registers of a stopped thread as DWARF numbers (x86-64 hosts). */
static bool read_regs(pid_t tid, struct cfi_regs *regs)
{
    cfi_regs_clear(regs);
#if defined(__x86_64__)
    struct user_regs_struct r;
    if (ptrace(PTRACE_GETREGS, tid, NULL, &r) != 0)
        return false;
    const uint64_t values[CFI_NGPRS] = {
        r.rax, r.rdx, r.rcx, r.rbx, r.rsi, r.rdi, r.rbp, r.rsp,
        r.r8, r.r9, r.r10, r.r11, r.r12, r.r13, r.r14, r.r15, r.rip};
    for (unsigned reg = 0; reg < CFI_NGPRS; reg++)
        cfi_regs_set(regs, reg, values[reg]);
    return true;
#else
    (void)tid;
    return false;
#endif
}

static bool read_records(struct remote_proc *proc)
{
    proc->records = calloc(proc->nthreads, sizeof *proc->records);
    if (!proc->records)
        return false;
    for (size_t i = 0; i < proc->nthreads; i++) {
        struct remote_thread *t = &proc->records[i];
        t->tid = proc->threads[i];
        t->regs_known = read_regs(t->tid, &t->regs);
    }
    return true;
}

enum cfi_status remote_proc_attach(pid_t pid, struct remote_proc **proc,
                                   struct cfi_diag *diag)
{
    struct remote_proc *p = calloc(1, sizeof *p);
    if (!p)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    p->pid = pid;
    int added = attach_pass(p);
    if (added < 0) {
        remote_proc_detach(p);
        return cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET, "no such process");
    }
    /* Threads started meanwhile: bounded, a process may spawn forever. */
    for (int pass = 0; pass < 8 && added > 0; pass++)
        added = attach_pass(p);
    if (p->nthreads == 0) {
        int error = p->seize_error;
        remote_proc_detach(p);
        return cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET,
                        error == EPERM ? "cannot attach: operation not "
                                         "permitted (ptrace)"
                        : error == ESRCH ? "no such process"
                                         : "cannot attach to any thread");
    }
    if (!read_records(p)) {
        remote_proc_detach(p);
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    }
    *proc = p;
    return CFI_OK;
}

void remote_proc_detach(struct remote_proc *proc)
{
    if (!proc)
        return;
    for (size_t i = 0; i < proc->nthreads; i++)
        ptrace(PTRACE_DETACH, proc->threads[i], NULL, NULL);
    free(proc->threads);
    free(proc->records);
    free(proc);
}

const struct remote_thread *remote_proc_threads(
    const struct remote_proc *proc, size_t *count)
{
    *count = proc->nthreads;
    return proc->records;
}

/* The vDSO is in no file: its bytes are copied into one, named by their
 * SHA-256 in $TMPDIR (/tmp), so that the same vDSO has the same file,
 * and the same eh_elf in the cache, run after run. A file of that name
 * is used only when it is ours and holds those bytes. */
#define PROC_VDSO_MAX (1u << 20)

static bool same_file(const char *path, const uint8_t *bytes, size_t len)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)
        || st.st_uid != geteuid() || (uint64_t)st.st_size != len)
        return false;
    size_t got;
    char *text = NULL;
    FILE *f = fopen(path, "rb");
    if (f) {
        text = malloc(len ? len : 1);
        got = text ? fread(text, 1, len, f) : 0;
        fclose(f);
        bool same = text && got == len && memcmp(text, bytes, len) == 0;
        free(text);
        return same;
    }
    return false;
}

static bool write_copy(const char *path, const uint8_t *bytes, size_t len)
{
    char temp[PATH_MAX + 8];
    snprintf(temp, sizeof temp, "%s.XXXXXX", path);
    int fd = mkstemp(temp);
    if (fd < 0)
        return false;
    bool ok = write(fd, bytes, len) == (ssize_t)len && fchmod(fd, 0644) == 0;
    ok = close(fd) == 0 && ok && rename(temp, path) == 0;
    if (!ok)
        unlink(temp);
    return ok;
}

static enum cfi_status add_vdso(const struct remote_proc *proc,
                                struct remote_space *space, uint64_t start,
                                uint64_t end)
{
    if (end - start > PROC_VDSO_MAX)
        return CFI_OK;
    size_t len = (size_t)(end - start);
    uint8_t *bytes = malloc(len);
    if (!bytes)
        return CFI_E_NOMEM;
    struct iovec local = {bytes, len};
    struct iovec remote = {(void *)(uintptr_t)start, len};
    enum cfi_status status = CFI_OK;
    if (process_vm_readv(proc->pid, &local, 1, &remote, 1, 0)
        == (ssize_t)len) {
        struct cfi_sha256 sha;
        char hex[CFI_SHA256_HEX];
        cfi_sha256_init(&sha);
        cfi_sha256_add(&sha, bytes, len);
        cfi_sha256_hex(&sha, hex);
        const char *dir = getenv("TMPDIR");
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/cfisem-vdso-%.16s.so",
                 dir && *dir ? dir : "/tmp", hex);
        if (same_file(path, bytes, len) || write_copy(path, bytes, len)) {
            struct remote_map map = {start, end, 0, "[vdso]", NULL, 0};
            status = remote_space_add_map_from(space, &map, path);
        }
    }
    free(bytes);
    return status;
}

/* One line of /proc/PID/maps: "start-end perms offset dev inode path". */
static enum cfi_status add_maps_line(const struct remote_proc *proc,
                                     struct remote_space *space, char *line)
{
    uint64_t start, end, offset;
    int path_at = 0;
    if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n",
               &start, &end, &offset, &path_at) != 3
        || path_at == 0)
        return CFI_OK;
    char *path = line + path_at;
    path[strcspn(path, "\n")] = '\0';
    if (strcmp(path, "[vdso]") == 0)
        return add_vdso(proc, space, start, end);
    if (path[0] != '/')
        return CFI_OK;   /* anonymous, [stack], [vdso], [heap] */
    struct remote_map map = {start, end, offset, path, NULL, 0};
    return remote_space_add_map(space, &map);
}

enum cfi_status remote_proc_load_maps(const struct remote_proc *proc,
                                      struct remote_space *space,
                                      struct cfi_diag *diag)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)proc->pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET,
                        cfi_errno_text(errno));
    char *line = NULL;
    size_t cap = 0;
    enum cfi_status status = CFI_OK;
    while (status == CFI_OK && getline(&line, &cap, f) > 0)
        status = add_maps_line(proc, space, line);
    free(line);
    fclose(f);
    if (status != CFI_OK)
        return cfi_fail(diag, status, CFI_NO_OFFSET,
                        "cannot record a mapping");
    return CFI_OK;
}

/* The cached page at `base`, read now when absent; NULL when the
 * process has no readable page there. */
static const struct proc_page *page_at(struct remote_proc *proc,
                                       uint64_t base)
{
    for (unsigned i = 0; i < PROC_CACHE; i++)
        if (proc->cache[i].valid && proc->cache[i].base == base)
            return &proc->cache[i];
    struct proc_page *page = &proc->cache[proc->next];
    proc->next = (proc->next + 1) % PROC_CACHE;
    struct iovec local = {page->bytes, PROC_PAGE};
    struct iovec remote = {(void *)(uintptr_t)base, PROC_PAGE};
    page->valid = process_vm_readv(proc->pid, &local, 1, &remote, 1, 0)
                  == PROC_PAGE;
    page->base = base;
    return page->valid ? page : NULL;
}

enum remote_read_result remote_proc_read(void *data, uint64_t addr,
                                         unsigned size, uint64_t *value)
{
    struct remote_proc *proc = data;
    uint8_t bytes[8];
    if (size == 0 || size > 8 || addr + size < addr)
        return REMOTE_READ_UNREADABLE;
    for (unsigned i = 0; i < size; i++) {
        uint64_t at = addr + i;
        const struct proc_page *page = page_at(proc, at & ~(uint64_t)
                                                           (PROC_PAGE - 1));
        if (!page)
            return REMOTE_READ_UNREADABLE;
        bytes[i] = page->bytes[at & (PROC_PAGE - 1)];
    }
    *value = cfi_load_le(bytes, size);
    return REMOTE_READ_OK;
}
