// SPDX-License-Identifier: MIT
// runtime_a64_cxx.cc — libcfisem-unwind on AArch64 through libstdc++'s
// frames, run under qemu-aarch64 (make check: run-runtime_aarch64).
//
// Usage: runtime_a64_cxx NAME_DIR. NAME_DIR holds the eh_elfs of the
// cross C and C++ libraries (libc.so.6.table.eh_elf.so,
// libstdc++.so.6.table.eh_elf.so); the program's own is beside it.
//
// `out << 12345` on a std::ostream whose stream buffer is ours goes
// through libstdc++'s compiled code (ostream::_M_insert, num_put's
// _M_insert_int, __write) before it reaches our xsputn, which takes the
// stack: libgcc's _Unwind_Backtrace (arm64's) is the reference;
// cfisem_backtrace and a cursor through the eh_elfs must give the same
// PCs to the end of the stack, with every step of the cursor by an
// eh_elf (none by the interpreter) and at least two of the frames in
// libstdc++. Prints one line a check; exits 1 when one fails.
#include <dlfcn.h>
#include <unwind.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <streambuf>

#include "runtime/cfisem-unwind.h"

namespace {

const int max_pcs = 128;

struct pcs {
    void *pc[max_pcs];
    int n;
};

_Unwind_Reason_Code gcc_trace(struct _Unwind_Context *context, void *arg)
{
    pcs *list = static_cast<pcs *>(arg);
    if (list->n == max_pcs)
        return _URC_END_OF_STACK;
    list->pc[list->n++] = reinterpret_cast<void *>(_Unwind_GetIP(context));
    return _URC_NO_REASON;
}

struct taken {
    pcs gcc, ours, cursor;
    int last;
    struct cfisem_cursor_stats stats;
    bool done;
};

__attribute__((noinline)) void take_gcc(pcs *list)
{
    list->n = 0;
    _Unwind_Backtrace(gcc_trace, list);
    if (list->n > 0 && list->pc[list->n - 1] == nullptr)
        list->n--;
}

__attribute__((noinline)) void take_ours(pcs *list)
{
    list->n = cfisem_backtrace(list->pc, max_pcs);
}

__attribute__((noinline)) void take_cursor(taken *t)
{
    cfisem_context context;
    cfisem_getcontext(&context);
    cfisem_cursor cursor;
    uint64_t pc;
    t->cursor.n = 0;
    t->last = -100;
    if (cfisem_init_local(&cursor, &context) != CFISEM_OK ||
        cfisem_set_engine(&cursor, CFISEM_ENGINE_AUTO) != CFISEM_OK)
        return;
    if (cfisem_get_reg(&cursor, CFISEM_REG_PC, &pc) == CFISEM_OK)
        t->cursor.pc[t->cursor.n++] = reinterpret_cast<void *>(pc);
    while (t->cursor.n < max_pcs && (t->last = cfisem_step(&cursor)) == 1 &&
           cfisem_get_reg(&cursor, CFISEM_REG_PC, &pc) == CFISEM_OK)
        t->cursor.pc[t->cursor.n++] = reinterpret_cast<void *>(pc);
    cfisem_cursor_stats(&cursor, &t->stats);
}

// A stream buffer that takes the stack the first time libstdc++ writes
// into it.
class taking_buf : public std::streambuf {
public:
    explicit taking_buf(taken *t) : t_(t) {}

protected:
    std::streamsize xsputn(const char *, std::streamsize n) override
    {
        take(t_);
        return n;
    }
    int_type overflow(int_type c) override
    {
        take(t_);
        return traits_type::not_eof(c);
    }

private:
    __attribute__((noinline)) static void take(taken *t)
    {
        if (t->done)
            return;
        t->done = true;
        take_gcc(&t->gcc);
        take_ours(&t->ours);
        take_cursor(t);
    }
    taken *t_;
};

// The two lists name the same PCs to the same end, at least `min` of
// them, after skipping at most 3 entries of each (the frames of the
// functions that took them).
bool same_callers(const pcs &a, const pcs &b, int min)
{
    for (int i = 0; i <= 3 && i < a.n; i++)
        for (int j = 0; j <= 3 && j < b.n; j++) {
            if (a.n - i != b.n - j || a.n - i < min)
                continue;
            if (!std::memcmp(a.pc + i, b.pc + j, (a.n - i) * sizeof *a.pc))
                return true;
        }
    return false;
}

int in_libstdcxx(const pcs &list)
{
    int n = 0;
    for (int i = 0; i < list.n; i++) {
        Dl_info info;
        if (dladdr(list.pc[i], &info) && info.dli_fname &&
            std::strstr(info.dli_fname, "libstdc++"))
            n++;
    }
    return n;
}

struct checks {
    int run, failed;
    void check(bool ok, const char *what)
    {
        run++;
        failed += !ok;
        std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
    }
};

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s NAME_DIR\n", argv[0]);
        return 2;
    }
    cfisem_options options = {};
    options.name_dir = argv[1];
    options.name_flavour = "table";
    options.system_dir = "";
    checks c = {0, 0};
    c.check(cfisem_prepare(&options) == CFISEM_OK, "cfisem_prepare");
    struct cfisem_stats stats;
    cfisem_stats(&stats);
    char text[200];
    std::snprintf(text, sizeof text, "eh_elfs loaded: %llu of %llu objects "
                  "(the program's, libc's and libstdc++'s at least)",
                  (unsigned long long)stats.objects_eh_elf,
                  (unsigned long long)stats.objects);
    c.check(stats.objects_eh_elf >= 3, text);

    static taken t;
    taking_buf buf(&t);
    std::ostream out(&buf);
    out << 12345;
    c.check(t.done, "libstdc++ wrote into the stream buffer");
    int lib = in_libstdcxx(t.gcc);
    std::snprintf(text, sizeof text, "_Unwind_Backtrace: %d PCs, %d in "
                  "libstdc++ (at least 2)", t.gcc.n, lib);
    c.check(lib >= 2, text);
    std::snprintf(text, sizeof text, "cfisem_backtrace = _Unwind_Backtrace "
                  "(%d PCs)", t.ours.n);
    c.check(same_callers(t.ours, t.gcc, lib + 1), text);
    std::snprintf(text, sizeof text, "cursor through eh_elfs = "
                  "_Unwind_Backtrace (%d PCs; %u eh_elf steps, %u "
                  "interpreter; last step %d)", t.cursor.n,
                  t.stats.frames_eh_elf, t.stats.frames_interp, t.last);
    c.check(same_callers(t.cursor, t.gcc, lib + 1) && t.last == 0 &&
                t.stats.frames_interp == 0 &&
                (int)t.stats.frames_eh_elf == t.cursor.n,
            text);
    std::printf("%d checks, %d failed\n", c.run, c.failed);
    return c.failed ? 1 : 0;
}
