/* SPDX-License-Identifier: MIT */
/* dwop.h — the DW_OP opcodes of DWARF expressions (DWARF 5 §2.5, §6.4.2,
 * and the GNU extensions), one list, used by the disassembler
 * and the assembler of expr_text.c. Private to semantics/.
 *
 * X(name, first opcode, count, operand shape). count is 1 except for the
 * three families of 32 (lit0..lit31, reg0..reg31, breg0..breg31), whose
 * printed name is the family name followed by the index.
 *
 * Operand shapes, in the order they are encoded:
 *   NONE        no operand
 *   ADDR        an 8-byte address, printed 0x-hex (x86-64 address size)
 *   U1 S1 U2 S2 U4 S4 U8 S8   fixed-size constants, little-endian
 *   ULEB SLEB   one LEB128 number
 *   ULEB_SLEB   bregx: register, offset
 *   ULEB_ULEB   bit_piece (size, offset), regval_type (register, type)
 *   U1_ULEB     deref_type, xderef_type: size, type offset
 *   U4_SLEB     implicit_pointer: 4-byte section offset (32-bit DWARF),
 *               signed byte offset
 *   BLOCK       implicit_value: ULEB length then that many bytes, printed
 *               "LEN HEX" (the length in decimal, the bytes in hex)
 *   ULEB_BLOCK1 const_type: ULEB type offset, 1-byte size, that many bytes,
 *               printed "TYPE SIZE HEX"
 *   SUBEXPR     entry_value: ULEB length then a DWARF expression, printed
 *               nested in parentheses: "entry_value(breg5 0)"
 *   UNDECODED   an opcode whose operand we do not decode
 *               (GNU_encoded_addr: its size depends on a pointer encoding
 *               and on section addresses): the listing prints it, and all
 *               after it, as data.
 *
 * call_ref, GNU_variable_value and implicit_pointer take a section offset
 * whose size is 4 in 32-bit DWARF and 8 in 64-bit DWARF; an expression in
 * CFI does not say which, so 4 (32-bit DWARF, the only form .eh_frame
 * producers emit) is assumed. */
#ifndef CFISEM_SEM_DWOP_H
#define CFISEM_SEM_DWOP_H

#define SEM_DW_OPS(X)                                  \
    X(addr, 0x03, 1, ADDR)                             \
    X(deref, 0x06, 1, NONE)                            \
    X(const1u, 0x08, 1, U1)                            \
    X(const1s, 0x09, 1, S1)                            \
    X(const2u, 0x0a, 1, U2)                            \
    X(const2s, 0x0b, 1, S2)                            \
    X(const4u, 0x0c, 1, U4)                            \
    X(const4s, 0x0d, 1, S4)                            \
    X(const8u, 0x0e, 1, U8)                            \
    X(const8s, 0x0f, 1, S8)                            \
    X(constu, 0x10, 1, ULEB)                           \
    X(consts, 0x11, 1, SLEB)                           \
    X(dup, 0x12, 1, NONE)                              \
    X(drop, 0x13, 1, NONE)                             \
    X(over, 0x14, 1, NONE)                             \
    X(pick, 0x15, 1, U1)                               \
    X(swap, 0x16, 1, NONE)                             \
    X(rot, 0x17, 1, NONE)                              \
    X(xderef, 0x18, 1, NONE)                           \
    X(abs, 0x19, 1, NONE)                              \
    X(and, 0x1a, 1, NONE)                              \
    X(div, 0x1b, 1, NONE)                              \
    X(minus, 0x1c, 1, NONE)                            \
    X(mod, 0x1d, 1, NONE)                              \
    X(mul, 0x1e, 1, NONE)                              \
    X(neg, 0x1f, 1, NONE)                              \
    X(not, 0x20, 1, NONE)                              \
    X(or, 0x21, 1, NONE)                               \
    X(plus, 0x22, 1, NONE)                             \
    X(plus_uconst, 0x23, 1, ULEB)                      \
    X(shl, 0x24, 1, NONE)                              \
    X(shr, 0x25, 1, NONE)                              \
    X(shra, 0x26, 1, NONE)                             \
    X(xor, 0x27, 1, NONE)                              \
    X(bra, 0x28, 1, S2)                                \
    X(eq, 0x29, 1, NONE)                               \
    X(ge, 0x2a, 1, NONE)                               \
    X(gt, 0x2b, 1, NONE)                               \
    X(le, 0x2c, 1, NONE)                               \
    X(lt, 0x2d, 1, NONE)                               \
    X(ne, 0x2e, 1, NONE)                               \
    X(skip, 0x2f, 1, S2)                               \
    X(lit, 0x30, 32, NONE)                             \
    X(reg, 0x50, 32, NONE)                             \
    X(breg, 0x70, 32, SLEB)                            \
    X(regx, 0x90, 1, ULEB)                             \
    X(fbreg, 0x91, 1, SLEB)                            \
    X(bregx, 0x92, 1, ULEB_SLEB)                       \
    X(piece, 0x93, 1, ULEB)                            \
    X(deref_size, 0x94, 1, U1)                         \
    X(xderef_size, 0x95, 1, U1)                        \
    X(nop, 0x96, 1, NONE)                              \
    X(push_object_address, 0x97, 1, NONE)              \
    X(call2, 0x98, 1, U2)                              \
    X(call4, 0x99, 1, U4)                              \
    X(call_ref, 0x9a, 1, U4)                           \
    X(form_tls_address, 0x9b, 1, NONE)                 \
    X(call_frame_cfa, 0x9c, 1, NONE)                   \
    X(bit_piece, 0x9d, 1, ULEB_ULEB)                   \
    X(implicit_value, 0x9e, 1, BLOCK)                  \
    X(stack_value, 0x9f, 1, NONE)                      \
    X(implicit_pointer, 0xa0, 1, U4_SLEB)              \
    X(addrx, 0xa1, 1, ULEB)                            \
    X(constx, 0xa2, 1, ULEB)                           \
    X(entry_value, 0xa3, 1, SUBEXPR)                   \
    X(const_type, 0xa4, 1, ULEB_BLOCK1)                \
    X(regval_type, 0xa5, 1, ULEB_ULEB)                 \
    X(deref_type, 0xa6, 1, U1_ULEB)                    \
    X(xderef_type, 0xa7, 1, U1_ULEB)                   \
    X(convert, 0xa8, 1, ULEB)                          \
    X(reinterpret, 0xa9, 1, ULEB)                      \
    X(GNU_push_tls_address, 0xe0, 1, NONE)             \
    X(GNU_uninit, 0xf0, 1, NONE)                       \
    X(GNU_encoded_addr, 0xf1, 1, UNDECODED)            \
    X(GNU_implicit_pointer, 0xf2, 1, U4_SLEB)          \
    X(GNU_entry_value, 0xf3, 1, SUBEXPR)               \
    X(GNU_const_type, 0xf4, 1, ULEB_BLOCK1)            \
    X(GNU_regval_type, 0xf5, 1, ULEB_ULEB)             \
    X(GNU_deref_type, 0xf6, 1, U1_ULEB)                \
    X(GNU_convert, 0xf7, 1, ULEB)                      \
    X(GNU_reinterpret, 0xf9, 1, ULEB)                  \
    X(GNU_parameter_ref, 0xfa, 1, U4)                  \
    X(GNU_addr_index, 0xfb, 1, ULEB)                   \
    X(GNU_const_index, 0xfc, 1, ULEB)                  \
    X(GNU_variable_value, 0xfd, 1, U4)

enum sem_dwop_shape {
    DWOP_NONE, DWOP_ADDR,
    DWOP_U1, DWOP_S1, DWOP_U2, DWOP_S2, DWOP_U4, DWOP_S4, DWOP_U8, DWOP_S8,
    DWOP_ULEB, DWOP_SLEB, DWOP_ULEB_SLEB, DWOP_ULEB_ULEB, DWOP_U1_ULEB,
    DWOP_U4_SLEB, DWOP_BLOCK, DWOP_ULEB_BLOCK1, DWOP_SUBEXPR, DWOP_UNDECODED,
};

struct sem_dwop {
    const char *name;
    unsigned char first;
    unsigned char count;
    enum sem_dwop_shape shape;
};

/* Nesting bound for entry_value: deeper expressions print as data. */
#define SEM_DWOP_NEST_MAX 8

#endif
