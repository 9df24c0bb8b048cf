/* all_rules.S — one FDE that applies every rule function of
 * semantics/translate.c but set_loc and GNU_window_save: the opcodes gas
 * has no directive for are written with .cfi_escape. At 0x1006 the row
 * holds a rule of every kind. */
    .text
    .globl all_rules
all_rules:                      /* 0x1000 */
    .cfi_startproc
    push %rbp                   /* 0x1000 */
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    mov %rsp, %rbp              /* 0x1001, 3 bytes */
    .cfi_def_cfa_register %rbp
    push %rbx                   /* 0x1004 */
    .cfi_escape 0x05, 0x03, 0x03            /* offset_extended rbx, 3: cfa-24 */
    .cfi_escape 0x2e, 0x10                  /* GNU_args_size 16 */
    .cfi_same_value %r12
    .cfi_undefined %r13
    .cfi_register %r14, %rax
    .cfi_val_offset %r15, -48
    .cfi_escape 0x11, 0x0a, 0x02            /* offset_extended_sf r10, 2: cfa-16 */
    .cfi_escape 0x2f, 0x0b, 0x04            /* GNU_negative_offset_extended r11, 4: cfa+32 */
    nop                         /* 0x1005 */
    .cfi_remember_state
    .cfi_escape 0x16, 0x01, 0x02, 0x76, 0x08 /* val_expression rdx: breg6 8 */
    .cfi_escape 0x10, 0x02, 0x02, 0x76, 0x10 /* expression rcx: breg6 16 */
    .cfi_escape 0x15, 0x08, 0x7e            /* val_offset_sf r8, -2: cfa+16 */
    nop                         /* 0x1006 */
    .cfi_restore_state
    .cfi_restore %rbx
    .cfi_escape 0x06, 0x0c                  /* restore_extended r12 */
    nop                         /* 0x1007 */
    .cfi_escape 0x12, 0x07, 0x7e            /* def_cfa_sf rsp, -2: rsp+16 */
    .cfi_escape 0x13, 0x7f                  /* def_cfa_offset_sf -1: rsp+8 */
    nop                         /* 0x1008 */
    .cfi_escape 0x0f, 0x03, 0x77, 0x08, 0x06 /* def_cfa_expression breg7 8; deref */
    .cfi_escape 0x00                        /* nop */
    .skip 0x100, 0x90           /* 0x1009: advance_loc2 over it */
    .cfi_def_cfa %rsp, 8
    ret                         /* 0x1109 */
    .cfi_endproc                /* end 0x110a */
