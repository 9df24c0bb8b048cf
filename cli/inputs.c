/* SPDX-License-Identifier: MIT */
/* inputs.c — see inputs.h. */
#include "inputs.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_inputs_option(const char *command, int argc, char **argv, int *i,
                      struct cli_inputs *inputs)
{
    static const char name[] = "--debug-dir";
    const char *arg = argv[*i], *value;
    size_t n = sizeof name - 1;
    if (strncmp(arg, name, n) != 0 || (arg[n] != '\0' && arg[n] != '='))
        return 0;
    if (arg[n] == '=') {
        value = arg + n + 1;
    } else if (*i + 1 < argc) {
        value = argv[++*i];
    } else {
        return cli_usage_error(command, "missing value for", arg);
    }
    if (!*value)
        return cli_usage_error(command, "empty directory for", name);
    if (inputs->ndebug_dirs == CLI_DEBUG_DIRS_MAX)
        return cli_usage_error(command, "too many --debug-dir (16 at most):",
                               value);
    inputs->debug_dirs[inputs->ndebug_dirs++] = value;
    return 1;
}

enum cfi_status cli_open_cfi(const struct cli_inputs *inputs,
                             const char *path, struct cfi_file **file,
                             struct cfi_diag *diag)
{
    struct cfi_debug_search search = {NULL, 0};
    if (inputs) {
        search.dirs = inputs->debug_dirs;
        search.ndirs = inputs->ndebug_dirs;
    }
    enum cfi_status status = cfi_file_open_debug(path, &search, file, diag);
    if (status == CFI_OK && (*file)->debug_state == CFI_DEBUG_MISSING)
        cli_note_debug_missing(path, (*file)->debug_path);
    return status;
}

void cli_note_debug_missing(const char *path, const char *name)
{
    fprintf(stderr,
            "cfisem: %s: note: debug file %s not found; FDEs only in its "
            ".debug_frame are not read\n",
            path, name);
}

void cli_inputs_help(FILE *out)
{
    fputs("  --debug-dir DIR  look for separate debug files in DIR (by\n"
          "                   build-id: DIR/.build-id/NN/REST.debug; by\n"
          "                   .gnu_debuglink: DIR/FILEDIR/NAME), before\n"
          "                   /usr/lib/debug; repeatable\n",
          out);
}

bool cli_pc_parse(const char *text, struct cli_pc *pc)
{
    pc->text = text;
    pc->symbolic = false;
    pc->addr = 0;
    if (!text || !*text)
        return false;
    if (cli_parse_u64(text, &pc->addr))
        return true;
    /* A symbol starts as C identifiers and mangled names do; a malformed
     * number (0x12g, -4) is not one. */
    char first = text[0];
    if (!(first == '_' || first == '.' || first == '$' ||
          (first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z')))
        return false;
    const char *plus = strrchr(text, '+');
    uint64_t offset;
    if (plus && (plus == text || !cli_parse_u64(plus + 1, &offset)))
        return false;
    pc->symbolic = true;
    return true;
}

/* The functions named `name` (len bytes): how many, and the lowest. */
static size_t find_by_name(const struct cli_symbols *s, const char *name,
                           size_t len, uint64_t *lowest)
{
    size_t found = 0;
    for (size_t i = 0; i < s->count; i++) {
        const char *candidate = s->items[i].name;
        if (strncmp(candidate, name, len) != 0 || candidate[len] != '\0')
            continue;
        if (found++ == 0)
            *lowest = s->items[i].value; /* sorted: the first is lowest */
    }
    return found;
}

int cli_pc_resolve(const char *command, const char *path,
                   const struct cfi_file *file, struct cli_pc *pc)
{
    if (!pc->symbolic)
        return CLI_OK;
    const char *plus = strrchr(pc->text, '+');
    size_t len = plus ? (size_t)(plus - pc->text) : strlen(pc->text);
    uint64_t offset = 0, value = 0;
    if (plus)
        cli_parse_u64(plus + 1, &offset);
    struct cli_symbols symbols;
    cli_symbols_load(file, &symbols);
    size_t found = find_by_name(&symbols, pc->text, len, &value);
    cli_symbols_free(&symbols);
    if (found == 0) {
        fprintf(stderr, "cfisem %s: %s: no function named %.*s\n", command,
                path, (int)len, pc->text);
        return CLI_USAGE;
    }
    if (found > 1)
        fprintf(stderr,
                "cfisem %s: %s: note: %zu functions are named %.*s; the one "
                "at the lowest address, 0x%" PRIx64 ", is taken\n",
                command, path, found, (int)len, pc->text, value);
    pc->addr = value + offset;
    return CLI_OK;
}

void cli_symbols_load(const struct cfi_file *file, struct cli_symbols *s)
{
    s->file = file;
    s->items = NULL;
    s->count = 0;
    if (cfi_file_functions(file, &s->items, &s->count) != CFI_OK) {
        s->items = NULL;
        s->count = 0;
    }
}

void cli_symbols_free(struct cli_symbols *s)
{
    free(s->items);
    s->items = NULL;
    s->count = 0;
}

/* The function symbol that holds `lookup`, inside the file's
 * executable segments, or NULL; unnamed ones are none. */
static const struct cfi_symbol *holder(const struct cli_symbols *s,
                                       uint64_t lookup)
{
    uint64_t offset;
    const struct cfi_segment *segment =
        s && s->file ? cfi_file_segment(s->file, lookup) : NULL;
    if (!segment || !segment->executable)
        return NULL;
    const struct cfi_symbol *symbol =
        cfi_symbol_find(s->items, s->count, lookup, &offset);
    return symbol && symbol->name[0] ? symbol : NULL;
}

static const char *label(const struct cfi_symbol *symbol, uint64_t addr,
                         char *buf, size_t size)
{
    if (addr == symbol->value)
        snprintf(buf, size, "%s", symbol->name);
    else
        snprintf(buf, size, "%s+0x%" PRIx64, symbol->name,
                 addr - symbol->value);
    return buf;
}

const char *cli_symbol_label(const struct cli_symbols *s, uint64_t addr,
                             char *buf, size_t size)
{
    const struct cfi_symbol *symbol = holder(s, addr);
    return symbol ? label(symbol, addr, buf, size) : NULL;
}

const char *cli_symbol_label_pc(const struct cli_symbols *s, uint64_t pc,
                                bool caller_frame, char *buf, size_t size)
{
    if (caller_frame && pc == 0)
        return NULL;
    const struct cfi_symbol *symbol =
        holder(s, cfi_lookup_pc(pc, caller_frame));
    return symbol ? label(symbol, pc, buf, size) : NULL;
}

void cli_symbol_print_return(FILE *out, const struct cli_symbols *s,
                             uint64_t addr)
{
    char buf[512];
    const char *text = cli_symbol_label_pc(s, addr, true, buf, sizeof buf);
    if (text)
        fprintf(out, " <%s>", text);
}
