/* llvm-epilogue-split.c — the epilogue split with clang 14 (Debian 12):
 *   clang -O2 -c -o split.o llvm-epilogue-split.c
 * gives add $8,%rsp; test; je; pop; pop; jmp g / pop; pop; jmp h with the
 * CFA lowered only at the pops: `cfisem synth` on it (linked into a shared
 * object) reports cfa_height on the test and the je. llvm-epilogue-split.gdb
 * shows a real unwinder there. */
extern int f(void *);
extern void g(void *, void *);
extern void h(void *, void *);
void split(void *a, void *b)
{
    if (f(b))
        g(a, b);
    else
        h(a, b);
}
