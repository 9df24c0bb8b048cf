/* SPDX-License-Identifier: MIT */
/* lsda.c — the landing pads of an FDE, from its LSDA (.gcc_except_table,
 * the format of GCC's and LLVM's C++ personality routines). A landing pad
 * is reached from the calls of its call-site range by the unwinder, with
 * the stack as it is at the call: that is the edge the CFG needs. */
#include <string.h>

#include "internal.h"

struct reader {
    const uint8_t *p;
    const uint8_t *end;
    uint64_t addr; /* file address of *p */
};

static bool read_leb(struct reader *r, bool is_signed, uint64_t *value)
{
    uint64_t v = 0;
    unsigned shift = 0;
    for (int i = 0; i < 10; i++) {
        if (r->p >= r->end)
            return false;
        uint8_t b = *r->p++;
        r->addr++;
        v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80)) {
            if (is_signed && shift < 64 && (b & 0x40))
                v |= ~(uint64_t)0 << shift;
            *value = v;
            return true;
        }
    }
    return false;
}

static bool read_fixed(struct reader *r, unsigned size, bool is_signed,
                       uint64_t *value)
{
    if ((size_t)(r->end - r->p) < size)
        return false;
    uint64_t v = cfi_load_le(r->p, size);
    if (is_signed && size < 8 && (v >> (8 * size - 1)) & 1)
        v |= ~(uint64_t)0 << (8 * size);
    r->p += size;
    r->addr += size;
    *value = v;
    return true;
}

/* A DW_EH_PE-encoded value: absolute or pc-relative only. */
static bool read_encoded(struct reader *r, uint8_t enc, uint64_t *value)
{
    uint64_t field = r->addr, v;
    bool ok;
    switch (enc & 0x0f) {
    case CFI_PE_ABSPTR: ok = read_fixed(r, 8, false, &v); break;
    case CFI_PE_ULEB128: ok = read_leb(r, false, &v); break;
    case CFI_PE_UDATA2: ok = read_fixed(r, 2, false, &v); break;
    case CFI_PE_UDATA4: ok = read_fixed(r, 4, false, &v); break;
    case CFI_PE_UDATA8: ok = read_fixed(r, 8, false, &v); break;
    case CFI_PE_SLEB128: ok = read_leb(r, true, &v); break;
    case CFI_PE_SDATA2: ok = read_fixed(r, 2, true, &v); break;
    case CFI_PE_SDATA4: ok = read_fixed(r, 4, true, &v); break;
    case CFI_PE_SDATA8: ok = read_fixed(r, 8, true, &v); break;
    default: return false;
    }
    if (!ok)
        return false;
    switch (enc & 0x70) {
    case 0: break;
    case CFI_PE_PCREL: v += field; break;
    default: return false; /* textrel, datarel, funcrel: not on x86-64 */
    }
    if (enc & CFI_PE_INDIRECT)
        return false;
    *value = v;
    return true;
}

/* The LSDA's address, from the FDE's augmentation data. */
static bool lsda_address(const struct cfi_fde *fde, uint64_t *addr)
{
    const struct cfi_cie *cie = fde->cie;
    if (!cie || cie->lsda_encoding == CFI_PE_OMIT || !fde->augmentation_data ||
        fde->augmentation_data_len == 0 || !fde->instructions ||
        fde->augmentation_data > fde->instructions)
        return false;
    /* The instructions follow the augmentation data in the record. */
    uint64_t gap = (uint64_t)(fde->instructions - fde->augmentation_data);
    struct reader r = {fde->augmentation_data,
                       fde->augmentation_data + fde->augmentation_data_len,
                       fde->instructions_addr - gap};
    return read_encoded(&r, cie->lsda_encoding, addr) && *addr != 0;
}

static bool lsda_header(struct reader *r, uint64_t *lpstart, uint8_t *cs_enc,
                        uint64_t *cs_len)
{
    if (r->p + 1 > r->end)
        return false;
    uint8_t lp_enc = *r->p++, tt_enc;
    r->addr++;
    if (lp_enc != CFI_PE_OMIT && !read_encoded(r, lp_enc, lpstart))
        return false;
    if (r->p + 1 > r->end)
        return false;
    tt_enc = *r->p++;
    r->addr++;
    uint64_t tt_off;
    if (tt_enc != CFI_PE_OMIT && !read_leb(r, false, &tt_off))
        return false;
    if (r->p + 1 > r->end)
        return false;
    *cs_enc = *r->p++;
    r->addr++;
    return read_leb(r, false, cs_len);
}

size_t synth_landing_pads(const struct cfi_file *file,
                          const struct cfi_fde *fde, struct synth_pad *pads,
                          size_t max)
{
    uint64_t lsda;
    if (!lsda_address(fde, &lsda))
        return 0;
    const struct cfi_segment *seg = cfi_file_segment(file, lsda);
    if (!seg || lsda - seg->vaddr >= seg->filesz)
        return 0;
    struct reader r = {seg->bytes + (lsda - seg->vaddr),
                       seg->bytes + seg->filesz, lsda};
    uint64_t lpstart = fde->pc_begin, cs_len;
    uint8_t cs_enc;
    if (!lsda_header(&r, &lpstart, &cs_enc, &cs_len) ||
        cs_len > (uint64_t)(r.end - r.p))
        return 0;
    r.end = r.p + cs_len;
    size_t n = 0;
    while (r.p < r.end && n < max) {
        uint64_t start, len, lp, action;
        if (!read_encoded(&r, cs_enc, &start) ||
            !read_encoded(&r, cs_enc, &len) ||
            !read_encoded(&r, cs_enc, &lp) || !read_leb(&r, false, &action))
            break;
        if (lp == 0)
            continue;
        pads[n++] = (struct synth_pad){lpstart + start, lpstart + start + len,
                                       lpstart + lp};
    }
    return n;
}

/* The DW_CFA_GNU_args_size values of the FDE's program and where each
 * takes effect, in address order (at most max). The unwinder pops that
 * many bytes of pushed arguments before it enters a landing pad (GCC's
 * unwind-dw2.c, the LSB's "GNU_args_size"). */
size_t synth_args_sizes(const struct cfi_fde *fde, struct synth_args *out,
                        size_t max)
{
    const struct cfi_cie *cie = fde->cie;
    if (!cie || !fde->instructions || fde->instructions_len == 0)
        return 0;
    struct sem_decode_env env = {cie->code_align, cie->data_align,
                                 fde->section, cie->address_size,
                                 cie->fde_encoding, fde->instructions_addr,
                                 false, cie->arch};
    struct sem_program program = {NULL, 0, 0};
    size_t n = 0;
    if (sem_decode(fde->instructions, fde->instructions_len, &env, &program,
                   NULL) == CFI_OK) {
        uint64_t loc = fde->pc_begin;
        for (size_t i = 0; i < program.count && n < max; i++) {
            const struct sem_insn *in = &program.insns[i];
            if (in->opcode == SEM_CFA_advance_loc ||
                in->opcode == SEM_CFA_advance_loc1 ||
                in->opcode == SEM_CFA_advance_loc2 ||
                in->opcode == SEM_CFA_advance_loc4 ||
                in->opcode == SEM_CFA_MIPS_advance_loc8)
                loc += in->delta;
            else if (in->opcode == SEM_CFA_set_loc)
                loc = in->address;
            else if (in->opcode == SEM_CFA_GNU_args_size)
                out[n++] = (struct synth_args){loc, in->number};
        }
    }
    sem_program_free(&program);
    return n;
}
