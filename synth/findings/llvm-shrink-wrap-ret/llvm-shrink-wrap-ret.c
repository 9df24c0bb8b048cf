/* llvm-shrink-wrap-ret.c — a ret shared by a shrink-wrapped early exit
 * and the epilogue, with clang 14 (Debian 12):
 *   clang -O2 -c -o sw.o llvm-shrink-wrap-ret.c
 * gives test %r9,%r9; je RET; push %rbp; push %rbx; push %rax; ...;
 * add $8,%rsp; pop %rbx; pop %rbp; RET: ret, and the CFI keeps
 * rbx=[cfa-24] rbp=[cfa-16] at RET (no .cfi_restore after the pops): on
 * the early path nothing was saved there, and an unwinder stopped at the
 * ret reads the caller's rbx and rbp from stale stack below rsp.
 * `cfisem synth` (linked into a shared object) reports restored_late for
 * rbx and rbp at the ret; llvm-shrink-wrap-ret-main.c runs both paths, so
 * that `cfisem trace` sees it (../README.md). The same shape as
 * libclang-14's [0xad2ad0,0xad2b21). */
struct obj {
    void (**vt)(void *, long, long, long, long, long, int);
};
long path(long, long);
void seven(struct obj *o, long a, long b, long c, long d, long *e, int f)
{
    (void)a, (void)b, (void)c, (void)d;
    if (e == 0)
        return;
    long r = path(e[0], (long)(e + 4));
    struct obj *t = (struct obj *)o[1].vt;
    t->vt[7](t, r, 0, f != 0 && f != 3, 0, 0, 0);
}
