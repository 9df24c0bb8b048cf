/* SPDX-License-Identifier: MIT */
/* generate.c — cg_generate: the units of an eh_elf's C, and writing them
 * as one file.
 *
 * Units, in this order (one translation unit each when built):
 *   main      the exported symbols and the dispatch over parts (the
 *             table layout: the whole search, as data, and the switch
 *             to the row bodies: table.c);
 *   part<k>   one part of the search (the tree layout only);
 *   rules<k>  rule sets, RULES_PER_UNIT each;
 *   heads<k>  the CFA register checks before rule sets, HEADS_PER_UNIT
 *             each;
 *   rows<k>   row bodies, ROWS_PER_UNIT each.
 * The main unit also defines eh_elf_object_id, the stamp of the file
 * the IL was read from (cg_file_object_id). Nothing in the output depends
 * on memory addresses or hash table order: the same IL of the same file
 * gives the same bytes. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define RULES_PER_UNIT 256
#define ROWS_PER_UNIT 1024
#define HEADS_PER_UNIT 1024

const char *cg_abi_name(enum cg_abi abi)
{
    return abi == CG_ABI_V1 ? "v1" : "full";
}

bool cg_abi_parse(const char *text, enum cg_abi *abi)
{
    if (!strcmp(text, "full"))
        *abi = CG_ABI_FULL;
    else if (!strcmp(text, "v1"))
        *abi = CG_ABI_V1;
    else
        return false;
    return true;
}

struct generator {
    const struct cg_layout *layout;
    const struct cg_search *search; /* NULL: the table layout */
    struct cg_program *program;
    size_t units_cap;
    size_t expressions;
};

static const char entry_full[] =
    "\n/* Offset rules of a rule set not all in the window (rows.c): each\n"
    " * read through read_memory, the first that fails the answer. */\n"
    "int eh_load_slots(uint64_t cfa, eh_env_t env, eh_out_t f,\n"
    "                  const int32_t *offset, const uint8_t *reg, unsigned n)\n"
    "{\n"
    "    for (unsigned k = 0; k < n; k++)\n"
    "        if (env->read_memory(env->data, cfa + (uint64_t)(int64_t)offset[k],\n"
    "                             8, &f->caller.value[reg[k]]))\n"
    "            return EH_ELF_E_MEMORY;\n"
    "    return EH_ELF_OK;\n}\n"
    "\nconst char eh_elf_ident[] = EH_ELF_IDENT_FULL;\n"
    "const uint32_t eh_elf_abi_version = EH_ELF_ABI_VERSION;\n"
    "\nint eh_elf_unwind(uint64_t pc, const struct eh_elf_regs *callee,\n"
    "                  const struct eh_elf_env *env, "
    "struct eh_elf_frame *frame)\n{\n"
    "    int error;\n"
    "    /* cfa and the caller's registers: every rule set writes them */\n"
    "    frame->error_reg = -1;\n"
    "    frame->error_offset = ~UINT64_C(0);\n"
    "    frame->signal_frame = 0;\n"
    "    frame->%s = 0;\n"
    "    error = eh_search(pc, callee, env, frame);\n"
    "    frame->error = (uint32_t)error;\n"
    "    return error;\n}\n";

static const char entry_v1[] =
    "\nconst char eh_elf_ident[] = EH_ELF_IDENT_V1;\n"
    "const uint32_t eh_elf_abi_version = EH_ELF_ABI_VERSION;\n"
    "\nunwind_context_t _eh_elf(unwind_context_t ctx, uintptr_t pc, "
    "deref_func_t deref)\n{\n"
    "    unwind_context_t out;\n"
    "    memset(&out, 0, sizeof out);\n"
    "    if (eh_search(pc, &ctx, deref, &out) != EH_ELF_OK) {\n"
    "        memset(&out, 0, sizeof out);\n"
    "        out.flags = 1u << UNWF_ERROR;\n"
    "    }\n"
    "    return out;\n}\n";

/* The entry point and the exported constants; the full ABI's frame has
 * ra_b_key where x86-64's has a reserved field (eh_elf.h). */
static void emit_entry(struct cg_text *t, enum cg_abi abi,
                       const struct cfi_arch *arch)
{
    if (abi == CG_ABI_V1)
        cg_puts(t, entry_v1);
    else
        cg_printf(t, entry_full, arch->ra_state != CFI_NO_RA_STATE
                                     ? "ra_b_key" : "reserved");
    cg_printf(t, "const uint16_t eh_elf_machine = %u;\n",
              (unsigned)arch->e_machine);
}

/* The definition of eh_elf_object_id: the file's stamp. */
static void emit_object_id(struct cg_text *t, const struct eh_elf_object_id *id)
{
    cg_printf(t, "\nconst struct eh_elf_object_id eh_elf_object_id = {\n"
                 "    %u, %u, {", (unsigned)id->kind, (unsigned)id->size);
    for (uint32_t i = 0; i < id->size && i < EH_ELF_OBJECT_ID_MAX; i++)
        cg_printf(t, "%s0x%02x", i == 0 ? "" : i % 12 ? ", " : ",\n        ",
                  id->id[i]);
    cg_puts(t, id->size ? "}};\n" : "0}};\n");
}

/* A new unit named prefix<number>; its body is built in *text. */
static bool add_unit(struct generator *g, const char *prefix, size_t number,
                     struct cg_text *text)
{
    struct cg_program *p = g->program;
    if (!text->failed && text->len == 0) { /* all of it is data (table.c) */
        cg_text_free(text);
        return true;
    }
    if (p->nunits == g->units_cap) {
        size_t cap = g->units_cap ? g->units_cap * 2 : 16;
        struct cg_unit *units = realloc(p->units, cap * sizeof *units);
        if (!units)
            return false;
        p->units = units;
        g->units_cap = cap;
    }
    char name[64];
    if (!strcmp(prefix, "main"))
        snprintf(name, sizeof name, "main");
    else
        snprintf(name, sizeof name, "%s%zu", prefix, number);
    char *copy = strdup(name);
    if (!copy || text->failed) {
        free(copy);
        return false;
    }
    p->units[p->nunits++] = (struct cg_unit){copy, text->data, text->len};
    *text = (struct cg_text){0};
    return true;
}

static void emit_rules_unit(struct generator *g, struct cg_text *t,
                            size_t first, size_t end)
{
    struct cg_expr_set exprs = {.unit = (unsigned)g->program->nunits};
    for (size_t k = first; k < end; k++) {
        cg_printf(t, "\nEH_HIDDEN int eh_rules_%zu(uint64_t cfa, eh_in_t in, "
                     "eh_env_t env, eh_out_t f%s);", k,
                  cg_param_decl(g->layout));
        cg_emit_rules(t, &exprs, g->layout, k);
    }
    g->expressions += exprs.emitted;
    cg_intern_free(&exprs.keys);
}

static void emit_heads_unit(struct generator *g, struct cg_text *t,
                            size_t first, size_t end)
{
    const struct cg_layout *layout = g->layout;
    cg_puts(t, "\n");
    for (size_t k = 0; k < cg_rule_bodies(layout); k++)
        cg_printf(t, "EH_HIDDEN int eh_rules_%zu(uint64_t cfa, eh_in_t in, "
                     "eh_env_t env, eh_out_t f%s);\n", k,
                  cg_param_decl(layout));
    for (size_t k = first; k < end; k++)
        cg_emit_head(t, layout, k);
}

static void emit_rows_unit(struct generator *g, struct cg_text *t,
                           size_t first, size_t end)
{
    const struct cg_layout *layout = g->layout;
    struct cg_expr_set exprs = {.unit = (unsigned)g->program->nunits};
    size_t bodies = cg_rule_bodies(layout);
    const char *decl = cg_param_decl(layout);
    bool *declared = calloc(bodies + layout->nheads + 1, sizeof *declared);
    if (!declared) {
        t->failed = true;
        return;
    }
    cg_puts(t, "\n");
    cg_emit_param_extern(t, layout);
    for (size_t k = first; k < end; k++) {
        const struct cg_row *row = &layout->rows[k];
        if (row->kind != CG_ROW_RULES)
            continue;
        bool by_head = row->row->cfa.kind == SEM_CFA_RULE_REG_OFFSET;
        uint32_t code = cg_row_code(layout, row);
        size_t index = by_head ? bodies + row->head : code;
        if (declared[index])
            continue;
        declared[index] = true;
        if (by_head)
            cg_printf(t, "EH_HIDDEN int eh_head_%u(uint64_t off, eh_in_t in, "
                         "eh_env_t env, eh_out_t f%s);\n", row->head, decl);
        else
            cg_printf(t, "EH_HIDDEN int eh_rules_%u(uint64_t cfa, eh_in_t in, "
                         "eh_env_t env, eh_out_t f%s);\n", code, decl);
    }
    for (size_t k = first; k < end; k++) {
        cg_printf(t, "\nEH_HIDDEN int eh_row_%zu(uint64_t pc, eh_in_t in, "
                     "eh_env_t env, eh_out_t f);", k);
        cg_emit_row(t, &exprs, layout, k);
    }
    free(declared);
    g->expressions += exprs.emitted;
    cg_intern_free(&exprs.keys);
}

static bool emit_units(struct generator *g)
{
    struct cg_text t = {0};
    if (!g->search)
        t.failed = t.failed || !cg_emit_table_search(&t, g->layout);
    else
        cg_emit_dispatch(&t, g->search);
    emit_entry(&t, g->layout->abi, g->layout->arch);
    cg_emit_params(&t, g->layout);
    emit_object_id(&t, &g->program->object_id);
    if (!add_unit(g, "main", 0, &t))
        return false;
    for (size_t k = 0; g->search && k < cg_search_parts(g->search); k++) {
        cg_emit_part(&t, g->search, k);
        if (!add_unit(g, "part", k, &t))
            return false;
    }
    size_t bodies = cg_rule_bodies(g->layout);
    for (size_t k = 0; k < bodies; k += RULES_PER_UNIT) {
        size_t end = k + RULES_PER_UNIT;
        emit_rules_unit(g, &t, k, end < bodies ? end : bodies);
        if (!add_unit(g, "rules", k / RULES_PER_UNIT, &t))
            return false;
    }
    for (size_t k = 0; k < g->layout->nheads;
         k += HEADS_PER_UNIT) {
        size_t end = k + HEADS_PER_UNIT;
        emit_heads_unit(g, &t, k, end < g->layout->nheads ? end
                                                          : g->layout->nheads);
        if (!add_unit(g, "heads", k / HEADS_PER_UNIT, &t))
            return false;
    }
    for (size_t k = 0; k < g->layout->nrows; k += ROWS_PER_UNIT) {
        size_t end = k + ROWS_PER_UNIT;
        emit_rows_unit(g, &t, k, end < g->layout->nrows ? end
                                                        : g->layout->nrows);
        if (!add_unit(g, "rows", k / ROWS_PER_UNIT, &t))
            return false;
    }
    cg_text_free(&t);
    return true;
}

/* The file's name, for the prelude's comment: its last path component,
 * without what could end a C comment or a line. */
static void file_name(const struct cfi_file *file, char *buf, size_t size)
{
    const char *path = file->path ? file->path : "(memory)";
    const char *slash = strrchr(path, '/');
    snprintf(buf, size, "%s", slash ? slash + 1 : path);
    for (char *c = buf; *c; c++)
        if (*c == '*' || *c == '/' || (unsigned char)*c < 0x20 ||
            (unsigned char)*c > 0x7e)
            *c = '_';
}

static enum cfi_status generate(struct generator *g, const struct cfi_file *file)
{
    struct cg_program *p = g->program;
    struct cg_text prelude = {0};
    char name[256];
    file_name(file, name, sizeof name);
    cg_emit_prelude(&prelude, p->abi, file->arch, name);
    if (prelude.failed || !emit_units(g)) {
        cg_text_free(&prelude);
        return CFI_E_NOMEM;
    }
    p->prelude = prelude.data;
    p->prelude_len = prelude.len;
    p->stats = (struct cg_stats){
        .leaves = g->layout->nleaves, .rows = g->layout->nrows,
        .rulesets = g->layout->nrulesets, .shapes = g->layout->nshapes,
        .nodes = g->search ? cg_search_nodes(g->search) : 0,
        .parts = g->search ? cg_search_parts(g->search) : 0,
        .expressions = g->expressions,
        .c_bytes = p->prelude_len * p->nunits};
    for (size_t k = 0; k < p->nunits; k++)
        p->stats.c_bytes += p->units[k].body_len;
    return CFI_OK;
}

const char *cg_search_kind_name(enum cg_search_kind kind)
{
    return kind == CG_SEARCH_TABLE ? "table" : "tree";
}

bool cg_search_kind_parse(const char *text, enum cg_search_kind *kind)
{
    if (!strcmp(text, "tree"))
        *kind = CG_SEARCH_TREE;
    else if (!strcmp(text, "table"))
        *kind = CG_SEARCH_TABLE;
    else
        return false;
    return true;
}

enum cfi_status cg_generate(const struct sem_file_il *il, enum cg_abi abi,
                            struct cg_program **result,
                            struct cfi_diag *diag)
{
    return cg_generate_search(il, abi, CG_SEARCH_TREE, result, diag);
}

enum cfi_status cg_generate_search(const struct sem_file_il *il,
                                   enum cg_abi abi, enum cg_search_kind kind,
                                   struct cg_program **result,
                                   struct cfi_diag *diag)
{
    /* eh_elf.h has the register files of these two; v1 is x86-64's. */
    const struct cfi_arch *arch = il->file->arch;
    if (arch != &cfi_arch_x86_64 && arch != &cfi_arch_aarch64)
        return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                        "eh_elf.h has no register file for this machine");
    if (arch != &cfi_arch_x86_64 && abi == CG_ABI_V1)
        return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                        "the v1 ABI is x86-64's: use the full ABI");
    struct eh_elf_object_id object_id;
    enum cfi_status status = cg_file_object_id(il->file, &object_id, diag);
    if (status != CFI_OK)
        return status;
    struct cg_layout layout;
    status = cg_layout_build(il, abi, &layout, diag);
    if (status != CFI_OK)
        return status;
    struct cg_search *search = NULL;
    struct cg_program *program = calloc(1, sizeof *program);
    if (program && (kind == CG_SEARCH_TABLE ||
                    cg_search_build(&layout, &search) == CFI_OK)) {
        program->abi = abi;
        program->machine = arch->e_machine;
        program->object_id = object_id;
        struct generator g = {&layout, search, program, 0, 0};
        status = generate(&g, il->file);
    } else {
        status = CFI_E_NOMEM;
    }
    cg_search_free(search);
    cg_layout_free(&layout);
    if (status != CFI_OK) {
        cg_program_free(program);
        return cfi_fail(diag, status, CFI_NO_OFFSET, "out of memory");
    }
    *result = program;
    return CFI_OK;
}

void cg_program_free(struct cg_program *program)
{
    if (!program)
        return;
    for (size_t k = 0; k < program->nunits; k++) {
        free(program->units[k].name);
        free(program->units[k].body);
    }
    free(program->units);
    free(program->prelude);
    free(program);
}

enum cfi_status cg_write_c(const struct cg_program *program, FILE *out)
{
    fwrite(program->prelude, 1, program->prelude_len, out);
    for (size_t k = 0; k < program->nunits; k++) {
        fprintf(out, "\n/* ---- unit %s ---- */\n", program->units[k].name);
        fwrite(program->units[k].body, 1, program->units[k].body_len, out);
    }
    return ferror(out) ? CFI_E_IO : CFI_OK;
}
