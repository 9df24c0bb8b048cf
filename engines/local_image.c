/* SPDX-License-Identifier: MIT */
/* local_image.c — see local_image.h.
 *
 * The conversation, over a stream socket pair (records as they lie in
 * memory: both ends are this very program, forked):
 *   child   struct message LOCAL_MSG_HELLO, then a struct hello;
 *   parent  struct local_question;
 *   child   zero or more LOCAL_MSG_PAGE (the address that faulted), each
 *           answered by a struct page_reply and, when its status is
 *           PAGE_OK, the page's LOCAL_PAGE bytes;
 *   child   LOCAL_MSG_FRAME, then a struct local_frame.
 * The parent closing its end ends the child.
 *
 * The child's SIGSEGV handler needs the child's state: a thread-local
 * pointer, set once in the child (which has one thread), is the one
 * piece of global state. */
#define _GNU_SOURCE
#include "local_image.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compile/runner/protocol.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

enum message_tag {
    LOCAL_MSG_HELLO = 1,
    LOCAL_MSG_PAGE = 2,
    LOCAL_MSG_FRAME = 3,
};

struct message {
    uint32_t tag;
    uint32_t reserved;
    uint64_t addr;
};

struct hello {
    uint32_t ready;
    uint32_t reserved;
    char why[112];
};

enum page_status { PAGE_OK, PAGE_FAULT, PAGE_PARTIAL };

struct page_reply {
    uint32_t status;
    uint32_t reserved;
};

#define LOCAL_MIN_ADDR 0x10000u

/* Most an image may span, first segment to last. */
#define LOCAL_SPAN_MAX (1ull << 32)
#define LOCAL_ALTSTACK (256u * 1024u)

struct range {
    uint64_t begin, end;
};

struct local_image {
    const struct cfi_file *file;
    const struct local_library *library;
    pid_t pid;
    int fd;
    struct range *taken;     /* the child's mappings, sorted */
    size_t ntaken;
};

/* ------------------------------------------------------------------ */
/* Both sides                                                           */
/* ------------------------------------------------------------------ */

const char *local_outcome_reason(enum local_outcome outcome)
{
    switch (outcome) {
    case LOCAL_PARTIAL_PAGE:
        return "local unwinder: reads a page of which only part faults "
               "(a process's faults are whole pages)";
    case LOCAL_UNMAPPABLE:
        return "local unwinder: reads an address a process cannot map "
               "(non-canonical, or below mmap_min_addr)";
    case LOCAL_TAKEN:
        return "local unwinder: reads an address the unwinding process "
               "itself uses";
    case LOCAL_TOO_MANY_PAGES:
        return "local unwinder: reads more pages than one frame may";
    case LOCAL_DIED:
        return "local unwinder: the library's process died (restarted)";
    case LOCAL_TIMEOUT:
        return "local unwinder: the library did not answer in time "
               "(killed, restarted)";
    case LOCAL_DONE:
    case LOCAL_FAULT:
        break;
    }
    return "local unwinder: no answer";
}

/* ------------------------------------------------------------------ */
/* The child                                                            */
/* ------------------------------------------------------------------ */

struct child {
    const struct local_library *library;
    void *state;
    int fd;
    sigjmp_buf escape;
    struct local_frame frame;
    bool in_hook;
    size_t npages;
    uint64_t pages[LOCAL_MAX_PAGES];
    uint8_t buffer[LOCAL_PAGE];
};

static _Thread_local struct child *current_child;

static bool page_is_ours(const struct child *c, uint64_t page)
{
    for (size_t i = 0; i < c->npages; i++)
        if (c->pages[i] == page)
            return true;
    return false;
}

/* Maps the page of the parent's reply at `page`. */
static enum local_outcome map_page(struct child *c, uint64_t page)
{
    void *want = (void *)(uintptr_t)page;
    void *got = mmap(want, LOCAL_PAGE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (got == MAP_FAILED)
        return errno == EEXIST ? LOCAL_TAKEN : LOCAL_UNMAPPABLE;
    if (got != want) {
        munmap(got, LOCAL_PAGE);
        return LOCAL_TAKEN;
    }
    memcpy(got, c->buffer, LOCAL_PAGE);
    mprotect(got, LOCAL_PAGE, PROT_READ);
    c->pages[c->npages++] = page;
    return LOCAL_DONE;
}

/* Serves the fault at `addr` from the parent: LOCAL_DONE when the page is
 * mapped now. */
static enum local_outcome serve(struct child *c, const siginfo_t *info)
{
    uint64_t addr = (uint64_t)(uintptr_t)info->si_addr;
    if (info->si_code == SI_KERNEL)
        return LOCAL_UNMAPPABLE; /* a general protection fault */
    uint64_t page = addr & ~(uint64_t)(LOCAL_PAGE - 1);
    /* Linux's default mmap_min_addr, whatever the process may do (root
     * may map page 0): the same answer for every user. */
    if (page < LOCAL_MIN_ADDR)
        return LOCAL_UNMAPPABLE;
    if (page_is_ours(c, page))
        return LOCAL_UNMAPPABLE; /* a write to the request's memory */
    if (c->npages == LOCAL_MAX_PAGES)
        return LOCAL_TOO_MANY_PAGES;
    struct message ask = {LOCAL_MSG_PAGE, 0, addr};
    struct page_reply reply;
    if (!rn_send_all(c->fd, &ask, sizeof ask) ||
        !rn_read_all(c->fd, &reply, sizeof reply))
        _exit(1);
    if (reply.status == PAGE_FAULT) {
        c->frame.fault_addr = addr;
        return LOCAL_FAULT;
    }
    if (reply.status != PAGE_OK)
        return LOCAL_PARTIAL_PAGE;
    if (!rn_read_all(c->fd, c->buffer, LOCAL_PAGE))
        _exit(1);
    return map_page(c, page);
}

static void on_fault(int sig, siginfo_t *info, void *context)
{
    (void)sig;
    (void)context;
    struct child *c = current_child;
    int saved = errno;
    enum local_outcome outcome = serve(c, info);
    errno = saved;
    if (outcome == LOCAL_DONE)
        return;
    if (c->library->on_fault && !c->in_hook) {
        c->in_hook = true;
        if (c->library->on_fault(c->state, &c->frame)) {
            c->frame.outcome = LOCAL_DONE;
            siglongjmp(c->escape, 1);
        }
    }
    c->frame.outcome = outcome;
    siglongjmp(c->escape, 1);
}

static bool child_signals(void)
{
    stack_t alt = {.ss_sp = malloc(LOCAL_ALTSTACK), .ss_size = LOCAL_ALTSTACK};
    if (!alt.ss_sp || sigaltstack(&alt, NULL) != 0)
        return false;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    return sigaction(SIGSEGV, &action, NULL) == 0 &&
           sigaction(SIGBUS, &action, NULL) == 0;
}

/* The span of the loadable segments, and 4 bytes past .eh_frame. */
static void image_span(const struct cfi_file *file, uint64_t *begin,
                       uint64_t *end)
{
    *begin = UINT64_MAX;
    *end = file->eh_frame_addr + file->eh_frame_size + 4;
    for (size_t i = 0; i < file->nsegments; i++) {
        const struct cfi_segment *s = &file->segments[i];
        if (s->vaddr < *begin)
            *begin = s->vaddr;
        if (s->vaddr + s->memsz > *end)
            *end = s->vaddr + s->memsz;
    }
    if (file->eh_frame_addr < *begin)
        *begin = file->eh_frame_addr;
    *begin &= ~(uint64_t)(LOCAL_PAGE - 1);
    *end = (*end + LOCAL_PAGE - 1) & ~(uint64_t)(LOCAL_PAGE - 1);
}

/* Maps the image at LOCAL_BIAS; NULL or why not. */
static const char *map_image(const struct cfi_file *file)
{
    uint64_t begin, end;
    image_span(file, &begin, &end);
    if (end - begin > LOCAL_SPAN_MAX)
        return "the loadable segments span too much to be mapped";
    void *want = (void *)(uintptr_t)(LOCAL_BIAS + begin);
    void *got = mmap(want, end - begin, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
                         MAP_FIXED_NOREPLACE, -1, 0);
    if (got != want)
        return "the image's addresses are taken in the unwinding process";
    for (size_t i = 0; i < file->nsegments; i++) {
        const struct cfi_segment *s = &file->segments[i];
        memcpy((uint8_t *)(uintptr_t)(LOCAL_BIAS + s->vaddr), s->bytes,
               s->filesz);
    }
    memset((uint8_t *)(uintptr_t)(LOCAL_BIAS + file->eh_frame_addr +
                                  file->eh_frame_size), 0, 4);
    return NULL;
}

static void child_answer(struct child *c)
{
    for (;;) {
        struct local_question question;
        if (!rn_read_all(c->fd, &question, sizeof question))
            _exit(0);
        memset(&c->frame, 0, sizeof c->frame);
        c->in_hook = false;
        if (sigsetjmp(c->escape, 1) == 0) {
            c->library->step(c->state, &question, &c->frame);
            c->frame.outcome = LOCAL_DONE;
        }
        for (size_t i = 0; i < c->npages; i++)
            munmap((void *)(uintptr_t)c->pages[i], LOCAL_PAGE);
        c->npages = 0;
        struct message done = {LOCAL_MSG_FRAME, 0, 0};
        if (!rn_send_all(c->fd, &done, sizeof done) ||
            !rn_send_all(c->fd, &c->frame, sizeof c->frame))
            _exit(1);
    }
}

static _Noreturn void child_main(const struct cfi_file *file,
                                 const struct local_library *library, int fd)
{
    /* The libraries print what they think of the CFI: not the run's
     * (under AddressSanitizer the child's reports must stay visible). */
#if !defined(__SANITIZE_ADDRESS__)
    int quiet = open("/dev/null", O_WRONLY);
    if (quiet >= 0)
        dup2(quiet, 2);
#endif
    struct child *c = calloc(1, sizeof *c);
    struct hello hello = {0, 0, ""};
    const char *why = c ? NULL : "out of memory";
    if (!why) {
        *c = (struct child){.library = library, .fd = fd};
        current_child = c;
        why = child_signals() ? map_image(file)
                              : "cannot install the fault handler";
    }
    if (!why)
        why = library->load(&c->state, file);
    hello.ready = !why;
    if (why)
        snprintf(hello.why, sizeof hello.why, "%s", why);
    struct message message = {LOCAL_MSG_HELLO, 0, 0};
    if (!rn_send_all(fd, &message, sizeof message) ||
        !rn_send_all(fd, &hello, sizeof hello) || why)
        _exit(0);
    child_answer(c);
    _exit(0);
}

/* ------------------------------------------------------------------ */
/* The parent                                                           */
/* ------------------------------------------------------------------ */

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Reads `size` bytes, waiting until `deadline` at most. */
static bool read_until(int fd, void *buffer, size_t size, int64_t deadline)
{
    struct pollfd p = {fd, POLLIN, 0};
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return false;
        int n = poll(&p, 1, (int)left);
        if (n > 0)
            return rn_read_all(fd, buffer, size);
        if (n < 0 && errno != EINTR)
            return false;
    }
}

static void stop_child(struct local_image *image)
{
    if (image->fd >= 0)
        close(image->fd);
    image->fd = -1;
    if (image->pid > 0) {
        int status;
        kill(image->pid, SIGKILL);
        while (waitpid(image->pid, &status, 0) < 0 && errno == EINTR)
            continue;
    }
    image->pid = -1;
}

static int compare_ranges(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* The child's mappings, from /proc. */
static bool read_taken(struct local_image *image)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)image->pid);
    FILE *maps = fopen(path, "r");
    if (!maps)
        return false;
    free(image->taken);
    image->taken = NULL;
    image->ntaken = 0;
    size_t capacity = 0;
    unsigned long long begin, end;
    char line[512];
    bool ok = true;
    while (ok && fgets(line, sizeof line, maps)) {
        if (sscanf(line, "%llx-%llx", &begin, &end) != 2)
            continue;
        if (image->ntaken == capacity) {
            capacity = capacity ? 2 * capacity : 64;
            struct range *grown =
                realloc(image->taken, capacity * sizeof *grown);
            ok = grown != NULL;
            if (ok)
                image->taken = grown;
        }
        if (ok)
            image->taken[image->ntaken++] = (struct range){begin, end};
    }
    fclose(maps);
    qsort(image->taken, image->ntaken, sizeof *image->taken, compare_ranges);
    return ok;
}

/* Forks the child and waits for its hello. */
static enum cfi_status start_child(struct local_image *image,
                                   struct cfi_diag *diag)
{
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        return cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET, "socketpair failed");
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET, "fork failed");
    }
    if (pid == 0) {
        close(fds[0]);
        child_main(image->file, image->library, fds[1]);
    }
    close(fds[1]);
    image->pid = pid;
    image->fd = fds[0];
    struct message message;
    struct hello hello;
    int64_t deadline = now_ms() + 10 * LOCAL_TIMEOUT_MS;
    if (!read_until(image->fd, &message, sizeof message, deadline) ||
        message.tag != LOCAL_MSG_HELLO ||
        !rn_read_all(image->fd, &hello, sizeof hello) || !hello.ready) {
        stop_child(image);
        return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                        "local unwinder: the library's process did not "
                        "start (no library, or the image cannot be "
                        "mapped)");
    }
    if (!read_taken(image)) {
        stop_child(image);
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET,
                        "cannot read the unwinding process's mappings");
    }
    return CFI_OK;
}

enum cfi_status local_image_open(const struct cfi_file *file,
                                 const struct local_library *library,
                                 struct local_image **out,
                                 struct cfi_diag *diag)
{
    *out = NULL;
    if (!file->eh_frame_addr || !file->eh_frame_size)
        return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                        "local unwinder: the file has no .eh_frame");
    struct local_image *image = calloc(1, sizeof *image);
    if (!image)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    *image = (struct local_image){file, library, -1, -1, NULL, 0};
    enum cfi_status status = start_child(image, diag);
    if (status != CFI_OK) {
        local_image_close(image);
        return status;
    }
    *out = image;
    return CFI_OK;
}

void local_image_close(struct local_image *image)
{
    if (!image)
        return;
    stop_child(image);
    free(image->taken);
    free(image);
}

bool local_image_taken(const struct local_image *image, uint64_t addr,
                       uint64_t len)
{
    uint64_t end = addr + len < addr ? UINT64_MAX : addr + len;
    for (size_t i = 0; i < image->ntaken; i++)
        if (image->taken[i].begin < end && addr < image->taken[i].end)
            return true;
    return false;
}

/* The page at `page` through `memory`: PAGE_OK with its bytes, PAGE_FAULT
 * when the byte at `addr` faults, PAGE_PARTIAL when another does. */
static enum page_status read_page(struct cfi_memory memory, uint64_t page,
                                  uint64_t addr, uint8_t *bytes)
{
    enum page_status status = PAGE_OK;
    for (uint64_t at = 0; at < LOCAL_PAGE; at += 8) {
        uint64_t word;
        if (memory.read(memory.env, page + at, 8, &word) == CFI_OK) {
            for (unsigned i = 0; i < 8; i++)
                bytes[at + i] = (uint8_t)(word >> (8 * i));
            continue;
        }
        for (unsigned i = 0; i < 8; i++) {
            uint64_t byte;
            if (memory.read(memory.env, page + at + i, 1, &byte) == CFI_OK)
                continue;
            if (page + at + i == addr)
                return PAGE_FAULT;
            status = PAGE_PARTIAL;
        }
    }
    return status;
}

static bool send_page(struct local_image *image, struct cfi_memory memory,
                      uint64_t addr)
{
    uint8_t bytes[LOCAL_PAGE];
    uint64_t page = addr & ~(uint64_t)(LOCAL_PAGE - 1);
    struct page_reply reply = {read_page(memory, page, addr, bytes), 0};
    return rn_send_all(image->fd, &reply, sizeof reply) &&
           (reply.status != PAGE_OK ||
            rn_send_all(image->fd, bytes, sizeof bytes));
}

/* The conversation of one question; false when it broke (the child died,
 * hung or said something else). */
static bool converse(struct local_image *image,
                     const struct local_question *question,
                     struct cfi_memory memory, struct local_frame *frame,
                     bool *timed_out)
{
    int64_t deadline = now_ms() + LOCAL_TIMEOUT_MS;
    if (!rn_send_all(image->fd, question, sizeof *question))
        return false;
    for (unsigned served = 0; served <= LOCAL_MAX_PAGES; served++) {
        struct message message;
        if (!read_until(image->fd, &message, sizeof message, deadline)) {
            *timed_out = now_ms() >= deadline;
            return false;
        }
        if (message.tag == LOCAL_MSG_FRAME)
            return rn_read_all(image->fd, frame, sizeof *frame) &&
                   frame->outcome <= LOCAL_TIMEOUT;
        if (message.tag != LOCAL_MSG_PAGE ||
            !send_page(image, memory, message.addr))
            return false;
    }
    return false;
}

void local_image_ask(struct local_image *image,
                     const struct local_question *question,
                     struct cfi_memory memory, struct local_frame *frame)
{
    memset(frame, 0, sizeof *frame);
    bool timed_out = false;
    if (image->pid > 0 &&
        converse(image, question, memory, frame, &timed_out))
        return;
    memset(frame, 0, sizeof *frame);
    frame->outcome = timed_out ? LOCAL_TIMEOUT : LOCAL_DIED;
    stop_child(image);
    struct cfi_diag ignored;
    start_child(image, &ignored); /* when it fails, pid stays -1 */
}
