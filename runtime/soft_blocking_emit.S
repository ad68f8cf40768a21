/* ptc_blk_emit(uint32_t record): stores one id record through the id handler tracing uses
 * (rt.handler_id: untimed, timed or ticker), exactly as an id stub does, so signals, full
 * buffers and the timestamp are handled where they already are. The handler returns to the
 * caller; it preserves every register but %r11 (and its own scratch, which it saves). */
    .text
    .globl ptc_blk_emit
    .hidden ptc_blk_emit
    .type ptc_blk_emit,@function
    .p2align 4
ptc_blk_emit:
    .cfi_startproc
    movl %edi, %r11d
    jmpq *ptc_blk_handler(%rip)
    .cfi_endproc
    .size ptc_blk_emit, .-ptc_blk_emit

/* the handler's address, set by soft_blocking.c when tracing starts */
    .data
    .globl ptc_blk_handler
    .hidden ptc_blk_handler
    .type ptc_blk_handler,@object
    .p2align 3
ptc_blk_handler:
    .quad 0
    .size ptc_blk_handler, 8
    .section .note.GNU-stack,"",@progbits
