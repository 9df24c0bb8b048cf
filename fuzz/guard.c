/* SPDX-License-Identifier: MIT */
/* guard.c — buffers that end at an inaccessible page.
 *
 * The outside libraries are not compiled with AddressSanitizer: a read a
 * few bytes past the buffer they were given would go unnoticed in a
 * malloc'd copy. Placed at the end of a mapping whose next page is
 * PROT_NONE, the same read faults. */
#include "internal.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

bool fuzz_guarded_copy(struct fuzz_guarded *copy, const uint8_t *data,
                       size_t size, size_t align)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t rounded = (size + align - 1) / align * align;
    size_t data_pages = (rounded + page - 1) / page * page;
    memset(copy, 0, sizeof *copy);
    void *mapping = mmap(NULL, data_pages + page, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapping == MAP_FAILED)
        return false;
    uint8_t *guard = (uint8_t *)mapping + data_pages;
    if (mprotect(guard, page, PROT_NONE) != 0) {
        munmap(mapping, data_pages + page);
        return false;
    }
    copy->mapping = mapping;
    copy->mapping_size = data_pages + page;
    copy->bytes = guard - rounded;
    if (size)
        memcpy(copy->bytes, data, size);
    return true;
}

void fuzz_guarded_free(struct fuzz_guarded *copy)
{
    if (copy->mapping)
        munmap(copy->mapping, copy->mapping_size);
    memset(copy, 0, sizeof *copy);
}
