/* SPDX-License-Identifier: MIT */
/* libunwind 1.6.2: DW_CFA_register whose operand lies past the FDE's end
 * crashes unw_step (SIGSEGV).
 *
 *   cc repro.c -o repro -lunwind-x86_64 -lunwind \
 *       && ./repro libunwind-register-past-end.so
 *
 * The shared object is a mutant (its .eh_frame changed byte by byte;
 * ld.so refuses to load it, so the program unwinds it remotely: the
 * file's bytes are the address space, vaddr = file offset). Its FDE at
 * .eh_frame+0x18 ends 1b 43 09 07: an opcode libunwind has no case for
 * (0x1b, dropped), DW_CFA_advance_loc 3 (to 0x198), then DW_CFA_register
 * r7 whose source register lies past the FDE's end, in .dynamic. DWARF 5
 * §6.4.2: an instruction's operands lie inside its program; a truncated
 * one, or an unknown register, is an error. run_cfi_program
 * (src/dwarf/Gparser.c) checks the end only before an instruction, reads
 * the source from the bytes after the FDE and never bounds-checks it.
 * The step at 0x198 runs in a child under a 5 s alarm; the parent
 * reports how it ended. Exit 1 while the bug is present. */
#include <elf.h>
#include <libunwind.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t, unw_word_t,
                                       unw_dyn_info_t *, unw_proc_info_t *,
                                       int, void *);

#define PC 0x198
#define STACK 0x7ffe1000

static unsigned char image[1 << 16];
static size_t image_size;
static unw_word_t hdr; /* the vaddr of .eh_frame_hdr */

static int find(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
                int need, void *arg)
{
    uint32_t count;
    memcpy(&count, image + hdr + 8, 4); /* encodings 1b 03 3b checked */
    unw_dyn_info_t di = {0};
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.start_ip = 0;
    di.end_ip = image_size;
    di.u.rti.segbase = hdr;
    di.u.rti.table_data = hdr + 12;
    di.u.rti.table_len = count * 8 / sizeof(unw_word_t);
    return _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need, arg);
}

static void put(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
    (void)as, (void)pi, (void)arg;
}

static int mem(unw_addr_space_t as, unw_word_t a, unw_word_t *v, int w,
               void *arg)
{
    (void)as, (void)arg;
    if (w)
        return -UNW_EINVAL;
    if (a + 8 <= image_size)
        memcpy(v, image + a, 8);
    else if (a >= STACK - 0x1000 && a < STACK + 0x1000)
        *v = 0x4000; /* every stack word */
    else
        return -UNW_EINVAL;
    return 0;
}

static int reg(unw_addr_space_t as, unw_regnum_t r, unw_word_t *v, int w,
               void *arg)
{
    (void)as, (void)arg;
    if (w || r < 0 || r > UNW_X86_64_RIP)
        return -UNW_EBADREG;
    /* rax=1 .. r15=15 as numbered by DWARF; rbp, rsp on the stack. */
    *v = r == UNW_X86_64_RIP ? PC : r == UNW_X86_64_RSP ? STACK
         : r == UNW_X86_64_RBP ? STACK + 0x100 : (unw_word_t)r + 1;
    return 0;
}

static int none(void)
{
    return -UNW_ENOINFO;
}

static int step_once(void)
{
    unw_accessors_t acc = {0};
    acc.find_proc_info = find;
    acc.put_unwind_info = put;
    acc.get_dyn_info_list_addr = (void *)none;
    acc.access_mem = mem;
    acc.access_reg = reg;
    acc.access_fpreg = (void *)none;
    acc.resume = (void *)none;
    acc.get_proc_name = (void *)none;
    unw_addr_space_t as = unw_create_addr_space(&acc, 0);
    unw_cursor_t c;
    if (!as || unw_init_remote(&c, as, NULL) < 0)
        return 2;
    int step = unw_step(&c);
    printf("unw_step returned %d\n", step);
    return 0;
}

static int load(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    image_size = fread(image, 1, sizeof image - 8, f);
    fclose(f);
    Elf64_Ehdr *e = (Elf64_Ehdr *)image;
    for (int i = 0; i < e->e_phnum; i++) {
        Elf64_Phdr *p = (Elf64_Phdr *)(image + e->e_phoff) + i;
        if (p->p_type == PT_GNU_EH_FRAME)
            hdr = p->p_offset;
    }
    return hdr && !memcmp(image + hdr, "\1\x1b\3\x3b", 4) ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (load(argc > 1 ? argv[1] : "libunwind-register-past-end.so") < 0) {
        fprintf(stderr, "cannot read the file or its .eh_frame_hdr\n");
        return 2;
    }
    printf("DWARF: unw_step returns (an error: the FDE is truncated)\n");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(5);
        int r = step_once();
        fflush(stdout);
        _exit(r);
    }
    int status;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        printf("BUG: unw_step %s (signal %d, %s)\n",
               sig == SIGALRM ? "did not return within 5 s"
                              : "killed the process",
               sig, strsignal(sig));
        return 1;
    }
    printf("%s\n", WEXITSTATUS(status) ? "setup failed" : "as DWARF says");
    return WEXITSTATUS(status) != 0;
}
