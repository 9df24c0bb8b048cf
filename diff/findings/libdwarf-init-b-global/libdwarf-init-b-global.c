/* libdwarf-init-b-global.c — dwarf_init_b leaves a global function
 * pointer behind that crashes a later dwarf_object_init_b.
 *
 * Build: cc -I/usr/include/libdwarf -o repro libdwarf-init-b-global.c -ldwarf
 * Run:   ./repro /lib/x86_64-linux-gnu/libc.so.6   (any ELF file)
 * libdwarf 20210528 prints 0 (DW_DLV_OK), then 1 (DW_DLV_ERROR,
 * DW_DLE_SECTION_INDEX_BAD): the second dwarf_object_init_b runs
 * _dwarf_get_elf_flags_func_nl (dwarf_elfread.c:283) on the caller's
 * object as if it were libdwarf's ELF reader. With another object layout
 * (cfisem's cfi/dwarf.c) it reads a NULL section table: SIGSEGV at 0x108
 * in dwarf_elfread.c:303. Exit 1 while the bug is present (the two
 * calls differ). */
#include <dwarf.h>
#include <fcntl.h>
#include <libdwarf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A caller-defined object: the null section and a .eh_frame holding
 * only a terminator. */
struct object { char kind; void *rest[64]; }; /* zeroed beyond kind */
static Dwarf_Small eh_frame[4];
static int info(void *o, Dwarf_Half i, Dwarf_Obj_Access_Section *s, int *e)
{
    (void)o, (void)e;
    if (i > 1)
        return DW_DLV_NO_ENTRY;
    memset(s, 0, sizeof *s);
    s->name = i ? ".eh_frame" : "";
    if (i) {
        s->type = 1; /* SHT_PROGBITS */
        s->size = sizeof eh_frame;
    }
    return DW_DLV_OK;
}
static Dwarf_Endianness order(void *o) { (void)o; return DW_OBJECT_LSB; }
static Dwarf_Small four(void *o) { (void)o; return 4; }
static Dwarf_Small eight(void *o) { (void)o; return 8; }
static Dwarf_Unsigned count(void *o) { (void)o; return 2; }
static int load(void *o, Dwarf_Half i, Dwarf_Small **b, int *e)
{
    (void)o, (void)e;
    if (i != 1)
        return DW_DLV_NO_ENTRY;
    *b = eh_frame;
    return DW_DLV_OK;
}
static const Dwarf_Obj_Access_Methods methods = {info, order, four, eight,
                                                 count, load, NULL};

static int object_init(void)
{
    static struct object object = {'C', {0}};
    Dwarf_Obj_Access_Interface interface = {&object, &methods};
    Dwarf_Debug dbg = NULL;
    Dwarf_Error error = NULL;
    int res = dwarf_object_init_b(&interface, NULL, NULL, DW_GROUPNUMBER_ANY,
                                  &dbg, &error);
    if (res == DW_DLV_OK)
        dwarf_object_finish(dbg, &error);
    return res;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int before = object_init();
    printf("dwarf_object_init_b before dwarf_init_b: %d\n", before);
    /* Any file through libdwarf's own ELF reader, then finished. */
    Dwarf_Debug dbg = NULL;
    Dwarf_Error error = NULL;
    int fd = open(argv[1], O_RDONLY);
    if (dwarf_init_b(fd, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, &dbg,
                     &error) == DW_DLV_OK)
        dwarf_finish(dbg, &error);
    close(fd);
    /* The same object again: libdwarf now calls the ELF reader's flags
     * function (_dwarf_get_elf_flags_func_ptr) on it. */
    int after = object_init();
    printf("dwarf_object_init_b after dwarf_init_b: %d\n", after);
    printf("%s\n", after == before ? "the same result"
                                    : "BUG: dwarf_init_b changed the result");
    return after != before;
}
