/* SPDX-License-Identifier: MIT */
/* unwind_v1.c — `cfisem unwind --engine compiled` with an eh_elf of the
 * v1 ABI (v1 or v1-direct): the eh_elf is asked in a child process, and
 * the answer is shown as v1 carries it: error or not; the CFA (the
 * result's rsp); rip, rbp, rbx with their flags. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cfi/json.h"
#include "compile/cg.h"
#include "validate/validate.h"

/* "0x..", or what a clear flag means. */
static const char *field_text(const struct validate_v1_answer *a, uint8_t flag,
                              uintptr_t value, const char *clear, char *buf,
                              size_t size)
{
    if (!(a->got.flags & flag))
        return clear;
    snprintf(buf, size, "0x%" PRIxPTR, value);
    return buf;
}

static const char *error_text(const struct validate_v1_answer *a)
{
    if (a->crashed)
        return "the call crashed";
    if (a->faulted)
        return "a read of the eh_elf's deref faulted";
    if (a->got.flags & ENGINE_V1_ERROR)
        return "the eh_elf set its error flag (v1 has no error classes)";
    return NULL;
}

static void print_v1_text(const struct validate_v1_answer *a)
{
    const char *error = error_text(a);
    if (error) {
        printf("error: %s", error);
        if (a->crashed)
            printf(" (%s)", validate_crash_text(a->signal));
        printf("\n");
        if (a->text[0])
            printf("the eh_elf wrote on stderr:\n%s\n", a->text);
        return;
    }
    char buf[32];
    printf("v1 carries rip, rsp (the CFA), rbp and rbx only\n");
    printf("cfa = %s\n", field_text(a, ENGINE_V1_RSP, a->got.rsp,
                                    "not set (rsp flag clear)", buf,
                                    sizeof buf));
    printf("rbx = %s\n", field_text(a, ENGINE_V1_RBX, a->got.rbx,
                                    "not restored (the callee's value)", buf,
                                    sizeof buf));
    printf("rbp = %s\n", field_text(a, ENGINE_V1_RBP, a->got.rbp,
                                    "not restored (the callee's value)", buf,
                                    sizeof buf));
    printf("rsp = %s\n", field_text(a, ENGINE_V1_RSP, a->got.rsp, "not set",
                                    buf, sizeof buf));
    printf("rip = %s\n", field_text(a, ENGINE_V1_RIP, a->got.rip,
                                    "undefined (end of stack)", buf,
                                    sizeof buf));
}

static void print_v1_json(const char *abi, uint64_t pc,
                          const struct validate_v1_answer *a)
{
    const char *error = error_text(a);
    printf("{\"schema_version\": %d, \"engine\": \"compiled\", "
           "\"abi\": \"%s\", \"pc\": \"0x%" PRIx64 "\", \"flags\": %u, ",
           CFI_JSON_SCHEMA_VERSION, abi, pc, (unsigned)a->got.flags);
    if (error) {
        printf("\"cfa\": null, \"error\": \"%s\", \"signal\": %s%s%s, "
               "\"regs\": {}}\n", error, a->crashed ? "\"" : "",
               a->crashed ? validate_crash_text(a->signal) : "null",
               a->crashed ? "\"" : "");
        return;
    }
    char buf[32];
    printf("\"cfa\": \"0x%" PRIxPTR "\", \"error\": null, \"regs\": {", a->got.rsp);
    printf("\"3\": \"%s\", ", field_text(a, ENGINE_V1_RBX, a->got.rbx,
                                         "not restored", buf, sizeof buf));
    printf("\"6\": \"%s\", ", field_text(a, ENGINE_V1_RBP, a->got.rbp,
                                         "not restored", buf, sizeof buf));
    printf("\"7\": \"%s\", ", field_text(a, ENGINE_V1_RSP, a->got.rsp,
                                         "not set", buf, sizeof buf));
    printf("\"16\": \"%s\"}}\n", field_text(a, ENGINE_V1_RIP, a->got.rip,
                                            "undefined", buf, sizeof buf));
}

int cli_unwind_v1(const char *eh_elf, const char *abi_name,
                  const struct cfi_request *request, bool json)
{
    enum validate_abi abi = VALIDATE_ABI_V1;
    validate_abi_parse(abi_name, &abi);
    size_t len = strlen(eh_elf);
    char *local = malloc(len + 3);   /* dlopen searches a bare name */
    if (!local)
        return CLI_BAD_INPUT;
    snprintf(local, len + 3, "%s%s", strchr(eh_elf, '/') ? "" : "./", eh_elf);
    uint64_t lookup = cfi_lookup_pc(request->pc, request->caller_frame);
    struct validate_v1_answer answer;
    struct cfi_diag diag;
    char detail[320];
    enum cfi_status status = validate_v1_ask(local, abi, request->callee,
                                             lookup, request->memory, &answer,
                                             &diag, detail, sizeof detail);
    free(local);
    if (status != CFI_OK) {
        fprintf(stderr, "cfisem: %s: %s%s%s\n", eh_elf, diag.message,
                detail[0] ? ": " : "", detail);
        return CLI_BAD_INPUT;
    }
    if (json)
        print_v1_json(validate_abi_name(abi), request->pc, &answer);
    else
        print_v1_text(&answer);
    return error_text(&answer) ? CLI_NO_UNWIND : CLI_OK;
}

const char *cli_eh_elf_v1_abi(const char *eh_elf, const char *abi)
{
    if (abi)
        return strcmp(abi, "full") ? abi : NULL;
    struct cg_eh_elf *eh;
    struct cfi_diag diag;
    if (cg_load(eh_elf, &eh, &diag) != CFI_OK)
        return NULL;   /* the compiled engine reports why */
    bool v1 = cg_eh_elf_abi(eh) == CG_ABI_V1;
    cg_unload(eh);
    return v1 ? "v1" : NULL;
}
