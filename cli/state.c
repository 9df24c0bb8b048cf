/* SPDX-License-Identifier: MIT */
/* state.c — the machine state options shared by `unwind` and `explain`:
 * --regs, --mem-seed, --mem DUMP@ADDR, --fault B-E, and the memory model
 * they describe. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "engines/engines.h"

static bool set_regs(struct cli_state *state, const struct cfi_arch *arch)
{
    char *saved = NULL;
    for (char *item = strtok_r(state->regs_text, ",", &saved); item;
         item = strtok_r(NULL, ",", &saved)) {
        char *eq = strchr(item, '=');
        if (!eq)
            return false;
        int reg = cfi_arch_reg_parse(arch, item, (size_t)(eq - item));
        uint64_t value;
        if (reg < 0 || !cli_parse_u64(eq + 1, &value))
            return false;
        cfi_regs_set(&state->callee, (unsigned)reg, value);
    }
    state->regs_text = NULL;
    return true;
}

/* Whether one "NAME=VALUE" of the list names a register of some
 * architecture and a number: what can be checked before the file says
 * which architecture it is. */
static bool item_may_be_valid(const char *item, size_t len)
{
    const char *eq = memchr(item, '=', len);
    if (!eq)
        return false;
    size_t name_len = (size_t)(eq - item);
    char value[32];
    size_t value_len = len - name_len - 1;
    if (value_len == 0 || value_len >= sizeof value)
        return false;
    memcpy(value, eq + 1, value_len);
    value[value_len] = 0;
    uint64_t ignored;
    return cli_parse_u64(value, &ignored) &&
           (cfi_arch_reg_parse(&cfi_arch_x86_64, item, name_len) >= 0 ||
            cfi_arch_reg_parse(&cfi_arch_aarch64, item, name_len) >= 0);
}

bool cli_state_regs(struct cli_state *state, char *list)
{
    state->regs_text = list;
    state->has_regs = true;
    for (const char *item = list; *item;) {
        size_t len = strcspn(item, ",");
        if (!item_may_be_valid(item, len))
            return false;
        item += len + (item[len] == ',');
    }
    return true;
}

bool cli_state_set_regs(struct cli_state *state, const struct cfi_arch *arch,
                        uint64_t pc)
{
    if (state->regs_text && !set_regs(state, arch))
        return false;
    if (state->callee.status[arch->pc] != CFI_REG_VALUE)
        cfi_regs_set(&state->callee, arch->pc, pc);
    return true;
}

bool cli_state_dump(struct cli_state *state, char *text)
{
    char *at = strrchr(text, '@');
    if (!at || at == text)
        return false;
    *at = 0;
    state->dump_path = text;
    return cli_parse_u64(at + 1, &state->dump_addr);
}

bool cli_state_fault(struct cli_state *state, const char *text)
{
    const char *dash = strchr(text, '-');
    if (!dash || state->nfaults == CLI_MAX_FAULTS)
        return false;
    char begin[32];
    size_t len = (size_t)(dash - text);
    if (len == 0 || len >= sizeof begin)
        return false;
    memcpy(begin, text, len);
    begin[len] = 0;
    uint64_t b, e;
    if (!cli_parse_u64(begin, &b) || !cli_parse_u64(dash + 1, &e) || e <= b)
        return false;
    state->faults[state->nfaults].begin = b;
    state->faults[state->nfaults++].end = e;
    return true;
}

/* The dump's bytes, mapped at its address. */
static int map_dump(struct cli_state *state, struct engine_memory *memory)
{
    struct cfi_diag diag;
    if (cfi_check_regular_file(state->dump_path, &diag) != CFI_OK) {
        cli_report_file_error(state->dump_path, &diag);
        return CLI_BAD_INPUT;
    }
    FILE *f = fopen(state->dump_path, "rb");
    if (!f) {
        fprintf(stderr, "cfisem: %s: cannot read memory dump\n",
                state->dump_path);
        return CLI_BAD_INPUT;
    }
    size_t capacity = 1 << 16, len = 0, n;
    uint8_t *bytes = malloc(capacity);
    while (bytes && (n = fread(bytes + len, 1, capacity - len, f)) > 0) {
        len += n;
        if (len == capacity) {
            uint8_t *grown = realloc(bytes, capacity * 2);
            if (!grown) {
                free(bytes);
                bytes = NULL;
                break;
            }
            bytes = grown;
            capacity *= 2;
        }
    }
    fclose(f);
    enum cfi_status status =
        bytes ? engine_memory_map_bytes(memory, state->dump_addr, bytes, len)
              : CFI_E_NOMEM;
    free(bytes);
    if (status != CFI_OK) {
        fprintf(stderr, "cfisem: %s: cannot map the dump at 0x%" PRIx64 "\n",
                state->dump_path, state->dump_addr);
        return CLI_BAD_INPUT;
    }
    state->dump_len = len;
    return CLI_OK;
}

int cli_state_memory(struct cli_state *state, const struct cfi_file *file,
                     struct engine_memory **result)
{
    struct engine_memory *memory =
        engine_memory_new(state->dump_path == NULL, state->seed);
    if (!memory || engine_memory_map_file(memory, file) != CFI_OK) {
        engine_memory_free(memory);
        fprintf(stderr, "cfisem: out of memory\n");
        return CLI_BAD_INPUT;
    }
    int status = state->dump_path ? map_dump(state, memory) : CLI_OK;
    for (size_t i = 0; i < state->nfaults && status == CLI_OK; i++)
        if (engine_memory_add_fault(memory, state->faults[i].begin,
                                    state->faults[i].end) != CFI_OK) {
            fprintf(stderr, "cfisem: out of memory\n");
            status = CLI_BAD_INPUT;
        }
    if (status != CLI_OK) {
        engine_memory_free(memory);
        return status;
    }
    *result = memory;
    return CLI_OK;
}
