/* libdwarf-global-elf-flags.c — reproducer: libdwarf 20210528 faults in
 * dwarf_object_init_b once its own ELF reader has been used in the same
 * process.
 *
 * dwarf_init_b (and dwarf_init_path, dwarf_elf_init) set the process-global
 * pointer _dwarf_get_elf_flags_func_ptr to their reader's section-flags
 * function; every later Dwarf_Debug calls it on its object while loading
 * sections, a caller's Dwarf_Obj_Access_Interface included, which it then
 * reads as the ELF reader's private struct (a type confusion): with this
 * object, SEGV in _dwarf_get_elf_flags_func_nl, from _dwarf_setup; with
 * others, DW_DLV_ERROR or garbage flags.
 *
 *   cc -I/usr/include/libdwarf libdwarf-global-elf-flags.c \
 *      -l:libdwarf.a -lelf -lz -o repro && ./repro ANY_ELF_FILE
 *
 * Without the first dwarf_init_b the second init succeeds. cfisem only
 * uses dwarf_object_init_b (cfi/dwarf.c, engines/oracle_libdwarf.c), so it
 * is safe as long as no code in the process calls libdwarf's own readers. */
#include <fcntl.h>
#include <libdwarf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const unsigned char eh_frame[] = { /* a CIE and a terminator */
    0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 0x10, 1, 0x1b,
    0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* What a caller's object may hold (the layout of fuzz/oracle_libdwarf.c's):
 * libdwarf reads it as its ELF reader's private struct. */
struct object {
    char kind;
    const char *name;
    const unsigned char *bytes;
    unsigned long size;
    unsigned long addr;
};

static int section_info(void *obj, Dwarf_Half index,
                        Dwarf_Obj_Access_Section *info, int *error)
{
    (void)obj, (void)error;
    if (index > 1)
        return DW_DLV_NO_ENTRY;
    memset(info, 0, sizeof *info);
    info->name = index ? ".eh_frame" : "";
    info->type = index ? 1 /* SHT_PROGBITS */ : 0;
    info->size = index ? sizeof eh_frame : 0;
    return DW_DLV_OK;
}
static Dwarf_Endianness byte_order(void *obj) { (void)obj; return DW_OBJECT_LSB; }
static Dwarf_Small length_size(void *obj) { (void)obj; return 4; }
static Dwarf_Small pointer_size(void *obj) { (void)obj; return 8; }
static Dwarf_Unsigned section_count(void *obj) { (void)obj; return 2; }
static int load_section(void *obj, Dwarf_Half index, Dwarf_Small **bytes,
                        int *error)
{
    (void)obj, (void)error;
    if (index != 1)
        return DW_DLV_NO_ENTRY;
    *bytes = (Dwarf_Small *)eh_frame;
    return DW_DLV_OK;
}

int main(int argc, char **argv)
{
    Dwarf_Debug dbg = NULL;
    Dwarf_Error error = NULL;
    int fd = argc > 1 ? open(argv[1], O_RDONLY) : -1;
    if (fd >= 0 && dwarf_init_b(fd, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL,
                                NULL, &dbg, &error) == DW_DLV_OK) {
        dwarf_finish(dbg, &error);
        puts("dwarf_init_b on the file: ok");
        fflush(stdout);
    }
    static const Dwarf_Obj_Access_Methods methods = {
        section_info, byte_order, length_size, pointer_size, section_count,
        load_section, NULL,
    };
    struct object object = {'C', ".eh_frame", eh_frame, sizeof eh_frame, 0};
    Dwarf_Obj_Access_Interface interface = {&object, &methods};
    int res = dwarf_object_init_b(&interface, NULL, NULL, DW_GROUPNUMBER_ANY,
                                  &dbg, &error);
    printf("dwarf_object_init_b: %d\n", res);
    if (res == DW_DLV_OK)
        dwarf_finish(dbg, &error);
    return 0;
}
