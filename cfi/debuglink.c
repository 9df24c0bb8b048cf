/* SPDX-License-Identifier: MIT */
/* debuglink.c — the separate debug file of a stripped file, found as gdb
 * finds it (by build-id, then by .gnu_debuglink), whose .debug_frame
 * joins the file's FDEs: see cfi_file_open_debug in cfi.h. */
#include "internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* What a candidate must match: the build-id, or the CRC-32 of its bytes
 * (.gnu_debuglink's, zlib's crc32 being the same function). */
struct wanted {
    const struct cfi_file *file;
    const struct cfi_elf_debug_names *names;
    bool by_build_id;
};

/* A candidate loaded: its image, arena and frame sections. */
struct candidate {
    struct cfi_file debug;
    struct cfi_elf_frames frames;
};

static void candidate_release(struct candidate *c)
{
    free(c->debug.image);
    cfi_arena_free(c->debug.arena);
    memset(c, 0, sizeof *c);
}

static bool matches(const struct wanted *wanted, const struct candidate *c)
{
    const struct cfi_elf_debug_names *want = wanted->names;
    if (c->debug.arch != wanted->file->arch || c->debug.relocatable)
        return false;
    if (wanted->by_build_id) {
        const struct cfi_elf_debug_names *got = &c->frames.debug_names;
        return got->build_id && got->build_id_size == want->build_id_size &&
               memcmp(got->build_id, want->build_id,
                      want->build_id_size) == 0;
    }
    uLong crc = crc32(0L, Z_NULL, 0);
    const uint8_t *at = c->debug.image;
    for (size_t left = c->debug.image_size; left > 0;) {
        uInt n = left > UINT_MAX ? UINT_MAX : (uInt)left;
        crc = crc32(crc, at, n);
        at += n;
        left -= n;
    }
    return (uint32_t)crc == want->debuglink_crc;
}

/* Loads `path` when it is a readable ELF file that matches; a file that
 * is absent, unreadable or malformed is no candidate. */
static bool try_candidate(const char *path, const struct wanted *wanted,
                          struct candidate *c)
{
    memset(c, 0, sizeof *c);
    if (cfi_check_regular_file(path, NULL) != CFI_OK ||
        !(c->debug.arena = cfi_arena_new()))
        return false;
    if (cfi_read_image(path, &c->debug, NULL) == CFI_OK &&
        cfi_elf_read(&c->debug, &c->frames, NULL) == CFI_OK &&
        matches(wanted, c))
        return true;
    candidate_release(c);
    return false;
}

/* DIR/.build-id/NN/REST.debug */
static bool build_id_path(const char *dir, const uint8_t *id, size_t size,
                          char *path, size_t room)
{
    int n = snprintf(path, room, "%s/.build-id/%02x/", dir, id[0]);
    if (n < 0 || (size_t)n >= room)
        return false;
    size_t used = (size_t)n;
    for (size_t i = 1; i < size; i++, used += 2)
        if (room - used < 3 ||
            snprintf(path + used, room - used, "%02x", id[i]) != 2)
            return false;
    return snprintf(path + used, room - used, ".debug") == 6;
}

/* The debug directories: the ones given, then CFI_DEBUG_DIR. */
static const char *debug_dir(const struct cfi_debug_search *search,
                             size_t i)
{
    size_t given = search ? search->ndirs : 0;
    if (i < given)
        return search->dirs[i];
    return i == given ? CFI_DEBUG_DIR : NULL;
}

static bool find_by_build_id(const struct cfi_debug_search *search,
                             const struct wanted *wanted, char *path,
                             size_t room, struct candidate *c)
{
    const struct cfi_elf_debug_names *names = wanted->names;
    if (!names->build_id || names->build_id_size < 2)
        return false;
    const char *dir;
    for (size_t i = 0; (dir = debug_dir(search, i)); i++)
        if (build_id_path(dir, names->build_id, names->build_id_size, path,
                          room) &&
            try_candidate(path, wanted, c))
            return true;
    return false;
}

/* The absolute directory of the file, without its trailing '/'. */
static bool file_dir(const char *file_path, char *dir, size_t room)
{
    char *real = realpath(file_path, NULL);
    if (!real)
        return false;
    char *slash = strrchr(real, '/');
    bool ok = slash && (size_t)(slash - real) < room;
    if (ok) {
        memcpy(dir, real, (size_t)(slash - real));
        dir[slash - real] = '\0';
    }
    free(real);
    return ok;
}

/* Whether `candidate` is the file itself (FILEDIR/NAME with NAME the
 * file's own name, as objcopy --add-gnu-debuglink allows). */
static bool same_file(const char *candidate, const char *file_path)
{
    char *a = realpath(candidate, NULL), *b = realpath(file_path, NULL);
    bool same = a && b && strcmp(a, b) == 0;
    free(a);
    free(b);
    return same;
}

static bool find_by_debuglink(const struct cfi_debug_search *search,
                              const struct wanted *wanted, char *path,
                              size_t room, struct candidate *c)
{
    const char *name = wanted->names->debuglink;
    char dir[PATH_MAX];
    if (!name || strchr(name, '/') ||
        !file_dir(wanted->file->path, dir, sizeof dir))
        return false;
    const char *forms[] = {"%s/%s", "%s/.debug/%s"};
    for (size_t i = 0; i < 2; i++) {
        int n = snprintf(path, room, forms[i], dir, name);
        if (n > 0 && (size_t)n < room &&
            !same_file(path, wanted->file->path) &&
            try_candidate(path, wanted, c))
            return true;
    }
    const char *debug;
    for (size_t i = 0; (debug = debug_dir(search, i)); i++) {
        int n = snprintf(path, room, "%s%s/%s", debug, dir, name);
        if (n > 0 && (size_t)n < room && try_candidate(path, wanted, c))
            return true;
    }
    return false;
}

/* The debug file's .debug_frame becomes the file's, its bytes copied
 * into the file's arena. */
static enum cfi_status take_debug_frame(struct cfi_file *file,
                                        const struct candidate *c,
                                        struct cfi_elf_frames *frames,
                                        struct cfi_diag *diag)
{
    const struct cfi_elf_section *found = &c->frames.debug_frame;
    if (!found->present || !found->bytes)
        return CFI_OK;
    uint8_t *copy = cfi_arena_copy(file->arena, found->bytes,
                                   found->file_size);
    if (!copy)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    frames->debug_frame = *found;
    frames->debug_frame.bytes = copy;
    frames->debug_frame.relocated = false;
    return CFI_OK;
}

enum cfi_status cfi_debug_file_merge(struct cfi_file *file,
                                     const struct cfi_debug_search *search,
                                     struct cfi_elf_frames *frames,
                                     struct cfi_diag *diag)
{
    file->debug_state = CFI_DEBUG_NONE;
    if ((frames->debug_frame.present && frames->debug_frame.bytes) ||
        !file->path || file->relocatable)
        return CFI_OK;
    char path[PATH_MAX];
    struct candidate c;
    struct wanted by_id = {file, &frames->debug_names, true};
    struct wanted by_link = {file, &frames->debug_names, false};
    bool found = find_by_build_id(search, &by_id, path, sizeof path, &c) ||
                 find_by_debuglink(search, &by_link, path, sizeof path, &c);
    if (!found && !frames->debug_names.debuglink)
        return CFI_OK;
    const char *named = found ? path : frames->debug_names.debuglink;
    if (!(file->debug_path = strdup(named))) {
        if (found)
            candidate_release(&c);
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    }
    file->debug_state = found ? CFI_DEBUG_FOUND : CFI_DEBUG_MISSING;
    if (!found)
        return CFI_OK;
    enum cfi_status status = take_debug_frame(file, &c, frames, diag);
    candidate_release(&c);
    return status;
}
