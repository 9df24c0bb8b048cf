/* SPDX-License-Identifier: MIT */
/* context.c — what a harness keeps between inputs: the file the ELF
 * targets write each input into, and a sink for printed IL. */
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A memfd (no file system, nothing to clean up); when the kernel has none,
 * an unlinked temporary file, reached the same way through /proc. */
static int open_scratch(void)
{
#ifdef SYS_memfd_create
    int fd = (int)syscall(SYS_memfd_create, "cfisem-fuzz", 0u);
    if (fd >= 0)
        return fd;
#endif
    char path[] = "/tmp/cfisem-fuzz-XXXXXX";
    int tmp = mkstemp(path);
    if (tmp >= 0)
        unlink(path);
    return tmp;
}

/* The selectors of target 3 that the names in $CFISEM_FUZZ_ORACLES
 * (separated by commas or spaces) stand for; 0: every selector; ~0u: a
 * name not known. */
static unsigned oracle_mask(const char *names)
{
    static const struct {
        const char *name;
        unsigned mask;
    } known[] = {
        {"libdwarf", 1u << FUZZ_ORACLE_LIBDWARF |
                     1u << FUZZ_ORACLE_LIBDWARF_SECTION},
        {"libdw", 1u << FUZZ_ORACLE_LIBDW},
        {"libunwind", 1u << FUZZ_ORACLE_LIBUNWIND},
    };
    unsigned mask = 0;
    for (const char *p = names ? names : ""; *p;) {
        size_t len = strcspn(p, ", ");
        unsigned found = 0;
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            if (len == strlen(known[i].name) &&
                strncmp(p, known[i].name, len) == 0)
                found = known[i].mask;
        if (len && !found)
            return ~0u;
        mask |= found;
        p += len;
        p += strspn(p, ", ");
    }
    return mask;
}

enum fuzz_result fuzz_context_open(struct fuzz_context *context)
{
    memset(context, 0, sizeof *context);
    context->findings = getenv("CFISEM_FUZZ_FINDINGS");
    context->oracles = oracle_mask(getenv("CFISEM_FUZZ_ORACLES"));
    if (context->oracles == ~0u) {
        fprintf(stderr, "cfisem fuzz: CFISEM_FUZZ_ORACLES=%s: not a list "
                        "of libdwarf, libdw, libunwind\n",
                getenv("CFISEM_FUZZ_ORACLES"));
        context->fd = -1;
        return FUZZ_SETUP;
    }
    context->fd = open_scratch();
    if (context->fd < 0)
        return FUZZ_SETUP;
    snprintf(context->path, sizeof context->path, "/proc/self/fd/%d",
             context->fd);
    context->sink = fopen("/dev/null", "w");
    if (!context->sink) {
        close(context->fd);
        context->fd = -1;
        return FUZZ_SETUP;
    }
    return FUZZ_OK;
}

void fuzz_context_close(struct fuzz_context *context)
{
    if (context->sink)
        fclose(context->sink);
    if (context->fd >= 0)
        close(context->fd);
    if (context->libdw)
        dlclose(context->libdw);
    free((void *)context->libdw_api);
    memset(context, 0, sizeof *context);
    context->fd = -1;
}

enum fuzz_result fuzz_context_write(struct fuzz_context *context,
                                    const uint8_t *data, size_t size)
{
    if (ftruncate(context->fd, 0) != 0)
        return FUZZ_SETUP;
    size_t done = 0;
    while (done < size) {
        ssize_t n = pwrite(context->fd, data + done, size - done,
                           (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return FUZZ_SETUP;
        done += (size_t)n;
    }
    return FUZZ_OK;
}
