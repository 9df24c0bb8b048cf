/* inline-asm-push.c — inline asm that moves rsp, which the compiler
 * cannot describe: the CFI keeps the CFA where the asm found it, so
 * between its push and its pop the CFA is too low (and the return
 * address read from what the asm pushed). The shapes seen in the system
 * manifest, each from a program compiled by GCC:
 *   - valgrind's launcher (m_debuglog.c, local_sys_write_stderr): `subq
 *     $256,%rsp` to step over the red zone, then two pushes of r15;
 *   - libgcrypt's padlock code (rijndael-padlock.c): `pushfq; popfq` to
 *     make the engine reload its key;
 *   - mesa's VMware backdoor (svga winsys): `push %rbp; mov %r8,%rbp;
 *     rep outsb; pop %rbp` (rbp borrowed, here without the port I/O);
 *   - gdb (nat/linux-ptrace.c, linux_ptrace_test_ret_to_nx): `push
 *     %rbx; ret` to jump to a page that is not executable.
 * The last is left out of the program (it faults by design).
 *   gcc -O2 -o asm_push inline-asm-push.c
 *   cfisem synth asm_push      (cfa_height inside each asm)
 *   cfisem trace --engines il -- ./asm_push */
#include <stdio.h>

static long write_stderr(const char *buf, long n)
{
    volatile long block[2] = {(long)buf, n};
    __asm__ volatile("subq $256, %%rsp\n\t"
                     "pushq %%r15\n\t"
                     "movq %0, %%r15\n\t"
                     "pushq %%r15\n\t"
                     "movq $1, %%rax\n\t"
                     "movq $2, %%rdi\n\t"
                     "movq 0(%%r15), %%rsi\n\t"
                     "movq 8(%%r15), %%rdx\n\t"
                     "syscall\n\t"
                     "popq %%r15\n\t"
                     "movq %%rax, 0(%%r15)\n\t"
                     "popq %%r15\n\t"
                     "addq $256, %%rsp"
                     :
                     : "r"(block)
                     : "rax", "rdi", "rsi", "rdx", "rcx", "r11", "memory");
    return block[0];
}

static void __attribute__((noinline)) reload_flags(void)
{
    __asm__ volatile("pushfq\n\tpopfq" ::: "memory");
}

static long __attribute__((noinline)) borrow_rbp(long x)
{
    long out;
    __asm__ volatile("pushq %%rbp\n\t"
                     "movq %1, %%rbp\n\t"
                     "leaq 1(%%rbp), %0\n\t"
                     "popq %%rbp"
                     : "=r"(out)
                     : "r"(x));
    return out;
}

int main(void)
{
    long n = write_stderr("inline asm\n", 11);
    reload_flags();
    printf("%ld %ld\n", n, borrow_rbp(41));
    return 0;
}
