/* SPDX-License-Identifier: MIT */
/* internal.h — what the files of cfi/ share and nobody else sees.
 *
 *   arena.c     the file's private storage (struct cfi_arena)
 *   encoding.c  bounds-checked readers: fixed-size, LEB128, DW_EH_PE
 *               pointers, and the 'z' augmentation data of a CIE
 *   section.c   our own parser of a whole .eh_frame / .debug_frame
 *   build.c     collecting CIEs and FDEs, then sorting, linking each FDE
 *               to its CIE, the overlap list and the lookup index
 *   elf.c       the ELF header, segments and the frame sections
 *   dwarf.c     loading CIEs and FDEs through libdwarf's frame API
 *   dwarf_object.c  frame sections shown to libdwarf as an object, and
 *               their FDE lists (dwarf_object.h: also used by engines/
 *               and fuzz/)
 *   file.c      cfi_file_open, lookup, close
 *   debuglink.c the separate debug file: by build-id, by .gnu_debuglink
 */
#ifndef CFISEM_CFI_INTERNAL_H
#define CFISEM_CFI_INTERNAL_H

#include <elf.h>

#include "cfi.h"

/* ------------------------------------------------------------------ */
/* Arena                                                               */
/* ------------------------------------------------------------------ */

/* Memory that lives as long as the cfi_file: blocks freed all at once by
 * cfi_arena_free, plus the lookup index built at load. */
struct cfi_arena {
    struct cfi_arena_block *blocks;
    /* reach[i]: the greatest pc_end among the non-empty FDEs of fdes[i]'s
     * section group up to and including i (0 when none). Lookup stops its
     * backward walk once reach falls to pc or below. */
    const uint64_t *reach;
};

struct cfi_arena *cfi_arena_new(void);
void cfi_arena_free(struct cfi_arena *arena);
/* Zeroed, aligned for any type; NULL when out of memory. A zero size
 * still yields a valid, distinct pointer. */
void *cfi_arena_alloc(struct cfi_arena *arena, size_t count, size_t size);
void *cfi_arena_copy(struct cfi_arena *arena, const void *bytes, size_t size);

/* ------------------------------------------------------------------ */
/* Bounds-checked reading                                              */
/* ------------------------------------------------------------------ */

/* A read position in a section: bytes[pos .. end) may be read. */
struct cfi_cursor {
    const uint8_t *bytes;
    size_t pos;
    size_t end;
};

enum cfi_read {
    CFI_READ_OK,
    CFI_READ_PAST_END,   /* the field runs past `end` */
    CFI_READ_OVERFLOW,   /* a LEB128 value does not fit in 64 bits */
};

enum cfi_read cfi_read_u8(struct cfi_cursor *cur, uint8_t *value);
enum cfi_read cfi_read_fixed(struct cfi_cursor *cur, unsigned size,
                             uint64_t *value);
enum cfi_read cfi_read_uleb(struct cfi_cursor *cur, uint64_t *value);
enum cfi_read cfi_read_sleb(struct cfi_cursor *cur, int64_t *value);

/* How to decode a DW_EH_PE pointer of one section. */
struct cfi_pointer_context {
    enum cfi_section section;  /* names the section in messages */
    uint64_t base_addr;        /* file address of cur->bytes[0] (pcrel) */
    uint8_t address_size;      /* size of DW_EH_PE_absptr: 4 or 8 */
    bool allow_indirect;       /* DW_EH_PE_indirect accepted, not applied */
};

/* Decodes a DW_EH_PE pointer at cur->pos: absptr, udata2/4/8, sdata2/4/8,
 * uleb128/sleb128, plain or pcrel. With DW_EH_PE_indirect (when allowed)
 * the value is the address of the slot that holds the pointer: loading
 * needs memory, which this module does not read. Returns CFI_OK, or
 * CFI_E_MALFORMED / CFI_E_UNSUPPORTED with a fixed *message. */
enum cfi_status cfi_read_pointer(struct cfi_cursor *cur, uint8_t encoding,
                                 const struct cfi_pointer_context *context,
                                 uint64_t *value, const char **message);
/* The value of a pointer encoded with only the format part of `encoding`
 * (a DW_EH_PE pc_range: no base applied). */
enum cfi_status cfi_read_pointer_format(struct cfi_cursor *cur,
                                        uint8_t encoding,
                                        const struct cfi_pointer_context *ctx,
                                        uint64_t *value, const char **message);

/* Fills the fields the augmentation string and data give (fde_encoding,
 * lsda_encoding, personality_encoding, personality, signal_frame) of a
 * CIE whose augmentation, address_size, augmentation_data and
 * augmentation_data_len are set. `data_offset` is the section offset of
 * augmentation_data[0], `section_addr` the section's file address.
 * A string not starting with 'z' other than "" is CFI_E_UNSUPPORTED;
 * letters after an unknown one are not interpreted ('z' gives the length,
 * so the record stays readable), as libgcc does. */
enum cfi_status cfi_cie_apply_augmentation(struct cfi_cie *cie,
                                           uint64_t data_offset,
                                           uint64_t section_addr,
                                           const char **message);

/* A fixed message naming the section: SECTION_MESSAGE(s, "bad thing") is
 * ".eh_frame: bad thing" or ".debug_frame: bad thing". */
#define SECTION_MESSAGE(section, text)                                     \
    ((section) == CFI_DEBUG_FRAME ? ".debug_frame: " text                  \
                                  : ".eh_frame: " text)

/* ------------------------------------------------------------------ */
/* Collecting records                                                  */
/* ------------------------------------------------------------------ */

/* CIEs and FDEs as they are found, in growable arrays. fde->cie is set
 * by cfi_builder_finish from (section, cie_offset). */
struct cfi_builder {
    struct cfi_cie *cies;
    size_t ncies, cies_cap;
    struct cfi_fde *fdes;
    size_t nfdes, fdes_cap;
    /* A record follows a zero length word in .debug_frame (section.c's
     * walk), where libdwarf stops. */
    bool records_after_zero_length;
    /* The file's architecture: every CIE carries it, and it gives the
     * augmentation letters their meaning ('B', 'G'). */
    const struct cfi_arch *arch;
};

void cfi_builder_init(struct cfi_builder *builder,
                      const struct cfi_arch *arch);
void cfi_builder_release(struct cfi_builder *builder);
/* A zeroed slot at the end, or NULL when out of memory. */
struct cfi_cie *cfi_builder_add_cie(struct cfi_builder *builder);
struct cfi_fde *cfi_builder_add_fde(struct cfi_builder *builder);

/* Moves the records into file->arena and fills cies (by section, then
 * offset), fdes (by section, then pc_begin, then offset), n_eh_frame,
 * overlaps and the lookup index; every CIE gets file->arch. The builder
 * is left empty. */
enum cfi_status cfi_builder_finish(struct cfi_builder *builder,
                                   struct cfi_file *file,
                                   struct cfi_diag *diag);

/* Puts both collections in (section, offset) order and checks they hold
 * the same records, field for field (pointers too: both must point into
 * the same section bytes). The first difference is CFI_E_UNSUPPORTED,
 * at that record's offset: libdwarf misreads bytes our parser accepted. */
enum cfi_status cfi_builder_compare(struct cfi_builder *ours,
                                    struct cfi_builder *theirs,
                                    struct cfi_diag *diag);

/* ------------------------------------------------------------------ */
/* Our own section parser                                              */
/* ------------------------------------------------------------------ */

/* Parses bytes[0 .. size) laid out as `section` at file address `addr`
 * and adds its CIEs and FDEs to `builder`; their pointers point into
 * `bytes`. On success *parsed_size is the number of bytes that hold
 * records (a zero-length terminator and what follows it excluded). On
 * failure diag->offset is the offset in `bytes` of the bad record. */
enum cfi_status cfi_parse_section(struct cfi_builder *builder,
                                  const uint8_t *bytes, size_t size,
                                  enum cfi_section section, uint64_t addr,
                                  size_t *parsed_size, struct cfi_diag *diag);

/* ------------------------------------------------------------------ */
/* ELF                                                                 */
/* ------------------------------------------------------------------ */

/* A frame section found in the section headers. */
struct cfi_elf_section {
    bool present;
    uint64_t index;        /* in the section header table */
    uint64_t addr;         /* sh_addr */
    uint64_t size;         /* sh_size */
    const uint8_t *bytes;  /* in the image; NULL for SHT_NOBITS */
    size_t file_size;      /* bytes available: sh_size, or 0 if NOBITS */
    uint64_t offset;       /* sh_offset */
    bool relocated;        /* bytes is a relocated copy */
};

/* What names a separate debug file: the GNU build-id note (NULL: none)
 * and .gnu_debuglink (the file's name and the CRC-32 of its bytes). Both
 * point into the image. */
struct cfi_elf_debug_names {
    const uint8_t *build_id;
    size_t build_id_size;
    const char *debuglink;  /* NULL: no .gnu_debuglink */
    uint32_t debuglink_crc;
};

struct cfi_elf_frames {
    struct cfi_elf_section eh_frame;
    struct cfi_elf_section eh_frame_hdr;
    struct cfi_elf_section debug_frame;
    struct cfi_elf_debug_names debug_names;
};

/* In a relocatable object: applies the relocations of `rela_section`
 * (SHT_RELA, for this frame section) to a copy of its bytes, with the
 * symbols of `symtab`; found->bytes then points to the copy. */
enum cfi_status cfi_relocate(struct cfi_file *file,
                             struct cfi_elf_section *found,
                             const Elf64_Shdr *rela_section,
                             const Elf64_Shdr *symtab,
                             enum cfi_section section, struct cfi_diag *diag);

/* Checks file->image is a 64-bit little-endian x86-64 ELF, fills
 * file->segments (in file->arena) and *frames. Offsets in diagnostics
 * are file offsets. */
enum cfi_status cfi_elf_read(struct cfi_file *file,
                             struct cfi_elf_frames *frames,
                             struct cfi_diag *diag);

/* The whole regular file at `path` into file->image (file.c). */
enum cfi_status cfi_read_image(const char *path, struct cfi_file *file,
                               struct cfi_diag *diag);

/* Fills file->debug_path and file->debug_state and, when a debug file
 * is found, gives frames->debug_frame its .debug_frame (copied into
 * file->arena): debuglink.c. Only when the file's own .debug_frame has
 * no bytes. Never fails for want of a debug file: CFI_E_NOMEM only, or
 * the debug file's own error when it is found but malformed. */
enum cfi_status cfi_debug_file_merge(struct cfi_file *file,
                                     const struct cfi_debug_search *search,
                                     struct cfi_elf_frames *frames,
                                     struct cfi_diag *diag);

/* ------------------------------------------------------------------ */
/* libdwarf                                                            */
/* ------------------------------------------------------------------ */

/* The bytes libdwarf is shown of one frame section (already validated by
 * cfi_parse_section). */
struct cfi_dwarf_section {
    const uint8_t *bytes;  /* NULL: the section is not shown */
    size_t size;
    uint64_t addr;
};

/* Loads every CIE and FDE of the two sections through libdwarf into
 * `builder`. Pointers in the records point into the given bytes, never
 * into libdwarf's memory; libdwarf is finished before returning. */
enum cfi_status cfi_dwarf_load(struct cfi_builder *builder,
                               const struct cfi_dwarf_section *eh_frame,
                               const struct cfi_dwarf_section *debug_frame,
                               struct cfi_diag *diag);

#endif
