/* The per-event cost of the soft backend's event paths, in isolation: a loop calling a tiny
 * function whose entry and exit each report an event (docs/benchmarks.md, "Soft tracing
 * without timestamps"). Built and run by hand:
 *   cc -O2 -no-pie bench/soft_path_cost.c bench/soft_path_cost.S -o /tmp/spc && /tmp/spc
 * A: `call stub`, the stub `movl $rec, %r11d; jmp *slot`, the generated id handler (xadd)
 * B: `jmp trampoline` with an xadd reservation, `jmp` back
 * C: `jmp trampoline` with a load/store reservation (what the runtime uses untimed)
 * D: bare `call stub; ret` (what a program pays under Intel PT)
 * E: 5-byte nops (untraced)
 * F: C plus one more TLS store per event (what a kernel rseq critical section would add)
 * G: A with a load/store reservation */
    .section .tbss,"awT",@nobits
    .globl tpos, tend
    .p2align 3
tpos: .zero 8
tend: .zero 8
rseqcs: .zero 8
    .text
/* A: current generated path */
    .p2align 4
stubA_e: movl $0x12, %r11d
    jmp *slotA(%rip)
    .p2align 4
stubA_x: movl $0x13, %r11d
    jmp *slotA(%rip)
    .p2align 5
handlerA:
    movl $8, %r10d
    xaddq %r10, %fs:tpos@tpoff
    cmpq %fs:tend@tpoff, %r10
    jae 9f
    movq %r11, (%r10)
    ret
9:  ud2
    .p2align 5
tinyA:
    call stubA_e
    addl $1, %eax
    call stubA_x
    ret
    .globl loopA
loopA: /* rdi = n */
    xorl %eax,%eax
1:  call tinyA
    decq %rdi
    jnz 1b
    ret
/* B: jmp trampolines */
    .p2align 5
trampB_e:
    movl $8, %r10d
    xaddq %r10, %fs:tpos@tpoff
    cmpq %fs:tend@tpoff, %r10
    jae 9f
    movq $0x12, (%r10)
    jmp backB_e
9: ud2
    .p2align 5
trampB_x:
    movl $8, %r10d
    xaddq %r10, %fs:tpos@tpoff
    cmpq %fs:tend@tpoff, %r10
    jae 9f
    movq $0x13, (%r10)
    jmp backB_x
9: ud2
    .p2align 5
tinyB:
    jmp trampB_e
backB_e:
    addl $1, %eax
    jmp trampB_x
backB_x:
    ret
    .globl loopB
loopB:
    xorl %eax,%eax
1:  call tinyB
    decq %rdi
    jnz 1b
    ret
/* B2: jmp trampolines, load/add/store (no xadd) */
    .p2align 5
trampC_e:
    movq %fs:tpos@tpoff, %r10
    cmpq %fs:tend@tpoff, %r10
    jae 9f
    movq $0x12, (%r10)
    addq $8, %r10
    movq %r10, %fs:tpos@tpoff
    jmp backC_e
9: ud2
    .p2align 5
trampC_x:
    movq %fs:tpos@tpoff, %r10
    cmpq %fs:tend@tpoff, %r10
    jae 9f
    movq $0x13, (%r10)
    addq $8, %r10
    movq %r10, %fs:tpos@tpoff
    jmp backC_x
9: ud2
    .p2align 5
tinyC:
    jmp trampC_e
backC_e:
    addl $1, %eax
    jmp trampC_x
backC_x:
    ret
    .globl loopC
loopC:
    xorl %eax,%eax
1:  call tinyC
    decq %rdi
    jnz 1b
    ret
/* D: bare call stub; ret */
    .p2align 4
stubD: ret
    .p2align 5
tinyD:
    call stubD
    addl $1, %eax
    call stubD
    ret
    .globl loopD
loopD:
    xorl %eax,%eax
1:  call tinyD
    decq %rdi
    jnz 1b
    ret
/* E: nops (untraced) */
    .p2align 5
tinyE:
    nopl 0(%rax,%rax,1)
    addl $1, %eax
    nopl 0(%rax,%rax,1)
    ret
    .globl loopE
loopE:
    xorl %eax,%eax
1:  call tinyE
    decq %rdi
    jnz 1b
    ret

    .p2align 5
trampF_e:
    leaq descF(%rip), %r10
    movq %r10, %fs:rseqcs@tpoff
    movq %fs:tpos@tpoff, %r10
    cmpq %fs:tend@tpoff, %r10
    jae 9f
    movq $0x12, (%r10)
    addq $8, %r10
    movq %r10, %fs:tpos@tpoff
    jmp backF_e
9: ud2
    .p2align 5
trampF_x:
    leaq descF(%rip), %r10
    movq %r10, %fs:rseqcs@tpoff
    movq %fs:tpos@tpoff, %r10
    cmpq %fs:tend@tpoff, %r10
    jae 9f
    movq $0x13, (%r10)
    addq $8, %r10
    movq %r10, %fs:tpos@tpoff
    jmp backF_x
9: ud2
    .p2align 5
tinyF:
    jmp trampF_e
backF_e:
    addl $1, %eax
    jmp trampF_x
backF_x:
    ret
    .globl loopF
loopF:
    xorl %eax,%eax
1:  call tinyF
    decq %rdi
    jnz 1b
    ret
/* A2: call-based with load/add/store */
    .p2align 4
stubG_e: movl $0x12, %r11d
    jmp *slotG(%rip)
    .p2align 4
stubG_x: movl $0x13, %r11d
    jmp *slotG(%rip)
    .p2align 5
handlerG:
    movq %fs:tpos@tpoff, %r10
    cmpq %fs:tend@tpoff, %r10
    jae 9f
    movq %r11, (%r10)
    addq $8, %r10
    movq %r10, %fs:tpos@tpoff
    ret
9:  ud2
    .p2align 5
tinyG:
    call stubG_e
    addl $1, %eax
    call stubG_x
    ret
    .globl loopG
loopG:
    xorl %eax,%eax
1:  call tinyG
    decq %rdi
    jnz 1b
    ret
    .data
slotG: .quad handlerG
descF: .quad 0,0,0,0
slotA: .quad handlerA
    .section .note.GNU-stack,"",@progbits
