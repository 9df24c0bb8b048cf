/* SPDX-License-Identifier: MIT */
/* decode.c — the machine-independent part of the decoder: one capstone
 * handle for the file's architecture, its register map, the decoding
 * loop, listings, and the machine's facts the analysis reads. What an
 * instruction does is each architecture's (decode_x86.c,
 * decode_aarch64.c).
 *
 * capstone: a table-driven decoder generated from LLVM's tables, a Debian
 * package (libcapstone-dev), with a detail mode that gives the operands
 * and the registers each instruction reads and writes, implicit ones
 * included (cs_regs_access), which the clobber tracking needs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"

_Static_assert(X86_REG_ENDING <= SYNTH_CS_REGS, "x86 register map");
_Static_assert(ARM64_REG_ENDING <= SYNTH_CS_REGS, "ARM64 register map");

int synth_saved_index(const struct synth_machine *m, int reg)
{
    for (int i = 0; i < m->nsaved; i++)
        if (m->saved[i] == reg)
            return i;
    return -1;
}

bool synth_insn_writes(const struct synth_insn *in, int reg)
{
    if (reg >= 0 && reg < 32)
        return (in->writes >> reg) & 1;
    if (reg >= 64 && reg < 96)
        return (in->vwrites >> (reg - 64)) & 1;
    return false;
}

/* The followed registers (struct synth_machine): the callee-saved list,
 * the return-address column when it is not the PC, then the registers
 * from 64 up whose default is "same value". */
static void machine_saved(struct synth_machine *m)
{
    const struct cfi_arch *a = m->arch;
    m->nsaved = 0;
    for (unsigned i = 0; i < a->ncallee_saved && m->nsaved < SYNTH_MAX_SAVED;
         i++)
        m->saved[m->nsaved++] = a->callee_saved_list[i];
    m->ra_on_stack = a->ra_column == a->pc;
    if (!m->ra_on_stack && m->nsaved < SYNTH_MAX_SAVED)
        m->saved[m->nsaved++] = (uint8_t)a->ra_column;
    for (unsigned r = 64; r < a->ndefaults && r < 96; r++)
        if (cfi_arch_default(a, r) == CFI_DEFAULT_SAME_VALUE &&
            m->nsaved < SYNTH_MAX_SAVED)
            m->saved[m->nsaved++] = (uint8_t)r;
}

static void machine_init(struct synth_machine *m, const struct synth_isa *isa)
{
    memset(m, 0, sizeof *m);
    m->arch = isa->arch;
    m->sp = isa->arch->sp;
    m->fp = isa->arch->fp;
    m->entry_height = isa->entry_height;
    m->syscall_nr = isa->syscall_nr;
    m->syscall_stack = isa->syscall_stack;
    m->clone_nr = isa->clone_nr;
    m->clone3_nr = isa->clone3_nr;
    machine_saved(m);
}

static const struct synth_isa *isa_of(const struct cfi_arch *arch)
{
    if (arch == &cfi_arch_x86_64)
        return &synth_isa_x86_64;
    if (arch == &cfi_arch_aarch64)
        return &synth_isa_aarch64;
    return NULL;
}

enum cfi_status synth_decoder_new(struct synth_decoder **out,
                                  const struct cfi_arch *arch,
                                  struct cfi_diag *diag)
{
    const struct synth_isa *isa = isa_of(arch);
    if (!isa)
        return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                        "synth decodes x86-64 and AArch64 code only");
    struct synth_decoder *d = calloc(1, sizeof *d);
    if (!d)
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    d->isa = isa;
    machine_init(&d->machine, isa);
    if (cs_open(isa->cs_arch, isa->cs_mode, &d->handle) != CS_ERR_OK) {
        free(d);
        return cfi_fail(diag, CFI_E_UNSUPPORTED, CFI_NO_OFFSET,
                        isa->missing);
    }
    cs_option(d->handle, CS_OPT_DETAIL, CS_OPT_ON);
    d->insn = cs_malloc(d->handle);
    if (!d->insn) {
        cs_close(&d->handle);
        free(d);
        return cfi_fail(diag, CFI_E_NOMEM, CFI_NO_OFFSET, "out of memory");
    }
    for (int r = 0; r < SYNTH_CS_REGS; r++) {
        const char *name = cs_reg_name(d->handle, (unsigned)r);
        d->dwarf[r] = (int8_t)(name ? isa->dwarf_of_name(name) : -1);
    }
    *out = d;
    return CFI_OK;
}

void synth_decoder_free(struct synth_decoder *d)
{
    if (!d)
        return;
    cs_free(d->insn, 1);
    cs_close(&d->handle);
    free(d);
}

const struct synth_machine *synth_decoder_machine(
    const struct synth_decoder *d)
{
    return &d->machine;
}

/* The registers written, as DWARF bits. */
static void written(const struct synth_decoder *d, const cs_insn *ci,
                    struct synth_insn *in)
{
    cs_regs rd, wr;
    uint8_t nrd = 0, nwr = 0;
    if (cs_regs_access(d->handle, ci, rd, &nrd, wr, &nwr) != CS_ERR_OK)
        return;
    for (unsigned i = 0; i < nwr; i++) {
        int r = synth_dwarf(d, wr[i]);
        if (r >= 0 && r < 32)
            in->writes |= 1u << r;
        else if (r >= 64 && r < 96)
            in->vwrites |= 1u << (r - 64);
    }
}

void synth_insn_init(const struct synth_decoder *d, const cs_insn *ci,
                     struct synth_insn *in)
{
    memset(in, 0, sizeof *in);
    in->addr = ci->address;
    in->len = (uint8_t)ci->size;
    in->reg = in->base = in->dst = in->src = in->mem_base = in->mem_index =
        in->reg2 = -1;
    written(d, ci, in);
}

/* One instruction at *code: decoded by capstone, or known to the
 * architecture's decoder; false when neither. */
static bool decode_one(struct synth_decoder *d, const uint8_t **code,
                       size_t *size, uint64_t *address,
                       struct synth_insn *in, char *text, size_t len)
{
    if (cs_disasm_iter(d->handle, code, size, address, d->insn)) {
        if (in)
            d->isa->classify(d, d->insn, in);
        if (text && d->insn->op_str[0])
            snprintf(text, len, "%s %s", d->insn->mnemonic,
                     d->insn->op_str);
        else if (text)
            snprintf(text, len, "%s", d->insn->mnemonic);
        return true;
    }
    struct synth_insn known;
    unsigned n = d->isa->known_word
                     ? d->isa->known_word(*code, *size, *address, &known,
                                          text, len)
                     : 0;
    if (n == 0)
        return false;
    if (in)
        *in = known;
    *code += n;
    *size -= n;
    *address += n;
    return true;
}

enum cfi_status synth_decode(struct synth_decoder *d, const uint8_t *bytes,
                             uint64_t begin, uint64_t end,
                             struct synth_insn *insns, size_t max,
                             size_t *count, uint64_t *stopped_at)
{
    const uint8_t *code = bytes;
    size_t size = (size_t)(end - begin);
    uint64_t address = begin;
    size_t n = 0;
    while (size > 0 && n < max &&
           decode_one(d, &code, &size, &address, &insns[n], NULL, 0))
        n++;
    *count = n;
    *stopped_at = address;
    return CFI_OK;
}

enum synth_kind synth_known_gap(const struct synth_decoder *d,
                                const uint8_t *code, uint64_t at,
                                uint64_t len)
{
    return d->isa->known_gap(code, at, len);
}

long synth_insn_index(const struct synth_insn *insns, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (insns[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && insns[lo].addr == addr ? (long)lo : -1;
}

const uint8_t *synth_file_bytes(const struct cfi_file *file, uint64_t addr,
                                uint64_t len)
{
    const struct cfi_segment *seg = cfi_file_segment(file, addr);
    if (!seg || addr - seg->vaddr > seg->filesz ||
        len > seg->filesz - (addr - seg->vaddr))
        return NULL;
    return seg->bytes + (addr - seg->vaddr);
}

enum cfi_status synth_disassemble(struct synth_decoder *d,
                                  const struct cfi_file *file,
                                  uint64_t begin, uint64_t end,
                                  struct synth_listing *out)
{
    memset(out, 0, sizeof *out);
    out->stopped_at = begin;
    const uint8_t *code = end > begin ? synth_file_bytes(file, begin,
                                                         end - begin)
                                      : NULL;
    if (!code) {
        out->bytes_missing = true;
        return CFI_OK;
    }
    size_t size = (size_t)(end - begin), capacity = 0;
    uint64_t address = begin;
    while (size > 0 && out->count < SYNTH_MAX_INSNS) {
        if (out->count == capacity) {
            capacity = capacity ? 2 * capacity : 64;
            void *grown = realloc(out->insns, capacity * sizeof *out->insns);
            if (!grown) {
                synth_listing_free(out);
                return CFI_E_NOMEM;
            }
            out->insns = grown;
        }
        struct synth_listed_insn *line = &out->insns[out->count];
        const uint8_t *at = code;
        line->addr = address;
        if (!decode_one(d, &code, &size, &address, NULL, line->text,
                        sizeof line->text))
            break;
        line->len = (uint8_t)(code - at);
        memcpy(line->bytes, at,
               line->len < sizeof line->bytes ? line->len
                                              : sizeof line->bytes);
        out->count++;
    }
    out->stopped_at = address;
    return CFI_OK;
}

void synth_listing_free(struct synth_listing *listing)
{
    free(listing->insns);
    memset(listing, 0, sizeof *listing);
}
