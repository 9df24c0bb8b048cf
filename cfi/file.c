/* SPDX-License-Identifier: MIT */
/* file.c — loading an ELF file's call frame information (cfi_file_open),
 * PC → FDE lookup, segments, and closing. */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Opens `path` for reading when it is a regular file: *fd, and its
 * status in *st. O_NONBLOCK: opening a FIFO must not wait for a writer;
 * on a regular file the flag changes nothing. */
static enum cfi_status open_regular(const char *path, int *fd, struct stat *st,
                                    struct cfi_diag *diag)
{
    *fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (*fd < 0)
        return cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET, cfi_errno_text(errno));
    enum cfi_status status = CFI_OK;
    if (fstat(*fd, st) != 0)
        status = cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET, cfi_errno_text(errno));
    else if (!S_ISREG(st->st_mode))
        status = cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET,
                          S_ISDIR(st->st_mode) ? "is a directory"
                                               : "not a regular file");
    if (status != CFI_OK) {
        close(*fd);
        *fd = -1;
    }
    return status;
}

enum cfi_status cfi_check_regular_file(const char *path, struct cfi_diag *diag)
{
    int fd;
    struct stat st;
    enum cfi_status status = open_regular(path, &fd, &st, diag);
    if (status == CFI_OK)
        close(fd);
    return status;
}

/* The whole file into file->image. A file that shrinks while being read
 * keeps what was read. */
enum cfi_status cfi_read_image(const char *path, struct cfi_file *file,
                               struct cfi_diag *diag)
{
    int fd;
    struct stat st;
    enum cfi_status status = open_regular(path, &fd, &st, diag);
    if (status != CFI_OK)
        return status;
    if ((uint64_t)st.st_size > SIZE_MAX - 1 ||
             !(file->image = malloc((size_t)st.st_size + 1)))
        status = cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    size_t size = status == CFI_OK ? (size_t)st.st_size : 0;
    while (status == CFI_OK && file->image_size < size) {
        ssize_t n = read(fd, file->image + file->image_size,
                         size - file->image_size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            status = cfi_fail(diag, CFI_E_IO, CFI_NO_OFFSET,
                              "cannot read file");
        if (n <= 0)
            break;
        file->image_size += (size_t)n;
    }
    close(fd);
    return status;
}

/* The bytes of a frame section shown to our parser and libdwarf. */
static struct cfi_dwarf_section shown_bytes(const struct cfi_elf_section *found,
                                            size_t parsed_size)
{
    struct cfi_dwarf_section shown = {NULL, 0, found->addr};
    if (parsed_size > 0) {
        shown.bytes = found->bytes;
        shown.size = parsed_size;
    }
    return shown;
}

/* A CIE whose augmentation has no 'z' but carries no data ("S", which gas
 * writes for a signal frame in .debug_frame) is valid, and libdwarf
 * 20210528 cannot read it; nor an AArch64 CIE with the letters 'B' or
 * 'G' ("zRB", which gcc writes for -mbranch-protection=pac-ret+b-key:
 * libdwarf refuses the whole section); nor does it read the records
 * that follow a zero length word in .debug_frame (it stops there). The
 * file is then read by our parser alone. */
static bool beyond_libdwarf(const struct cfi_builder *checked)
{
    if (checked->records_after_zero_length)
        return true;
    for (size_t i = 0; i < checked->ncies; i++) {
        const struct cfi_cie *cie = &checked->cies[i];
        const char *augmentation = cie->augmentation;
        if (augmentation[0] != '\0' && augmentation[0] != 'z')
            return true;
        if (cie->ra_b_key || cie->mte_tagged)
            return true;
    }
    return false;
}

/* Our parser reads both sections first, so that libdwarf only reads what
 * it accepted (see dwarf.c); then libdwarf loads them, and the two must
 * agree record for record, so that a silent misreading by libdwarf never
 * reaches the engines. */
static enum cfi_status load_frames(struct cfi_file *file,
                                   const struct cfi_elf_frames *frames,
                                   struct cfi_diag *diag)
{
    struct cfi_builder checked, loaded;
    cfi_builder_init(&checked, file->arch);
    cfi_builder_init(&loaded, file->arch);
    size_t eh_size = 0, debug_size = 0;
    enum cfi_status status = cfi_parse_section(
        &checked, frames->eh_frame.bytes, frames->eh_frame.file_size,
        CFI_EH_FRAME, frames->eh_frame.addr, &eh_size, diag);
    if (status == CFI_OK)
        status = cfi_parse_section(
            &checked, frames->debug_frame.bytes, frames->debug_frame.file_size,
            CFI_DEBUG_FRAME, frames->debug_frame.addr, &debug_size, diag);
    /* Sections that hold no record (only .eh_frame's terminator: glibc's
     * gconv modules, libnss_dns.so.2) are valid: the file has no FDE,
     * and libdwarf has nothing to read. */
    bool empty = checked.ncies == 0 && checked.nfdes == 0;
    struct cfi_dwarf_section eh = shown_bytes(&frames->eh_frame, eh_size);
    struct cfi_dwarf_section debug =
        shown_bytes(&frames->debug_frame, debug_size);
    bool ours_alone =
        status == CFI_OK && (empty || beyond_libdwarf(&checked));
    if (status == CFI_OK && !ours_alone)
        status = cfi_dwarf_load(&loaded, &eh, &debug, diag);
    if (status == CFI_OK && !ours_alone)
        status = cfi_builder_compare(&checked, &loaded, diag);
    if (status == CFI_OK)
        status = cfi_builder_finish(ours_alone ? &checked : &loaded, file, diag);
    cfi_builder_release(&checked);
    cfi_builder_release(&loaded);
    return status;
}

static struct cfi_section_bytes section_bytes(const struct cfi_elf_section *s)
{
    struct cfi_section_bytes shown = {NULL, 0, s->addr, s->offset, false};
    if (s->present && s->bytes) {
        shown.bytes = s->bytes;
        shown.size = s->file_size;
        shown.relocated = s->relocated;
    }
    return shown;
}

/* How a file is opened: without CFI allowed (cfi_file_open_code), and
 * with its debug file looked for (cfi_file_open_debug). */
struct open_how {
    bool code_only;
    bool debug;
    const struct cfi_debug_search *search;
};

static enum cfi_status load(struct cfi_file *file, const struct open_how *how,
                            struct cfi_diag *diag)
{
    struct cfi_elf_frames frames;
    enum cfi_status status = cfi_elf_read(file, &frames, diag);
    if (status == CFI_OK && how->debug)
        status = cfi_debug_file_merge(file, how->search, &frames, diag);
    if (status != CFI_OK)
        return status;
    file->frame_bytes[CFI_EH_FRAME] = section_bytes(&frames.eh_frame);
    file->frame_bytes[CFI_DEBUG_FRAME] = section_bytes(&frames.debug_frame);
    file->eh_frame_addr = frames.eh_frame.addr;
    file->eh_frame_size = frames.eh_frame.size;
    file->eh_frame_hdr_addr = frames.eh_frame_hdr.addr;
    file->eh_frame_hdr_size = frames.eh_frame_hdr.size;
    if (!frames.eh_frame.present && !frames.debug_frame.present)
        return how->code_only ? CFI_OK
                         : cfi_fail(diag, CFI_E_NO_CFI, CFI_NO_OFFSET,
                                    "no .eh_frame or .debug_frame section");
    return load_frames(file, &frames, diag);
}

static enum cfi_status open_file(const char *path, const struct open_how *how,
                                 struct cfi_file **file, struct cfi_diag *diag)
{
    *file = NULL;
    struct cfi_file *loaded = calloc(1, sizeof *loaded);
    if (loaded) {
        loaded->arena = cfi_arena_new();
        loaded->path = strdup(path);
    }
    if (!loaded || !loaded->arena || !loaded->path) {
        cfi_file_close(loaded);
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    }
    enum cfi_status status = cfi_read_image(path, loaded, diag);
    if (status == CFI_OK)
        status = load(loaded, how, diag);
    if (status != CFI_OK) {
        cfi_file_close(loaded);
        return status;
    }
    *file = loaded;
    return CFI_OK;
}

enum cfi_status cfi_file_open(const char *path, struct cfi_file **file,
                              struct cfi_diag *diag)
{
    struct open_how how = {false, false, NULL};
    return open_file(path, &how, file, diag);
}

enum cfi_status cfi_file_open_debug(const char *path,
                                    const struct cfi_debug_search *search,
                                    struct cfi_file **file,
                                    struct cfi_diag *diag)
{
    struct open_how how = {false, true, search};
    return open_file(path, &how, file, diag);
}

enum cfi_status cfi_file_open_code(const char *path, struct cfi_file **file,
                                   struct cfi_diag *diag)
{
    struct open_how how = {true, false, NULL};
    return open_file(path, &how, file, diag);
}

void cfi_file_close(struct cfi_file *file)
{
    if (!file)
        return;
    free(file->path);
    free(file->debug_path);
    free(file->image);
    cfi_arena_free(file->arena);
    free(file);
}

/* fdes[lo .. hi) is one section's group. The candidates are the FDEs that
 * begin at or before pc; walking back from the last of them, the first
 * that holds pc fixes the winning pc_begin, and the walk goes on only
 * through FDEs with that same pc_begin (lower offsets win). reach[] ends
 * the walk as soon as no earlier FDE can still hold pc. */
static const struct cfi_fde *lookup_group(const struct cfi_file *file,
                                          size_t lo, size_t hi, uint64_t pc)
{
    const struct cfi_fde *fdes = file->fdes;
    const uint64_t *reach = file->arena->reach;
    size_t a = lo, b = hi;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (fdes[mid].pc_begin <= pc)
            a = mid + 1;
        else
            b = mid;
    }
    const struct cfi_fde *best = NULL;
    for (size_t i = a; i > lo; i--) {
        const struct cfi_fde *fde = &fdes[i - 1];
        if (best && fde->pc_begin != best->pc_begin)
            break;
        if (reach[i - 1] <= pc)
            break;
        if (pc < fde->pc_end)
            best = fde;
    }
    return best;
}

const struct cfi_fde *cfi_file_lookup_in(const struct cfi_file *file,
                                         enum cfi_section section,
                                         uint64_t pc)
{
    if (section == CFI_EH_FRAME)
        return lookup_group(file, 0, file->n_eh_frame, pc);
    return lookup_group(file, file->n_eh_frame, file->nfdes, pc);
}

const struct cfi_fde *cfi_file_lookup(const struct cfi_file *file,
                                      uint64_t pc)
{
    const struct cfi_fde *fde = cfi_file_lookup_in(file, CFI_EH_FRAME, pc);
    return fde ? fde : cfi_file_lookup_in(file, CFI_DEBUG_FRAME, pc);
}

/* Segments may overlap in a malformed file: the first in header order
 * wins. */
const struct cfi_segment *cfi_file_segment(const struct cfi_file *file,
                                           uint64_t addr)
{
    for (size_t i = 0; i < file->nsegments; i++) {
        const struct cfi_segment *segment = &file->segments[i];
        if (addr >= segment->vaddr && addr - segment->vaddr < segment->memsz)
            return segment;
    }
    return NULL;
}

bool cfi_make_dirs(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return false;
    }
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        bool ok = mkdir(path, 0755) == 0 || errno == EEXIST;
        *p = '/';
        if (!ok)
            return false;
    }
    return mkdir(path, 0755) == 0 || errno == EEXIST;
}
