/* SPDX-License-Identifier: MIT */
/* maps.c — the ELFs mapped in the traced process (/proc/PID/maps), each
 * opened once with its engines, and where each is loaded.
 *
 * The load bias of an ELF is the start of its mapping at file offset 0
 * minus its lowest segment's page: runtime address = file address + bias
 * (the dynamic loader's l_addr). The vDSO is in no file: its image is read
 * from the process's memory and written to a file first. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define PAGE 4096u

static char *copy_text(const char *text)
{
    size_t len = strlen(text) + 1;
    char *copy = malloc(len);
    if (copy)
        memcpy(copy, text, len);
    return copy;
}

static void note_open_error(struct trace_maps *maps, const char *path,
                            const char *message)
{
    struct trace_report *r = maps->report;
    char **grown = realloc(r->open_errors,
                           (r->nopen_errors + 1) * sizeof *grown);
    if (!grown)
        return;
    r->open_errors = grown;
    size_t len = strlen(path) + strlen(message) + 3;
    char *line = malloc(len);
    if (line)
        snprintf(line, len, "%s: %s", path, message);
    r->open_errors[r->nopen_errors++] = line;
}

/* Copies the vDSO's image [start, end) into a file under tmp_dir. */
static char *copy_vdso(struct trace_maps *maps, struct trace_mem *mem,
                       uint64_t start, uint64_t end)
{
    if (!maps->tmp_dir || end <= start || end - start > (64u << 20))
        return NULL;
    size_t len = (size_t)(end - start);
    uint8_t *image = malloc(len);
    char *path = malloc(strlen(maps->tmp_dir) + 32);
    if (!image || !path || trace_mem_read(mem, start, image, len) != len) {
        free(image);
        free(path);
        return NULL;
    }
    sprintf(path, "%s/vdso.so", maps->tmp_dir);
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(image, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = false;
    free(image);
    if (!ok) {
        free(path);
        return NULL;
    }
    return path;
}

static void open_engines(struct trace_maps *maps, struct trace_elf *elf)
{
    struct engine_config config = {NULL, maps->options->cache_dir};
    for (int id = 0; id < ENGINE_COUNT; id++) {
        if (!maps->options->engines[id])
            continue;
        struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
        if (engine_open((enum engine_id)id, elf->file, &config,
                        &elf->engines[id], &diag) == CFI_OK)
            elf->engine_open[id] = true;
        else
            note_open_error(maps, elf->path,
                            diag.message ? diag.message : "engine not opened");
    }
}

static uint64_t lowest_page(const struct cfi_file *file)
{
    uint64_t low = UINT64_MAX;
    for (size_t i = 0; i < file->nsegments; i++)
        if (file->segments[i].vaddr < low)
            low = file->segments[i].vaddr;
    return low == UINT64_MAX ? 0 : low & ~(uint64_t)(PAGE - 1);
}

/* The lowest page of the ELF at path (its CFI read from another file, the
 * addresses are still its own). */
static uint64_t mapped_lowest_page(const char *path)
{
    struct cfi_file *file;
    if (cfi_file_open_code(path, &file, NULL) != CFI_OK)
        return 0;
    uint64_t low = lowest_page(file);
    cfi_file_close(file);
    return low;
}

/* The ELF named `path`, opened on first sight; its index. */
static bool elf_index(struct trace_maps *maps, struct trace_mem *mem,
                      const char *path, uint64_t start, uint64_t end,
                      size_t *index)
{
    for (size_t i = 0; i < maps->nelves; i++)
        if (!strcmp(maps->elves[i].path, path)) {
            *index = i;
            return true;
        }
    struct trace_elf *grown = realloc(maps->elves,
                                      (maps->nelves + 1) * sizeof *grown);
    if (!grown)
        return false;
    maps->elves = grown;
    struct trace_elf *elf = &maps->elves[maps->nelves];
    memset(elf, 0, sizeof *elf);
    elf->path = copy_text(path);
    const struct trace_options *o = maps->options;
    bool replaced = o->cfi_elf && !strcmp(path, o->cfi_elf);
    elf->file_path = !strcmp(path, "[vdso]") ? copy_vdso(maps, mem, start, end)
                     : replaced              ? copy_text(o->cfi_file)
                                             : copy_text(path);
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    if (!elf->path || !elf->file_path)
        note_open_error(maps, path, "cannot read the image");
    else if (cfi_file_open(elf->file_path, &elf->file, &diag) != CFI_OK) {
        elf->file = NULL;
        note_open_error(maps, path, diag.message ? diag.message
                                                 : "cannot open");
    } else {
        elf->min_vaddr = replaced ? mapped_lowest_page(path)
                                  : lowest_page(elf->file);
        open_engines(maps, elf);
    }
    *index = maps->nelves++;
    return true;
}

struct maps_line {
    uint64_t start, end, offset;
    char perms[8];
    char path[4096];
};

static bool parse_line(const char *text, struct maps_line *line)
{
    int path_at = 0;
    line->path[0] = 0;
    if (sscanf(text, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n",
               &line->start, &line->end, line->perms, &line->offset,
               &path_at) < 4)
        return false;
    if (path_at > 0) {
        snprintf(line->path, sizeof line->path, "%s", text + path_at);
        line->path[strcspn(line->path, "\n")] = 0;
    }
    return true;
}

static bool add_mapping(struct trace_maps *maps, const struct trace_mapping *m,
                        size_t *capacity)
{
    if (maps->nmappings == *capacity) {
        size_t grown_capacity = *capacity ? 2 * *capacity : 64;
        struct trace_mapping *grown =
            realloc(maps->mappings, grown_capacity * sizeof *grown);
        if (!grown)
            return false;
        maps->mappings = grown;
        *capacity = grown_capacity;
    }
    maps->mappings[maps->nmappings++] = *m;
    return true;
}

/* Base of `path`: the start of its mapping at offset 0 (maps lists an
 * object's mappings in address order, the offset-0 one first). */
struct bases {
    char path[4096];
    uint64_t base;
};

static enum cfi_status read_lines(struct trace_maps *maps,
                                  struct trace_mem *mem, FILE *in)
{
    struct maps_line line;
    struct bases last = {"", 0};
    size_t capacity = 0;
    char text[4200];
    maps->nmappings = 0;
    while (fgets(text, sizeof text, in)) {
        if (!parse_line(text, &line) || line.path[0] == 0)
            continue;
        bool special = line.path[0] == '[';
        if (special && strcmp(line.path, "[vdso]"))
            continue;
        if (strstr(line.path, " (deleted)"))
            continue;
        if (line.offset == 0) {
            snprintf(last.path, sizeof last.path, "%s", line.path);
            last.base = line.start;
        }
        if (!strchr(line.perms, 'x') || strcmp(last.path, line.path))
            continue;
        size_t index;
        if (!elf_index(maps, mem, line.path, line.start, line.end, &index))
            return CFI_E_NOMEM;
        const struct trace_elf *elf = &maps->elves[index];
        struct trace_mapping m = {line.start, line.end,
                                  last.base - elf->min_vaddr, index};
        if (!add_mapping(maps, &m, &capacity))
            return CFI_E_NOMEM;
    }
    return CFI_OK;
}

enum cfi_status trace_maps_reread(struct trace_maps *maps,
                                  struct trace_mem *mem)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)maps->pid);
    FILE *in = fopen(path, "r");
    if (!in)
        return CFI_E_IO;
    maps->generation++;
    enum cfi_status status = read_lines(maps, mem, in);
    fclose(in);
    return status;
}

const struct trace_mapping *trace_maps_find(const struct trace_maps *maps,
                                            uint64_t pc)
{
    for (size_t i = 0; i < maps->nmappings; i++)
        if (maps->mappings[i].start <= pc && pc < maps->mappings[i].end)
            return &maps->mappings[i];
    return NULL;
}

static void elf_free(struct trace_elf *elf)
{
    for (int id = 0; id < ENGINE_COUNT; id++)
        if (elf->engine_open[id])
            engine_close(&elf->engines[id]);
    if (elf->il)
        sem_file_il_free(elf->il);
    free(elf->symbols);
    if (elf->file)
        cfi_file_close(elf->file);
    free(elf->path);
    free(elf->file_path);
}

void trace_maps_forget(struct trace_maps *maps)
{
    maps->nmappings = 0;
    maps->generation++;
}

void trace_maps_free(struct trace_maps *maps)
{
    for (size_t i = 0; i < maps->nelves; i++)
        elf_free(&maps->elves[i]);
    free(maps->elves);
    free(maps->mappings);
    maps->elves = NULL;
    maps->mappings = NULL;
    maps->nelves = maps->nmappings = 0;
}

const struct sem_file_il *trace_elf_il(struct trace_elf *elf)
{
    if (!elf->il && elf->file && sem_file_il_build(elf->file, &elf->il) != CFI_OK)
        elf->il = NULL;
    return elf->il;
}

bool trace_elf_function(struct trace_elf *elf, uint64_t pc, char *buf,
                        size_t size)
{
    if (!elf->symbols_read && elf->file &&
        cfi_file_functions(elf->file, &elf->symbols, &elf->nsymbols) !=
            CFI_OK) {
        elf->symbols = NULL;
        elf->nsymbols = 0;
    }
    elf->symbols_read = true;
    uint64_t offset;
    const struct cfi_symbol *s =
        cfi_symbol_find(elf->symbols, elf->nsymbols, pc, &offset);
    if (!s || !s->name[0])
        return false;
    if (offset)
        snprintf(buf, size, "%s+0x%" PRIx64, s->name, offset);
    else
        snprintf(buf, size, "%s", s->name);
    return true;
}

enum cfi_status trace_maps_add_at(struct trace_maps *maps,
                                  struct trace_mem *mem, const char *path,
                                  uint64_t bias, size_t *index)
{
    if (!elf_index(maps, mem, path, 0, 0, index))
        return CFI_E_NOMEM;
    const struct trace_elf *elf = &maps->elves[*index];
    if (!elf->file)
        return CFI_E_IO;
    for (size_t i = 0; i < maps->nmappings; i++)
        if (maps->mappings[i].elf == *index)
            return CFI_OK;
    size_t capacity = maps->nmappings;
    for (size_t i = 0; i < elf->file->nsegments; i++) {
        const struct cfi_segment *s = &elf->file->segments[i];
        struct trace_mapping m = {s->vaddr + bias, s->vaddr + s->memsz + bias,
                                  bias, *index};
        if (s->executable && !add_mapping(maps, &m, &capacity))
            return CFI_E_NOMEM;
    }
    maps->generation++;
    return CFI_OK;
}

enum cfi_status trace_maps_add_file(struct trace_maps *maps,
                                    struct trace_mem *mem, const char *path,
                                    uint64_t entry_pc, size_t *index)
{
    if (!elf_index(maps, mem, path, 0, 0, index))
        return CFI_E_NOMEM;
    const struct trace_elf *elf = &maps->elves[*index];
    if (!elf->file)
        return CFI_E_IO;
    return trace_maps_add_at(maps, mem, path, entry_pc - elf->file->entry,
                             index);
}
