/* SPDX-License-Identifier: MIT */
/* LLVM libunwind 14: __unw_add_dynamic_eh_frame_section does not stop at
 * the section's zero terminator.
 *
 *   cc repro.c /usr/lib/llvm-14/lib/libunwind.so.1 -o repro && ./repro
 *
 * A .eh_frame of one CIE, one FDE and the 4-byte zero terminator ends
 * exactly where an inaccessible page begins. LSB (Linux Standard Base
 * Core, .eh_frame): a zero length ends the section. Version 14's loop
 * (libunwind.cpp) tries decodeFDE and then parseCIE on every record and
 * stops only when both fail; a zero length is a CIE to parseCIE, so it
 * walks on past the terminator and faults (SIGSEGV) in the next page.
 * Later versions test the length first: `while (get32(p))`. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

void __unw_add_dynamic_eh_frame_section(uint64_t eh_frame_start);

static const uint8_t section[] = {
    /* CIE: zR, code 1, data -8, RA 16, pcrel|sdata4; def_cfa rsp+8;
     * rip at cfa-8 */
    0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 0x10, 1, 0x1b,
    0x0c, 7, 8, 0x90, 1, 0, 0,
    /* FDE: CIE pointer 0x1c, pc_begin (pcrel) 0, range 16, no
     * augmentation data, nops */
    0x14, 0, 0, 0, 0x1c, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0,
    /* terminator */
    0, 0, 0, 0};

int main(void)
{
    uint8_t *pages = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED)
        return 2;
    mprotect(pages + 4096, 4096, PROT_NONE);
    uint8_t *start = pages + 4096 - sizeof section;
    memcpy(start, section, sizeof section);
    printf("registering %zu bytes ending at %p ...\n", sizeof section,
           (void *)(pages + 4096));
    fflush(stdout);
    __unw_add_dynamic_eh_frame_section((uint64_t)(uintptr_t)start);
    printf("registered: the walk stopped at the terminator\n");
    return 0;
}
