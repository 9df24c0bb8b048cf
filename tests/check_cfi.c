/* SPDX-License-Identifier: MIT */
/* check_cfi.c — the cfi/ module: loading real ELF files through libdwarf,
 * our own section parser on hand-built bytes (good and malformed: status
 * and offset), the two loaders agreeing record for record on real
 * libraries, PC lookup against a brute-force reference, and ELF-level
 * errors. */
#include <check.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cfi/cfi.h"
#include "cfi/json.h"
#include "tests/support.h"

/* ------------------------------------------------------------------ */
/* Building sections byte by byte                                      */
/* ------------------------------------------------------------------ */

struct bytes {
    uint8_t b[4096];
    size_t n;
};

static void put(struct bytes *s, uint64_t value, unsigned size)
{
    ck_assert_uint_le(s->n + size, sizeof s->b);
    for (unsigned i = 0; i < size; i++)
        s->b[s->n++] = (uint8_t)(value >> (8 * i));
}

static void put_raw(struct bytes *s, const void *raw, size_t len)
{
    ck_assert_uint_le(s->n + len, sizeof s->b);
    if (len)
        memcpy(s->b + s->n, raw, len);
    s->n += len;
}

static void put_uleb(struct bytes *s, uint64_t value)
{
    do {
        uint8_t byte = value & 0x7f;
        value >>= 7;
        put(s, byte | (value ? 0x80 : 0), 1);
    } while (value);
}

static void put_sleb(struct bytes *s, int64_t value)
{
    for (;;) {
        uint8_t byte = value & 0x7f;
        value >>= 7; /* arithmetic on every compiler we use */
        bool done = (value == 0 && !(byte & 0x40)) ||
                    (value == -1 && (byte & 0x40));
        put(s, byte | (done ? 0 : 0x80), 1);
        if (done)
            return;
    }
}

#define PUT_BYTES(s, ...)                                                  \
    put_raw((s), (const uint8_t[]){__VA_ARGS__},                          \
            sizeof((const uint8_t[]){__VA_ARGS__}))

/* A 32-bit length field to patch once the record is complete. */
static size_t begin_record(struct bytes *s)
{
    size_t at = s->n;
    put(s, 0, 4);
    return at;
}

static void end_record(struct bytes *s, size_t at)
{
    uint64_t length = s->n - at - 4;
    for (unsigned i = 0; i < 4; i++)
        s->b[at + i] = (uint8_t)(length >> (8 * i));
}

/* DW_CFA_def_cfa rsp+8; DW_CFA_offset rip, cfa-8: the x86-64 CIE program. */
static const uint8_t cie_program[] = {0x0c, 0x07, 0x08, 0x90, 0x01};
/* DW_CFA_advance_loc 1; DW_CFA_def_cfa_offset 16; DW_CFA_nop. */
static const uint8_t fde_program[] = {0x41, 0x0e, 0x10, 0x00};

/* An .eh_frame version 1 CIE: code 1, data -8, ra 16, the given
 * augmentation and augmentation data. Returns its offset. */
static size_t put_eh_cie(struct bytes *s, const char *augmentation,
                         const uint8_t *data, size_t data_len)
{
    size_t at = begin_record(s);
    put(s, 0, 4);
    put(s, 1, 1);
    put_raw(s, augmentation, strlen(augmentation) + 1);
    put_uleb(s, 1);
    put_sleb(s, -8);
    put(s, 16, 1);
    if (augmentation[0] == 'z') {
        put_uleb(s, data_len);
        put_raw(s, data, data_len);
    }
    put_raw(s, cie_program, sizeof cie_program);
    end_record(s, at);
    return at;
}

/* An .eh_frame FDE whose CIE is "zR" with DW_EH_PE_pcrel|sdata4, for the
 * section at `addr`. */
static size_t put_eh_fde(struct bytes *s, size_t cie_at, uint64_t addr,
                         uint64_t pc, uint64_t range)
{
    size_t at = begin_record(s);
    put(s, s->n - cie_at, 4);
    put(s, pc - (addr + s->n), 4);
    put(s, range, 4);
    put_uleb(s, 0);
    put_raw(s, fde_program, sizeof fde_program);
    end_record(s, at);
    return at;
}

static const uint8_t pcrel_sdata4[] = {CFI_PE_PCREL | CFI_PE_SDATA4};

/* ------------------------------------------------------------------ */
/* Loading and checking                                                */
/* ------------------------------------------------------------------ */

static struct cfi_file *from_section(const struct bytes *s,
                                     enum cfi_section section, uint64_t addr)
{
    struct cfi_file *file = NULL;
    struct cfi_diag diag = {0};
    enum cfi_status status =
        cfi_file_from_section(s->b, s->n, section, addr, &file, &diag);
    ck_assert_msg(status == CFI_OK, "from_section: %s: %s at 0x%llx",
                  cfi_status_name(status), diag.message,
                  (unsigned long long)diag.offset);
    ck_assert_ptr_nonnull(file);
    return file;
}

/* Parses bytes that must fail with `expected` at `offset`; the message
 * names the section. */
static void expect_error(const uint8_t *bytes, size_t len,
                         enum cfi_section section, enum cfi_status expected,
                         uint64_t offset)
{
    struct cfi_file *file = (struct cfi_file *)1;
    struct cfi_diag diag = {0};
    enum cfi_status status =
        cfi_file_from_section(bytes, len, section, 0x1000, &file, &diag);
    ck_assert_msg(status == expected, "status %s, expected %s (%s)",
                  cfi_status_name(status), cfi_status_name(expected),
                  diag.message ? diag.message : "no message");
    ck_assert_ptr_null(file);
    ck_assert_int_eq(diag.status, expected);
    ck_assert_msg(diag.offset == offset, "offset 0x%llx, expected 0x%llx (%s)",
                  (unsigned long long)diag.offset,
                  (unsigned long long)offset, diag.message);
    ck_assert_ptr_nonnull(diag.message);
    const char *prefix = cfi_section_name(section);
    ck_assert_msg(strncmp(diag.message, prefix, strlen(prefix)) == 0,
                  "message '%s' does not name %s", diag.message, prefix);
}

static void expect_error_bytes(const struct bytes *s, enum cfi_section section,
                               enum cfi_status expected, uint64_t offset)
{
    expect_error(s->b, s->n, section, expected, offset);
}

/* The lookup the header specifies, by brute force: among the FDEs of the
 * section that hold pc, the greatest pc_begin, then the first in order. */
static const struct cfi_fde *reference_lookup(const struct cfi_file *file,
                                              enum cfi_section section,
                                              uint64_t pc)
{
    const struct cfi_fde *best = NULL;
    for (size_t i = 0; i < file->nfdes; i++) {
        const struct cfi_fde *fde = &file->fdes[i];
        if (fde->section != section || pc < fde->pc_begin ||
            pc >= fde->pc_end)
            continue;
        if (!best || fde->pc_begin > best->pc_begin)
            best = fde;
    }
    return best;
}

static void check_lookup_at(const struct cfi_file *file, uint64_t pc)
{
    const struct cfi_fde *want[2];
    for (int s = CFI_EH_FRAME; s <= CFI_DEBUG_FRAME; s++) {
        const struct cfi_fde *got = cfi_file_lookup_in(file, s, pc);
        want[s] = reference_lookup(file, s, pc);
        ck_assert_msg(got == want[s],
                      "lookup_in(%s, 0x%llx): FDE %lld, want %lld",
                      cfi_section_name(s), (unsigned long long)pc,
                      got ? (long long)got->offset : -1LL,
                      want[s] ? (long long)want[s]->offset : -1LL);
    }
    ck_assert_ptr_eq(cfi_file_lookup(file, pc),
                     want[CFI_EH_FRAME] ? want[CFI_EH_FRAME]
                                        : want[CFI_DEBUG_FRAME]);
}

/* Every FDE's edges, and one byte outside each. */
static void check_lookup_everywhere(const struct cfi_file *file)
{
    for (size_t i = 0; i < file->nfdes; i++) {
        const struct cfi_fde *fde = &file->fdes[i];
        check_lookup_at(file, fde->pc_begin);
        check_lookup_at(file, fde->pc_begin - 1);
        check_lookup_at(file, fde->pc_end);
        check_lookup_at(file, fde->pc_end - 1);
    }
    check_lookup_at(file, 0);
    check_lookup_at(file, UINT64_MAX);
}

/* The order and links the header promises. */
static void check_invariants(const struct cfi_file *file)
{
    ck_assert_uint_le(file->n_eh_frame, file->nfdes);
    for (size_t i = 0; i < file->nfdes; i++) {
        const struct cfi_fde *fde = &file->fdes[i];
        ck_assert_int_eq(fde->section, i < file->n_eh_frame
                                           ? CFI_EH_FRAME : CFI_DEBUG_FRAME);
        ck_assert_ptr_nonnull(fde->cie);
        ck_assert_uint_eq(fde->cie->offset, fde->cie_offset);
        ck_assert_int_eq(fde->cie->section, fde->section);
        ck_assert_uint_le(fde->pc_begin, fde->pc_end);
        ck_assert_ptr_nonnull(fde->instructions);
        if (i + 1 < file->nfdes && fde[1].section == fde->section)
            ck_assert(fde->pc_begin < fde[1].pc_begin ||
                      (fde->pc_begin == fde[1].pc_begin &&
                       fde->offset < fde[1].offset));
    }
    for (size_t i = 0; i + 1 < file->ncies; i++)
        ck_assert(file->cies[i].section < file->cies[i + 1].section ||
                  (file->cies[i].section == file->cies[i + 1].section &&
                   file->cies[i].offset < file->cies[i + 1].offset));
    for (size_t i = 0; i < file->noverlaps; i++) {
        const struct cfi_overlap *o = &file->overlaps[i];
        ck_assert_int_eq(o->first->section, o->second->section);
        ck_assert_uint_gt(o->first->pc_end, o->second->pc_begin);
        ck_assert_uint_le(o->first->pc_begin, o->second->pc_begin);
    }
}

/* ------------------------------------------------------------------ */
/* Our parser on hand-built sections                                   */
/* ------------------------------------------------------------------ */

START_TEST(test_minimal_eh_frame)
{
    struct bytes s = {0};
    size_t cie = put_eh_cie(&s, "zR", pcrel_sdata4, 1);
    size_t fde = put_eh_fde(&s, cie, 0x400, 0x1000, 0x20);
    put(&s, 0, 4); /* terminator */
    struct cfi_file *file = from_section(&s, CFI_EH_FRAME, 0x400);
    ck_assert_uint_eq(file->ncies, 1);
    ck_assert_uint_eq(file->nfdes, 1);
    ck_assert_uint_eq(file->n_eh_frame, 1);
    ck_assert_ptr_null(file->path);
    ck_assert_uint_eq(file->nsegments, 0);
    ck_assert_uint_eq(file->eh_frame_addr, 0x400);
    ck_assert_uint_eq(file->eh_frame_size, s.n);

    const struct cfi_cie *c = &file->cies[0];
    ck_assert_int_eq(c->section, CFI_EH_FRAME);
    ck_assert_uint_eq(c->offset, cie);
    ck_assert_uint_eq(c->length, fde - cie - 4);
    ck_assert_uint_eq(c->version, 1);
    ck_assert_str_eq(c->augmentation, "zR");
    ck_assert_uint_eq(c->augmentation_data_len, 1);
    ck_assert_uint_eq(c->augmentation_data[0], 0x1b);
    ck_assert_uint_eq(c->code_align, 1);
    ck_assert_int_eq(c->data_align, -8);
    ck_assert_uint_eq(c->ra_column, 16);
    ck_assert_ptr_eq(c->arch, &cfi_arch_x86_64); /* bytes name no machine */
    ck_assert_ptr_eq(file->arch, &cfi_arch_x86_64);
    ck_assert_uint_eq(c->address_size, 8);
    ck_assert_uint_eq(c->fde_encoding, 0x1b);
    ck_assert_uint_eq(c->lsda_encoding, CFI_PE_OMIT);
    ck_assert_uint_eq(c->personality_encoding, CFI_PE_OMIT);
    ck_assert(!c->signal_frame);
    ck_assert_uint_eq(c->instructions_len, sizeof cie_program);
    ck_assert_mem_eq(c->instructions, cie_program, sizeof cie_program);
    ck_assert_uint_eq(c->instructions_offset, fde - sizeof cie_program);

    const struct cfi_fde *f = &file->fdes[0];
    ck_assert_uint_eq(f->offset, fde);
    ck_assert_uint_eq(f->length, s.n - 4 - fde - 4);
    ck_assert_uint_eq(f->cie_offset, cie);
    ck_assert_ptr_eq(f->cie, c);
    ck_assert_uint_eq(f->pc_begin, 0x1000);
    ck_assert_uint_eq(f->pc_end, 0x1020);
    ck_assert_ptr_nonnull(f->augmentation_data);
    ck_assert_uint_eq(f->augmentation_data_len, 0);
    ck_assert_uint_eq(f->instructions_len, sizeof fde_program);
    ck_assert_mem_eq(f->instructions, fde_program, sizeof fde_program);
    ck_assert_uint_eq(f->instructions_offset, s.n - 4 - sizeof fde_program);
    ck_assert_uint_eq(f->instructions_addr, 0x400 + f->instructions_offset);
    ck_assert(!cfi_fde_is_nop_only(f));

    ck_assert_ptr_eq(cfi_file_lookup(file, 0x1000), f);
    ck_assert_ptr_eq(cfi_file_lookup(file, 0x101f), f);
    ck_assert_ptr_null(cfi_file_lookup(file, 0x1020));
    ck_assert_ptr_null(cfi_file_lookup(file, 0xfff));
    ck_assert_ptr_null(cfi_file_lookup_in(file, CFI_DEBUG_FRAME, 0x1000));
    ck_assert_uint_eq(file->noverlaps, 0);
    check_invariants(file);
    cfi_file_close(file);
}
END_TEST

/* The bytes are copied: the file does not point into the caller's. */
START_TEST(test_from_section_copies)
{
    struct bytes s = {0};
    size_t cie = put_eh_cie(&s, "zR", pcrel_sdata4, 1);
    put_eh_fde(&s, cie, 0, 0x2000, 0x10);
    struct cfi_file *file = from_section(&s, CFI_EH_FRAME, 0);
    const uint8_t *instructions = file->fdes[0].instructions;
    ck_assert(instructions < s.b || instructions >= s.b + sizeof s.b);
    memset(s.b, 0xee, sizeof s.b);
    ck_assert_mem_eq(file->fdes[0].instructions, fde_program,
                     sizeof fde_program);
    ck_assert_str_eq(file->cies[0].augmentation, "zR");
    cfi_file_close(file);
}
END_TEST

/* No terminator is needed; one ends the section, whatever follows. */
START_TEST(test_terminator_ends_eh_frame)
{
    struct bytes s = {0};
    size_t cie = put_eh_cie(&s, "zR", pcrel_sdata4, 1);
    put_eh_fde(&s, cie, 0, 0x2000, 0x10);
    struct cfi_file *file = from_section(&s, CFI_EH_FRAME, 0);
    ck_assert_uint_eq(file->nfdes, 1);
    cfi_file_close(file);
    put(&s, 0, 4);
    PUT_BYTES(&s, 0xde, 0xad); /* junk after the terminator is not read */
    file = from_section(&s, CFI_EH_FRAME, 0);
    ck_assert_uint_eq(file->nfdes, 1);
    cfi_file_close(file);
}
END_TEST

/* DWARF 5 6.4.1 has no terminator in .debug_frame: a zero length word
 * there (Free Pascal and Go end the section with one; some producers
 * start it with one) is 4 bytes of padding, and the records after it are
 * read, as readelf and gimli read them; only zero bytes after it end the
 * section. */
START_TEST(test_zero_length_in_debug_frame)
{
    struct bytes s = {0};
    put(&s, 0, 4);
    size_t cie = begin_record(&s);
    put(&s, 0xffffffff, 4);
    PUT_BYTES(&s, 1, 0, 1, 0x7c, 16, 0x0c, 0x07, 0x08, 0x05, 0x10, 0x02, 0x00);
    end_record(&s, cie);
    size_t fde = begin_record(&s);
    put(&s, cie, 4);
    put(&s, 0x1000, 8);
    put(&s, 0x10, 8);
    end_record(&s, fde);
    put(&s, 0, 4);
    size_t after = begin_record(&s);
    put(&s, cie, 4);
    put(&s, 0x2000, 8);
    put(&s, 0x10, 8);
    end_record(&s, after);
    put(&s, 0, 4);
    put(&s, 0, 2);
    struct cfi_file *file = from_section(&s, CFI_DEBUG_FRAME, 0);
    ck_assert_uint_eq(file->ncies, 1);
    ck_assert_uint_eq(file->nfdes, 2);
    ck_assert_uint_eq(file->fdes[0].offset, fde);
    ck_assert_uint_eq(file->fdes[1].offset, after);
    cfi_file_close(file);
    /* in .eh_frame the zero length ends the section */
    struct bytes eh = {0};
    size_t eh_cie = put_eh_cie(&eh, "zR", pcrel_sdata4, 1);
    put_eh_fde(&eh, eh_cie, 0, 0x1000, 0x10);
    put(&eh, 0, 4);
    put(&eh, 0x12345, 4); /* never read */
    file = from_section(&eh, CFI_EH_FRAME, 0);
    ck_assert_uint_eq(file->nfdes, 1);
    cfi_file_close(file);
    /* what follows a zero word in .debug_frame must be records */
    put(&s, 0x12345, 4);
    expect_error_bytes(&s, CFI_DEBUG_FRAME, CFI_E_MALFORMED, s.n - 6);
}
END_TEST

/* A CIE and an FDE with the 0xffffffff escape and 64-bit lengths; their
 * CIE id and CIE pointer are 8 bytes. */
START_TEST(test_64bit_length)
{
    struct bytes s = {0};
    put(&s, 0xffffffff, 4);
    size_t cie_len_at = s.n;
    put(&s, 0, 8);
    put(&s, 0, 8); /* CIE id */
    put(&s, 1, 1);
    put_raw(&s, "zR", 3);
    put_uleb(&s, 1);
    put_sleb(&s, -8);
    put(&s, 16, 1);
    put_uleb(&s, 1);
    put(&s, CFI_PE_UDATA8, 1);
    put_raw(&s, cie_program, sizeof cie_program);
    uint64_t cie_len = s.n - cie_len_at - 8;
    memcpy(s.b + cie_len_at, &cie_len, 8);
    size_t fde = s.n;
    put(&s, 0xffffffff, 4);
    size_t fde_len_at = s.n;
    put(&s, 0, 8);
    put(&s, s.n, 8); /* CIE pointer: back to offset 0 */
    put(&s, 0x123456789a, 8);
    put(&s, 0x40, 8);
    put_uleb(&s, 0);
    put_raw(&s, fde_program, sizeof fde_program);
    uint64_t fde_len = s.n - fde_len_at - 8;
    memcpy(s.b + fde_len_at, &fde_len, 8);

    struct cfi_file *file = from_section(&s, CFI_EH_FRAME, 0x1000);
    ck_assert_uint_eq(file->ncies, 1);
    ck_assert_uint_eq(file->nfdes, 1);
    ck_assert_uint_eq(file->cies[0].length, cie_len);
    ck_assert_uint_eq(file->cies[0].instructions_offset,
                      fde - sizeof cie_program);
    const struct cfi_fde *f = &file->fdes[0];
    ck_assert_uint_eq(f->offset, fde);
    ck_assert_uint_eq(f->length, fde_len);
    ck_assert_uint_eq(f->cie_offset, 0);
    ck_assert_uint_eq(f->pc_begin, 0x123456789a);
    ck_assert_uint_eq(f->pc_end, 0x123456789a + 0x40);
    ck_assert_mem_eq(f->instructions, fde_program, sizeof fde_program);
    cfi_file_close(file);
}
END_TEST

/* .debug_frame: CIE id all ones, version 4 with address and segment
 * sizes, RA column a ULEB128, absolute addresses of address_size bytes,
 * a section-offset CIE pointer; here the FDE comes before its CIE. */
START_TEST(test_debug_frame_v4)
{
    struct bytes s = {0};
    size_t fde = begin_record(&s);
    put(&s, 0, 4); /* patched below */
    put(&s, 0x401000, 8);
    put(&s, 0x35, 8);
    put_raw(&s, fde_program, sizeof fde_program);
    end_record(&s, fde);
    size_t cie = begin_record(&s);
    put(&s, 0xffffffff, 4);
    put(&s, 4, 1);
    put(&s, 0, 1); /* "" */
    put(&s, 8, 1); /* address_size */
    put(&s, 0, 1); /* segment_selector_size */
    put_uleb(&s, 4);
    put_sleb(&s, -8);
    put_uleb(&s, 300);
    put_raw(&s, cie_program, sizeof cie_program);
    end_record(&s, cie);
    for (unsigned i = 0; i < 4; i++)
        s.b[fde + 4 + i] = (uint8_t)(cie >> (8 * i));

    struct cfi_file *file = from_section(&s, CFI_DEBUG_FRAME, 0);
    ck_assert_uint_eq(file->ncies, 1);
    ck_assert_uint_eq(file->nfdes, 1);
    ck_assert_uint_eq(file->n_eh_frame, 0);
    ck_assert_uint_eq(file->eh_frame_addr, 0);
    const struct cfi_cie *c = &file->cies[0];
    ck_assert_int_eq(c->section, CFI_DEBUG_FRAME);
    ck_assert_uint_eq(c->version, 4);
    ck_assert_str_eq(c->augmentation, "");
    ck_assert_ptr_null(c->augmentation_data);
    ck_assert_uint_eq(c->address_size, 8);
    ck_assert_uint_eq(c->code_align, 4);
    ck_assert_uint_eq(c->ra_column, 300);
    ck_assert_uint_eq(c->fde_encoding, CFI_PE_ABSPTR);
    const struct cfi_fde *f = &file->fdes[0];
    ck_assert_int_eq(f->section, CFI_DEBUG_FRAME);
    ck_assert_uint_eq(f->cie_offset, cie);
    ck_assert_ptr_eq(f->cie, c);
    ck_assert_uint_eq(f->pc_begin, 0x401000);
    ck_assert_uint_eq(f->pc_end, 0x401035);
    ck_assert_ptr_null(f->augmentation_data);
    ck_assert_uint_eq(f->instructions_offset, fde + 4 + 4 + 16);
    ck_assert_ptr_eq(cfi_file_lookup(file, 0x401000), f);
    ck_assert_ptr_null(cfi_file_lookup_in(file, CFI_EH_FRAME, 0x401000));
    cfi_file_close(file);
}
END_TEST

/* A .debug_frame version 1 CIE with a 32-bit address size (version 4)
 * CIE beside it: each FDE uses its own CIE's address size. */
START_TEST(test_debug_frame_address_sizes)
{
    struct bytes s = {0};
    size_t cie8 = begin_record(&s);
    put(&s, 0xffffffff, 4);
    PUT_BYTES(&s, 1, 0, 1, 0x78, 16);
    end_record(&s, cie8);
    size_t cie4 = begin_record(&s);
    put(&s, 0xffffffff, 4);
    PUT_BYTES(&s, 4, 0, 4, 0, 1, 0x7c, 8);
    end_record(&s, cie4);
    size_t fde8 = begin_record(&s);
    put(&s, cie8, 4);
    put(&s, 0x1000, 8);
    put(&s, 0x10, 8);
    end_record(&s, fde8);
    size_t fde4 = begin_record(&s);
    put(&s, cie4, 4);
    put(&s, 0x2000, 4);
    put(&s, 0x20, 4);
    PUT_BYTES(&s, 0x00);
    end_record(&s, fde4);
    struct cfi_file *file = from_section(&s, CFI_DEBUG_FRAME, 0);
    ck_assert_uint_eq(file->ncies, 2);
    ck_assert_uint_eq(file->cies[0].version, 1);
    ck_assert_uint_eq(file->cies[0].address_size, 8);
    ck_assert_uint_eq(file->cies[1].address_size, 4);
    ck_assert_int_eq(file->cies[1].data_align, -4);
    ck_assert_uint_eq(file->fdes[0].pc_end, 0x1010);
    ck_assert_uint_eq(file->fdes[0].instructions_len, 0);
    ck_assert(cfi_fde_is_nop_only(&file->fdes[0]));
    ck_assert_uint_eq(file->fdes[1].pc_begin, 0x2000);
    ck_assert_uint_eq(file->fdes[1].pc_end, 0x2020);
    ck_assert_uint_eq(file->fdes[1].instructions_len, 1);
    ck_assert(cfi_fde_is_nop_only(&file->fdes[1]));
    cfi_file_close(file);
}
END_TEST

/* Writes `value` in the format part of `encoding`. */
static void put_encoded(struct bytes *s, uint8_t encoding, uint64_t value)
{
    switch (encoding & 0x0f) {
    case CFI_PE_ABSPTR: case CFI_PE_UDATA8: case CFI_PE_SDATA8:
        put(s, value, 8);
        break;
    case CFI_PE_UDATA2: case CFI_PE_SDATA2:
        put(s, value, 2);
        break;
    case CFI_PE_UDATA4: case CFI_PE_SDATA4:
        put(s, value, 4);
        break;
    case CFI_PE_ULEB128:
        put_uleb(s, value);
        break;
    case CFI_PE_SLEB128:
        put_sleb(s, (int64_t)value);
        break;
    default:
        ck_abort_msg("no such format");
    }
}

/* pc_begin `pc` encoded with `encoding` at section address `addr`. */
static void check_encoding(uint8_t encoding, uint64_t addr, uint64_t pc)
{
    struct bytes s = {0};
    size_t cie = put_eh_cie(&s, "zR", &encoding, 1);
    size_t fde = begin_record(&s);
    put(&s, s.n - cie, 4);
    uint64_t field = addr + s.n;
    put_encoded(&s, encoding, (encoding & CFI_PE_PCREL) ? pc - field : pc);
    put_encoded(&s, encoding, 0x30);
    put_uleb(&s, 0);
    put_raw(&s, fde_program, sizeof fde_program);
    end_record(&s, fde);
    struct cfi_file *file = from_section(&s, CFI_EH_FRAME, addr);
    ck_assert_uint_eq(file->cies[0].fde_encoding, encoding);
    ck_assert_msg(file->fdes[0].pc_begin == pc,
                  "encoding 0x%02x: pc_begin 0x%llx, want 0x%llx", encoding,
                  (unsigned long long)file->fdes[0].pc_begin,
                  (unsigned long long)pc);
    ck_assert_uint_eq(file->fdes[0].pc_end, pc + 0x30);
    ck_assert_mem_eq(file->fdes[0].instructions, fde_program,
                     sizeof fde_program);
    cfi_file_close(file);
}

START_TEST(test_pointer_encodings)
{
    static const uint8_t formats[] = {
        CFI_PE_ABSPTR, CFI_PE_ULEB128, CFI_PE_UDATA2, CFI_PE_UDATA4,
        CFI_PE_UDATA8, CFI_PE_SLEB128, CFI_PE_SDATA2, CFI_PE_SDATA4,
        CFI_PE_SDATA8,
    };
    for (size_t i = 0; i < sizeof formats; i++) {
        check_encoding(formats[i], 0x1000, 0x1234);
        /* pc-relative, forwards: fits every format */
        check_encoding(CFI_PE_PCREL | formats[i], 0x1000, 0x1800);
    }
    /* pc-relative, backwards: the signed formats, and those as wide as
     * an address, where the difference wraps modulo 2^64 */
    static const uint8_t backwards[] = {
        CFI_PE_SLEB128, CFI_PE_SDATA2, CFI_PE_SDATA4, CFI_PE_SDATA8,
        CFI_PE_ABSPTR, CFI_PE_UDATA8,
    };
    for (size_t i = 0; i < sizeof backwards; i++)
        check_encoding(CFI_PE_PCREL | backwards[i], 0x9000, 0x8000);
    /* sdata4 below zero: sign-extended */
    check_encoding(CFI_PE_SDATA4, 0, 0xfffffffffffff000);
}
END_TEST

/* 'P' (decoded; indirect leaves the slot's address), 'L' (only the
 * encoding; the FDE keeps the raw LSDA pointer) and 'S'. */
START_TEST(test_personality_lsda_signal)
{
    struct bytes s = {0};
    size_t cie = begin_record(&s);
    put(&s, 0, 4);
    put(&s, 1, 1);
    put_raw(&s, "zPLRS", 6);
    put_uleb(&s, 1);
    put_sleb(&s, -8);
    put(&s, 16, 1);
    put_uleb(&s, 7);
    put(&s, 0x9b, 1); /* indirect | pcrel | sdata4 */
    uint64_t personality_field = 0x5000 + s.n;
    put(&s, (uint64_t)-0x100, 4);
    put(&s, 0x1b, 1);
    put(&s, 0x1b, 1);
    put_raw(&s, cie_program, sizeof cie_program);
    end_record(&s, cie);
    size_t fde = begin_record(&s);
    put(&s, s.n - cie, 4);
    put(&s, 0x100, 4);
    put(&s, 0x10, 4);
    put_uleb(&s, 4);
    put(&s, 0xabcd, 4); /* the LSDA pointer */
    end_record(&s, fde);
    struct cfi_file *file = from_section(&s, CFI_EH_FRAME, 0x5000);
    const struct cfi_cie *c = &file->cies[0];
    ck_assert_str_eq(c->augmentation, "zPLRS");
    ck_assert_uint_eq(c->augmentation_data_len, 7);
    ck_assert_uint_eq(c->personality_encoding, 0x9b);
    ck_assert_uint_eq(c->personality, personality_field - 0x100);
    ck_assert_uint_eq(c->lsda_encoding, 0x1b);
    ck_assert_uint_eq(c->fde_encoding, 0x1b);
    ck_assert(c->signal_frame);
    const struct cfi_fde *f = &file->fdes[0];
    ck_assert_uint_eq(f->augmentation_data_len, 4);
    ck_assert_uint_eq(cfi_load_le(f->augmentation_data, 4), 0xabcd);
    ck_assert_uint_eq(f->instructions_len, 0);
    cfi_file_close(file);
}
END_TEST

/* A letter we do not know stops the interpretation; the 'z' length
 * still delimits the data, so the record reads on. */
START_TEST(test_unknown_augmentation_letter)
{
    struct bytes s = {0};
    const uint8_t data[] = {CFI_PE_UDATA4, 0x55, 0x66};
    size_t cie = put_eh_cie(&s, "zRXS", data, sizeof data);
    size_t fde = begin_record(&s);
    put(&s, s.n - cie, 4);
    put(&s, 0x3000, 4);
    put(&s, 0x8, 4);
    put_uleb(&s, 0);
    end_record(&s, fde);
    struct cfi_file *file = from_section(&s, CFI_EH_FRAME, 0);
    ck_assert_uint_eq(file->cies[0].fde_encoding, CFI_PE_UDATA4);
    ck_assert(!file->cies[0].signal_frame);
    ck_assert_uint_eq(file->cies[0].augmentation_data_len, 3);
    ck_assert_uint_eq(file->fdes[0].pc_begin, 0x3000);
    cfi_file_close(file);
}
END_TEST

/* LEB128 at the edges of 64 bits: the largest values parse. */
START_TEST(test_leb128_limits)
{
    struct bytes s = {0};
    size_t cie = begin_record(&s);
    put(&s, 0, 4);
    put(&s, 3, 1);
    put(&s, 0, 1);
    PUT_BYTES(&s, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);
    PUT_BYTES(&s, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f);
    PUT_BYTES(&s, 0x90, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
              0x80, 0x00); /* 16, padded past ten bytes */
    end_record(&s, cie);
    struct cfi_file *file = from_section(&s, CFI_EH_FRAME, 0);
    ck_assert_uint_eq(file->cies[0].code_align, UINT64_MAX);
    ck_assert(file->cies[0].data_align == INT64_MIN);
    ck_assert_uint_eq(file->cies[0].ra_column, 16);
    ck_assert_uint_eq(file->nfdes, 0);
    cfi_file_close(file);
}
END_TEST

/* Overlapping and empty ranges: greatest pc_begin wins, then the first in
 * the section; empty ranges never match. */
START_TEST(test_overlapping_lookup)
{
    struct bytes s = {0};
    size_t cie = put_eh_cie(&s, "zR", pcrel_sdata4, 1);
    size_t a = put_eh_fde(&s, cie, 0, 0x1000, 0x100);
    size_t c = put_eh_fde(&s, cie, 0, 0x1040, 0x10);
    size_t b = put_eh_fde(&s, cie, 0, 0x1010, 0x10);
    size_t d = put_eh_fde(&s, cie, 0, 0x1010, 0x20);
    size_t e = put_eh_fde(&s, cie, 0, 0x1060, 0);
    put_eh_fde(&s, cie, 0, 0x2000, 0x10);
    struct cfi_file *file = from_section(&s, CFI_EH_FRAME, 0);
    check_invariants(file);
    ck_assert_uint_eq(file->fdes[0].offset, a);
    ck_assert_uint_eq(file->fdes[1].offset, b);
    ck_assert_uint_eq(file->fdes[2].offset, d);
    ck_assert_uint_eq(file->fdes[3].offset, c);
    ck_assert_uint_eq(file->fdes[4].offset, e);
    ck_assert_uint_eq(cfi_file_lookup(file, 0x1005)->offset, a);
    ck_assert_uint_eq(cfi_file_lookup(file, 0x1015)->offset, b);
    ck_assert_uint_eq(cfi_file_lookup(file, 0x1025)->offset, d);
    ck_assert_uint_eq(cfi_file_lookup(file, 0x1035)->offset, a);
    ck_assert_uint_eq(cfi_file_lookup(file, 0x1045)->offset, c);
    ck_assert_uint_eq(cfi_file_lookup(file, 0x1060)->offset, a);
    ck_assert_ptr_null(cfi_file_lookup(file, 0x1100));
    ck_assert_ptr_null(cfi_file_lookup(file, 0x1fff));
    /* a overlaps b, d and c; the empty e and the far one overlap nothing */
    ck_assert_uint_eq(file->noverlaps, 3);
    for (size_t i = 0; i < file->noverlaps; i++)
        ck_assert_uint_eq(file->overlaps[i].first->offset, a);
    for (uint64_t pc = 0xff0; pc < 0x2020; pc++)
        check_lookup_at(file, pc);
    cfi_file_close(file);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Malformed sections: status and offset of the bad record             */
/* ------------------------------------------------------------------ */

/* No record is valid: a file with no CIE and no FDE (glibc's gconv
 * modules have an .eh_frame of only its terminator). */
static void expect_empty(const uint8_t *bytes, size_t len,
                         enum cfi_section section)
{
    struct bytes s = {0};
    put_raw(&s, bytes, len);
    struct cfi_file *file = from_section(&s, section, 0x1000);
    ck_assert_uint_eq(file->ncies, 0);
    ck_assert_uint_eq(file->nfdes, 0);
    ck_assert_ptr_null(cfi_file_lookup(file, 0x1000));
    cfi_file_close(file);
}

START_TEST(test_empty_section)
{
    expect_empty(NULL, 0, CFI_EH_FRAME);
    expect_empty(NULL, 0, CFI_DEBUG_FRAME);
    const uint8_t terminator[] = {0, 0, 0, 0, 0xff};
    expect_empty(terminator, sizeof terminator, CFI_EH_FRAME);
    expect_empty(terminator, 4, CFI_DEBUG_FRAME);
    const uint8_t padding[] = {0, 0, 0, 0, 0, 0};
    expect_empty(padding, sizeof padding, CFI_DEBUG_FRAME);
    /* in .debug_frame a zero word is padding: the 0xff after it is a
     * truncated length */
    expect_error(terminator, sizeof terminator, CFI_DEBUG_FRAME,
                 CFI_E_MALFORMED, 4);
}
END_TEST

START_TEST(test_truncated_length)
{
    struct bytes s = {0};
    put_eh_cie(&s, "zR", pcrel_sdata4, 1);
    size_t tail = s.n;
    PUT_BYTES(&s, 0x10, 0x00);
    expect_error_bytes(&s, CFI_EH_FRAME, CFI_E_MALFORMED, tail);
    /* the 64-bit escape with its length cut */
    s.n = tail;
    PUT_BYTES(&s, 0xff, 0xff, 0xff, 0xff, 0x20, 0, 0, 0);
    expect_error_bytes(&s, CFI_EH_FRAME, CFI_E_MALFORMED, tail);
}
END_TEST

START_TEST(test_length_past_end)
{
    struct bytes s = {0};
    size_t cie = put_eh_cie(&s, "zR", pcrel_sdata4, 1);
    size_t fde = put_eh_fde(&s, cie, 0, 0x1000, 0x10);
    s.b[fde] += 1; /* one byte longer than the section */
    expect_error_bytes(&s, CFI_EH_FRAME, CFI_E_MALFORMED, fde);
    s.b[fde] -= 1;
    s.b[cie + 3] = 0x7f;
    expect_error_bytes(&s, CFI_EH_FRAME, CFI_E_MALFORMED, cie);
}
END_TEST

START_TEST(test_record_too_short)
{
    struct bytes s = {0};
    put_eh_cie(&s, "zR", pcrel_sdata4, 1);
    size_t bad = s.n;
    PUT_BYTES(&s, 2, 0, 0, 0, 0, 0);
    expect_error_bytes(&s, CFI_EH_FRAME, CFI_E_MALFORMED, bad);
    /* the 64-bit escape with a length too short for the 8-byte id */
    struct bytes t = {0};
    put(&t, 0xffffffff, 4);
    put(&t, 4, 8);
    put(&t, 0, 4);
    expect_error_bytes(&t, CFI_DEBUG_FRAME, CFI_E_MALFORMED, 0);
}
END_TEST

START_TEST(test_cie_pointer_to_nowhere)
{
    struct bytes s = {0};
    size_t cie = put_eh_cie(&s, "zR", pcrel_sdata4, 1);
    size_t fde = put_eh_fde(&s, cie, 0, 0x1000, 0x10);
    put(&s, 0, 4);
    /* .eh_frame: a pointer back past the start of the section */
    s.b[fde + 4] = (uint8_t)(fde + 4 + 1);
    expect_error_bytes(&s, CFI_EH_FRAME, CFI_E_MALFORMED, fde);
    /* into the middle of the CIE */
    s.b[fde + 4] = (uint8_t)(fde + 4 - 2);
    expect_error_bytes(&s, CFI_EH_FRAME, CFI_E_MALFORMED, fde);
    /* .debug_frame: an offset past the end of the section */
    struct bytes d = {0};
    size_t dfde = begin_record(&d);
    put(&d, 0x100, 4);
    put(&d, 0x1000, 8);
    put(&d, 0x10, 8);
    end_record(&d, dfde);
    expect_error_bytes(&d, CFI_DEBUG_FRAME, CFI_E_MALFORMED, dfde);
}
END_TEST

START_TEST(test_cie_pointer_to_fde)
{
    struct bytes s = {0};
    size_t cie = put_eh_cie(&s, "zR", pcrel_sdata4, 1);
    size_t first = put_eh_fde(&s, cie, 0, 0x1000, 0x10);
    size_t second = put_eh_fde(&s, first, 0, 0x2000, 0x10);
    expect_error_bytes(&s, CFI_EH_FRAME, CFI_E_MALFORMED, second);
    /* .debug_frame: an FDE naming itself */
    struct bytes d = {0};
    size_t dcie = begin_record(&d);
    put(&d, 0xffffffff, 4);
    PUT_BYTES(&d, 1, 0, 1, 0x78, 16);
    end_record(&d, dcie);
    size_t dfde = begin_record(&d);
    put(&d, d.n - 4, 4);
    put(&d, 0x1000, 8);
    put(&d, 0x10, 8);
    end_record(&d, dfde);
    expect_error_bytes(&d, CFI_DEBUG_FRAME, CFI_E_MALFORMED, dfde);
}
END_TEST

START_TEST(test_bad_cie_version)
{
    static const uint8_t versions[] = {0, 2, 5, 0xff};
    for (size_t i = 0; i < sizeof versions; i++) {
        struct bytes s = {0};
        put_eh_cie(&s, "zR", pcrel_sdata4, 1);
        size_t cie = put_eh_cie(&s, "zR", pcrel_sdata4, 1);
        s.b[cie + 8] = versions[i];
        expect_error_bytes(&s, CFI_EH_FRAME, CFI_E_MALFORMED, cie);
    }
}
END_TEST

/* Starts a CIE record whose header ends before its alignment fields:
 * CIE id 0, version 1, no augmentation. */
static size_t begin_plain_cie(struct bytes *s)
{
    size_t cie = begin_record(s);
    put(s, 0, 4);
    put(s, 1, 1);
    put(s, 0, 1);
    return cie;
}

START_TEST(test_leb128_overflow)
{
    struct bytes s = {0};
    put_eh_cie(&s, "zR", pcrel_sdata4, 1);
    size_t cie = begin_plain_cie(&s);
    /* code alignment: bit 64 set */
    PUT_BYTES(&s, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x03);
    PUT_BYTES(&s, 0x78, 16);
    end_record(&s, cie);
    expect_error_bytes(&s, CFI_EH_FRAME, CFI_E_MALFORMED, cie);
    /* data alignment: below INT64_MIN */
    s.n = cie;
    cie = begin_plain_cie(&s);
    put(&s, 1, 1);
    PUT_BYTES(&s, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7e);
    put(&s, 16, 1);
    end_record(&s, cie);
    expect_error_bytes(&s, CFI_EH_FRAME, CFI_E_MALFORMED, cie);
    /* a LEB128 that runs off the end of the record */
    s.n = cie;
    cie = begin_plain_cie(&s);
    PUT_BYTES(&s, 0x80, 0x80);
    end_record(&s, cie);
    expect_error_bytes(&s, CFI_EH_FRAME, CFI_E_MALFORMED, cie);
}
END_TEST

START_TEST(test_augmentation_data_past_record)
{
    struct bytes s = {0};
    size_t cie = begin_record(&s);
    put(&s, 0, 4);
    put(&s, 1, 1);
    put_raw(&s, "zR", 3);
    PUT_BYTES(&s, 1, 0x78, 16);
    put_uleb(&s, 100);
    put(&s, 0x1b, 1);
    end_record(&s, cie);
    expect_error_bytes(&s, CFI_EH_FRAME, CFI_E_MALFORMED, cie);
    /* the letters need more data than the length gives */
    struct bytes t = {0};
    cie = put_eh_cie(&t, "zRL", pcrel_sdata4, 1);
    expect_error_bytes(&t, CFI_EH_FRAME, CFI_E_MALFORMED, cie);
    /* an FDE's augmentation data past its record */
    struct bytes u = {0};
    cie = put_eh_cie(&u, "zR", pcrel_sdata4, 1);
    size_t fde = begin_record(&u);
    put(&u, u.n - cie, 4);
    put(&u, 0, 4);
    put(&u, 0x10, 4);
    put_uleb(&u, 9);
    put(&u, 0, 4);
    end_record(&u, fde);
    expect_error_bytes(&u, CFI_EH_FRAME, CFI_E_MALFORMED, fde);
    /* an FDE too short for its pc_range */
    struct bytes v = {0};
    cie = put_eh_cie(&v, "zR", pcrel_sdata4, 1);
    fde = begin_record(&v);
    put(&v, v.n - cie, 4);
    put(&v, 0, 4);
    put(&v, 0x10, 2);
    end_record(&v, fde);
    expect_error_bytes(&v, CFI_EH_FRAME, CFI_E_MALFORMED, fde);
}
END_TEST

START_TEST(test_unsupported_pointer_encoding)
{
    static const uint8_t encodings[] = {
        CFI_PE_DATAREL | CFI_PE_SDATA4, CFI_PE_TEXTREL | CFI_PE_UDATA4,
        CFI_PE_FUNCREL | CFI_PE_SDATA4, CFI_PE_ALIGNED,
        CFI_PE_INDIRECT | CFI_PE_PCREL | CFI_PE_SDATA4, 0x05, 0x0d, CFI_PE_OMIT,
    };
    for (size_t i = 0; i < sizeof encodings; i++) {
        struct bytes s = {0};
        size_t cie = put_eh_cie(&s, "zR", &encodings[i], 1);
        put_eh_fde(&s, cie, 0, 0x1000, 0x10);
        expect_error_bytes(&s, CFI_EH_FRAME, CFI_E_UNSUPPORTED, cie);
    }
    /* a personality pointer we cannot decode */
    struct bytes s = {0};
    const uint8_t data[] = {CFI_PE_DATAREL | CFI_PE_SDATA4, 0, 0, 0, 0};
    size_t cie = put_eh_cie(&s, "zP", data, sizeof data);
    expect_error_bytes(&s, CFI_EH_FRAME, CFI_E_UNSUPPORTED, cie);
}
END_TEST

START_TEST(test_unsupported_augmentation)
{
    struct bytes s = {0};
    put_eh_cie(&s, "zR", pcrel_sdata4, 1);
    size_t cie = put_eh_cie(&s, "eh", NULL, 0);
    expect_error_bytes(&s, CFI_EH_FRAME, CFI_E_UNSUPPORTED, cie);
    struct bytes t = {0};
    cie = put_eh_cie(&t, "zRRRRRRRRRRRRRRRRR", pcrel_sdata4, 1);
    expect_error_bytes(&t, CFI_EH_FRAME, CFI_E_UNSUPPORTED, cie);
    /* unterminated: the string runs to the end of the record */
    struct bytes u = {0};
    cie = begin_record(&u);
    put(&u, 0, 4);
    put(&u, 1, 1);
    put_raw(&u, "zR", 2);
    end_record(&u, cie);
    expect_error_bytes(&u, CFI_EH_FRAME, CFI_E_MALFORMED, cie);
}
END_TEST

START_TEST(test_unsupported_address_size)
{
    struct bytes s = {0};
    size_t cie = begin_record(&s);
    put(&s, 0xffffffff, 4);
    PUT_BYTES(&s, 4, 0, 2, 0, 1, 0x78, 16);
    end_record(&s, cie);
    expect_error_bytes(&s, CFI_DEBUG_FRAME, CFI_E_UNSUPPORTED, cie);
    s.b[cie + 10] = 8;
    s.b[cie + 11] = 4; /* a segment selector */
    expect_error_bytes(&s, CFI_DEBUG_FRAME, CFI_E_UNSUPPORTED, cie);
}
END_TEST

START_TEST(test_range_wraps)
{
    struct bytes s = {0};
    const uint8_t udata8 = CFI_PE_UDATA8;
    size_t cie = put_eh_cie(&s, "zR", &udata8, 1);
    size_t fde = begin_record(&s);
    put(&s, s.n - cie, 4);
    put(&s, UINT64_MAX - 0x10, 8);
    put(&s, 0x20, 8);
    put_uleb(&s, 0);
    end_record(&s, fde);
    expect_error_bytes(&s, CFI_EH_FRAME, CFI_E_MALFORMED, fde);
}
END_TEST

/* Every prefix of a good section either parses or fails cleanly with an
 * offset inside the prefix. */
START_TEST(test_every_truncation)
{
    struct bytes s = {0};
    size_t cie = put_eh_cie(&s, "zPLR", (const uint8_t[]){0x9b, 1, 2, 3, 4,
                                                           0x1b, 0x1b}, 7);
    put_eh_fde(&s, cie, 0, 0x1000, 0x10);
    put_eh_fde(&s, cie, 0, 0x2000, 0x10);
    for (size_t n = 0; n <= s.n; n++) {
        struct cfi_file *file = NULL;
        struct cfi_diag diag = {0};
        enum cfi_status status =
            cfi_file_from_section(s.b, n, CFI_EH_FRAME, 0, &file, &diag);
        if (status == CFI_OK) {
            cfi_file_close(file);
            continue;
        }
        ck_assert_ptr_null(file);
        ck_assert(diag.offset == CFI_NO_OFFSET || diag.offset < n);
    }
}
END_TEST

/* ------------------------------------------------------------------ */
/* Real files                                                          */
/* ------------------------------------------------------------------ */

/* A section's raw bytes read with libelf, independently of cfi/elf.c. */
struct raw_section {
    uint8_t *bytes;
    size_t size;
    uint64_t addr;
    uint64_t file_offset;
    size_t index;            /* in the section header table */
};

/* path opened with libelf, independently of cfi/elf.c; *fd for
 * raw_elf_close. */
static Elf *raw_elf_open(const char *path, int *fd)
{
    ck_assert_uint_ne(elf_version(EV_CURRENT), EV_NONE);
    *fd = open(path, O_RDONLY);
    ck_assert_int_ge(*fd, 0);
    Elf *elf = elf_begin(*fd, ELF_C_READ, NULL);
    ck_assert_ptr_nonnull(elf);
    return elf;
}

static void raw_elf_close(Elf *elf, int fd)
{
    elf_end(elf);
    close(fd);
}

static bool read_raw_section(const char *path, const char *name,
                             struct raw_section *out)
{
    memset(out, 0, sizeof *out);
    int fd;
    Elf *elf = raw_elf_open(path, &fd);
    size_t names;
    ck_assert_int_eq(elf_getshdrstrndx(elf, &names), 0);
    bool found = false;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn && !found;
         scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        ck_assert_ptr_nonnull(gelf_getshdr(scn, &shdr));
        const char *scn_name = elf_strptr(elf, names, shdr.sh_name);
        if (!scn_name || strcmp(scn_name, name) != 0 ||
            shdr.sh_type == SHT_NOBITS)
            continue;
        Elf_Data *data = elf_rawdata(scn, NULL);
        ck_assert_ptr_nonnull(data);
        out->size = data->d_size;
        out->bytes = malloc(out->size ? out->size : 1);
        memcpy(out->bytes, data->d_buf, out->size);
        out->addr = shdr.sh_addr;
        out->file_offset = shdr.sh_offset;
        out->index = elf_ndxscn(scn);
        found = true;
    }
    raw_elf_close(elf, fd);
    return found;
}

static void check_same_bytes(const uint8_t *a, size_t a_len, const uint8_t *b,
                             size_t b_len, const char *what, uint64_t offset)
{
    ck_assert_msg(a_len == b_len, "%s of record 0x%llx: %zu vs %zu bytes",
                  what, (unsigned long long)offset, a_len, b_len);
    ck_assert_msg((a == NULL) == (b == NULL), "%s of record 0x%llx: NULL",
                  what, (unsigned long long)offset);
    if (a_len)
        ck_assert_msg(memcmp(a, b, a_len) == 0, "%s of record 0x%llx differ",
                      what, (unsigned long long)offset);
}

static void check_same_cie(const struct cfi_cie *a, const struct cfi_cie *b)
{
    ck_assert_int_eq(a->section, b->section);
    ck_assert_uint_eq(a->offset, b->offset);
    ck_assert_uint_eq(a->length, b->length);
    ck_assert_uint_eq(a->version, b->version);
    ck_assert_str_eq(a->augmentation, b->augmentation);
    check_same_bytes(a->augmentation_data, a->augmentation_data_len,
                     b->augmentation_data, b->augmentation_data_len,
                     "CIE augmentation data", a->offset);
    ck_assert_uint_eq(a->code_align, b->code_align);
    ck_assert_int_eq(a->data_align, b->data_align);
    ck_assert_uint_eq(a->ra_column, b->ra_column);
    ck_assert_uint_eq(a->address_size, b->address_size);
    ck_assert_uint_eq(a->fde_encoding, b->fde_encoding);
    ck_assert_uint_eq(a->lsda_encoding, b->lsda_encoding);
    ck_assert_uint_eq(a->personality_encoding, b->personality_encoding);
    ck_assert_uint_eq(a->personality, b->personality);
    ck_assert_int_eq(a->signal_frame, b->signal_frame);
    check_same_bytes(a->instructions, a->instructions_len, b->instructions,
                     b->instructions_len, "CIE instructions", a->offset);
    ck_assert_uint_eq(a->instructions_offset, b->instructions_offset);
}

static void check_same_fde(const struct cfi_fde *a, const struct cfi_fde *b)
{
    ck_assert_int_eq(a->section, b->section);
    ck_assert_uint_eq(a->offset, b->offset);
    ck_assert_uint_eq(a->length, b->length);
    ck_assert_uint_eq(a->cie_offset, b->cie_offset);
    ck_assert_msg(a->pc_begin == b->pc_begin && a->pc_end == b->pc_end,
                  "FDE 0x%llx: [0x%llx, 0x%llx) vs [0x%llx, 0x%llx)",
                  (unsigned long long)a->offset,
                  (unsigned long long)a->pc_begin,
                  (unsigned long long)a->pc_end,
                  (unsigned long long)b->pc_begin,
                  (unsigned long long)b->pc_end);
    ck_assert_uint_eq(a->cie->offset, b->cie->offset);
    check_same_bytes(a->augmentation_data, a->augmentation_data_len,
                     b->augmentation_data, b->augmentation_data_len,
                     "FDE augmentation data", a->offset);
    check_same_bytes(a->instructions, a->instructions_len, b->instructions,
                     b->instructions_len, "FDE instructions", a->offset);
    ck_assert_uint_eq(a->instructions_offset, b->instructions_offset);
    ck_assert_uint_eq(a->instructions_addr, b->instructions_addr);
}

/* `part` holds one section of `whole`: the records of that section must
 * be the same, record for record. */
static void check_same_section(const struct cfi_file *whole,
                               const struct cfi_file *part,
                               enum cfi_section section)
{
    size_t n = 0;
    for (size_t i = 0; i < whole->ncies; i++) {
        if (whole->cies[i].section != section)
            continue;
        ck_assert_uint_lt(n, part->ncies);
        check_same_cie(&whole->cies[i], &part->cies[n++]);
    }
    ck_assert_uint_eq(n, part->ncies);
    n = 0;
    for (size_t i = 0; i < whole->nfdes; i++) {
        if (whole->fdes[i].section != section)
            continue;
        ck_assert_uint_lt(n, part->nfdes);
        check_same_fde(&whole->fdes[i], &part->fdes[n++]);
    }
    ck_assert_uint_eq(n, part->nfdes);
}

/* b holds a's records, CIE for CIE and FDE for FDE. */
static void check_same_records(const struct cfi_file *a,
                               const struct cfi_file *b)
{
    ck_assert_uint_eq(b->ncies, a->ncies);
    ck_assert_uint_eq(b->nfdes, a->nfdes);
    for (size_t i = 0; i < a->ncies; i++)
        check_same_cie(&a->cies[i], &b->cies[i]);
    for (size_t i = 0; i < a->nfdes; i++)
        check_same_fde(&a->fdes[i], &b->fdes[i]);
}

static struct cfi_file *open_ok(const char *path)
{
    struct cfi_file *file = NULL;
    struct cfi_diag diag = {0};
    enum cfi_status status = cfi_file_open(path, &file, &diag);
    ck_assert_msg(status == CFI_OK, "%s: %s: %s (offset 0x%llx)", path,
                  cfi_status_name(status), diag.message,
                  (unsigned long long)diag.offset);
    ck_assert_ptr_nonnull(file);
    ck_assert_str_eq(file->path, path);
    return file;
}

/* Loads `path` both ways (libdwarf; our parser on the raw section read
 * with libelf) and checks they agree on `name`. Returns false when the
 * file has no such section. */
static bool cross_check(const char *path, const char *name,
                        enum cfi_section section)
{
    struct raw_section raw;
    if (!read_raw_section(path, name, &raw))
        return false;
    struct cfi_file *whole = open_ok(path);
    struct cfi_file *part = NULL;
    struct cfi_diag diag = {0};
    enum cfi_status status = cfi_file_from_section(
        raw.bytes, raw.size, section, raw.addr, &part, &diag);
    ck_assert_msg(status == CFI_OK, "%s %s: %s at 0x%llx", path, name,
                  diag.message, (unsigned long long)diag.offset);
    if (section == CFI_EH_FRAME) {
        ck_assert_uint_eq(whole->eh_frame_addr, raw.addr);
        ck_assert_uint_eq(whole->eh_frame_size, raw.size);
    }
    check_same_section(whole, part, section);
    check_invariants(whole);
    cfi_file_close(part);
    cfi_file_close(whole);
    free(raw.bytes);
    return true;
}

START_TEST(test_cross_check_system_libraries)
{
    static const char *const libraries[] = {
        "libc.so.6", "ld-linux-x86-64.so.2", "libstdc++.so.6",
    };
    size_t checked = 0;
    for (size_t i = 0; i < 3; i++) {
        char *path = test_system_lib(libraries[i]);
        if (!path) {
            printf("note: %s not on this system, not cross-checked\n",
                   libraries[i]);
            continue;
        }
        ck_assert_msg(cross_check(path, ".eh_frame", CFI_EH_FRAME),
                      "%s has no .eh_frame", path);
        checked++;
        free(path);
    }
    ck_assert_uint_gt(checked, 0);
}
END_TEST

/* CIEs and FDEs of an .eh_frame counted by a walk over lengths and ids
 * alone, a third reading independent of both loaders. */
static void count_records(const struct raw_section *raw, size_t *ncies,
                          size_t *nfdes)
{
    *ncies = *nfdes = 0;
    size_t pos = 0;
    while (pos + 4 <= raw->size) {
        uint64_t length = cfi_load_le(raw->bytes + pos, 4);
        size_t header = 4, id_size = 4;
        if (length == 0)
            break;
        if (length == 0xffffffff) {
            length = cfi_load_le(raw->bytes + pos + 4, 8);
            header = 12;
            id_size = 8;
        }
        ck_assert_uint_le(pos + header + length, raw->size);
        uint64_t id = cfi_load_le(raw->bytes + pos + header, id_size);
        *(id == 0 ? ncies : nfdes) += 1;
        pos += header + length;
    }
}

/* The first program header of `type` in path, read with libelf,
 * independently of cfi/elf.c; false when there is none. */
static bool read_raw_phdr(const char *path, uint32_t type, GElf_Phdr *out)
{
    int fd;
    Elf *elf = raw_elf_open(path, &fd);
    size_t count;
    ck_assert_int_eq(elf_getphdrnum(elf, &count), 0);
    bool found = false;
    for (size_t i = 0; i < count && !found; i++) {
        ck_assert_ptr_nonnull(gelf_getphdr(elf, (int)i, out));
        found = out->p_type == type;
    }
    raw_elf_close(elf, fd);
    return found;
}

/* cfi_file_program_header agrees with libelf on a dynamic executable
 * (this runner) and on libc: PT_INTERP, PT_DYNAMIC, PT_GNU_EH_FRAME,
 * their place and bytes; a type no header has gives false. */
START_TEST(test_program_headers)
{
    static const uint32_t types[] = {PT_INTERP, PT_DYNAMIC,
                                     PT_GNU_EH_FRAME, PT_SHLIB};
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    ck_assert_int_gt(n, 0);
    self[n] = 0;
    char *libc = test_system_lib("libc.so.6");
    ck_assert_ptr_nonnull(libc);
    const char *paths[] = {self, libc};
    for (size_t p = 0; p < 2; p++) {
        struct cfi_file *file = open_ok(paths[p]);
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
            GElf_Phdr raw;
            struct cfi_segment seg;
            bool expected = read_raw_phdr(paths[p], types[t], &raw);
            ck_assert_int_eq(cfi_file_program_header(file, types[t], &seg),
                             expected);
            if (!expected)
                continue;
            ck_assert_uint_eq(seg.vaddr, raw.p_vaddr);
            ck_assert_uint_eq(seg.memsz, raw.p_memsz);
            ck_assert_uint_eq(seg.filesz, raw.p_filesz);
            ck_assert_ptr_eq(seg.bytes, file->image + raw.p_offset);
        }
        GElf_Phdr interp;
        ck_assert(p == 1 || read_raw_phdr(self, PT_INTERP, &interp));
        cfi_file_close(file);
    }
    free(libc);
}
END_TEST

START_TEST(test_libc)
{
    char *path = test_system_lib("libc.so.6");
    ck_assert_msg(path, "no libc.so.6 on this system");
    struct raw_section raw;
    ck_assert(read_raw_section(path, ".eh_frame", &raw));
    size_t ncies, nfdes;
    count_records(&raw, &ncies, &nfdes);

    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    struct cfi_file *file = open_ok(path);
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("note: %s: %zu CIEs, %zu FDEs, %zu overlaps, loaded in %.1f ms\n",
           path, file->ncies, file->nfdes, file->noverlaps,
           (end.tv_sec - start.tv_sec) * 1e3 +
               (end.tv_nsec - start.tv_nsec) / 1e6);
    ck_assert_uint_eq(file->ncies, ncies);
    ck_assert_uint_eq(file->nfdes, nfdes);
    ck_assert_uint_eq(file->n_eh_frame, nfdes);
    ck_assert_uint_ge(file->ncies, 2);   /* FACTS.md: 3 */
    ck_assert_uint_gt(file->nfdes, 1000); /* FACTS.md: 3,713 */

    const struct cfi_cie *c = &file->cies[0];
    ck_assert_str_eq(c->augmentation, "zR");
    ck_assert_uint_eq(c->version, 1);
    ck_assert_uint_eq(c->code_align, 1);
    ck_assert_int_eq(c->data_align, -8);
    ck_assert_uint_eq(c->ra_column, CFI_REG_RIP);
    ck_assert_uint_eq(c->fde_encoding, CFI_PE_PCREL | CFI_PE_SDATA4);
    size_t signal_frames = 0;
    for (size_t i = 0; i < file->ncies; i++)
        signal_frames += file->cies[i].signal_frame;
    ck_assert_uint_ge(signal_frames, 1);

    check_invariants(file);
    check_lookup_everywhere(file);
    size_t gaps = 0;
    for (size_t i = 0; i + 1 < file->nfdes; i++) {
        if (file->fdes[i].pc_end >= file->fdes[i + 1].pc_begin ||
            reference_lookup(file, CFI_EH_FRAME, file->fdes[i].pc_end))
            continue;
        ck_assert_ptr_null(cfi_file_lookup(file, file->fdes[i].pc_end));
        gaps++;
    }
    ck_assert_uint_gt(gaps, 0);
    ck_assert_ptr_null(cfi_file_lookup(file, file->fdes[0].pc_begin - 1));

    /* Every FDE lies in an executable segment; .eh_frame's bytes are the
     * segment's bytes at its address. */
    for (size_t i = 0; i < file->nfdes; i++) {
        const struct cfi_segment *seg =
            cfi_file_segment(file, file->fdes[i].pc_begin);
        ck_assert_ptr_nonnull(seg);
        ck_assert(seg->executable);
    }
    const struct cfi_segment *seg = cfi_file_segment(file, raw.addr);
    ck_assert_ptr_nonnull(seg);
    ck_assert_uint_le(raw.addr - seg->vaddr + raw.size, seg->filesz);
    ck_assert_mem_eq(seg->bytes + (raw.addr - seg->vaddr), raw.bytes, raw.size);
    ck_assert_uint_ne(file->eh_frame_hdr_addr, 0);
    ck_assert_uint_ne(file->eh_frame_hdr_size, 0);
    ck_assert_ptr_null(cfi_file_segment(file, UINT64_MAX - 16));
    cfi_file_close(file);
    free(raw.bytes);
    free(path);
}
END_TEST

/* Runs a command with its output discarded; its exit status, or -1. */
static int run(const char *const argv[])
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *join_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    snprintf(path, n, "%s/%s", dir, name);
    return path;
}

/* Writes to path `head`, then `count` small functions: `each` with
 * i and i + 2 for its two %d, i from 0. */
static void write_functions_c(const char *path, const char *head,
                              const char *each, int count)
{
    char src[8192];
    snprintf(src, sizeof src, "%s", head);
    for (int i = 0; i < count; i++) {
        size_t len = strlen(src);
        snprintf(src + len, sizeof src - len, each, i, i + 2);
    }
    ck_assert_int_eq(test_write_file(path, src, strlen(src)), 0);
}

/* 64 functions: enough that .debug_frame shrinks when compressed (ld
 * and objcopy then compress it). */
static void write_64_functions_c(const char *path)
{
    write_functions_c(path, "", "int f%d(int x) { return x * %d + 1; }\n",
                      64);
}

/* Removes and frees the n files of paths. */
static void remove_files(char *const *paths, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unlink(paths[i]);
        free(paths[i]);
    }
}

/* One function with .eh_frame, one with only .debug_frame, linked into
 * one object: both sections load through libdwarf, agree with our parser,
 * and lookup prefers .eh_frame. */
START_TEST(test_eh_frame_and_debug_frame)
{
    char *dir = test_temp_dir();
    char *a_c = join_path(dir, "a.c"), *b_c = join_path(dir, "b.c");
    char *a_o = join_path(dir, "a.o"), *b_o = join_path(dir, "b.o");
    char *so = join_path(dir, "ab.so");
    const char a_src[] = "int unwound(int x) { return x * 3; }\n";
    ck_assert_int_eq(test_write_file(a_c, a_src, strlen(a_src)), 0);
    /* enough functions that objcopy finds .debug_frame worth compressing */
    write_functions_c(b_c, "int unwound(int);\n",
                      "int debug_only%d(int x) "
                      "{ return unwound(x) * %d + 1; }\n", 64);
    const char *cc_a[] = {"cc", "-g", "-O1", "-fPIC", "-fasynchronous-unwind-tables",
                          "-c", "-o", a_o, a_c, NULL};
    const char *cc_b[] = {"cc", "-g", "-O1", "-fPIC", "-fno-asynchronous-unwind-tables",
                          "-fno-unwind-tables", "-c", "-o", b_o, b_c, NULL};
    const char *ld[] = {"cc", "-shared", "-nostdlib", "-o", so, a_o, b_o, NULL};
    ck_assert_int_eq(run(cc_a), 0);
    ck_assert_int_eq(run(cc_b), 0);
    ck_assert_int_eq(run(ld), 0);

    ck_assert(cross_check(so, ".eh_frame", CFI_EH_FRAME));
    ck_assert(cross_check(so, ".debug_frame", CFI_DEBUG_FRAME));
    struct cfi_file *file = open_ok(so);
    ck_assert_uint_ge(file->n_eh_frame, 1);
    ck_assert_uint_gt(file->nfdes, file->n_eh_frame);
    const struct cfi_fde *debug = &file->fdes[file->n_eh_frame];
    ck_assert_int_eq(debug->section, CFI_DEBUG_FRAME);
    ck_assert_int_eq(debug->cie->section, CFI_DEBUG_FRAME);
    ck_assert_ptr_eq(cfi_file_lookup(file, debug->pc_begin), debug);
    ck_assert_ptr_null(cfi_file_lookup_in(file, CFI_EH_FRAME, debug->pc_begin));
    const struct cfi_fde *eh = &file->fdes[0];
    ck_assert_ptr_eq(cfi_file_lookup(file, eh->pc_begin), eh);
    check_lookup_everywhere(file);

    /* the same object with .debug_frame compressed (SHF_COMPRESSED,
     * zlib) reads the same */
    char *compressed = join_path(dir, "ab-z.so");
    const char *objcopy[] = {"objcopy", "--compress-debug-sections=zlib",
                             so, compressed, NULL};
    ck_assert_int_eq(run(objcopy), 0);
    struct raw_section raw;
    ck_assert(read_raw_section(compressed, ".debug_frame", &raw));
    ck_assert_uint_eq(cfi_load_le(raw.bytes, 4), ELFCOMPRESS_ZLIB);
    free(raw.bytes);
    struct cfi_file *unpacked = open_ok(compressed);
    check_same_records(file, unpacked);
    cfi_file_close(unpacked);

    /* and with the older GNU compression (.zdebug_frame: "ZLIB", the
     * size big-endian, a zlib stream), as readelf reads it */
    char *gnu = join_path(dir, "ab-zgnu.so");
    const char *objcopy_gnu[] = {"objcopy", "--compress-debug-sections=zlib-gnu",
                                 so, gnu, NULL};
    ck_assert_int_eq(run(objcopy_gnu), 0);
    ck_assert(!read_raw_section(gnu, ".debug_frame", &raw));
    ck_assert(read_raw_section(gnu, ".zdebug_frame", &raw));
    ck_assert_int_eq(memcmp(raw.bytes, "ZLIB", 4), 0);
    free(raw.bytes);
    unpacked = open_ok(gnu);
    check_same_records(file, unpacked);
    cfi_file_close(unpacked);
    cfi_file_close(file);

    char *paths[] = {a_c, b_c, a_o, b_o, so, compressed, gnu};
    remove_files(paths, 7);
    rmdir(dir);
    free(dir);
}
END_TEST

/* ld --compress-debug-sections=zstd (SHF_COMPRESSED, ELFCOMPRESS_ZSTD =
 * 2): the same records as the file linked without compression. 64
 * functions, so that .debug_frame shrinks and ld compresses it. */
START_TEST(test_zstd_debug_frame)
{
    char *dir = test_temp_dir();
    char *c = join_path(dir, "z.c"), *so = join_path(dir, "z.so");
    char *zstd = join_path(dir, "z-zstd.so");
    write_64_functions_c(c);
    const char *cc[] = {"cc", "-g", "-O1", "-fPIC", "-shared", "-nostdlib",
                        "-fno-asynchronous-unwind-tables", "-o", so, c, NULL};
    const char *cc_zstd[] = {"cc", "-g", "-O1", "-fPIC", "-shared",
                             "-nostdlib", "-fno-asynchronous-unwind-tables",
                             "-Wl,--compress-debug-sections=zstd", "-o", zstd,
                             c, NULL};
    ck_assert_int_eq(run(cc), 0);
    ck_assert_int_eq(run(cc_zstd), 0);
    struct raw_section raw;
    ck_assert(read_raw_section(zstd, ".debug_frame", &raw));
    ck_assert_uint_eq(cfi_load_le(raw.bytes, 4), 2); /* ELFCOMPRESS_ZSTD */
    free(raw.bytes);
    struct cfi_file *file = open_ok(so), *unpacked = open_ok(zstd);
    ck_assert_uint_eq(file->nfdes, 64);
    check_same_records(file, unpacked);
    cfi_file_close(unpacked);
    cfi_file_close(file);
    char *paths[] = {c, so, zstd};
    remove_files(paths, 3);
    rmdir(dir);
    free(dir);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Separate debug files                                                 */
/* ------------------------------------------------------------------ */

static void copy_file(const char *from, const char *to)
{
    size_t size;
    char *bytes = test_read_file(from, &size);
    ck_assert_ptr_nonnull(bytes);
    ck_assert_int_eq(test_write_file(to, bytes, size), 0);
    free(bytes);
}

/* The folders and files of one debug-file test, under one temporary
 * folder. */
struct debug_tree {
    char *dir;
    char *full;      /* the program linked with -g */
    char *debug;     /* objcopy --only-keep-debug */
    char *stripped;  /* --strip-debug --add-gnu-debuglink, beside debug */
};

/* main() with .eh_frame; 16 functions compiled without unwind tables,
 * whose FDEs are in .debug_frame only. */
static void debug_tree_build(struct debug_tree *t)
{
    t->dir = test_temp_dir();
    char *m_c = join_path(t->dir, "m.c"), *h_c = join_path(t->dir, "h.c");
    char *m_o = join_path(t->dir, "m.o"), *h_o = join_path(t->dir, "h.o");
    t->full = join_path(t->dir, "prog");
    t->debug = join_path(t->dir, "prog.debug");
    t->stripped = join_path(t->dir, "prog.stripped");
    const char m_src[] = "int helper(int);\n"
                         "int main(int argc, char **argv)\n"
                         "{ (void)argv; return helper(argc); }\n";
    ck_assert_int_eq(test_write_file(m_c, m_src, strlen(m_src)), 0);
    write_functions_c(h_c, "int helper(int x) { return x + 1; }\n",
                      "int g%d(int x) { return helper(x) * %d + 1; }\n", 16);
    const char *cc_m[] = {"cc", "-g", "-O1", "-c", "-o", m_o, m_c, NULL};
    const char *cc_h[] = {"cc", "-g", "-O1", "-fno-asynchronous-unwind-tables",
                          "-fno-unwind-tables", "-c", "-o", h_o, h_c, NULL};
    const char *ld[] = {"cc", "-Wl,--build-id", "-o", t->full, m_o, h_o,
                        NULL};
    const char *keep[] = {"objcopy", "--only-keep-debug", t->full, t->debug,
                          NULL};
    char link[4200];
    snprintf(link, sizeof link, "--add-gnu-debuglink=%s", t->debug);
    const char *strip[] = {"objcopy", "--strip-debug", link, t->full,
                           t->stripped, NULL};
    ck_assert_int_eq(run(cc_m), 0);
    ck_assert_int_eq(run(cc_h), 0);
    ck_assert_int_eq(run(ld), 0);
    ck_assert_int_eq(run(keep), 0);
    ck_assert_int_eq(run(strip), 0);
    char *paths[] = {m_c, h_c, m_o, h_o};
    remove_files(paths, 4);
}

static void debug_tree_free(struct debug_tree *t)
{
    const char *rm[] = {"rm", "-rf", t->dir, NULL};
    ck_assert_int_eq(run(rm), 0);
    free(t->dir);
    free(t->full);
    free(t->debug);
    free(t->stripped);
}

/* The stripped file opened with its debug file: the FDEs of the file
 * linked with -g, record for record. */
static void check_merged(const char *path, const struct cfi_debug_search *s,
                         const struct cfi_file *full, const char *from)
{
    struct cfi_file *file = NULL;
    struct cfi_diag diag = {0};
    ck_assert_int_eq(cfi_file_open_debug(path, s, &file, &diag), CFI_OK);
    ck_assert_int_eq(file->debug_state, CFI_DEBUG_FOUND);
    char *found = realpath(file->debug_path, NULL);
    char *expected = realpath(from, NULL);
    ck_assert_ptr_nonnull(found);
    ck_assert_ptr_nonnull(expected);
    ck_assert_str_eq(found, expected);
    free(found);
    free(expected);
    ck_assert_uint_eq(file->nfdes, full->nfdes);
    ck_assert_uint_eq(file->n_eh_frame, full->n_eh_frame);
    for (size_t i = 0; i < full->nfdes; i++)
        check_same_fde(&full->fdes[i], &file->fdes[i]);
    cfi_file_close(file);
}

static struct cfi_file *open_debug_ok(const char *path,
                                      const struct cfi_debug_search *s)
{
    struct cfi_file *file = NULL;
    struct cfi_diag diag = {0};
    ck_assert_int_eq(cfi_file_open_debug(path, s, &file, &diag), CFI_OK);
    return file;
}

/* .gnu_debuglink: beside the file, in its .debug/ folder, and under a
 * debug directory + the file's folder; the CRC must match. */
START_TEST(test_debug_file_by_debuglink)
{
    struct debug_tree t;
    debug_tree_build(&t);
    struct cfi_file *full = open_ok(t.full), *alone = open_ok(t.stripped);
    ck_assert_uint_gt(full->nfdes, full->n_eh_frame + 16);
    ck_assert_uint_eq(alone->nfdes, alone->n_eh_frame); /* no .debug_frame */
    ck_assert_uint_eq(alone->n_eh_frame, full->n_eh_frame);
    ck_assert_int_eq(alone->debug_state, CFI_DEBUG_NONE);
    cfi_file_close(alone);
    check_merged(t.stripped, NULL, full, t.debug);

    /* in .debug/ beside the file */
    char *sub = join_path(t.dir, "a"), *sub_debug = join_path(sub, ".debug");
    char *a_prog = join_path(sub, "prog.stripped");
    char *a_debug = join_path(sub_debug, "prog.debug");
    ck_assert(cfi_make_dirs(sub_debug));
    copy_file(t.stripped, a_prog);
    copy_file(t.debug, a_debug);
    check_merged(a_prog, NULL, full, a_debug);

    /* under a debug directory: DIR + the file's absolute folder */
    char *b = join_path(t.dir, "b"), *b_prog = join_path(b, "prog.stripped");
    char *root = join_path(t.dir, "root");
    char *real_b = NULL;
    ck_assert(cfi_make_dirs(b));
    copy_file(t.stripped, b_prog);
    ck_assert_ptr_nonnull(real_b = realpath(b, NULL));
    char mirror[4200], mirrored[4300];
    snprintf(mirror, sizeof mirror, "%s%s", root, real_b);
    snprintf(mirrored, sizeof mirrored, "%s/prog.debug", mirror);
    ck_assert(cfi_make_dirs(mirror));
    copy_file(t.debug, mirrored);
    const char *dirs[] = {root};
    struct cfi_debug_search search = {dirs, 1};
    check_merged(b_prog, &search, full, mirrored);

    /* missing: the state says so and names it; .eh_frame is read */
    struct cfi_file *file = open_debug_ok(b_prog, NULL);
    ck_assert_int_eq(file->debug_state, CFI_DEBUG_MISSING);
    ck_assert_str_eq(file->debug_path, "prog.debug");
    ck_assert_uint_eq(file->nfdes, full->n_eh_frame);
    cfi_file_close(file);

    /* a debug file whose CRC differs (one byte more) is not taken */
    size_t size;
    char *bytes = test_read_file(t.debug, &size);
    ck_assert_ptr_nonnull(bytes);
    ck_assert_int_eq(test_write_file(mirrored, bytes, size + 1), 0);
    free(bytes);
    file = open_debug_ok(b_prog, &search);
    ck_assert_int_eq(file->debug_state, CFI_DEBUG_MISSING);
    ck_assert_uint_eq(file->nfdes, full->n_eh_frame);
    cfi_file_close(file);

    cfi_file_close(full);
    free(real_b);
    const char *frees[] = {sub, sub_debug, a_prog, a_debug, b, b_prog, root};
    for (size_t i = 0; i < 7; i++)
        free((char *)frees[i]);
    debug_tree_free(&t);
}
END_TEST

/* The build-id: DIR/.build-id/NN/REST.debug, whose own build-id must be
 * the file's. */
START_TEST(test_debug_file_by_build_id)
{
    struct debug_tree t;
    debug_tree_build(&t);
    struct cfi_file *full = open_ok(t.full);
    struct raw_section note;
    ck_assert(read_raw_section(t.stripped, ".note.gnu.build-id", &note));
    ck_assert_uint_ge(note.size, 16 + 2);
    ck_assert_uint_eq(cfi_load_le(note.bytes + 8, 4), NT_GNU_BUILD_ID);
    size_t id_size = (size_t)cfi_load_le(note.bytes + 4, 4);
    const uint8_t *id = note.bytes + 16;
    char *root = join_path(t.dir, "root"), *c = join_path(t.dir, "c");
    char folder[4200], path[4400];
    snprintf(folder, sizeof folder, "%s/.build-id/%02x", root, id[0]);
    int n = snprintf(path, sizeof path, "%s/", folder);
    for (size_t i = 1; i < id_size; i++)
        n += snprintf(path + n, sizeof path - (size_t)n, "%02x", id[i]);
    snprintf(path + n, sizeof path - (size_t)n, ".debug");
    ck_assert(cfi_make_dirs(folder));
    ck_assert(cfi_make_dirs(c));
    char *c_prog = join_path(c, "prog");
    copy_file(t.stripped, c_prog);
    copy_file(t.debug, path);
    const char *dirs[] = {root};
    struct cfi_debug_search search = {dirs, 1};
    check_merged(c_prog, &search, full, path);

    /* a file there with another build-id is not taken */
    copy_file(t.full, path);
    struct raw_section other;
    ck_assert(read_raw_section(path, ".note.gnu.build-id", &other));
    size_t size;
    char *bytes = test_read_file(path, &size);
    ck_assert_ptr_nonnull(bytes);
    bytes[other.file_offset + 16] ^= 0xff;
    ck_assert_int_eq(test_write_file(path, bytes, size), 0);
    free(bytes);
    free(other.bytes);
    struct cfi_file *file = open_debug_ok(c_prog, &search);
    ck_assert_int_eq(file->debug_state, CFI_DEBUG_MISSING);
    ck_assert_uint_eq(file->nfdes, full->n_eh_frame);
    cfi_file_close(file);

    free(note.bytes);
    free(root);
    free(c);
    free(c_prog);
    cfi_file_close(full);
    debug_tree_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* ELF-level errors                                                    */
/* ------------------------------------------------------------------ */

/* Opens a file that must fail with `expected`; returns the diagnostic. */
static struct cfi_diag open_fails(const char *path, enum cfi_status expected)
{
    struct cfi_file *file = (struct cfi_file *)1;
    struct cfi_diag diag = {0};
    enum cfi_status status = cfi_file_open(path, &file, &diag);
    ck_assert_msg(status == expected, "%s: %s (%s), expected %s", path,
                  cfi_status_name(status), diag.message ? diag.message : "-",
                  cfi_status_name(expected));
    ck_assert_ptr_null(file);
    ck_assert_ptr_nonnull(diag.message);
    return diag;
}

/* A scratch copy of a system library, edited by the test. */
struct scratch {
    char *dir;
    char *path;
    char *bytes;
    size_t size;
};

static void scratch_copy(struct scratch *s, const char *library)
{
    char *source = test_system_lib(library);
    ck_assert_msg(source, "no %s on this system", library);
    s->bytes = test_read_file(source, &s->size);
    ck_assert_ptr_nonnull(s->bytes);
    s->dir = test_temp_dir();
    s->path = join_path(s->dir, "copy.so");
    free(source);
}

static void scratch_write(const struct scratch *s, size_t size)
{
    ck_assert_int_eq(test_write_file(s->path, s->bytes, size), 0);
}

static void scratch_free(struct scratch *s)
{
    unlink(s->path);
    rmdir(s->dir);
    free(s->path);
    free(s->dir);
    free(s->bytes);
}

/* The file offset of section `name` of `path` (0 when absent). */
static uint64_t section_offset(const char *path, const char *name)
{
    struct raw_section raw;
    uint64_t offset = read_raw_section(path, name, &raw) ? raw.file_offset
                                                         : 0;
    free(raw.bytes);
    return offset;
}

/* A .zdebug_frame whose magic or zlib stream is damaged: one error,
 * naming the section, no crash. */
START_TEST(test_zdebug_frame_malformed)
{
    char *dir = test_temp_dir();
    char *c = join_path(dir, "z.c"), *so = join_path(dir, "z.so");
    char *gnu = join_path(dir, "z-gnu.so"), *bad = join_path(dir, "bad.so");
    write_64_functions_c(c);
    const char *cc[] = {"cc", "-g", "-O1", "-fPIC", "-shared", "-nostdlib",
                        "-fno-asynchronous-unwind-tables", "-o", so, c, NULL};
    const char *objcopy[] = {"objcopy", "--compress-debug-sections=zlib-gnu",
                             so, gnu, NULL};
    ck_assert_int_eq(run(cc), 0);
    ck_assert_int_eq(run(objcopy), 0);
    size_t size;
    char *bytes = test_read_file(gnu, &size);
    ck_assert_ptr_nonnull(bytes);
    uint64_t offset = section_offset(gnu, ".zdebug_frame");
    ck_assert_uint_lt(offset + 13, size);
    char *magic = bytes + offset;
    ck_assert_int_eq(memcmp(magic, "ZLIB", 4), 0);
    magic[3] = 'X';
    ck_assert_int_eq(test_write_file(bad, bytes, size), 0);
    struct cfi_diag diag = open_fails(bad, CFI_E_MALFORMED);
    ck_assert_str_eq(diag.message, ".zdebug_frame: no ZLIB header");
    magic[3] = 'B';
    magic[12] ^= 0xff; /* the zlib stream's header */
    ck_assert_int_eq(test_write_file(bad, bytes, size), 0);
    diag = open_fails(bad, CFI_E_MALFORMED);
    ck_assert_str_eq(diag.message, ".zdebug_frame: cannot decompress section");
    magic[12] ^= 0xff;
    ck_assert_int_eq(test_write_file(bad, bytes, size), 0);
    struct cfi_file *file = open_ok(bad);
    ck_assert_uint_eq(file->nfdes, 64);
    cfi_file_close(file);
    free(bytes);
    char *paths[] = {c, so, gnu, bad};
    remove_files(paths, 4);
    rmdir(dir);
    free(dir);
}
END_TEST

/* The section header whose sh_offset is `offset`, in the image. */
static Elf64_Shdr *shdr_at(char *bytes, size_t size, uint64_t offset)
{
    Elf64_Ehdr header;
    ck_assert_uint_ge(size, sizeof header);
    memcpy(&header, bytes, sizeof header);
    for (unsigned i = 0; i < header.e_shnum; i++) {
        uint64_t at = header.e_shoff + (uint64_t)i * header.e_shentsize;
        ck_assert_uint_le(at + sizeof(Elf64_Shdr), size);
        Elf64_Shdr *shdr = (Elf64_Shdr *)(void *)(bytes + at);
        if (shdr->sh_offset == offset && shdr->sh_type == SHT_PROGBITS)
            return shdr;
    }
    ck_abort_msg("no section at 0x%llx", (unsigned long long)offset);
    return NULL;
}

/* Writes `bytes` to `bad`, which must fail to open with `message`. */
static void zstd_fails(const char *bad, const char *bytes, size_t size,
                       const char *message)
{
    ck_assert_int_eq(test_write_file(bad, bytes, size), 0);
    struct cfi_diag diag = open_fails(bad, CFI_E_MALFORMED);
    ck_assert_str_eq(diag.message, message);
}

/* A zstd-compressed .debug_frame whose header or frame is damaged: one
 * error naming the section, never a crash, and no allocation of the
 * size the header claims beyond 1024 times the compressed bytes. */
START_TEST(test_zstd_debug_frame_malformed)
{
    char *dir = test_temp_dir();
    char *c = join_path(dir, "z.c"), *so = join_path(dir, "z.so");
    char *bad = join_path(dir, "bad.so");
    write_64_functions_c(c);
    const char *cc[] = {"cc", "-g", "-O1", "-fPIC", "-shared", "-nostdlib",
                        "-fno-asynchronous-unwind-tables",
                        "-Wl,--compress-debug-sections=zstd", "-o", so, c,
                        NULL};
    ck_assert_int_eq(run(cc), 0);
    size_t size;
    char *bytes = test_read_file(so, &size);
    ck_assert_ptr_nonnull(bytes);
    uint64_t offset = section_offset(so, ".debug_frame");
    Elf64_Shdr *shdr = shdr_at(bytes, size, offset);
    ck_assert(shdr->sh_flags & SHF_COMPRESSED);
    Elf64_Chdr chdr;
    memcpy(&chdr, bytes + offset, sizeof chdr);
    ck_assert_uint_eq(chdr.ch_type, 2);
    uint64_t declared = chdr.ch_size, compressed = shdr->sh_size;
    uint8_t *frame = (uint8_t *)bytes + offset + sizeof chdr;
    ck_assert_uint_eq(cfi_load_le(frame, 4), 0xfd2fb528); /* zstd magic */

    /* a declared size beyond 1024 times the compressed bytes */
    uint64_t huge = (compressed - sizeof chdr) * 1024 + 1024;
    memcpy(bytes + offset + offsetof(Elf64_Chdr, ch_size), &huge, 8);
    zstd_fails(bad, bytes, size,
               ".debug_frame: zstd: declared size too large for the section");
    uint64_t one_more = declared + 1, one_less = declared - 1;
    memcpy(bytes + offset + offsetof(Elf64_Chdr, ch_size), &one_more, 8);
    zstd_fails(bad, bytes, size, ".debug_frame: zstd: decompressed size "
                                 "differs from the declared size");
    memcpy(bytes + offset + offsetof(Elf64_Chdr, ch_size), &one_less, 8);
    zstd_fails(bad, bytes, size, ".debug_frame: zstd: cannot decompress "
                                 "section");
    memcpy(bytes + offset + offsetof(Elf64_Chdr, ch_size), &declared, 8);
    /* a damaged magic, then a frame cut short */
    frame[0] ^= 0xff;
    zstd_fails(bad, bytes, size, ".debug_frame: zstd: cannot decompress "
                                 "section");
    frame[0] ^= 0xff;
    shdr->sh_size = sizeof chdr + (compressed - sizeof chdr) / 2;
    zstd_fails(bad, bytes, size, ".debug_frame: zstd: cannot decompress "
                                 "section");
    shdr->sh_size = compressed;
    ck_assert_int_eq(test_write_file(bad, bytes, size), 0);
    struct cfi_file *file = open_ok(bad);
    ck_assert_uint_eq(file->nfdes, 64);
    cfi_file_close(file);
    free(bytes);
    char *paths[] = {c, so, bad};
    remove_files(paths, 3);
    rmdir(dir);
    free(dir);
}
END_TEST

/* Register widths from the psABI's mapping: the segment selectors
 * (50-55) are 2 bytes, which the engines do not model (they read 8). */
START_TEST(test_reg_size)
{
    for (unsigned reg = 0; reg <= CFI_REG_RIP; reg++)
        ck_assert_uint_eq(cfi_reg_size(reg), 8);
    for (unsigned reg = 50; reg <= 55; reg++)
        ck_assert_uint_eq(cfi_reg_size(reg), 2);
    ck_assert_uint_eq(cfi_reg_size(17), 16);   /* xmm0 */
    ck_assert_uint_eq(cfi_reg_size(82), 16);   /* xmm31 */
    ck_assert_uint_eq(cfi_reg_size(33), 10);   /* st0 */
    ck_assert_uint_eq(cfi_reg_size(41), 8);    /* mm0 */
    ck_assert_uint_eq(cfi_reg_size(49), 8);    /* rflags */
    ck_assert_uint_eq(cfi_reg_size(58), 8);    /* fs.base */
    ck_assert_uint_eq(cfi_reg_size(64), 4);    /* mxcsr */
    ck_assert_uint_eq(cfi_reg_size(66), 2);    /* fsw */
    ck_assert_uint_eq(cfi_reg_size(125), 8);   /* k7 */
    ck_assert_uint_eq(cfi_reg_size(57), 0);    /* no register */
    ck_assert_uint_eq(cfi_reg_size(126), 0);
    ck_assert_uint_eq(cfi_reg_size(CFI_NREGS), 0);
}
END_TEST

START_TEST(test_io_errors)
{
    open_fails("/nonexistent/cfisem/file", CFI_E_IO);
    open_fails("/", CFI_E_IO);
}
END_TEST

START_TEST(test_not_elf)
{
    struct scratch s;
    scratch_copy(&s, "ld-linux-x86-64.so.2");
    const char text[] = "#!/bin/sh\necho not an ELF file\n";
    ck_assert_int_eq(test_write_file(s.path, text, strlen(text)), 0);
    open_fails(s.path, CFI_E_NOT_ELF);
    ck_assert_int_eq(test_write_file(s.path, "", 0), 0);
    open_fails(s.path, CFI_E_NOT_ELF);
    scratch_write(&s, 10); /* the magic, then nothing */
    open_fails(s.path, CFI_E_NOT_ELF);

    s.bytes[EI_CLASS] = ELFCLASS32;
    scratch_write(&s, s.size);
    open_fails(s.path, CFI_E_NOT_ELF);
    s.bytes[EI_CLASS] = ELFCLASS64;
    s.bytes[EI_DATA] = ELFDATA2MSB;
    scratch_write(&s, s.size);
    open_fails(s.path, CFI_E_NOT_ELF);
    s.bytes[EI_DATA] = ELFDATA2LSB;
    Elf64_Ehdr header;
    memcpy(&header, s.bytes, sizeof header);
    header.e_machine = EM_RISCV;
    memcpy(s.bytes, &header, sizeof header);
    scratch_write(&s, s.size);
    open_fails(s.path, CFI_E_NOT_ELF);
    scratch_free(&s);
}
END_TEST

START_TEST(test_truncated_section_headers)
{
    struct scratch s;
    scratch_copy(&s, "ld-linux-x86-64.so.2");
    Elf64_Ehdr header;
    memcpy(&header, s.bytes, sizeof header);
    ck_assert_uint_gt(header.e_shnum, 2);
    size_t cut = header.e_shoff + header.e_shentsize * (header.e_shnum / 2) + 7;
    ck_assert_uint_lt(cut, s.size);
    scratch_write(&s, cut);
    struct cfi_diag diag = open_fails(s.path, CFI_E_MALFORMED);
    ck_assert_str_eq(diag.message, "section headers past end of file");
    ck_assert_uint_eq(diag.offset, header.e_shoff);
    /* cut inside the ELF header itself */
    scratch_write(&s, 40);
    open_fails(s.path, CFI_E_NOT_ELF);
    scratch_free(&s);
}
END_TEST

START_TEST(test_segment_past_end)
{
    struct scratch s;
    scratch_copy(&s, "ld-linux-x86-64.so.2");
    Elf64_Ehdr header;
    memcpy(&header, s.bytes, sizeof header);
    size_t load = SIZE_MAX;
    for (size_t i = 0; i < header.e_phnum && load == SIZE_MAX; i++) {
        Elf64_Phdr phdr;
        memcpy(&phdr, s.bytes + header.e_phoff + i * header.e_phentsize,
               sizeof phdr);
        if (phdr.p_type == PT_LOAD)
            load = header.e_phoff + i * header.e_phentsize;
    }
    ck_assert_uint_ne(load, SIZE_MAX);
    Elf64_Phdr phdr;
    memcpy(&phdr, s.bytes + load, sizeof phdr);
    phdr.p_filesz = s.size - phdr.p_offset + 1;
    memcpy(s.bytes + load, &phdr, sizeof phdr);
    scratch_write(&s, s.size);
    struct cfi_diag diag = open_fails(s.path, CFI_E_MALFORMED);
    ck_assert_str_eq(diag.message, "segment past end of file");
    ck_assert_uint_eq(diag.offset, load);
    scratch_free(&s);
}
END_TEST

START_TEST(test_no_cfi)
{
    /* an ELF header and nothing else: no sections at all */
    struct scratch s;
    scratch_copy(&s, "ld-linux-x86-64.so.2");
    Elf64_Ehdr header;
    memcpy(&header, s.bytes, sizeof header);
    header.e_phnum = 0;
    header.e_shoff = 0;
    header.e_shnum = 0;
    header.e_shstrndx = 0;
    memcpy(s.bytes, &header, sizeof header);
    scratch_write(&s, sizeof header);
    struct cfi_diag diag = open_fails(s.path, CFI_E_NO_CFI);
    ck_assert_uint_eq(diag.offset, CFI_NO_OFFSET);

    /* a real object with its frame sections removed */
    char *source = test_system_lib("ld-linux-x86-64.so.2");
    const char *objcopy[] = {"objcopy", "--remove-section=.eh_frame",
                             "--remove-section=.eh_frame_hdr",
                             "--remove-section=.debug_frame", source, s.path,
                             NULL};
    if (run(objcopy) == 0) {
        open_fails(s.path, CFI_E_NO_CFI);
    } else {
        printf("note: objcopy failed, stripped-object case not run\n");
    }
    free(source);
    scratch_free(&s);
}
END_TEST

/* Corrupted .eh_frame bytes are reported by our parser, naming
 * .eh_frame and the record's offset, before libdwarf sees them. */
START_TEST(test_corrupted_eh_frame)
{
    struct scratch s;
    scratch_copy(&s, "ld-linux-x86-64.so.2");
    char *source = test_system_lib("ld-linux-x86-64.so.2");
    struct raw_section raw;
    ck_assert(read_raw_section(source, ".eh_frame", &raw));
    struct cfi_file *clean = open_ok(source);
    ck_assert_uint_gt(clean->nfdes, 10);
    uint64_t fde = clean->fdes[clean->nfdes / 2].offset;
    cfi_file_close(clean);

    /* the first CIE's length, past the end of the section */
    const uint32_t huge = 0xfffffff0;
    memcpy(s.bytes + raw.file_offset, &huge, 4);
    scratch_write(&s, s.size);
    struct cfi_diag diag = open_fails(s.path, CFI_E_MALFORMED);
    ck_assert_str_eq(diag.message,
                     ".eh_frame: record length runs past the end of the section");
    ck_assert_uint_eq(diag.offset, 0);
    memcpy(s.bytes + raw.file_offset, raw.bytes, 4);

    /* an FDE's CIE pointer, out of range */
    const uint32_t pointer = 0x7fffffff;
    memcpy(s.bytes + raw.file_offset + fde + 4, &pointer, 4);
    scratch_write(&s, s.size);
    diag = open_fails(s.path, CFI_E_MALFORMED);
    ck_assert_str_eq(diag.message, ".eh_frame: CIE pointer out of range");
    ck_assert_uint_eq(diag.offset, fde);
    memcpy(s.bytes + raw.file_offset + fde + 4, raw.bytes + fde + 4, 4);

    /* the section header says .eh_frame runs past the end of the file */
    Elf64_Ehdr header;
    memcpy(&header, s.bytes, sizeof header);
    Elf64_Shdr shdr;
    size_t at = header.e_shoff + raw.index * header.e_shentsize;
    memcpy(&shdr, s.bytes + at, sizeof shdr);
    shdr.sh_size = s.size;
    memcpy(s.bytes + at, &shdr, sizeof shdr);
    scratch_write(&s, s.size);
    diag = open_fails(s.path, CFI_E_MALFORMED);
    ck_assert_str_eq(diag.message, ".eh_frame: section past end of file");

    free(raw.bytes);
    free(source);
    scratch_free(&s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Hand-made ELF files: frame sections of our choosing                 */
/* ------------------------------------------------------------------ */

/* Writes an x86-64 ELF with no segments and the sections null, .eh_frame
 * (at file address 0x1000) and .debug_frame when given (len > 0 or
 * bytes non-NULL), and .shstrtab. */
static void write_elf(const char *path, const struct bytes *eh,
                      const struct bytes *debug)
{
    static const char names[] = "\0.eh_frame\0.debug_frame\0.shstrtab";
    struct bytes *out = calloc(1, sizeof *out);
    Elf64_Shdr shdrs[4] = {{0}};
    size_t n = 1;
    out->n = sizeof(Elf64_Ehdr);
    const struct bytes *sections[2] = {eh, debug};
    const uint32_t name_at[2] = {1, 11};
    for (size_t i = 0; i < 2; i++) {
        if (!sections[i])
            continue;
        shdrs[n] = (Elf64_Shdr){.sh_name = name_at[i], .sh_type = SHT_PROGBITS,
                                .sh_flags = i == 0 ? SHF_ALLOC : 0,
                                .sh_addr = i == 0 ? 0x1000 : 0,
                                .sh_offset = out->n,
                                .sh_size = sections[i]->n, .sh_addralign = 8};
        put_raw(out, sections[i]->b, sections[i]->n);
        n++;
    }
    shdrs[n++] = (Elf64_Shdr){.sh_name = 24, .sh_type = SHT_STRTAB,
                              .sh_offset = out->n, .sh_size = sizeof names,
                              .sh_addralign = 1};
    put_raw(out, names, sizeof names);
    while (out->n % 8)
        put(out, 0, 1);
    Elf64_Ehdr header = {
        .e_ident = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64,
                    ELFDATA2LSB, EV_CURRENT},
        .e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
        .e_shoff = out->n, .e_ehsize = sizeof header,
        .e_shentsize = sizeof(Elf64_Shdr), .e_shnum = (Elf64_Half)n,
        .e_shstrndx = (Elf64_Half)(n - 1),
    };
    memcpy(out->b, &header, sizeof header);
    put_raw(out, shdrs, n * sizeof shdrs[0]);
    ck_assert_int_eq(test_write_file(path, out->b, out->n), 0);
    free(out);
}

/* A temporary folder and one ELF path in it. */
struct made_elf {
    char *dir;
    char *path;
};

static void made_elf_init(struct made_elf *m)
{
    m->dir = test_temp_dir();
    m->path = join_path(m->dir, "made.so");
}

static void made_elf_free(struct made_elf *m)
{
    unlink(m->path);
    rmdir(m->dir);
    free(m->path);
    free(m->dir);
}

START_TEST(test_hand_made_elf)
{
    struct made_elf m;
    made_elf_init(&m);
    struct bytes eh = {0};
    size_t cie = put_eh_cie(&eh, "zR", pcrel_sdata4, 1);
    put_eh_fde(&eh, cie, 0x1000, 0x5000, 0x40);
    put_eh_fde(&eh, cie, 0x1000, 0x4000, 0x40);
    put(&eh, 0, 4);
    write_elf(m.path, &eh, NULL);
    ck_assert(cross_check(m.path, ".eh_frame", CFI_EH_FRAME));
    struct cfi_file *file = open_ok(m.path);
    ck_assert_uint_eq(file->nsegments, 0);
    ck_assert_uint_eq(file->nfdes, 2);
    ck_assert_uint_eq(file->fdes[0].pc_begin, 0x4000);
    ck_assert_ptr_null(cfi_file_segment(file, 0x4000));
    cfi_file_close(file);

    /* .debug_frame alone, its FDE first (libdwarf wants the CIE first) */
    struct bytes debug = {0};
    size_t dcie = begin_record(&debug);
    put(&debug, 0xffffffff, 4);
    PUT_BYTES(&debug, 3, 0, 1, 0x78, 16);
    put_raw(&debug, cie_program, sizeof cie_program);
    end_record(&debug, dcie);
    size_t dfde = begin_record(&debug);
    put(&debug, dcie, 4);
    put(&debug, 0x7000, 8);
    put(&debug, 0x10, 8);
    end_record(&debug, dfde);
    write_elf(m.path, NULL, &debug);
    ck_assert(cross_check(m.path, ".debug_frame", CFI_DEBUG_FRAME));
    file = open_ok(m.path);
    ck_assert_uint_eq(file->n_eh_frame, 0);
    ck_assert_uint_eq(file->eh_frame_addr, 0);
    ck_assert_ptr_eq(cfi_file_lookup(file, 0x7000), &file->fdes[0]);
    cfi_file_close(file);

    /* regression: libdwarf has no augmentation data entry for a "z" CIE;
     * its data is empty, not missing */
    memset(&eh, 0, sizeof eh);
    cie = put_eh_cie(&eh, "z", NULL, 0);
    size_t fde = begin_record(&eh);
    put(&eh, eh.n - cie, 4);
    put(&eh, 0x6000, 8);
    put(&eh, 0x20, 8);
    put_uleb(&eh, 0);
    end_record(&eh, fde);
    write_elf(m.path, &eh, NULL);
    ck_assert(cross_check(m.path, ".eh_frame", CFI_EH_FRAME));

    /* frame sections with no record: valid, no FDE */
    struct bytes terminator = {0};
    put(&terminator, 0, 4);
    write_elf(m.path, &terminator, NULL);
    struct cfi_file *empty = open_ok(m.path);
    ck_assert_uint_eq(empty->ncies, 0);
    ck_assert_uint_eq(empty->nfdes, 0);
    cfi_file_close(empty);
    made_elf_free(&m);
}
END_TEST

/* Sections our parser accepts and libdwarf 20210528 refuses: reported
 * as libdwarf's, with a fixed message. */
START_TEST(test_libdwarf_refusals)
{
    struct made_elf m;
    made_elf_init(&m);
    /* an augmentation letter libdwarf does not know */
    struct bytes eh = {0};
    const uint8_t data[] = {CFI_PE_PCREL | CFI_PE_SDATA4, 0x00};
    size_t cie = put_eh_cie(&eh, "zRX", data, sizeof data);
    put_eh_fde(&eh, cie, 0x1000, 0x5000, 0x40);
    write_elf(m.path, &eh, NULL);
    struct cfi_diag diag = open_fails(m.path, CFI_E_MALFORMED);
    ck_assert_str_eq(diag.message, "libdwarf: cannot read .eh_frame");

    /* a version 3 CIE with return address column 300 */
    memset(&eh, 0, sizeof eh);
    cie = begin_record(&eh);
    put(&eh, 0, 4);
    put(&eh, 3, 1);
    put_raw(&eh, "zR", 3);
    PUT_BYTES(&eh, 1, 0x78, 0xac, 0x02, 1, 0x1b);
    end_record(&eh, cie);
    put_eh_fde(&eh, cie, 0x1000, 0x5000, 0x40);
    write_elf(m.path, &eh, NULL);
    diag = open_fails(m.path, CFI_E_MALFORMED);
    ck_assert_str_eq(diag.message, "libdwarf: cannot read .eh_frame");
    made_elf_free(&m);
}
END_TEST

/* Writes an ELF whose .eh_frame has one "zR" CIE with the given
 * alignment factor bytes (ULEB128 code, SLEB128 data) and one FDE. */
static void write_elf_with_factors(const char *path, struct bytes *eh,
                                   const uint8_t *factors, size_t len)
{
    memset(eh, 0, sizeof *eh);
    size_t cie = begin_record(eh);
    put(eh, 0, 4);
    put(eh, 1, 1);
    put_raw(eh, "zR", 3);
    put_raw(eh, factors, len);
    PUT_BYTES(eh, 16, 1, 0x1b);
    end_record(eh, cie);
    put_eh_fde(eh, cie, 0x1000, 0x5000, 0x40);
    write_elf(path, eh, NULL);
}

/* Regression: libdwarf 20210528 keeps the alignment factors in 8-bit
 * fields (Dwarf_Small, Dwarf_Sbyte) and truncates larger ones without an
 * error: code alignment 2^63 comes back as 0, data alignment -200 as 56.
 * The comparison with our parser turns that into an error instead of a
 * wrong CIE. */
START_TEST(test_libdwarf_truncates_alignment_factors)
{
    struct made_elf m;
    made_elf_init(&m);
    struct bytes eh;
    const uint8_t code_2_63[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                 0x80, 0x80, 0x01, 0x78};
    const uint8_t data_minus_200[] = {0x01, 0xb8, 0x7e};
    const uint8_t *factors[] = {code_2_63, data_minus_200};
    const size_t lens[] = {sizeof code_2_63, sizeof data_minus_200};
    for (size_t i = 0; i < 2; i++) {
        write_elf_with_factors(m.path, &eh, factors[i], lens[i]);
        struct cfi_diag diag = open_fails(m.path, CFI_E_UNSUPPORTED);
        ck_assert_str_eq(diag.message,
                         "libdwarf: reads a CIE of .eh_frame differently");
        ck_assert_uint_eq(diag.offset, 0);
    }
    /* our parser alone reads them */
    write_elf_with_factors(m.path, &eh, code_2_63, sizeof code_2_63);
    struct cfi_file *file = from_section(&eh, CFI_EH_FRAME, 0x1000);
    ck_assert_uint_eq(file->cies[0].code_align, UINT64_C(1) << 63);
    cfi_file_close(file);
    write_elf_with_factors(m.path, &eh, data_minus_200, sizeof data_minus_200);
    file = from_section(&eh, CFI_EH_FRAME, 0x1000);
    ck_assert_int_eq(file->cies[0].data_align, -200);
    cfi_file_close(file);
    made_elf_free(&m);
}
END_TEST

/* ------------------------------------------------------------------ */

/* A relocatable object: pc_begin is relocated (R_X86_64_PC32 in
 * .eh_frame, R_X86_64_64 in .debug_frame) to the function's offset in its
 * section; a relocation naming a symbol past the table is malformed. */
START_TEST(test_relocatable_object)
{
    char *path = test_build_path("corpus/objects/both_frames.o");
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_msg(cfi_file_open(path, &file, &diag) == CFI_OK, "%s: %s", path,
                  diag.message);
    ck_assert_uint_gt(file->nfdes, 1);
    ck_assert_uint_gt(file->n_eh_frame, 0);
    ck_assert_uint_lt(file->n_eh_frame, file->nfdes);
    /* The first FDE of each section starts the text, at offset 0. */
    ck_assert_uint_eq(file->fdes[0].pc_begin, 0);
    ck_assert_uint_eq(file->fdes[file->n_eh_frame].pc_begin, 0);
    for (size_t i = 0; i < file->nfdes; i++)
        ck_assert_uint_lt(file->fdes[i].pc_begin, 0x10000);
    cfi_file_close(file);

    /* Break the symbol index of every relocation of .rela.eh_frame. */
    size_t size;
    uint8_t *bytes = (uint8_t *)test_read_file(path, &size);
    Elf64_Ehdr eh;
    memcpy(&eh, bytes, sizeof eh);
    size_t broken = 0;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        memcpy(&sh, bytes + eh.e_shoff + i * sizeof sh, sizeof sh);
        for (uint64_t r = 0; sh.sh_type == SHT_RELA && r < sh.sh_size / 24; r++) {
            Elf64_Rela rela;
            memcpy(&rela, bytes + sh.sh_offset + r * sizeof rela, sizeof rela);
            rela.r_info = ELF64_R_INFO(0xfffff, ELF64_R_TYPE(rela.r_info));
            memcpy(bytes + sh.sh_offset + r * sizeof rela, &rela, sizeof rela);
            broken++;
        }
    }
    ck_assert_uint_gt(broken, 0);
    char *dir = test_temp_dir();
    char broken_path[4096];
    snprintf(broken_path, sizeof broken_path, "%s/broken.o", dir);
    ck_assert_int_eq(test_write_file(broken_path, bytes, size), 0);
    ck_assert_int_eq(cfi_file_open(broken_path, &file, &diag), CFI_E_MALFORMED);
    ck_assert_ptr_nonnull(strstr(diag.message, "relocation"));
    free(bytes);
    free(dir);
    free(path);
}
END_TEST

/* gas writes a .debug_frame CIE for a signal frame with the augmentation
 * "S" alone: valid, read by our parser although libdwarf 20210528 cannot. */
START_TEST(test_debug_frame_augmentation_s)
{
    static const char source[] =
        "\t.cfi_sections .debug_frame\n\t.text\nf:\t.cfi_startproc\n"
        "\t.cfi_signal_frame\n\tnop\n\t.cfi_def_cfa_offset 16\n\tnop\n"
        "\t.cfi_endproc\n";
    char *dir = test_temp_dir();
    char src[4096], obj[4096], command[9000];
    snprintf(src, sizeof src, "%s/sig.S", dir);
    snprintf(obj, sizeof obj, "%s/sig.so", dir);
    ck_assert_int_eq(test_write_file(src, source, strlen(source)), 0);
    snprintf(command, sizeof command, "cc -shared -nostdlib -o %s %s", obj, src);
    ck_assert_int_eq(system(command), 0);
    struct cfi_file *file;
    struct cfi_diag diag;
    ck_assert_msg(cfi_file_open(obj, &file, &diag) == CFI_OK, "%s",
                  diag.message);
    ck_assert_uint_eq(file->nfdes, 1);
    ck_assert_uint_eq(file->n_eh_frame, 0);
    ck_assert_str_eq(file->fdes[0].cie->augmentation, "S");
    ck_assert(file->fdes[0].cie->signal_frame);
    ck_assert_uint_eq(file->fdes[0].pc_end - file->fdes[0].pc_begin, 2);
    cfi_file_close(file);
    /* A letter that would carry data, without 'z', is still refused. */
    static const uint8_t cie_r[] = {0x0a, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
                                    1, 'R', 0, 1, 0x78, 0x10};
    ck_assert_int_eq(cfi_file_from_section(cie_r, sizeof cie_r,
                                           CFI_DEBUG_FRAME, 0, &file, &diag),
                     CFI_E_UNSUPPORTED);
    free(dir);
}
END_TEST

/* ------------------------------------------------------------------ */
/* JSON text (cfi/json.h)                                               */
/* ------------------------------------------------------------------ */

/* What cfi_json_string_n writes for the first max bytes of text. */
static char *json_of(const char *text, size_t max)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&buf, &size);
    ck_assert_ptr_nonnull(out);
    cfi_json_string_n(out, text, max);
    fclose(out);
    return buf;
}

static void expect_json(const char *text, size_t max, const char *expected)
{
    char *got = json_of(text, max);
    ck_assert_msg(!strcmp(got, expected), "%s: got %s, expected %s", text,
                  got, expected);
    free(got);
}

START_TEST(test_json_string_escapes)
{
    expect_json("a\"b\\c", SIZE_MAX, "\"a\\\"b\\\\c\"");
    expect_json("tab\tnl\n\x01", SIZE_MAX, "\"tab\\u0009nl\\u000a\\u0001\"");
    expect_json("\x7f", SIZE_MAX, "\"\x7f\"");
    expect_json("abcdef", 3, "\"abc\"");
}
END_TEST

/* Well-formed UTF-8 passes; every byte of an ill-formed sequence is
 * U+FFFD (Unicode table 3-7: no overlong form, no surrogate, nothing
 * above U+10FFFF), and a sequence cut by max is ill-formed. */
START_TEST(test_json_string_utf8)
{
    expect_json("caf\xc3\xa9", SIZE_MAX, "\"caf\xc3\xa9\"");
    expect_json("\xf0\x9f\x98\x80", SIZE_MAX, "\"\xf0\x9f\x98\x80\"");
    expect_json("\xff", SIZE_MAX, "\"\\ufffd\"");
    expect_json("\xc0\xaf", SIZE_MAX, "\"\\ufffd\\ufffd\"");
    expect_json("\xed\xa0\x80", SIZE_MAX, "\"\\ufffd\\ufffd\\ufffd\"");
    expect_json("\xf4\x90\x80\x80", SIZE_MAX,
                "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
    expect_json("\xf5\x80\x80", SIZE_MAX, "\"\\ufffd\\ufffd\\ufffd\"");
    expect_json("caf\xc3\xa9", 4, "\"caf\\ufffd\"");
    expect_json("\xe2\x82", SIZE_MAX, "\"\\ufffd\\ufffd\"");
}
END_TEST

START_TEST(test_json_null_and_address)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&buf, &size);
    ck_assert_ptr_nonnull(out);
    cfi_json_string(out, NULL);
    fputc(' ', out);
    cfi_json_address(out, 0);
    fputc(' ', out);
    cfi_json_address(out, UINT64_MAX);
    fclose(out);
    ck_assert_str_eq(buf, "null \"0x0\" \"0xffffffffffffffff\"");
    free(buf);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Architecture descriptors                                             */
/* ------------------------------------------------------------------ */

START_TEST(test_arch_of_machine)
{
    ck_assert_ptr_eq(cfi_arch_of_machine(EM_X86_64), &cfi_arch_x86_64);
    ck_assert_ptr_null(cfi_arch_of_machine(EM_NONE));
    ck_assert_ptr_null(cfi_arch_of_machine(EM_386));
    ck_assert_ptr_null(cfi_arch_of_machine(EM_SPARCV9));
    ck_assert_str_eq(cfi_arch_x86_64.name, "x86-64");
}
END_TEST

/* The descriptor states each fact once in meaning, and its tables must
 * agree: the callee-saved list and mask name the same registers, and
 * exactly those default to same_value; sp defaults to the CFA. */
START_TEST(test_arch_x86_64_is_consistent)
{
    const struct cfi_arch *a = &cfi_arch_x86_64;
    ck_assert_uint_eq(a->nreported, CFI_NGPRS);
    ck_assert_str_eq(cfi_arch_reg_name(a, a->sp), "rsp");
    ck_assert_str_eq(cfi_arch_reg_name(a, a->pc), "rip");
    ck_assert_uint_eq(a->ra_column, a->pc);
    ck_assert_int_eq(cfi_arch_default(a, a->sp), CFI_DEFAULT_CFA);
    uint64_t listed = 0;
    for (unsigned i = 0; i < a->ncallee_saved; i++) {
        unsigned reg = a->callee_saved_list[i];
        ck_assert(i == 0 || reg > a->callee_saved_list[i - 1]);
        listed |= (uint64_t)1 << reg;
    }
    ck_assert_uint_eq(listed, a->callee_saved);
    ck_assert_uint_eq(a->callee_saved, 1u << 3 | 1u << 6 | 0xf000u);
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        bool same = cfi_arch_default(a, reg) == CFI_DEFAULT_SAME_VALUE;
        ck_assert_msg(same == cfi_arch_callee_saved(a, reg), "reg %u", reg);
        if (reg >= a->nreported)
            ck_assert_int_eq(cfi_arch_default(a, reg), CFI_DEFAULT_UNDEFINED);
        ck_assert_ptr_eq(cfi_arch_reg_name(a, reg), cfi_reg_name(reg));
    }
    ck_assert_ptr_null(cfi_arch_reg_name(a, CFI_NREGS));
    for (unsigned op = 0x28; op <= 0x2f; op++)
        ck_assert_int_eq(cfi_arch_vendor_op(a, op), CFI_VENDOR_NONE);
}
END_TEST

/* AArch64 (aadwarf64, AAPCS64): the callee-saved list and mask agree;
 * exactly they, the return address column x30 and v8-v15 default to
 * same_value; sp to the CFA; RA_SIGN_STATE to 0; the column (x30) and
 * the PC register (32) are two things; 0x2b..0x2d are the return-address
 * signing opcodes. */
START_TEST(test_arch_aarch64_is_consistent)
{
    const struct cfi_arch *a = &cfi_arch_aarch64;
    ck_assert_ptr_eq(cfi_arch_of_machine(EM_AARCH64), a);
    ck_assert_str_eq(cfi_arch_reg_name(a, a->sp), "sp");
    ck_assert_str_eq(cfi_arch_reg_name(a, a->pc), "pc");
    ck_assert_str_eq(cfi_arch_reg_name(a, a->fp), "x29");
    ck_assert_str_eq(cfi_arch_reg_name(a, a->ra_column), "x30");
    ck_assert_str_eq(cfi_arch_reg_name(a, a->ra_state), "ra_sign_state");
    ck_assert_str_eq(cfi_arch_reg_name(a, 72), "v8");
    ck_assert_ptr_null(cfi_arch_reg_name(a, 40));
    ck_assert_uint_ne(a->ra_column, a->pc);
    ck_assert_uint_eq(a->nreported, 35);
    ck_assert_uint_ge(a->ndefaults, a->nreported);
    uint64_t listed = 0;
    for (unsigned i = 0; i < a->ncallee_saved; i++) {
        unsigned reg = a->callee_saved_list[i];
        ck_assert(i == 0 || reg > a->callee_saved_list[i - 1]);
        listed |= (uint64_t)1 << reg;
    }
    ck_assert_uint_eq(listed, a->callee_saved);
    for (unsigned reg = 0; reg < CFI_NREGS; reg++) {
        enum cfi_abi_default d = cfi_arch_default(a, reg);
        bool same = cfi_arch_callee_saved(a, reg) || reg == a->ra_column ||
                    (reg >= 72 && reg <= 79);
        ck_assert_msg((d == CFI_DEFAULT_SAME_VALUE) == same, "reg %u", reg);
        if (reg == a->sp)
            ck_assert_int_eq(d, CFI_DEFAULT_CFA);
        else if (reg == a->ra_state)
            ck_assert_int_eq(d, CFI_DEFAULT_ZERO);
        else if (!same)
            ck_assert_int_eq(d, CFI_DEFAULT_UNDEFINED);
    }
    ck_assert_int_eq(cfi_arch_vendor_op(a, 0x2b), CFI_VENDOR_SET_RA_STATE);
    ck_assert_int_eq(cfi_arch_vendor_op(a, 0x2c),
                     CFI_VENDOR_NEGATE_RA_STATE_WITH_PC);
    ck_assert_int_eq(cfi_arch_vendor_op(a, 0x2d), CFI_VENDOR_NEGATE_RA_STATE);
    ck_assert_int_eq(cfi_arch_reg_parse(a, "x29", 3), 29);
    ck_assert_int_eq(cfi_arch_reg_parse(a, "sp", 2), 31);
    ck_assert_int_eq(cfi_arch_reg_parse(a, "rsp", 3), -1);
    ck_assert_int_eq(cfi_arch_reg_parse(a, "r34", 3), 34);
    ck_assert_uint_eq(cfi_arch_reg_size(a, 30), 8);
    ck_assert_uint_eq(cfi_arch_reg_size(a, 72), 8);
    ck_assert_uint_eq(cfi_arch_reg_size(a, 100), 0); /* z4: VG-sized */
    ck_assert_uint_eq(cfi_arch_x86_64.ra_state, CFI_NO_RA_STATE);
}
END_TEST

/* XPACI's rule: the bits above the address are copies of bit 55. */
START_TEST(test_strip_pac)
{
    ck_assert_uint_eq(cfi_strip_pac(0x002a0000deadbeefull, 0),
                      0x0000deadbeefull);
    ck_assert_uint_eq(cfi_strip_pac(0x002a0000deadbeefull, 48),
                      0x0000deadbeefull);
    ck_assert_uint_eq(cfi_strip_pac(0x7f2a000adeadbeefull, 52),
                      0x000a000adeadbeefull);
    ck_assert_uint_eq(cfi_strip_pac(0x00aaffff12345678ull, 48),
                      0xffffffff12345678ull);
    ck_assert_uint_eq(cfi_strip_pac(0x0000aaaadeadbeefull, 48),
                      0x0000aaaadeadbeefull);
}
END_TEST

/* An AArch64 file's CIEs carry AArch64's descriptor and, with gcc's
 * -mbranch-protection=pac-ret+b-key, the letter 'B' (the case's second
 * CIE, "zRB"); its first CIE, "zR", has no key letter. */
START_TEST(test_arch_aarch64_file)
{
    char *path = test_build_path("corpus/cases-aarch64/pac_ret_b_key.so");
    struct cfi_file *file = open_ok(path);
    ck_assert_ptr_eq(file->arch, &cfi_arch_aarch64);
    ck_assert_uint_eq(file->ncies, 2);
    bool b_key = false, a_key = false;
    for (size_t i = 0; i < file->ncies; i++) {
        const struct cfi_cie *cie = &file->cies[i];
        ck_assert_ptr_eq(cie->arch, &cfi_arch_aarch64);
        ck_assert_uint_eq(cie->ra_column, 30);
        ck_assert(!cie->mte_tagged);
        if (!strcmp(cie->augmentation, "zRB"))
            b_key = cie->ra_b_key;
        else if (!strcmp(cie->augmentation, "zR"))
            a_key = !cie->ra_b_key;
    }
    ck_assert(b_key && a_key);
    cfi_file_close(file);
    free(path);
}
END_TEST

/* A file and each of its CIEs carry the descriptor of e_machine. */
START_TEST(test_arch_of_opened_file)
{
    char *path = test_system_lib("libc.so.6");
    ck_assert_msg(path, "no libc.so.6 on this system");
    struct cfi_file *file = open_ok(path);
    ck_assert_ptr_eq(file->arch, &cfi_arch_x86_64);
    ck_assert_uint_gt(file->ncies, 0);
    for (size_t i = 0; i < file->ncies; i++)
        ck_assert_ptr_eq(file->cies[i].arch, file->arch);
    for (size_t i = 0; i < file->nfdes; i++)
        ck_assert_ptr_eq(file->fdes[i].cie->arch, file->arch);
    cfi_file_close(file);
    free(path);
}
END_TEST

START_TEST(test_symbol_find)
{
    /* libc's functions: each one's own start, middle and last byte name
     * it; the byte after a sized symbol names it only when the next
     * symbol starts there. */
    char *path = test_system_lib("libc.so.6");
    ck_assert_msg(path, "no libc.so.6 on this system");
    struct cfi_file *file = open_ok(path);
    struct cfi_symbol *symbols;
    size_t count;
    ck_assert_int_eq(cfi_file_functions(file, &symbols, &count), CFI_OK);
    ck_assert_uint_gt(count, 1000);
    uint64_t offset = 1;
    ck_assert_ptr_null(cfi_symbol_find(symbols, count,
                                       symbols[0].value - 1, &offset));
    ck_assert_uint_eq(offset, 0);
    for (size_t i = 0; i < count; i++) {
        const struct cfi_symbol *s = &symbols[i];
        uint64_t last = s->size ? s->size - 1 : 0;
        ck_assert_ptr_eq(cfi_symbol_find(symbols, count, s->value,
                                         &offset), s);
        ck_assert_uint_eq(offset, 0);
        ck_assert_ptr_eq(cfi_symbol_find(symbols, count, s->value + last,
                                         &offset), s);
        ck_assert_uint_eq(offset, last);
        if (s->size == 0)
            continue;
        const struct cfi_symbol *after = cfi_symbol_find(
            symbols, count, s->value + s->size, &offset);
        bool next = i + 1 < count && symbols[i + 1].value == s->value + s->size;
        ck_assert_ptr_eq(after, next ? &symbols[i + 1] : NULL);
    }
    ck_assert_ptr_null(cfi_symbol_find(NULL, 0, 0x1000, &offset));
    free(symbols);
    cfi_file_close(file);
    free(path);
}
END_TEST

static Suite *cfi_suite(void)
{
    Suite *suite = suite_create("cfi");
    TCase *json = tcase_create("json");
    tcase_add_test(json, test_json_string_escapes);
    tcase_add_test(json, test_json_string_utf8);
    tcase_add_test(json, test_json_null_and_address);
    suite_add_tcase(suite, json);

    TCase *parse = tcase_create("from_section");
    tcase_add_test(parse, test_minimal_eh_frame);
    tcase_add_test(parse, test_from_section_copies);
    tcase_add_test(parse, test_terminator_ends_eh_frame);
    tcase_add_test(parse, test_zero_length_in_debug_frame);
    tcase_add_test(parse, test_64bit_length);
    tcase_add_test(parse, test_debug_frame_v4);
    tcase_add_test(parse, test_debug_frame_address_sizes);
    tcase_add_test(parse, test_pointer_encodings);
    tcase_add_test(parse, test_personality_lsda_signal);
    tcase_add_test(parse, test_unknown_augmentation_letter);
    tcase_add_test(parse, test_leb128_limits);
    tcase_add_test(parse, test_overlapping_lookup);
    suite_add_tcase(suite, parse);

    TCase *malformed = tcase_create("malformed");
    tcase_add_test(malformed, test_empty_section);
    tcase_add_test(malformed, test_truncated_length);
    tcase_add_test(malformed, test_length_past_end);
    tcase_add_test(malformed, test_record_too_short);
    tcase_add_test(malformed, test_cie_pointer_to_nowhere);
    tcase_add_test(malformed, test_cie_pointer_to_fde);
    tcase_add_test(malformed, test_bad_cie_version);
    tcase_add_test(malformed, test_leb128_overflow);
    tcase_add_test(malformed, test_augmentation_data_past_record);
    tcase_add_test(malformed, test_unsupported_pointer_encoding);
    tcase_add_test(malformed, test_unsupported_augmentation);
    tcase_add_test(malformed, test_unsupported_address_size);
    tcase_add_test(malformed, test_range_wraps);
    tcase_add_test(malformed, test_every_truncation);
    suite_add_tcase(suite, malformed);

    TCase *files = tcase_create("files");
    tcase_set_timeout(files, 60);
    tcase_add_test(files, test_libc);
    tcase_add_test(files, test_program_headers);
    tcase_add_test(files, test_cross_check_system_libraries);
    tcase_add_test(files, test_eh_frame_and_debug_frame);
    tcase_add_test(files, test_zstd_debug_frame);
    tcase_add_test(files, test_debug_file_by_debuglink);
    tcase_add_test(files, test_debug_file_by_build_id);
    suite_add_tcase(suite, files);

    TCase *elf = tcase_create("elf");
    tcase_add_test(elf, test_io_errors);
    tcase_add_test(elf, test_not_elf);
    tcase_add_test(elf, test_reg_size);
    tcase_add_test(elf, test_zdebug_frame_malformed);
    tcase_add_test(elf, test_zstd_debug_frame_malformed);
    tcase_add_test(elf, test_truncated_section_headers);
    tcase_add_test(elf, test_segment_past_end);
    tcase_add_test(elf, test_no_cfi);
    tcase_add_test(elf, test_corrupted_eh_frame);
    tcase_add_test(elf, test_hand_made_elf);
    tcase_add_test(elf, test_libdwarf_refusals);
    tcase_add_test(elf, test_libdwarf_truncates_alignment_factors);
    tcase_add_test(elf, test_relocatable_object);
    tcase_add_test(elf, test_debug_frame_augmentation_s);
    tcase_add_test(elf, test_symbol_find);
    suite_add_tcase(suite, elf);

    TCase *arch = tcase_create("arch");
    tcase_add_test(arch, test_arch_of_machine);
    tcase_add_test(arch, test_arch_aarch64_is_consistent);
    tcase_add_test(arch, test_strip_pac);
    tcase_add_test(arch, test_arch_aarch64_file);
    tcase_add_test(arch, test_arch_x86_64_is_consistent);
    tcase_add_test(arch, test_arch_of_opened_file);
    suite_add_tcase(suite, arch);
    return suite;
}

int main(void)
{
    SRunner *runner = srunner_create(cfi_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
