/* SPDX-License-Identifier: MIT */
/* stats_file.c — the counts of one file: its records, the opcodes of its
 * programs (semantics/'s decoder), the rows of its FDEs and their rules
 * (semantics/'s translator), its expressions, and its producer (the
 * .comment section). */
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stats.h"

/* ------------------------------------------------------------------ */
/* Maps                                                                 */
/* ------------------------------------------------------------------ */

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static bool grow(struct stats_map *map)
{
    size_t capacity = map->capacity ? map->capacity * 2 : 64;
    struct stats_map bigger = {
        calloc(capacity, sizeof(char *)), calloc(capacity, sizeof(char *)),
        calloc(capacity, sizeof(uint64_t)), calloc(capacity, sizeof(void *)),
        capacity, map->count};
    if (!bigger.keys || !bigger.examples || !bigger.counts || !bigger.values) {
        free(bigger.keys);
        free(bigger.examples);
        free(bigger.counts);
        free(bigger.values);
        return false;
    }
    for (size_t i = 0; i < map->capacity; i++) {
        if (!map->keys[i])
            continue;
        size_t j = hash(map->keys[i]) & (capacity - 1);
        while (bigger.keys[j])
            j = (j + 1) & (capacity - 1);
        bigger.keys[j] = map->keys[i];
        bigger.examples[j] = map->examples[i];
        bigger.counts[j] = map->counts[i];
        bigger.values[j] = map->values[i];
    }
    free(map->keys);
    free(map->examples);
    free(map->counts);
    free(map->values);
    *map = bigger;
    return true;
}

/* The index of key, added when absent; SIZE_MAX when out of memory. */
static size_t find(struct stats_map *map, const char *key,
                   const char *example)
{
    if (2 * (map->count + 1) > map->capacity && !grow(map))
        return SIZE_MAX;
    size_t i = hash(key) & (map->capacity - 1);
    while (map->keys[i] && strcmp(map->keys[i], key))
        i = (i + 1) & (map->capacity - 1);
    if (!map->keys[i]) {
        map->keys[i] = strdup(key);
        map->examples[i] = strdup(example ? example : "");
        if (!map->keys[i] || !map->examples[i])
            return SIZE_MAX;
        map->count++;
    } else if (example && strcmp(example, map->examples[i]) < 0) {
        /* The first path in sorted order: the same whatever the order
         * the workers saw the files in. */
        char *first = strdup(example);
        if (!first)
            return SIZE_MAX;
        free(map->examples[i]);
        map->examples[i] = first;
    }
    return i;
}

bool stats_map_add(struct stats_map *map, const char *key,
                   const char *example, uint64_t count)
{
    size_t i = find(map, key, example);
    if (i == SIZE_MAX)
        return false;
    map->counts[i] += count;
    return true;
}

void **stats_map_slot(struct stats_map *map, const char *key)
{
    size_t i = find(map, key, NULL);
    return i == SIZE_MAX ? NULL : &map->values[i];
}

void stats_map_free(struct stats_map *map)
{
    for (size_t i = 0; i < map->capacity; i++) {
        free(map->keys[i]);
        free(map->examples[i]);
    }
    free(map->keys);
    free(map->examples);
    free(map->counts);
    free(map->values);
    memset(map, 0, sizeof *map);
}

struct sort_entry {
    uint64_t count;
    const char *key;
    size_t index;
};

static int by_count(const void *a, const void *b)
{
    const struct sort_entry *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return strcmp(x->key, y->key);
}

size_t *stats_map_sorted(const struct stats_map *map)
{
    size_t *order = malloc((map->count + 1) * sizeof *order), n = 0;
    struct sort_entry *entries = malloc((map->count + 1) * sizeof *entries);
    if (!order || !entries) {
        free(order);
        free(entries);
        return NULL;
    }
    for (size_t i = 0; i < map->capacity; i++)
        if (map->keys[i])
            entries[n++] = (struct sort_entry){map->counts[i], map->keys[i], i};
    qsort(entries, n, sizeof *entries, by_count);
    for (size_t i = 0; i < n; i++)
        order[i] = entries[i].index;
    free(entries);
    return order;
}

/* ------------------------------------------------------------------ */
/* The producer: the .comment section                                   */
/* ------------------------------------------------------------------ */

static bool read_at(int fd, uint64_t offset, void *buf, size_t len)
{
    ssize_t n = pread(fd, buf, len, (off_t)offset);
    return n >= 0 && (size_t)n == len;
}

/* The .comment section's bytes (malloc'd, NUL-terminated), or NULL. */
static char *read_comment(int fd, size_t *len)
{
    Elf64_Ehdr eh;
    if (!read_at(fd, 0, &eh, sizeof eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
        eh.e_shstrndx >= eh.e_shnum)
        return NULL;
    Elf64_Shdr *sh = calloc(eh.e_shnum, sizeof *sh);
    char *comment = NULL;
    if (!sh || !read_at(fd, eh.e_shoff, sh, eh.e_shnum * sizeof *sh)) {
        free(sh);
        return NULL;
    }
    for (size_t i = 0; i < eh.e_shnum && !comment; i++) {
        char name[10] = {0};
        if (sh[i].sh_type != SHT_PROGBITS || sh[i].sh_size > (1u << 20) ||
            !read_at(fd, sh[eh.e_shstrndx].sh_offset + sh[i].sh_name, name,
                     sizeof name - 1) ||
            strcmp(name, ".comment"))
            continue;
        comment = malloc(sh[i].sh_size + 1);
        if (comment && !read_at(fd, sh[i].sh_offset, comment, sh[i].sh_size)) {
            free(comment);
            comment = NULL;
        } else if (comment) {
            comment[sh[i].sh_size] = 0;
            *len = sh[i].sh_size;
        }
    }
    free(sh);
    return comment;
}

/* "GCC: (Debian 12.2.0-14) 12.2.0" → "GCC 12.2.0", "GCC: (GNU) 10.3.1
 * 20210422 (Red Hat 10.3.1-1)" → "GCC 10.3.1"; "Debian clang version
 * 14.0.6" → "clang 14"; other strings → NULL. */
static bool producer_word(const char *s, char *word, size_t size)
{
    const char *clang = strstr(s, "clang version ");
    if (clang) {
        snprintf(word, size, "clang %d", atoi(clang + strlen("clang version ")));
        return true;
    }
    if (strncmp(s, "GCC: ", 5))
        return false;
    /* "GCC: (VENDOR) VERSION ...": the version follows the vendor. */
    const char *version = strstr(s, ") ");
    version = version ? version + 2 : s + 5;
    snprintf(word, size, "GCC %.*s", (int)strcspn(version, " "), version);
    return true;
}

static int compare_words(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* The producers of the file, sorted and joined by " + "; "none". */
static void producer_of(const char *path, char *out, size_t size)
{
    snprintf(out, size, "none");
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return;
    size_t len = 0;
    char *comment = read_comment(fd, &len);
    close(fd);
    char words[8][48];
    size_t n = 0;
    for (size_t at = 0; comment && at < len && n < 8; at += strlen(comment + at) + 1) {
        char word[48];
        bool seen = false;
        if (!producer_word(comment + at, word, sizeof word))
            continue;
        for (size_t i = 0; i < n; i++)
            seen |= !strcmp(words[i], word);
        if (!seen)
            snprintf(words[n++], sizeof words[0], "%s", word);
    }
    free(comment);
    qsort(words, n, sizeof words[0], compare_words);
    for (size_t i = 0, used = 0; i < n; i++)
        used += (size_t)snprintf(out + used, used < size ? size - used : 0,
                                 "%s%s", i ? " + " : "", words[i]);
}

/* ------------------------------------------------------------------ */
/* Programs: opcodes and expressions                                    */
/* ------------------------------------------------------------------ */

static struct sem_decode_env decode_env(const struct cfi_cie *cie,
                                        const struct cfi_fde *fde)
{
    return (struct sem_decode_env){
        .code_align = cie->code_align, .data_align = cie->data_align,
        .section = cie->section,
        .address_size = cie->address_size ? cie->address_size : 8,
        .pointer_encoding = cie->fde_encoding,
        .bytes_addr = fde ? fde->instructions_addr : 0, .in_cie = !fde,
        .arch = cie->arch,
    };
}

static void count_expression(struct stats *s, const struct sem_insn *insn,
                             const char *path)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out) {
        s->out_of_memory = true;
        return;
    }
    fprintf(out, "%s: ", sem_opcode_name(insn->opcode));
    sem_print_expr(out, &insn->expr);
    if (fclose(out) != 0 || !stats_map_add(&s->expressions, text, path, 1))
        s->out_of_memory = true;
    free(text);
}

static void count_program(struct stats *s, struct sem_program *program,
                          const uint8_t *bytes, size_t len,
                          const struct sem_decode_env *env, const char *path)
{
    program->count = 0;
    sem_decode(bytes, len, env, program, NULL);
    for (size_t i = 0; i < program->count; i++) {
        const struct sem_insn *insn = &program->insns[i];
        s->opcodes[insn->opcode]++;
        if (insn->opcode == SEM_CFA_def_cfa_expression ||
            insn->opcode == SEM_CFA_expression ||
            insn->opcode == SEM_CFA_val_expression)
            count_expression(s, insn, path);
    }
}

/* ------------------------------------------------------------------ */
/* Rows                                                                 */
/* ------------------------------------------------------------------ */

/* `count` more FDEs with `nrows` rows. */
static void add_rows(struct stats *s, size_t nrows, uint64_t count)
{
    if (nrows >= s->histogram_len) {
        size_t len = nrows + 1 > 2 * s->histogram_len ? nrows + 1
                                                     : 2 * s->histogram_len;
        uint64_t *grown = realloc(s->rows_histogram, len * sizeof *grown);
        if (!grown) {
            s->out_of_memory = true;
            return;
        }
        memset(grown + s->histogram_len, 0,
               (len - s->histogram_len) * sizeof *grown);
        s->rows_histogram = grown;
        s->histogram_len = len;
    }
    s->rows_histogram[nrows] += count;
}

static void count_il(struct stats *s, const struct sem_fde_il *il)
{
    add_rows(s, il->nranges, 1);
    s->rows += il->nranges;
    for (size_t i = 0; i < il->nranges; i++) {
        const struct sem_row *row = il->ranges[i].row;
        s->cfa_kinds[row->cfa.kind]++;
        for (uint32_t k = 0; k < row->nrules; k++)
            if (row->rules[k].reg < CFI_NREGS &&
                row->rules[k].rule.kind < STATS_RULE_KINDS)
                s->rule_kinds[row->rules[k].reg][row->rules[k].rule.kind]++;
    }
}

static void count_error(struct stats *s, const char *what,
                        const struct cfi_diag *diag, const char *path)
{
    char key[160];
    snprintf(key, sizeof key, "%s: %s", what,
             diag->message ? diag->message : cfi_status_text(diag->status));
    if (!stats_map_add(&s->errors, key, path, 1))
        s->out_of_memory = true;
}

/* Augmentation strings come from the file: unprintable bytes as \xNN. */
static void count_augmentation(struct stats *s, const char *aug,
                               const char *path)
{
    char key[4 * CFI_AUGMENTATION_MAX + 3] = "\"";
    size_t n = 1;
    for (size_t i = 0; i < CFI_AUGMENTATION_MAX && aug[i]; i++) {
        unsigned char c = (unsigned char)aug[i];
        n += (size_t)snprintf(key + n, sizeof key - n,
                              c > ' ' && c < 0x7f && c != '\\' ? "%c" : "\\x%02x",
                              c);
    }
    snprintf(key + n, sizeof key - n, "\"");
    if (!stats_map_add(&s->augmentations, key, path, 1))
        s->out_of_memory = true;
}

static void count_file(struct stats *s, const struct cfi_file *file,
                       const char *path)
{
    struct sem_program program = {0};
    for (size_t i = 0; i < file->ncies; i++) {
        const struct cfi_cie *cie = &file->cies[i];
        struct sem_decode_env env = decode_env(cie, NULL);
        s->cies[cie->section]++;
        count_augmentation(s, cie->augmentation, path);
        count_program(s, &program, cie->instructions, cie->instructions_len,
                      &env, path);
    }
    struct sem_arena *arena = sem_arena_new();
    for (size_t i = 0; i < file->nfdes && arena; i++) {
        const struct cfi_fde *fde = &file->fdes[i];
        s->fdes[fde->section]++;
        s->nop_only += cfi_fde_is_nop_only(fde);
        if (fde->cie) {
            struct sem_decode_env env = decode_env(fde->cie, fde);
            count_program(s, &program, fde->instructions,
                          fde->instructions_len, &env, path);
        }
        struct sem_fde_il il;
        struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
        if (sem_translate_fde(fde, arena, &il, &diag) == CFI_OK) {
            count_il(s, &il);
        } else {
            s->fdes_failed++;
            count_error(s, "FDE", &diag, path);
        }
    }
    s->out_of_memory |= arena == NULL;
    sem_arena_free(arena);
    sem_program_free(&program);
}

static void gather(struct stats *s, const char *path)
{
    s->files = 1;
    struct cfi_file *file;
    struct cfi_diag diag = {CFI_OK, NULL, CFI_NO_OFFSET, -1};
    enum cfi_status status = cfi_file_open(path, &file, &diag);
    if (status == CFI_E_NO_CFI) {
        s->files_no_cfi = 1;
        return;
    }
    if (status != CFI_OK) {
        s->files_failed = 1;
        count_error(s, "file", &diag, path);
        return;
    }
    s->archs = file->arch == &cfi_arch_aarch64 ? STATS_AARCH64 : STATS_X86_64;
    count_file(s, file, path);
    cfi_file_close(file);
}

/* ------------------------------------------------------------------ */
/* Merging                                                              */
/* ------------------------------------------------------------------ */

static void merge_map(struct stats *into, struct stats_map *to,
                      const struct stats_map *from)
{
    for (size_t i = 0; i < from->capacity; i++)
        if (from->keys[i] &&
            !stats_map_add(to, from->keys[i], from->examples[i],
                           from->counts[i]))
            into->out_of_memory = true;
}

void stats_merge(struct stats *into, const struct stats *from)
{
    into->archs |= from->archs;
    into->files += from->files;
    into->files_no_cfi += from->files_no_cfi;
    into->files_failed += from->files_failed;
    for (int i = 0; i < 2; i++) {
        into->cies[i] += from->cies[i];
        into->fdes[i] += from->fdes[i];
    }
    into->nop_only += from->nop_only;
    into->fdes_failed += from->fdes_failed;
    into->rows += from->rows;
    for (size_t n = from->histogram_len; n-- > 0;)
        if (from->rows_histogram[n])
            add_rows(into, n, from->rows_histogram[n]);
    for (int i = 0; i < 256; i++)
        into->opcodes[i] += from->opcodes[i];
    for (int i = 0; i < 3; i++)
        into->cfa_kinds[i] += from->cfa_kinds[i];
    for (int r = 0; r < CFI_NREGS; r++)
        for (int k = 0; k < STATS_RULE_KINDS; k++)
            into->rule_kinds[r][k] += from->rule_kinds[r][k];
    merge_map(into, &into->expressions, &from->expressions);
    merge_map(into, &into->augmentations, &from->augmentations);
    merge_map(into, &into->errors, &from->errors);
    into->out_of_memory |= from->out_of_memory;
}

void stats_free(struct stats *s)
{
    free(s->rows_histogram);
    stats_map_free(&s->expressions);
    stats_map_free(&s->augmentations);
    stats_map_free(&s->errors);
    memset(s, 0, sizeof *s);
}

void stats_add_file(struct stats *all, struct stats_map *producers,
                    bool by_producer, const char *path)
{
    struct stats *mine = calloc(1, sizeof *mine);
    if (!mine) {
        all->out_of_memory = true;
        return;
    }
    gather(mine, path);
    stats_merge(all, mine);
    if (by_producer) {
        char name[256];
        producer_of(path, name, sizeof name);
        void **slot = stats_map_slot(producers, name);
        if (slot && !*slot)
            *slot = calloc(1, sizeof(struct stats));
        if (slot && *slot && stats_map_add(producers, name, path, 1))
            stats_merge(*slot, mine);
        else
            all->out_of_memory = true;
    }
    stats_free(mine);
    free(mine);
}

struct stats_quantiles stats_rows_quantiles(const struct stats *s)
{
    struct stats_quantiles q = {0, 0, 0, 0};
    uint64_t total = 0, seen = 0;
    for (size_t n = 0; n < s->histogram_len; n++)
        total += s->rows_histogram[n];
    uint64_t *targets[3] = {&q.median, &q.p90, &q.p99};
    const double fractions[3] = {0.5, 0.9, 0.99};
    int next = 0;
    for (size_t n = 0; n < s->histogram_len; n++) {
        seen += s->rows_histogram[n];
        while (next < 3 && total && (double)seen >= fractions[next] * (double)total)
            *targets[next++] = n;
        if (s->rows_histogram[n])
            q.max = n;
    }
    return q;
}
