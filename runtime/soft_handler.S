/* Software backend: the handlers a patched stub calls (docs/runtime.md).
 *
 * A patched stub is `[endbr64] call *slot(%rip); ret`, so on entry (%rsp) holds R, the
 * address of the stub's `ret`: R & ~15 is the stub. The call site clobbers nothing but
 * the flags, so every register is preserved here; the stack may have any alignment.
 *
 * Hot path: reserve the next record of the thread's buffer with one non-locked xadd on the
 * thread's position (initial-exec TLS): a signal on the same thread cannot split it. Store
 * [tsc,] then R (R last: the drain treats a zero address as "not yet written"). If the
 * reservation is at or past the buffer end (buffer full, first event of the thread,
 * tracing off) take the slow path: save all other registers and the vector state with
 * xsave (fxsave without it) on a 64-byte aligned frame, and call ptc_soft_slow(R, tsc).
 *
 * TLS layout (struct ptc_tls in soft_internal.h): pos at 0, end at 8.
 *
 * The slow path's final `ret` returns to whatever (%rsp) held on entry: the stub's `ret`
 * for the stub-address handlers, the instrumented function for the id handlers (below).
 */
    .text

    .hidden ptc_tls
    .hidden ptc_soft_slow
    .hidden ptc_xsave_size
    .hidden ptc_use_xsave

/* Slow path. Stack on entry: [rsp]=rdx, [rsp+8]=rax, [rsp+16]=rcx, [rsp+24]=R.
 * rdx = R, rax = tsc (0 when untimed). */
    .p2align 4
    .type ptc_slow_common,@function
ptc_slow_common:
    .cfi_startproc
    .cfi_def_cfa_offset 32
    pushq %rbp
    .cfi_def_cfa_offset 40
    .cfi_offset %rbp, -40
    movq %rsp, %rbp
    .cfi_def_cfa_register %rbp
    pushq %rsi
    pushq %rdi
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    movq %rdx, %rdi
    movq %rax, %rsi
    subq ptc_xsave_size(%rip), %rsp
    andq $-64, %rsp
    cmpb $0, ptc_use_xsave(%rip)
    je 2f
    xorl %eax, %eax            /* the xsave header must start zeroed for xrstor */
    movq %rax, 512(%rsp)
    movq %rax, 520(%rsp)
    movq %rax, 528(%rsp)
    movq %rax, 536(%rsp)
    movq %rax, 544(%rsp)
    movq %rax, 552(%rsp)
    movq %rax, 560(%rsp)
    movq %rax, 568(%rsp)
    movl $-1, %eax
    movl $-1, %edx
    xsave64 (%rsp)
    call ptc_soft_slow
    movl $-1, %eax
    movl $-1, %edx
    xrstor64 (%rsp)
    jmp 3f
2:  fxsave64 (%rsp)
    call ptc_soft_slow
    fxrstor64 (%rsp)
3:  leaq -48(%rbp), %rsp
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rdi
    popq %rsi
    popq %rbp
    .cfi_def_cfa %rsp, 32
    popq %rdx
    popq %rax
    popq %rcx
    .cfi_def_cfa_offset 8
    ret
    .cfi_endproc
    .size ptc_slow_common, .-ptc_slow_common

/* Reservation check points (soft_resume.c): ptc_chk_* is the compare right after each
 * handler's xadd, ptc_go_* where it goes on with room, ptc_slow_* where it goes without. */
    .globl ptc_chk_ht, ptc_go_ht, ptc_slow_ht, ptc_chk_h, ptc_go_h, ptc_slow_h
    .globl ptc_chk_iht, ptc_go_iht, ptc_slow_iht, ptc_chk_ih, ptc_go_ih, ptc_slow_ih
    .hidden ptc_chk_ht, ptc_go_ht, ptc_slow_ht, ptc_chk_h, ptc_go_h, ptc_slow_h
    .hidden ptc_chk_iht, ptc_go_iht, ptc_slow_iht, ptc_chk_ih, ptc_go_ih, ptc_slow_ih

/* One 16-byte record per event: R, tsc. */
    .globl ptc_soft_handler_timed
    .hidden ptc_soft_handler_timed
    .type ptc_soft_handler_timed,@function
    .p2align 5
ptc_soft_handler_timed:
    .cfi_startproc
    pushq %rcx
    pushq %rax
    pushq %rdx
    .cfi_def_cfa_offset 32
    movq ptc_tls@gottpoff(%rip), %rcx
    movl $16, %eax
    xaddq %rax, %fs:(%rcx)
ptc_chk_ht:
    cmpq %fs:8(%rcx), %rax
    jae 1f
ptc_go_ht:
    movq %rax, %rcx
    rdtsc
    shlq $32, %rdx
    orq %rdx, %rax
    movq %rax, 8(%rcx)
    movq 24(%rsp), %rax
    movq %rax, (%rcx)
    popq %rdx
    popq %rax
    popq %rcx
    .cfi_def_cfa_offset 8
    ret
    .cfi_def_cfa_offset 32
ptc_slow_ht:
1:  rdtsc
    shlq $32, %rdx
    orq %rdx, %rax
    movq 24(%rsp), %rdx
    jmp ptc_slow_common
    .cfi_endproc
    .size ptc_soft_handler_timed, .-ptc_soft_handler_timed

/* One 8-byte record per event: R. */
    .globl ptc_soft_handler
    .hidden ptc_soft_handler
    .type ptc_soft_handler,@function
    .p2align 5
ptc_soft_handler:
    .cfi_startproc
    pushq %rcx
    pushq %rax
    .cfi_def_cfa_offset 24
    movq ptc_tls@gottpoff(%rip), %rcx
    movl $8, %eax
    xaddq %rax, %fs:(%rcx)
ptc_chk_h:
    cmpq %fs:8(%rcx), %rax
    jae 1f
ptc_go_h:
    movq 16(%rsp), %rcx
    movq %rcx, (%rax)
    popq %rax
    popq %rcx
    .cfi_def_cfa_offset 8
    ret
    .cfi_def_cfa_offset 24
ptc_slow_h:
1:  pushq %rdx
    .cfi_def_cfa_offset 32
    xorl %eax, %eax
    movq 24(%rsp), %rdx
    jmp ptc_slow_common
    .cfi_endproc
    .size ptc_soft_handler, .-ptc_soft_handler


/* Id handlers: the stub of a PTCALL_MAP_F_SCRATCH_R11 unit is patched to
 * `[endbr64] movl $(id << 4 | 2), %r11d; jmp *slot(%rip)`, so on entry (%rsp) is the return
 * address into the instrumented function and %r11 the ready-made record (the call site
 * declared r11 clobbered). One call and one ret fewer than the stub-address handlers, and
 * no dependent load of the return address. */
    .globl ptc_soft_handler_id_timed
    .hidden ptc_soft_handler_id_timed
    .type ptc_soft_handler_id_timed,@function
    .p2align 5
ptc_soft_handler_id_timed:
    .cfi_startproc
    pushq %rcx
    pushq %rax
    pushq %rdx
    .cfi_def_cfa_offset 32
    movq ptc_tls@gottpoff(%rip), %rcx
    movl $16, %eax
    xaddq %rax, %fs:(%rcx)
ptc_chk_iht:
    cmpq %fs:8(%rcx), %rax
    jae 1f
ptc_go_iht:
    movq %rax, %rcx
    rdtsc
    shlq $32, %rdx
    orq %rdx, %rax
    movq %rax, 8(%rcx)
    movq %r11, (%rcx)
    popq %rdx
    popq %rax
    popq %rcx
    .cfi_def_cfa_offset 8
    ret
    .cfi_def_cfa_offset 32
ptc_slow_iht:
1:  rdtsc
    shlq $32, %rdx
    orq %rdx, %rax
    movq %r11, %rdx
    jmp ptc_slow_common
    .cfi_endproc
    .size ptc_soft_handler_id_timed, .-ptc_soft_handler_id_timed

    .globl ptc_soft_handler_id
    .hidden ptc_soft_handler_id
    .type ptc_soft_handler_id,@function
    .p2align 5
ptc_soft_handler_id:
    .cfi_startproc
    pushq %rcx
    pushq %rax
    .cfi_def_cfa_offset 24
    movq ptc_tls@gottpoff(%rip), %rcx
    movl $8, %eax
    xaddq %rax, %fs:(%rcx)
ptc_chk_ih:
    cmpq %fs:8(%rcx), %rax
    jae 1f
ptc_go_ih:
    movq %r11, (%rax)
    popq %rax
    popq %rcx
    .cfi_def_cfa_offset 8
    ret
    .cfi_def_cfa_offset 24
ptc_slow_ih:
1:  pushq %rdx
    .cfi_def_cfa_offset 32
    xorl %eax, %eax
    movq %r11, %rdx
    jmp ptc_slow_common
    .cfi_endproc
    .size ptc_soft_handler_id, .-ptc_soft_handler_id

/* Templates of the fast id handlers for units whose call sites clobber %r10 and %r11
 * (PTCALL_MAP_F_SCRATCH_R10). They are never run here: soft_fastpath.c copies one into a page
 * of its own and writes the %fs offsets of ptc_tls.pos / ptc_tls.end into the displacements
 * (the *_pos / *_end labels follow the instruction whose last 4 bytes they are) and the slow
 * path's address into the trailing quad. With the offsets as immediates and two scratch
 * registers the untimed handler touches no stack and loads nothing but the buffer window.
 * Everything in a template is position-independent within the template. */
    .section .rodata
    .globl ptc_tpl_id, ptc_tpl_id_pos, ptc_tpl_id_end, ptc_tpl_id_slow, ptc_tpl_id_size
    .hidden ptc_tpl_id, ptc_tpl_id_pos, ptc_tpl_id_end, ptc_tpl_id_slow, ptc_tpl_id_size
    .globl ptc_tpl_id_go, ptc_tpl_id_nogo
    .hidden ptc_tpl_id_go, ptc_tpl_id_nogo
    .p2align 5
ptc_tpl_id:
    movl $8, %r10d
    xaddq %r10, %fs:0x7ffffff0
ptc_tpl_id_pos:
    cmpq %fs:0x7ffffff0, %r10
ptc_tpl_id_end:
    jae 1f
ptc_tpl_id_go:
    movq %r11, (%r10)
    ret
ptc_tpl_id_nogo:
1:  jmp *ptc_tpl_id_slow(%rip)
    .p2align 3
ptc_tpl_id_slow:
    .quad 0
ptc_tpl_id_size:
    .quad ptc_tpl_id_size - ptc_tpl_id

    .globl ptc_tpl_idt, ptc_tpl_idt_pos, ptc_tpl_idt_end, ptc_tpl_idt_slow, ptc_tpl_idt_size
    .hidden ptc_tpl_idt, ptc_tpl_idt_pos, ptc_tpl_idt_end, ptc_tpl_idt_slow, ptc_tpl_idt_size
    .globl ptc_tpl_idt_go, ptc_tpl_idt_nogo
    .hidden ptc_tpl_idt_go, ptc_tpl_idt_nogo
    .p2align 5
ptc_tpl_idt:
    pushq %rax
    pushq %rdx
    movl $16, %r10d
    xaddq %r10, %fs:0x7ffffff0
ptc_tpl_idt_pos:
    cmpq %fs:0x7ffffff0, %r10
ptc_tpl_idt_end:
    jae 1f
ptc_tpl_idt_go:
    rdtsc
    shlq $32, %rdx
    orq %rdx, %rax
    movq %rax, 8(%r10)
    movq %r11, (%r10)
    popq %rdx
    popq %rax
    ret
ptc_tpl_idt_nogo:
1:  popq %rdx
    popq %rax
    jmp *ptc_tpl_idt_slow(%rip)
    .p2align 3
ptc_tpl_idt_slow:
    .quad 0
ptc_tpl_idt_size:
    .quad ptc_tpl_idt_size - ptc_tpl_idt

/* Template of a call-site trampoline (untimed, PTCALL_MAP_F_SCRATCH_R10 units; soft_tramp.c).
 * An armed sled is `jmp tramp` and the trampoline jumps back behind the sled: no call, no
 * return, no stub, and the record is an immediate. The reservation is a plain load, compare,
 * store rather than an xadd (about 0.9 ns less per event here, docs/runtime.md): a signal
 * between ptc_tpl_site and ptc_tpl_site_commit (inclusive) would split it, so the runtime's
 * signal wrapper moves an interrupted trampoline back to its start (tramp_restart), and the
 * record store before the commit is simply redone. Patched per copy: the %fs offsets (two of
 * pos, one of end), the record (twice), the rel32 of the two jumps back and of the slow-path
 * slot. The slow path calls ptc_fast_slow_id with the record in %r11, as a generated id
 * handler's would, and comes back here to jump back. */
    .section .rodata
    .globl ptc_tpl_site, ptc_tpl_site_pos, ptc_tpl_site_end, ptc_tpl_site_rec
    .globl ptc_tpl_site_commit, ptc_tpl_site_pos2, ptc_tpl_site_back, ptc_tpl_site_rec2
    .globl ptc_tpl_site_slot, ptc_tpl_site_back2, ptc_tpl_site_size
    .hidden ptc_tpl_site, ptc_tpl_site_pos, ptc_tpl_site_end, ptc_tpl_site_rec
    .hidden ptc_tpl_site_commit, ptc_tpl_site_pos2, ptc_tpl_site_back, ptc_tpl_site_rec2
    .hidden ptc_tpl_site_slot, ptc_tpl_site_back2, ptc_tpl_site_size
    .p2align 6
ptc_tpl_site:
    movq %fs:0x7ffffff0, %r10
ptc_tpl_site_pos:
    cmpq %fs:0x7ffffff0, %r10
ptc_tpl_site_end:
    jae 1f
    movq $0x7ffffff0, (%r10)
ptc_tpl_site_rec:
    addq $8, %r10
ptc_tpl_site_commit:
    movq %r10, %fs:0x7ffffff0
ptc_tpl_site_pos2:
    .byte 0xe9                 /* jmp rel32: behind the sled */
    .long 0
ptc_tpl_site_back:
1:  movl $0x7ffffff0, %r11d
ptc_tpl_site_rec2:
    .byte 0xff, 0x15           /* call *rel32(%rip): the slow-path slot */
    .long 0
ptc_tpl_site_slot:
    .byte 0xe9
    .long 0
ptc_tpl_site_back2:
    .p2align 3
ptc_tpl_site_size:
    .quad ptc_tpl_site_back2 - ptc_tpl_site

/* Slow-path entries of the generated handlers: (%rsp) is the return address into the
 * instrumented function, %r11 the record, every other register (but %r10) the caller's.
 * Build ptc_slow_common's frame. */
    .text
    .globl ptc_fast_slow_id, ptc_fast_slow_idt
    .hidden ptc_fast_slow_id, ptc_fast_slow_idt
    .p2align 4
    .type ptc_fast_slow_id,@function
ptc_fast_slow_id:
    .cfi_startproc
    pushq %rcx
    pushq %rax
    pushq %rdx
    .cfi_def_cfa_offset 32
    xorl %eax, %eax
    movq %r11, %rdx
    jmp ptc_slow_common
    .cfi_endproc
    .size ptc_fast_slow_id, .-ptc_fast_slow_id

    .p2align 4
    .type ptc_fast_slow_idt,@function
ptc_fast_slow_idt:
    .cfi_startproc
    pushq %rcx
    pushq %rax
    pushq %rdx
    .cfi_def_cfa_offset 32
    rdtsc
    shlq $32, %rdx
    orq %rdx, %rax
    movq %r11, %rdx
    jmp ptc_slow_common
    .cfi_endproc
    .size ptc_fast_slow_idt, .-ptc_fast_slow_idt

/* Counting mode (soft_counts.c): an entry stub `movl $(index << 4 | 2), %r11d; jmp *slot`
 * lands here, with the return address into the instrumented function on the stack. One
 * increment of the function's counter (not locked: concurrent threads may lose an increment,
 * as clang's -fprofile-instr-generate counters do; ptc_count_handler_atomic below is the
 * locked one, PTCALL_COUNT_ATOMIC=1), no other register or the stack's
 * alignment touched but %rax, saved, and the flags. */
    .text
    .globl ptc_count_handler
    .hidden ptc_count_handler
    .p2align 4
    .type ptc_count_handler,@function
ptc_count_handler:
    .cfi_startproc
    pushq %rax
    .cfi_def_cfa_offset 16
    movq ptc_counters(%rip), %rax
    shrl $4, %r11d
    incq (%rax,%r11,8)
    popq %rax
    .cfi_def_cfa_offset 8
    ret
    .cfi_endproc
    .size ptc_count_handler, .-ptc_count_handler

/* The same with a locked increment (PTCALL_COUNT_ATOMIC=1): threads calling one function at
 * once lose no call, at the cost of a locked read-modify-write per call. */
    .globl ptc_count_handler_atomic
    .hidden ptc_count_handler_atomic
    .p2align 4
    .type ptc_count_handler_atomic,@function
ptc_count_handler_atomic:
    .cfi_startproc
    pushq %rax
    .cfi_def_cfa_offset 16
    movq ptc_counters(%rip), %rax
    shrl $4, %r11d
    lock incq (%rax,%r11,8)
    popq %rax
    .cfi_def_cfa_offset 8
    ret
    .cfi_endproc
    .size ptc_count_handler_atomic, .-ptc_count_handler_atomic
    .section .note.GNU-stack,"",@progbits

/* record --trigger (soft_trigger.c): the watched function's stubs jump here through a slot of
 * their own, with the record in %r11 as for an id stub. Always the slow path, the record
 * marked (bit 63, RECORD_TRIGGER_BIT), so that ptc_soft_slow stores it and then checks the
 * call: only the watched function pays the slow path. */
    .text
    .globl ptc_trigger_handler
    .hidden ptc_trigger_handler
    .type ptc_trigger_handler,@function
    .p2align 5
ptc_trigger_handler:
    .cfi_startproc
    pushq %rcx
    pushq %rax
    pushq %rdx
    .cfi_def_cfa_offset 32
    rdtsc
    shlq $32, %rdx
    orq %rdx, %rax
    movq %r11, %rdx
    btsq $63, %rdx
    jmp ptc_slow_common
    .cfi_endproc
    .size ptc_trigger_handler, .-ptc_trigger_handler

/* The ticker clock (PTCALL_CLOCK=ticker, soft_ticker.c): as the timed handlers, but the time
 * is a plain load of ptc_clock, which the ticker thread sets to the TSC every period, instead
 * of rdtsc (about 9.6 ns on this VM). The slow paths hand ptc_soft_slow the same word. */
    .hidden ptc_clock
    .globl ptc_chk_hk, ptc_go_hk, ptc_slow_hk, ptc_chk_ihk, ptc_go_ihk, ptc_slow_ihk
    .hidden ptc_chk_hk, ptc_go_hk, ptc_slow_hk, ptc_chk_ihk, ptc_go_ihk, ptc_slow_ihk

    .text
    .globl ptc_soft_handler_ticker
    .hidden ptc_soft_handler_ticker
    .type ptc_soft_handler_ticker,@function
    .p2align 5
ptc_soft_handler_ticker:
    .cfi_startproc
    pushq %rcx
    pushq %rax
    .cfi_def_cfa_offset 24
    movq ptc_tls@gottpoff(%rip), %rcx
    movl $16, %eax
    xaddq %rax, %fs:(%rcx)
ptc_chk_hk:
    cmpq %fs:8(%rcx), %rax
    jae 1f
ptc_go_hk:
    movq ptc_clock(%rip), %rcx
    movq %rcx, 8(%rax)
    movq 16(%rsp), %rcx
    movq %rcx, (%rax)
    popq %rax
    popq %rcx
    .cfi_def_cfa_offset 8
    ret
    .cfi_def_cfa_offset 24
ptc_slow_hk:
1:  pushq %rdx
    .cfi_def_cfa_offset 32
    movq ptc_clock(%rip), %rax
    movq 24(%rsp), %rdx
    jmp ptc_slow_common
    .cfi_endproc
    .size ptc_soft_handler_ticker, .-ptc_soft_handler_ticker

    .globl ptc_soft_handler_id_ticker
    .hidden ptc_soft_handler_id_ticker
    .type ptc_soft_handler_id_ticker,@function
    .p2align 5
ptc_soft_handler_id_ticker:
    .cfi_startproc
    pushq %rcx
    pushq %rax
    .cfi_def_cfa_offset 24
    movq ptc_tls@gottpoff(%rip), %rcx
    movl $16, %eax
    xaddq %rax, %fs:(%rcx)
ptc_chk_ihk:
    cmpq %fs:8(%rcx), %rax
    jae 1f
ptc_go_ihk:
    movq ptc_clock(%rip), %rcx
    movq %rcx, 8(%rax)
    movq %r11, (%rax)
    popq %rax
    popq %rcx
    .cfi_def_cfa_offset 8
    ret
    .cfi_def_cfa_offset 24
ptc_slow_ihk:
1:  pushq %rdx
    .cfi_def_cfa_offset 32
    movq ptc_clock(%rip), %rax
    movq %r11, %rdx
    jmp ptc_slow_common
    .cfi_endproc
    .size ptc_soft_handler_id_ticker, .-ptc_soft_handler_id_ticker

/* Template of the fast id handler with the ticker clock (soft_fastpath.c): the copy lives in
 * a page anywhere, so the clock word's absolute address is patched into a movabs (the 8
 * bytes before ptc_tpl_idk_clk). %rax is the only form of movabs from memory, hence its
 * save. */
    .section .rodata
    .globl ptc_tpl_idk, ptc_tpl_idk_pos, ptc_tpl_idk_end, ptc_tpl_idk_slow, ptc_tpl_idk_size
    .hidden ptc_tpl_idk, ptc_tpl_idk_pos, ptc_tpl_idk_end, ptc_tpl_idk_slow, ptc_tpl_idk_size
    .globl ptc_tpl_idk_go, ptc_tpl_idk_nogo, ptc_tpl_idk_clk
    .hidden ptc_tpl_idk_go, ptc_tpl_idk_nogo, ptc_tpl_idk_clk
    .p2align 5
ptc_tpl_idk:
    movl $16, %r10d
    xaddq %r10, %fs:0x7ffffff0
ptc_tpl_idk_pos:
    cmpq %fs:0x7ffffff0, %r10
ptc_tpl_idk_end:
    jae 1f
ptc_tpl_idk_go:
    pushq %rax
    movabsq 0x7ffffffffffffff0, %rax
ptc_tpl_idk_clk:
    movq %rax, 8(%r10)
    popq %rax
    movq %r11, (%r10)
    ret
ptc_tpl_idk_nogo:
1:  jmp *ptc_tpl_idk_slow(%rip)
    .p2align 3
ptc_tpl_idk_slow:
    .quad 0
ptc_tpl_idk_size:
    .quad ptc_tpl_idk_size - ptc_tpl_idk

    .text
    .globl ptc_fast_slow_idk
    .hidden ptc_fast_slow_idk
    .p2align 4
    .type ptc_fast_slow_idk,@function
ptc_fast_slow_idk:
    .cfi_startproc
    pushq %rcx
    pushq %rax
    pushq %rdx
    .cfi_def_cfa_offset 32
    movq ptc_clock(%rip), %rax
    movq %r11, %rdx
    jmp ptc_slow_common
    .cfi_endproc
    .size ptc_fast_slow_idk, .-ptc_fast_slow_idk
    .section .note.GNU-stack,"",@progbits
