/* SPDX-License-Identifier: MIT */
/* insn.c — recognising the x86-64 instructions that change frames.
 *
 * A small decoder of our own rather than a full disassembler: the shadow
 * stack needs only to know whether an instruction is a call, a return, a
 * jump or a syscall, and a call's length is never needed (its return
 * address is on the stack after the step). Legacy prefixes (operand and
 * address size, segment, lock, rep/bnd, notrack) and one REX prefix are
 * skipped; the opcode then decides (Intel SDM vol. 2, "CALL", "RET",
 * "JMP", "SYSCALL"):
 *   E8 cd             call rel32
 *   FF /2, FF /3      call r/m64, call far m16:64
 *   C3, C2 iw         ret, ret imm16
 *   CB, CA iw         far ret
 *   E9 cd, EB cb      jmp rel32, rel8
 *   FF /4, FF /5      jmp r/m64, far jmp
 *   0F 05             syscall
 */
#include "internal.h"

static bool is_legacy_prefix(uint8_t byte)
{
    switch (byte) {
    case 0x66: case 0x67: case 0xf0: case 0xf2: case 0xf3:
    case 0x2e: case 0x36: case 0x3e: case 0x26: case 0x64: case 0x65:
        return true;
    default:
        return false;
    }
}

static enum trace_insn classify_ff(uint8_t modrm)
{
    switch ((modrm >> 3) & 7) {
    case 2: case 3:
        return TRACE_INSN_CALL;
    case 4: case 5:
        return TRACE_INSN_JMP;
    default:
        return TRACE_INSN_OTHER;
    }
}

enum trace_insn trace_insn_classify(const uint8_t *code, size_t len)
{
    size_t i = 0;
    /* At most 14 prefixes: an instruction is at most 15 bytes. */
    while (i < len && i < 14 && is_legacy_prefix(code[i]))
        i++;
    if (i < len && (code[i] & 0xf0) == 0x40)
        i++;
    if (i >= len)
        return TRACE_INSN_OTHER;
    switch (code[i]) {
    case 0xe8:
        return TRACE_INSN_CALL;
    case 0xc3: case 0xc2: case 0xcb: case 0xca:
        return TRACE_INSN_RET;
    case 0xe9: case 0xeb:
        return TRACE_INSN_JMP;
    case 0xff:
        return i + 1 < len ? classify_ff(code[i + 1]) : TRACE_INSN_OTHER;
    case 0x0f:
        return i + 1 < len && code[i + 1] == 0x05 ? TRACE_INSN_SYSCALL
                                                   : TRACE_INSN_OTHER;
    default:
        return TRACE_INSN_OTHER;
    }
}

/* Length of an FF /r instruction from its ModRM byte on (ModRM, SIB,
 * displacement), or 0 when `len` bytes do not hold it. */
static size_t modrm_length(const uint8_t *p, size_t len)
{
    if (len < 1)
        return 0;
    unsigned mod = p[0] >> 6, rm = p[0] & 7;
    size_t n = 1;
    if (mod != 3 && rm == 4) {
        if (len < 2)
            return 0;
        if (mod == 0 && (p[1] & 7) == 5)
            n += 4;
        n++;
    }
    if (mod == 1)
        n += 1;
    else if (mod == 2 || (mod == 0 && rm == 5))
        n += 4;
    return n;
}

bool trace_insn_call_ends_at(const uint8_t *before, size_t len)
{
    if (len >= 5 && before[len - 5] == 0xe8)
        return true;
    for (size_t k = 2; k <= len && k <= 8; k++) {
        const uint8_t *p = before + len - k;
        size_t prefixes = 0;
        while (prefixes < k && (p[prefixes] == 0x3e ||
                                (p[prefixes] & 0xf0) == 0x40))
            prefixes++;
        if (prefixes >= k || p[prefixes] != 0xff ||
            ((p[prefixes + 1 < k ? prefixes + 1 : prefixes] >> 3) & 7) != 2 ||
            prefixes + 1 >= k)
            continue;
        if (prefixes + 1 + modrm_length(p + prefixes + 1, k - prefixes - 1) == k)
            return true;
    }
    return false;
}

/* ---- AArch64 ---------------------------------------------------------- */

/* Arm ARM (DDI 0487), C6.2, the A64 base instructions, by their fixed
 * bits: BL imm26; BLR, BLRAA, BLRAAZ, BLRAB, BLRABZ; RET, RETAA, RETAB;
 * B imm26, BR, BRAA, BRAAZ, BRAB, BRABZ; SVC #imm16. The hints that sign
 * and authenticate x30: PACIASP (hint #25), PACIBSP (#27), PACIAZ (#24),
 * PACIBZ (#26); AUTIASP (#29), AUTIBSP (#31), AUTIAZ (#28), AUTIBZ
 * (#30). */
enum trace_insn trace_insn_classify_a64(uint32_t insn)
{
    if ((insn & 0xfc000000u) == 0x94000000u ||
        (insn & 0xfffffc1fu) == 0xd63f0000u ||
        (insn & 0xfefff800u) == 0xd63f0800u)
        return TRACE_INSN_CALL;
    if ((insn & 0xfffffc1fu) == 0xd65f0000u || insn == 0xd65f0bffu ||
        insn == 0xd65f0fffu)
        return TRACE_INSN_RET;
    if ((insn & 0xfc000000u) == 0x14000000u ||
        (insn & 0xfffffc1fu) == 0xd61f0000u ||
        (insn & 0xfefff800u) == 0xd61f0800u)
        return TRACE_INSN_JMP;
    if ((insn & 0xffe0001fu) == 0xd4000001u)
        return TRACE_INSN_SYSCALL;
    switch (insn) {
    case 0xd503233fu: case 0xd503237fu: case 0xd503231fu: case 0xd503235fu:
        return TRACE_INSN_SIGN_RA;
    case 0xd50323bfu: case 0xd50323ffu: case 0xd503239fu: case 0xd50323dfu:
        return TRACE_INSN_AUTH_RA;
    default:
        return TRACE_INSN_OTHER;
    }
}

/* ---- AArch64 exclusive sequences ----------------------------------- */

/* The exclusives (ARM ARM C4.1.66, "Load/store exclusive"): bits 29-24
 * 001000 with o2 (bit 23) clear; L (bit 22) set for the loads (LDXR,
 * LDAXR, LDXP, LDAXP and their byte and halfword forms). */
static bool a64_load_exclusive(uint32_t insn)
{
    return (insn & 0x3fc00000u) == 0x08400000u;
}

static bool a64_store_exclusive(uint32_t insn)
{
    return (insn & 0x3fc00000u) == 0x08000000u;
}

static int64_t sign_extend(uint64_t value, unsigned bits)
{
    uint64_t sign = 1ull << (bits - 1);
    return (int64_t)((value ^ sign) - sign);
}

/* The target of a conditional branch (B.cond, CBZ/CBNZ, TBZ/TBNZ) at pc,
 * or false when insn is none. */
static bool a64_cond_branch(uint32_t insn, uint64_t pc, uint64_t *target)
{
    int64_t words;
    if ((insn & 0xff000010u) == 0x54000000u ||
        (insn & 0x7e000000u) == 0x34000000u)
        words = sign_extend((insn >> 5) & 0x7ffff, 19);
    else if ((insn & 0x7e000000u) == 0x36000000u)
        words = sign_extend((insn >> 5) & 0x3fff, 14);
    else
        return false;
    *target = pc + (uint64_t)(words * 4);
    return true;
}

size_t trace_a64_exclusive_exits(const uint32_t *code, size_t n, uint64_t pc,
                                 uint64_t exits[TRACE_A64_EXITS])
{
    if (n == 0 || !a64_load_exclusive(code[0]))
        return 0;
    size_t count = 0;
    for (size_t i = 1; i < n && i < TRACE_A64_SEQUENCE; i++) {
        uint64_t at = pc + 4 * i, target;
        if (a64_store_exclusive(code[i])) {
            exits[0] = at + 4;
            /* A branch back into the sequence is its retry, not an
             * exit. */
            bool inside = count == 1 && exits[1] >= pc && exits[1] <= at;
            return count == 1 && !inside && exits[1] != exits[0] ? 2 : 1;
        }
        if (a64_cond_branch(code[i], at, &target)) {
            if (count == 1)
                return 0;
            exits[1] = target;
            count = 1;
        }
    }
    return 0;
}
