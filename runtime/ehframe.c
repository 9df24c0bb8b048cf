/* SPDX-License-Identifier: MIT */
/* ehframe.c — the fallback: an object's own .eh_frame, found through its
 * .eh_frame_hdr (the binary search table the linker writes), unwound by
 * the interpreter (interp/).
 *
 * Every byte read here belongs to the readable segment that holds the
 * object's .eh_frame_hdr (not merely to its run-time range, which may
 * hold unmapped holes between segments): reads are bounded by that
 * segment and by the records' length fields, and nothing is allocated.
 * An .eh_frame elsewhere is not read (no FDE). Only what linkers write is taken: a
 * version 1 header whose table is DW_EH_PE_datarel | sdata4 (anything
 * else: no FDE, and the step fails rather than guess). */
#include "internal.h"

#include <string.h>

#include "../interp/interp.h"

/* A bounded view of the object's bytes. */
struct bytes {
    uint64_t pos;
    uint64_t end;
};

static bool take(struct bytes *b, unsigned size, uint64_t *value)
{
    if (b->end - b->pos < size || b->pos > b->end)
        return false;
    *value = cfi_load_le((const uint8_t *)(uintptr_t)b->pos, size);
    b->pos += size;
    return true;
}

static bool take_leb(struct bytes *b, bool is_signed, uint64_t *value)
{
    uint64_t result = 0;
    unsigned shift = 0;
    for (int i = 0; i < 10; i++) {
        uint64_t byte;
        if (!take(b, 1, &byte))
            return false;
        if (shift < 64)
            result |= (byte & 0x7f) << shift;
        shift += 7;
        if (!(byte & 0x80)) {
            if (is_signed && shift < 64 && (byte & 0x40))
                result |= ~(uint64_t)0 << shift;
            *value = result;
            return true;
        }
    }
    return false;
}

/* A DW_EH_PE pointer: absolute or pc-relative; `datarel` the base of
 * DW_EH_PE_datarel (the header's address), 0 when not allowed. */
static bool take_pointer(struct bytes *b, uint8_t encoding, uint64_t datarel,
                         uint64_t *value)
{
    uint64_t at = b->pos, v;
    bool ok;
    switch (encoding & 0x0f) {
    case CFI_PE_ABSPTR: case CFI_PE_UDATA8: case CFI_PE_SDATA8:
        ok = take(b, 8, &v); break;
    case CFI_PE_UDATA4: ok = take(b, 4, &v); break;
    case CFI_PE_SDATA4:
        ok = take(b, 4, &v);
        v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;
        break;
    case CFI_PE_UDATA2: ok = take(b, 2, &v); break;
    case CFI_PE_SDATA2:
        ok = take(b, 2, &v);
        v = (uint64_t)(int64_t)(int16_t)(uint16_t)v;
        break;
    case CFI_PE_ULEB128: ok = take_leb(b, false, &v); break;
    case CFI_PE_SLEB128: ok = take_leb(b, true, &v); break;
    default: return false;
    }
    if (!ok || (encoding & CFI_PE_INDIRECT))
        return false;
    switch (encoding & 0x70) {
    case 0: break;
    case CFI_PE_PCREL: v += at; break;
    case CFI_PE_DATAREL:
        if (!datarel)
            return false;
        v += datarel;
        break;
    default: return false;
    }
    *value = v;
    return true;
}

void rt_frame_segment(const Elf64_Phdr *phdrs, unsigned phnum, uint64_t bias,
                      struct rt_object *object)
{
    uint64_t hdr = object->eh_frame_hdr;
    object->frame_below = object->frame_above = 0;
    for (unsigned i = 0; hdr && i < phnum; i++) {
        const Elf64_Phdr *ph = &phdrs[i];
        uint64_t lo = bias + ph->p_vaddr, hi = lo + ph->p_filesz;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && hi > lo &&
            hdr >= lo && hdr < hi) {
            object->frame_below =
                (uint32_t)(hdr - lo < UINT32_MAX ? hdr - lo : UINT32_MAX);
            object->frame_above =
                (uint32_t)(hi - hdr < UINT32_MAX ? hi - hdr : UINT32_MAX);
            return;
        }
    }
}

/* The bounds of what the fallback reads. */
static uint64_t frame_lo(const struct rt_object *o)
{
    return o->eh_frame_hdr - o->frame_below;
}

static uint64_t frame_hi(const struct rt_object *o)
{
    return o->eh_frame_hdr + o->frame_above;
}

/* The FDE address of the last table entry whose start is <= pc. */
static bool search_table(const struct rt_object *o, uint64_t pc,
                         uint64_t *fde_addr)
{
    uint64_t hdr = o->eh_frame_hdr;
    struct bytes b = {hdr, frame_hi(o)};
    uint64_t version, frame_enc, count_enc, table_enc, frame, count;
    if (!take(&b, 1, &version) || !take(&b, 1, &frame_enc) ||
        !take(&b, 1, &count_enc) || !take(&b, 1, &table_enc) ||
        version != 1 || table_enc != (CFI_PE_DATAREL | CFI_PE_SDATA4) ||
        !take_pointer(&b, (uint8_t)frame_enc, hdr, &frame) ||
        !take_pointer(&b, (uint8_t)count_enc, hdr, &count) ||
        count > (frame_hi(o) - b.pos) / 8)
        return false;
    const uint8_t *table = (const uint8_t *)(uintptr_t)b.pos;
    uint64_t lo = 0, hi = count; /* entries [0, lo) start at or below pc */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int32_t start = (int32_t)(uint32_t)cfi_load_le(table + 8 * mid, 4);
        if (hdr + (uint64_t)(int64_t)start <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return false;
    int32_t fde = (int32_t)(uint32_t)cfi_load_le(table + 8 * (lo - 1) + 4, 4);
    *fde_addr = hdr + (uint64_t)(int64_t)fde;
    return true;
}

/* A record's length field: the bytes of its body, [body, *end). */
static bool record(const struct rt_object *o, uint64_t at, uint64_t *body,
                   uint64_t *end)
{
    struct bytes b = {at, frame_hi(o)};
    uint64_t length;
    if (!take(&b, 4, &length) || length == 0)
        return false;
    if (length == 0xffffffffu && !take(&b, 8, &length))
        return false;
    if (length > frame_hi(o) - b.pos)
        return false;
    *body = b.pos;
    *end = b.pos + length;
    return true;
}

static bool augmentation(struct bytes *b, struct cfi_cie *cie)
{
    uint64_t length, v;
    if (!take_leb(b, false, &length) || length > b->end - b->pos)
        return false;
    struct bytes aug = {b->pos, b->pos + length};
    for (const char *a = cie->augmentation + 1; *a; a++) {
        if (*a == 'R' && take(&aug, 1, &v)) {
            cie->fde_encoding = (uint8_t)v;
        } else if (*a == 'L' && take(&aug, 1, &v)) {
            cie->lsda_encoding = (uint8_t)v;
        } else if (*a == 'P' && take(&aug, 1, &v)) {
            /* Usually indirect (the address of a GOT slot): the pointer
             * is stepped over, never followed. */
            cie->personality_encoding = (uint8_t)v;
            if (!take_pointer(&aug, (uint8_t)(v & ~CFI_PE_INDIRECT), 0,
                              &cie->personality))
                return false;
        } else if (*a == 'S') {
            cie->signal_frame = true;
#if defined(__aarch64__)
        } else if (*a == 'B') {
            cie->ra_b_key = true;
        } else if (*a == 'G') {
            cie->mte_tagged = true;
#endif
        } else {
            return false; /* an augmentation this reader does not know */
        }
    }
    b->pos += length;
    return true;
}

static bool parse_cie(const struct rt_object *o, uint64_t at,
                      struct cfi_cie *cie)
{
    uint64_t body, end, id, version, ra;
    if (!record(o, at, &body, &end))
        return false;
    struct bytes b = {body, end};
    if (!take(&b, 4, &id) || id != 0 || !take(&b, 1, &version) ||
        (version != 1 && version != 3))
        return false;
    memset(cie, 0, sizeof *cie);
    cie->section = CFI_EH_FRAME;
    cie->offset = at;
    cie->length = end - body;
    cie->version = (uint8_t)version;
    cie->address_size = 8;
    cie->lsda_encoding = CFI_PE_OMIT;
    cie->personality_encoding = CFI_PE_OMIT;
    for (size_t i = 0;; i++) {
        uint64_t c;
        if (i == CFI_AUGMENTATION_MAX || !take(&b, 1, &c))
            return false;
        cie->augmentation[i] = (char)c;
        if (c == 0)
            break;
    }
    int64_t data_align;
    if (!take_leb(&b, false, &cie->code_align) ||
        !take_leb(&b, true, (uint64_t *)&data_align) ||
        !(version == 1 ? take(&b, 1, &ra) : take_leb(&b, false, &ra)))
        return false;
    cie->data_align = data_align;
    cie->ra_column = ra;
    cie->arch = RT_ARCH; /* the process's own: see context.S */
    if (cie->augmentation[0] == 'z' && !augmentation(&b, cie))
        return false;
    if (cie->augmentation[0] != 'z' && cie->augmentation[0] != '\0')
        return false;
    cie->instructions = (const uint8_t *)(uintptr_t)b.pos;
    cie->instructions_len = (size_t)(end - b.pos);
    cie->instructions_offset = b.pos;
    return true;
}

static bool parse_fde(const struct rt_object *o, uint64_t at,
                      struct cfi_cie *cie, struct cfi_fde *fde)
{
    uint64_t body, end, cie_pointer, begin, range, aug_len = 0;
    if (!record(o, at, &body, &end))
        return false;
    struct bytes b = {body, end};
    if (!take(&b, 4, &cie_pointer) || cie_pointer == 0 ||
        cie_pointer > body - frame_lo(o) ||
        !parse_cie(o, body - cie_pointer, cie) ||
        !take_pointer(&b, cie->fde_encoding, 0, &begin) ||
        !take_pointer(&b, cie->fde_encoding & 0x0f, 0, &range))
        return false;
    if (cie->augmentation[0] == 'z' &&
        (!take_leb(&b, false, &aug_len) || aug_len > end - b.pos))
        return false;
    memset(fde, 0, sizeof *fde);
    fde->section = CFI_EH_FRAME;
    fde->offset = at;
    fde->length = end - body;
    fde->cie_offset = body - cie_pointer;
    fde->pc_begin = begin;
    fde->pc_end = begin + range;
    fde->cie = cie;
    fde->augmentation_data = (const uint8_t *)(uintptr_t)b.pos;
    fde->augmentation_data_len = (size_t)aug_len;
    b.pos += aug_len;
    fde->instructions = (const uint8_t *)(uintptr_t)b.pos;
    fde->instructions_len = (size_t)(end - b.pos);
    fde->instructions_offset = b.pos;
    fde->instructions_addr = b.pos;
    return true;
}

bool rt_find_fde(const struct rt_object *object, uint64_t pc,
                 struct cfi_cie *cie, struct cfi_fde *fde)
{
    uint64_t at;
    if (!object->eh_frame_hdr || object->frame_above == 0 ||
        !search_table(object, pc, &at) || at < frame_lo(object) ||
        at >= frame_hi(object) || !parse_fde(object, at, cie, fde))
        return false;
    return pc >= fde->pc_begin && pc < fde->pc_end;
}

/* The interpreter's memory callback: the walk's reader. */
static enum cfi_status read_for_interp(void *env, uint64_t addr,
                                       unsigned size, uint64_t *value)
{
    const struct rt_walk *walk = env;
    int failed = walk->env.read_memory(walk->env.data, addr, size, value);
    return failed ? CFI_E_MEMORY : CFI_OK;
}

static int result_of(enum cfi_status status)
{
    if (status == CFI_E_MEMORY)
        return CFISEM_E_MEMORY;
    if (status == CFI_E_NO_FDE)
        return CFISEM_E_NO_CFI;
    return CFISEM_E_BAD_FRAME;
}

/* The interpreter on the FDE of the lookup PC: the row from the cache
 * (one kept for the walk's object: its table entry), else decoded (and
 * kept), then applied; without the cache, the whole of
 * interp_unwind_fde. */
static enum cfi_status interpret(struct rt_walk *walk, uint64_t lookup_pc,
                                 const struct cfi_request *request,
                                 struct cfi_frame *frame)
{
    struct interp_decoded_row row;
    uint16_t entry = walk->entries[walk->current & 1];
    if (walk->row_cache && rt_row_lookup(entry, lookup_pc, &row))
        return interp_apply_row(&row, request, frame);
    struct cfi_cie cie;
    struct cfi_fde fde;
    if (!rt_find_fde(rt_walk_object(walk), lookup_pc, &cie, &fde))
        return CFI_E_NO_FDE;
    if (!walk->row_cache)
        return interp_unwind_fde(&fde, request, frame);
    struct cfi_diag diag;
    enum cfi_status status = interp_decode_row(&fde, lookup_pc, &row, &diag);
    if (status == CFI_E_UNSUPPORTED) /* a row too large to keep, say */
        return interp_unwind_fde(&fde, request, frame);
    if (status != CFI_OK)
        return status;
    rt_row_keep(entry, lookup_pc, &row);
    return interp_apply_row(&row, request, frame);
}

/* The registers' status bytes from the eh_elf ABI's bits and back
 * (eight at a time: byte k of a word is register k's status; the last
 * CFISEM_NREGS % 8 one by one). */
#define ONES 0x0101010101010101ull
#define HIGH 0x8080808080808080ull
#define LOW7 0x7f7f7f7f7f7f7f7full

/* The high bit of each byte of w that is not zero. */
static uint64_t nonzero_bytes(uint64_t w)
{
    return (((w & LOW7) + LOW7) | w) & HIGH;
}

/* Byte k is bit k of `bits` (0 or 1), for k < 8. */
static uint64_t bits_to_bytes(uint32_t bits)
{
    uint64_t spread = ((bits & 0xff) * ONES) & 0x8040201008040201ull;
    return nonzero_bytes(spread) >> 7;
}

/* Bit k set when bytes[k] == value, for k < 8. */
static uint32_t bytes_equal(const uint8_t *bytes, uint8_t value)
{
    uint64_t w;
    memcpy(&w, bytes, sizeof w);
    uint64_t zero = ~nonzero_bytes(w ^ (value * ONES)) & HIGH;
    return (uint32_t)(((zero >> 7) * 0x0102040810204080ull) >> 56);
}

enum { WHOLE = CFISEM_NREGS / 8 }; /* words of eight */

static void status_bytes(eh_elf_mask_t known, eh_elf_mask_t undefined,
                         uint8_t *status)
{
    _Static_assert(CFI_REG_UNKNOWN == 0 && CFI_REG_VALUE == 1 &&
                       CFI_REG_UNDEFINED == 2,
                   "status = known + 2 undefined");
    undefined &= ~known;
    for (unsigned k = 0; k < WHOLE; k++) {
        uint64_t w = bits_to_bytes((uint32_t)(known >> (8 * k))) |
                     bits_to_bytes((uint32_t)(undefined >> (8 * k))) << 1;
        memcpy(status + 8 * k, &w, sizeof w);
    }
    for (unsigned r = 8 * WHOLE; r < CFISEM_NREGS; r++)
        status[r] = (uint8_t)((known >> r & 1u) | (undefined >> r & 1u) << 1);
}

static eh_elf_mask_t status_bits(const uint8_t *status, uint8_t value)
{
    eh_elf_mask_t bits = 0;
    for (unsigned k = 0; k < WHOLE; k++)
        bits |= (eh_elf_mask_t)bytes_equal(status + 8 * k, value) << 8 * k;
    for (unsigned r = 8 * WHOLE; r < CFISEM_NREGS; r++)
        bits |= (eh_elf_mask_t)(status[r] == value) << r;
    return bits;
}

int rt_step_interp(struct rt_walk *walk, const struct eh_elf_regs *callee,
                   bool caller_frame, uint64_t lookup_pc,
                   struct eh_elf_frame *out)
{
    /* The callee's registers 0 to CFISEM_NREGS - 1; the others unknown
     * (their values are read only when their status is a value). */
    struct cfi_regs regs;
    memcpy(regs.value, callee->value, sizeof callee->value);
    memset(regs.status + CFISEM_NREGS, CFI_REG_UNKNOWN,
           sizeof regs.status - CFISEM_NREGS);
    status_bytes(callee->known, callee->undefined, regs.status);
    struct cfi_request request = {
        .pc = callee->value[RT_PC],
        .caller_frame = caller_frame,
        .callee = &regs,
        .memory = {read_for_interp, walk},
        .va_bits = RT_VA_BITS(walk),
    };
    struct cfi_frame frame;
    enum cfi_status status = interpret(walk, lookup_pc, &request, &frame);
    if (status != CFI_OK)
        return result_of(status);
    memcpy(out->caller.value, frame.caller.value, sizeof out->caller.value);
    out->caller.known = status_bits(frame.caller.status, CFI_REG_VALUE);
    out->caller.undefined = status_bits(frame.caller.status,
                                        CFI_REG_UNDEFINED);
    out->signal_frame = frame.signal_frame;
    return CFISEM_OK;
}
