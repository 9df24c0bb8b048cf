/* llvm-late-adjustment.c — an outgoing-argument area set up before a
 * branch and described after it, with clang 14 (Debian 12):
 *   clang -O2 -c -o late.o llvm-late-adjustment.c
 * gives call c; sub $8,%rsp; test %eax,%eax; je; ... push; push; push;
 * call: the `sub $8,%rsp` that pads the three pushed arguments of either
 * call is hoisted above the branch, and its .cfi_adjust_cfa_offset lands
 * at the start of both successors, so on the test and the je the CFA is
 * 8 bytes too low (the return address is read from the caller's slot
 * below it). `cfisem synth` (linked) reports cfa_height on [sub+4, je+2);
 * the same shape as libLLVM-15's [0x151cc1f,0x151cc23). The late push
 * of libLLVM-15's [0xea3d5a,0xea3d5d) is the same placement for a push.
 * llvm-late-adjustment-main.c runs it for `cfisem trace`. */
long g(long, long, long, long, long, long, long, long, long);
long h(long, long, long, long, long, long, long, long, long);
int c(void);
long late(long a)
{
    int r = c();
    long v;
    if (r)
        v = g(a, 1, 2, 3, 4, 5, 6, 7, 8);
    else
        v = h(a, 1, 2, 3, 4, 5, 9, 10, 11);
    return v * a;
}
