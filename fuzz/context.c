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

enum fuzz_result fuzz_context_open(struct fuzz_context *context)
{
    memset(context, 0, sizeof *context);
    context->findings = getenv("CFISEM_FUZZ_FINDINGS");
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
