/* SPDX-License-Identifier: MIT */
/* core.c — see core.h. */
#include "remote/core.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

/* struct elf_prstatus of the 64-bit Linux ABIs: pr_pid at 32, pr_reg at
 * 112 (x86-64: 27 words, user_regs_struct; AArch64: 34, x0-x30, sp, pc,
 * pstate). */
enum {
    PRSTATUS_PID = 32,
    PRSTATUS_REG = 112,
    X86_64_NREG = 27,
    AARCH64_NREG = 34,
};

struct core_segment {
    uint64_t vaddr;
    uint64_t filesz;
    uint64_t offset;
};

struct core_file_map {
    uint64_t start;
    uint64_t end;
    uint64_t offset;     /* bytes */
    const char *path;    /* into notes */
    int fd;              /* -1: not opened yet, -2: cannot be */
};

struct remote_core {
    int fd;
    const struct cfi_arch *arch;
    struct remote_thread *threads;
    size_t nthreads;
    struct core_segment *segments;
    size_t nsegments;
    struct core_file_map *files;
    size_t nfiles;
    uint8_t *notes;      /* every PT_NOTE's bytes, one after the other */
    bool has_entry;      /* NT_AUXV gave AT_ENTRY */
    uint64_t entry;
};

static enum cfi_status fail(struct cfi_diag *diag, enum cfi_status status,
                            const char *message)
{
    return cfi_fail(diag, status, CFI_NO_OFFSET, message);
}

static bool read_at(int fd, void *buf, size_t size, uint64_t offset)
{
    size_t done = 0;
    while (done < size) {
        ssize_t n = pread(fd, (uint8_t *)buf + done, size - done,
                          (off_t)(offset + done));
        if (n <= 0)
            return false;
        done += (size_t)n;
    }
    return true;
}

static enum cfi_status check_header(const Elf64_Ehdr *eh, uint64_t size,
                                    const struct cfi_arch **arch,
                                    struct cfi_diag *diag)
{
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
        return fail(diag, CFI_E_NOT_ELF, "not an ELF file");
    if (eh->e_ident[EI_CLASS] != ELFCLASS64
        || eh->e_ident[EI_DATA] != ELFDATA2LSB)
        return fail(diag, CFI_E_UNSUPPORTED,
                    "not a 64-bit little-endian ELF file");
    if (eh->e_type != ET_CORE)
        return fail(diag, CFI_E_MALFORMED, "not a core file (e_type)");
    if (eh->e_machine == EM_X86_64)
        *arch = &cfi_arch_x86_64;
    else if (eh->e_machine == EM_AARCH64)
        *arch = &cfi_arch_aarch64;
    else
        return fail(diag, CFI_E_UNSUPPORTED,
                    "a core of a machine other than x86-64 and AArch64");
    if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum == 0)
        return fail(diag, CFI_E_MALFORMED, "no program header table");
    if (eh->e_phoff > size
        || (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > size - eh->e_phoff)
        return fail(diag, CFI_E_MALFORMED,
                    "the program header table lies beyond the end of the "
                    "file (truncated?)");
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Notes                                                                */
/* ------------------------------------------------------------------ */

/* user_regs_struct's order to DWARF numbers (x86-64 psABI). */
static const int x86_64_dwarf[X86_64_NREG] = {
    15, 14, 13, 12, 6, 3, 11, 10, 9, 8, 0, 2, 1, 4, 5, -1, 16, -1, -1, 7,
    -1, -1, -1, -1, -1, -1, -1};

/* The registers of an NT_PRSTATUS's pr_reg (nreg words at `words`) as
 * DWARF numbers. */
static void thread_regs(const struct remote_core *core,
                        const uint8_t *words, struct cfi_regs *regs)
{
    cfi_regs_clear(regs);
    if (core->arch == &cfi_arch_x86_64) {
        for (unsigned r = 0; r < X86_64_NREG; r++)
            if (x86_64_dwarf[r] >= 0)
                cfi_regs_set(regs, (unsigned)x86_64_dwarf[r],
                             cfi_load_le(words + 8 * r, 8));
        return;
    }
    /* AArch64: x0-x30 and sp are DWARF 0-31; the PC is arch->pc. */
    for (unsigned r = 0; r < 32; r++)
        cfi_regs_set(regs, r, cfi_load_le(words + 8 * r, 8));
    cfi_regs_set(regs, core->arch->pc, cfi_load_le(words + 8 * 32, 8));
}

static enum cfi_status add_thread(struct remote_core *core,
                                  const uint8_t *desc, uint64_t size,
                                  struct cfi_diag *diag)
{
    unsigned nreg = core->arch == &cfi_arch_x86_64 ? X86_64_NREG
                                                    : AARCH64_NREG;
    if (size < PRSTATUS_REG + 8 * (uint64_t)nreg)
        return fail(diag, CFI_E_MALFORMED, "an NT_PRSTATUS note is too "
                    "short for its registers");
    void *grown = realloc(core->threads,
                          (core->nthreads + 1) * sizeof *core->threads);
    if (!grown)
        return fail(diag, CFI_E_NOMEM, "out of memory");
    core->threads = grown;
    struct remote_thread *t = &core->threads[core->nthreads++];
    memset(t, 0, sizeof *t);
    t->tid = (pid_t)cfi_load_le(desc + PRSTATUS_PID, 4);
    t->regs_known = true;
    thread_regs(core, desc + PRSTATUS_REG, &t->regs);
    return CFI_OK;
}

/* NT_FILE: count, page size, count (start, end, page offset) triples,
 * then count NUL-terminated paths. */
static enum cfi_status add_files(struct remote_core *core, uint8_t *desc,
                                 uint64_t size, struct cfi_diag *diag)
{
    if (core->files)
        return fail(diag, CFI_E_MALFORMED, "more than one NT_FILE note");
    if (size < 16)
        return fail(diag, CFI_E_MALFORMED, "an NT_FILE note is too short");
    uint64_t count = cfi_load_le(desc, 8);
    uint64_t page = cfi_load_le(desc + 8, 8);
    if (count > (size - 16) / 24)
        return fail(diag, CFI_E_MALFORMED, "the NT_FILE note counts more "
                    "mappings than it holds");
    core->files = calloc(count ? count : 1, sizeof *core->files);
    if (!core->files)
        return fail(diag, CFI_E_NOMEM, "out of memory");
    uint64_t at = 16 + 24 * count;
    for (uint64_t i = 0; i < count; i++) {
        const uint8_t *entry = desc + 16 + 24 * i;
        struct core_file_map *f = &core->files[i];
        f->start = cfi_load_le(entry, 8);
        f->end = cfi_load_le(entry + 8, 8);
        uint64_t pages = cfi_load_le(entry + 16, 8);
        if (page && pages > UINT64_MAX / page)
            return fail(diag, CFI_E_MALFORMED, "an NT_FILE offset "
                        "overflows");
        f->offset = pages * page;
        const uint8_t *end = at < size ? memchr(desc + at, 0, size - at)
                                       : NULL;
        if (!end)
            return fail(diag, CFI_E_MALFORMED, "an NT_FILE path runs past "
                        "the end of its note");
        f->path = (const char *)desc + at;
        f->fd = -1;
        at = (uint64_t)(end - desc) + 1;
    }
    core->nfiles = count;
    return CFI_OK;
}

/* NT_AUXV: (type, value) pairs of 8 bytes; AT_ENTRY places the
 * executable when the core names no file (qemu's cores). */
static void read_auxv(struct remote_core *core, const uint8_t *desc,
                      uint64_t size)
{
    for (uint64_t at = 0; size - at >= 16 && at < size; at += 16)
        if (cfi_load_le(desc + at, 8) == AT_ENTRY) {
            core->entry = cfi_load_le(desc + at + 8, 8);
            core->has_entry = true;
        }
}

static uint64_t align4(uint64_t n)
{
    return (n + 3) & ~(uint64_t)3;
}

static enum cfi_status read_notes(struct remote_core *core, uint8_t *notes,
                                  uint64_t size, struct cfi_diag *diag)
{
    uint64_t at = 0;
    while (size - at >= 12) {
        uint64_t namesz = cfi_load_le(notes + at, 4);
        uint64_t descsz = cfi_load_le(notes + at + 4, 4);
        uint64_t type = cfi_load_le(notes + at + 8, 4);
        uint64_t name = at + 12;
        if (align4(namesz) > size - name
            || align4(descsz) > size - name - align4(namesz))
            return fail(diag, CFI_E_MALFORMED, "a note runs past the end "
                        "of its segment");
        uint64_t desc = name + align4(namesz);
        bool is_core = namesz == 5 && memcmp(notes + name, "CORE", 5) == 0;
        enum cfi_status status = CFI_OK;
        if (is_core && type == NT_PRSTATUS)
            status = add_thread(core, notes + desc, descsz, diag);
        else if (is_core && type == NT_FILE)
            status = add_files(core, notes + desc, descsz, diag);
        else if (is_core && type == NT_AUXV)
            read_auxv(core, notes + desc, descsz);
        if (status != CFI_OK)
            return status;
        at = desc + align4(descsz);
    }
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Segments                                                             */
/* ------------------------------------------------------------------ */

static enum cfi_status read_segments(struct remote_core *core,
                                     const Elf64_Ehdr *eh, uint64_t size,
                                     struct cfi_diag *diag)
{
    Elf64_Phdr *ph = calloc(eh->e_phnum, sizeof *ph);
    core->segments = calloc(eh->e_phnum, sizeof *core->segments);
    if (!ph || !core->segments) {
        free(ph);
        return fail(diag, CFI_E_NOMEM, "out of memory");
    }
    enum cfi_status status = CFI_OK;
    if (!read_at(core->fd, ph, eh->e_phnum * sizeof *ph, eh->e_phoff))
        status = fail(diag, CFI_E_IO, "cannot read the program headers");
    uint64_t notes_size = 0;
    for (unsigned i = 0; status == CFI_OK && i < eh->e_phnum; i++) {
        if (ph[i].p_type != PT_LOAD && ph[i].p_type != PT_NOTE)
            continue;
        if (ph[i].p_offset > size || ph[i].p_filesz > size - ph[i].p_offset)
            status = fail(diag, CFI_E_MALFORMED, "a segment lies beyond "
                          "the end of the file (truncated?)");
        else if (ph[i].p_type == PT_LOAD)
            core->segments[core->nsegments++] = (struct core_segment){
                ph[i].p_vaddr, ph[i].p_filesz, ph[i].p_offset};
        else
            notes_size += ph[i].p_filesz;
    }
    /* Notes of a core do not overlap: more than the file's size of them
     * is a corrupt header table, not a reason to read it many times. */
    if (status == CFI_OK && notes_size > size)
        status = fail(diag, CFI_E_MALFORMED, "the note segments hold more "
                      "bytes than the file");
    if (status == CFI_OK && !(core->notes = malloc(notes_size + 1)))
        status = fail(diag, CFI_E_NOMEM, "out of memory");
    uint64_t at = 0;
    for (unsigned i = 0; status == CFI_OK && i < eh->e_phnum; i++) {
        if (ph[i].p_type != PT_NOTE)
            continue;
        uint8_t *notes = core->notes + at;
        if (!read_at(core->fd, notes, ph[i].p_filesz, ph[i].p_offset))
            status = fail(diag, CFI_E_IO, "cannot read a note segment");
        else
            status = read_notes(core, notes, ph[i].p_filesz, diag);
        at += ph[i].p_filesz;
    }
    free(ph);
    return status;
}

enum cfi_status remote_core_open(const char *path, struct remote_core **core,
                                 struct cfi_diag *diag)
{
    enum cfi_status status = cfi_check_regular_file(path, diag);
    if (status != CFI_OK)
        return status;
    struct remote_core *c = calloc(1, sizeof *c);
    if (!c)
        return fail(diag, CFI_E_NOMEM, "out of memory");
    c->fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    Elf64_Ehdr eh;
    if (c->fd < 0 || fstat(c->fd, &st) != 0)
        status = fail(diag, CFI_E_IO, cfi_errno_text(errno));
    else if (!read_at(c->fd, &eh, sizeof eh, 0))
        status = fail(diag, CFI_E_NOT_ELF, "too short for an ELF header");
    else
        status = check_header(&eh, (uint64_t)st.st_size, &c->arch, diag);
    if (status == CFI_OK)
        status = read_segments(c, &eh, (uint64_t)st.st_size, diag);
    if (status == CFI_OK && c->nthreads == 0)
        status = fail(diag, CFI_E_MALFORMED, "no NT_PRSTATUS note: no "
                      "thread");
    if (status != CFI_OK) {
        remote_core_close(c);
        return status;
    }
    *core = c;
    return CFI_OK;
}

void remote_core_close(struct remote_core *core)
{
    if (!core)
        return;
    for (size_t i = 0; i < core->nfiles; i++)
        if (core->files[i].fd >= 0)
            close(core->files[i].fd);
    if (core->fd >= 0)
        close(core->fd);
    free(core->threads);
    free(core->segments);
    free(core->files);
    free(core->notes);
    free(core);
}

const struct cfi_arch *remote_core_arch(const struct remote_core *core)
{
    return core->arch;
}

const struct remote_thread *remote_core_threads(
    const struct remote_core *core, size_t *count)
{
    *count = core->nthreads;
    return core->threads;
}

static bool same_name(const char *path, const char *exe)
{
    const char *a = strrchr(path, '/');
    const char *b = strrchr(exe, '/');
    return strcmp(a ? a + 1 : path, b ? b + 1 : exe) == 0;
}

/* A core with no NT_FILE note (qemu-user writes none): the
 * executable's PT_LOAD segments, at their addresses (ET_EXEC) or moved
 * by AT_ENTRY - e_entry (ET_DYN). Nothing when EXE cannot be read. */
static enum cfi_status map_exe(const struct remote_core *core,
                               struct remote_space *space, const char *exe)
{
    int fd = open(exe, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    Elf64_Ehdr eh;
    struct stat st;
    enum cfi_status status = CFI_OK;
    if (fd < 0)
        return CFI_OK;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)
        || !read_at(fd, &eh, sizeof eh, 0)
        || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0
        || eh.e_phentsize != sizeof(Elf64_Phdr)
        || (eh.e_type == ET_DYN && !core->has_entry)) {
        close(fd);
        return CFI_OK;
    }
    uint64_t bias = eh.e_type == ET_DYN ? core->entry - eh.e_entry : 0;
    for (unsigned i = 0; status == CFI_OK && i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (!read_at(fd, &ph, sizeof ph, eh.e_phoff + i * sizeof ph))
            break;
        if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
            continue;
        uint64_t page = 0xfff;
        uint64_t start = (ph.p_vaddr + bias) & ~page;
        uint64_t end = (ph.p_vaddr + bias + ph.p_memsz + page) & ~page;
        struct remote_map map = {start, end, ph.p_offset & ~page, exe, NULL,
                                 0};
        if (end > start)
            status = remote_space_add_map(space, &map);
    }
    close(fd);
    return status;
}

enum cfi_status remote_core_load_maps(const struct remote_core *core,
                                      struct remote_space *space,
                                      const char *exe)
{
    if (core->nfiles == 0 && exe)
        return map_exe(core, space, exe);
    for (size_t i = 0; i < core->nfiles; i++) {
        const struct core_file_map *f = &core->files[i];
        if (f->end <= f->start)
            continue;
        const char *path = exe && same_name(f->path, exe) ? exe : f->path;
        struct remote_map map = {f->start, f->end, f->offset, path, NULL, 0};
        enum cfi_status status = remote_space_add_map(space, &map);
        if (status != CFI_OK)
            return status;
    }
    return CFI_OK;
}

/* ------------------------------------------------------------------ */
/* Memory                                                               */
/* ------------------------------------------------------------------ */

static bool from_segments(const struct remote_core *core, uint64_t addr,
                          unsigned size, uint8_t *out)
{
    for (size_t i = 0; i < core->nsegments; i++) {
        const struct core_segment *s = &core->segments[i];
        if (addr >= s->vaddr && addr - s->vaddr < s->filesz
            && size <= s->filesz - (addr - s->vaddr))
            return read_at(core->fd, out, size, s->offset + addr - s->vaddr);
    }
    return false;
}

static bool from_files(struct remote_core *core, uint64_t addr,
                       unsigned size, uint8_t *out)
{
    for (size_t i = 0; i < core->nfiles; i++) {
        struct core_file_map *f = &core->files[i];
        if (addr < f->start || addr >= f->end || size > f->end - addr)
            continue;
        if (f->fd == -1) {
            f->fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
            struct stat st;
            if (f->fd >= 0 && (fstat(f->fd, &st) != 0
                               || !S_ISREG(st.st_mode))) {
                close(f->fd);
                f->fd = -2;
            }
            if (f->fd < 0)
                f->fd = -2;
        }
        return f->fd >= 0
               && read_at(f->fd, out, size, f->offset + (addr - f->start));
    }
    return false;
}

enum remote_read_result remote_core_read(void *data, uint64_t addr,
                                         unsigned size, uint64_t *value)
{
    struct remote_core *core = data;
    uint8_t bytes[8];
    if (size == 0 || size > 8)
        return REMOTE_READ_UNREADABLE;
    if (!from_segments(core, addr, size, bytes)
        && !from_files(core, addr, size, bytes))
        return REMOTE_READ_UNREADABLE;
    *value = cfi_load_le(bytes, size);
    return REMOTE_READ_OK;
}
