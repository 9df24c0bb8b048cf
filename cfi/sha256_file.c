/* SPDX-License-Identifier: MIT */
/* sha256_file.c — the SHA-256 of a regular file's contents (sha256.h). */
#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

enum cfi_status cfi_sha256_file(const char *path, char hex[CFI_SHA256_HEX],
                                 struct cfi_diag *diag)
{
    if (cfi_check_regular_file(path, diag) != CFI_OK)
        return CFI_E_IO;
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    uint8_t *buf = fd >= 0 ? malloc(1 << 20) : NULL;
    struct cfi_sha256 s;
    cfi_sha256_init(&s);
    ssize_t n = buf ? 1 : -1;
    while (buf && (n = read(fd, buf, 1 << 20)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        cfi_sha256_add(&s, buf, (size_t)n);
    }
    int error = errno;
    free(buf);
    if (fd >= 0)
        close(fd);
    if (n != 0)
        return cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET,
                        fd < 0 ? cfi_errno_text(error) : "cannot be read");
    cfi_sha256_hex(&s, hex);
    return CFI_OK;
}
