/* SPDX-License-Identifier: MIT */
/* from.c — running the program at full speed up to a function of its
 * executable (a breakpoint at the symbol's address), so that stepping
 * starts there: the frames below it are then unknown, and the function's
 * own frame is taken at its entry (the return address at rsp, the CFA
 * rsp+8, the callee-saved registers as they are). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

/* The value of function symbol `name` in the ELF file at `path`
 * (.symtab, then .dynsym); false when there is none. */
static bool symbol_value(const char *path, const char *name, uint64_t *value)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return false;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    bool found = false;
    Elf_Scn *scn = NULL;
    /* Bounded by the file's sections and their symbols. */
    while (elf && !found && (scn = elf_nextscn(elf, scn))) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr) ||
            (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM) ||
            shdr.sh_entsize == 0)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        size_t count = shdr.sh_size / shdr.sh_entsize;
        for (size_t i = 0; data && i < count && !found; i++) {
            GElf_Sym sym;
            const char *sym_name;
            if (!gelf_getsym(data, (int)i, &sym) ||
                GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0 ||
                !(sym_name = elf_strptr(elf, shdr.sh_link, sym.st_name)))
                continue;
            if (!strcmp(sym_name, name)) {
                *value = sym.st_value;
                found = true;
            }
        }
    }
    if (elf)
        elf_end(elf);
    close(fd);
    return found;
}

/* The runtime address of `name` in the program's executable. */
static bool symbol_address(struct trace_maps *maps, const char *name,
                           uint64_t *addr)
{
    char link[64], exe[4096];
    snprintf(link, sizeof link, "/proc/%d/exe", (int)maps->pid);
    ssize_t n = readlink(link, exe, sizeof exe - 1);
    if (n <= 0)
        return false;
    exe[n] = 0;
    uint64_t value;
    for (size_t i = 0; i < maps->nmappings; i++) {
        const struct trace_mapping *m = &maps->mappings[i];
        if (!strcmp(maps->elves[m->elf].path, exe) &&
            symbol_value(exe, name, &value)) {
            *addr = value + m->bias;
            return true;
        }
    }
    return false;
}

/* Continues to the int3 at addr, passing the program's own signals. */
static enum trace_from_result run_to(pid_t pid, uint64_t addr,
                                     struct trace_report *report)
{
    int sig = 0, status;
    /* Bounded by the program: it reaches the breakpoint or ends (the
     * caller's timer interrupts a wait that lasts too long). */
    for (;;) {
        if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig) != 0)
            return TRACE_FROM_FAILED;
        if (waitpid(pid, &status, __WALL) != pid)
            return TRACE_FROM_FAILED;
        if (WIFEXITED(status) || WIFSIGNALED(status)) {
            bool exited = WIFEXITED(status);
            report->end = exited ? TRACE_END_EXITED : TRACE_END_SIGNALED;
            report->end_value = exited ? WEXITSTATUS(status)
                                       : WTERMSIG(status);
            return TRACE_FROM_ENDED;
        }
        sig = WSTOPSIG(status);
        if (sig != SIGTRAP)
            continue;
        sig = 0;
        struct user_regs_struct regs;
        if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) != 0)
            return TRACE_FROM_FAILED;
        if (regs.rip == addr + 1)
            return TRACE_FROM_REACHED;
    }
}

enum trace_from_result trace_run_from(struct trace_maps *maps,
                                      const char *name,
                                      struct trace_report *report)
{
    uint64_t addr;
    if (!symbol_address(maps, name, &addr))
        return TRACE_FROM_NO_SYMBOL;
    pid_t pid = maps->pid;
    errno = 0;
    long word = ptrace(PTRACE_PEEKTEXT, pid, (void *)(uintptr_t)addr, NULL);
    if (errno != 0)
        return TRACE_FROM_FAILED;
    long trapped = (long)(((unsigned long)word & ~0xfful) | 0xcc);
    if (ptrace(PTRACE_POKETEXT, pid, (void *)(uintptr_t)addr,
               (void *)trapped) != 0)
        return TRACE_FROM_FAILED;
    enum trace_from_result result = run_to(pid, addr, report);
    if (result != TRACE_FROM_REACHED)
        return result;
    struct user_regs_struct regs;
    if (ptrace(PTRACE_POKETEXT, pid, (void *)(uintptr_t)addr, (void *)word) ||
        ptrace(PTRACE_GETREGS, pid, NULL, &regs))
        return TRACE_FROM_FAILED;
    regs.rip = addr;
    return ptrace(PTRACE_SETREGS, pid, NULL, &regs) ? TRACE_FROM_FAILED
                                                    : TRACE_FROM_REACHED;
}
