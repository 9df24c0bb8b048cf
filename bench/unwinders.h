/* SPDX-License-Identifier: MIT */
/* unwinders.h — what the benchmarks that drive outside unwinders on
 * samples (perf_unwind.c, samples.c) share: libunwind's remote
 * accessors that have nothing to give, its table search, and how libdw
 * is loaded and which of its functions. Each benchmark is a program of
 * its own; these are inline. */
#ifndef CFISEM_BENCH_UNWINDERS_H
#define CFISEM_BENCH_UNWINDERS_H

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <libunwind.h>

/* Exported by libunwind-x86_64 but not declared by its public headers. */
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as,
                                              unw_word_t ip,
                                              unw_dyn_info_t *di,
                                              unw_proc_info_t *pi,
                                              int need_unwind_info, void *arg);

/* No dynamic unwind info, no floating-point registers, no resuming, no
 * names: libunwind's remote accessors for what a sample does not have. */
static inline int bench_lu_get_dyn_info_list_addr(unw_addr_space_t as,
                                                  unw_word_t *addr, void *arg)
{
    (void)as, (void)addr, (void)arg;
    return -UNW_ENOINFO;
}

static inline int bench_lu_access_fpreg(unw_addr_space_t as,
                                        unw_regnum_t reg, unw_fpreg_t *value,
                                        int write, void *arg)
{
    (void)as, (void)reg, (void)value, (void)write, (void)arg;
    return -UNW_EBADREG;
}

static inline int bench_lu_resume(unw_addr_space_t as, unw_cursor_t *cursor,
                                  void *arg)
{
    (void)as, (void)cursor, (void)arg;
    return -UNW_EINVAL;
}

static inline int bench_lu_get_proc_name(unw_addr_space_t as,
                                         unw_word_t addr, char *buf,
                                         size_t len, unw_word_t *offset,
                                         void *arg)
{
    (void)as, (void)addr, (void)buf, (void)len, (void)offset, (void)arg;
    return -UNW_ENOINFO;
}

/* libdw is loaded with dlopen (its dwarf_* names are also libdwarf's).
 * RTLD_DEEPBIND keeps libdw's own dwarf_* calls libdw's;
 * AddressSanitizer refuses it. */
#if defined(__SANITIZE_ADDRESS__)
#define DW_DLOPEN_FLAGS (RTLD_NOW | RTLD_LOCAL)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DW_DLOPEN_FLAGS (RTLD_NOW | RTLD_LOCAL)
#endif
#endif
#ifndef DW_DLOPEN_FLAGS
#define DW_DLOPEN_FLAGS (RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND)
#endif

/* The libdwfl functions the benchmarks resolve with dlsym: X(name,
 * return, parameters). */
#define DWFL_FUNCTIONS(X)                                                   \
    X(dwfl_begin, Dwfl *, (const Dwfl_Callbacks *))                         \
    X(dwfl_end, void, (Dwfl *))                                             \
    X(dwfl_report_begin, void, (Dwfl *))                                    \
    X(dwfl_report_elf, Dwfl_Module *,                                       \
      (Dwfl *, const char *, const char *, int, GElf_Addr, bool))           \
    X(dwfl_report_end, int,                                                 \
      (Dwfl *, int (*)(Dwfl_Module *, void *, const char *, Dwarf_Addr,     \
                       void *), void *))                                    \
    X(dwfl_linux_proc_report, int, (Dwfl *, pid_t))                         \
    X(dwfl_linux_proc_find_elf, int,                                        \
      (Dwfl_Module *, void **, const char *, Dwarf_Addr, char **, Elf **))  \
    X(dwfl_build_id_find_elf, int,                                          \
      (Dwfl_Module *, void **, const char *, Dwarf_Addr, char **, Elf **))  \
    X(dwfl_standard_find_debuginfo, int,                                    \
      (Dwfl_Module *, void **, const char *, Dwarf_Addr, const char *,      \
       const char *, GElf_Word, char **))                                   \
    X(dwfl_attach_state, bool,                                              \
      (Dwfl *, Elf *, pid_t, const Dwfl_Thread_Callbacks *, void *))        \
    X(dwfl_getthread_frames, int,                                           \
      (Dwfl *, pid_t, int (*)(Dwfl_Frame *, void *), void *))               \
    X(dwfl_thread_state_registers, bool,                                    \
      (Dwfl_Thread *, int, unsigned, const Dwarf_Word *))                   \
    X(dwfl_frame_pc, bool, (Dwfl_Frame *, Dwarf_Addr *, bool *))            \
    X(dwfl_errno, int, (void))                                              \
    X(dwfl_errmsg, const char *, (int))

#endif
