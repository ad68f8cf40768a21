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
/* The loop that drives variant v: n calls of tiny<v> (rdi = n) */
.macro DRIVER v
    .globl loop\v
loop\v:
    xorl %eax,%eax
1:  call tiny\v
    decq %rdi
    jnz 1b
    ret
.endm
/* tiny<v> reaching its two events by `call`: stubs e and x */
.macro TINY_CALL v, e, x
    .p2align 5
tiny\v:
    call \e
    addl $1, %eax
    call \x
    ret
.endm
/* tiny<v> reaching its two events by `jmp` to tramp<v>_e / tramp<v>_x, which jump back */
.macro TINY_JMP v
    .p2align 5
tiny\v:
    jmp tramp\v\()_e
back\v\()_e:
    addl $1, %eax
    jmp tramp\v\()_x
back\v\()_x:
    ret
.endm
/* an id stub: the record in %r11, then the handler through slot */
.macro ID_STUB name, rec, slot
    .p2align 4
\name: movl $\rec, %r11d
    jmp *\slot(%rip)
.endm
/* load/compare of the buffer window, then the record's store and the committing store */
.macro LAS_RESERVE
    movq %fs:tpos@tpoff, %r10
    cmpq %fs:tend@tpoff, %r10
    jae 9f
.endm
.macro LAS_COMMIT
    addq $8, %r10
    movq %r10, %fs:tpos@tpoff
.endm
/* a trampoline of variant v for event k (e or x) with record rec: how = xadd, las or rseq */
.macro TRAMP v, k, rec, how
    .p2align 5
tramp\v\()_\k:
.ifc \how,xadd
    movl $8, %r10d
    xaddq %r10, %fs:tpos@tpoff
    cmpq %fs:tend@tpoff, %r10
    jae 9f
    movq $\rec, (%r10)
.else
.ifc \how,rseq
    leaq descF(%rip), %r10
    movq %r10, %fs:rseqcs@tpoff
.endif
    LAS_RESERVE
    movq $\rec, (%r10)
    LAS_COMMIT
.endif
    jmp back\v\()_\k
9: ud2
.endm

/* A: current generated path */
    ID_STUB stubA_e, 0x12, slotA
    ID_STUB stubA_x, 0x13, slotA
    .p2align 5
handlerA:
    movl $8, %r10d
    xaddq %r10, %fs:tpos@tpoff
    cmpq %fs:tend@tpoff, %r10
    jae 9f
    movq %r11, (%r10)
    ret
9:  ud2
    TINY_CALL A, stubA_e, stubA_x
    DRIVER A
/* B: jmp trampolines */
    TRAMP B, e, 0x12, xadd
    TRAMP B, x, 0x13, xadd
    TINY_JMP B
    DRIVER B
/* B2: jmp trampolines, load/add/store (no xadd) */
    TRAMP C, e, 0x12, las
    TRAMP C, x, 0x13, las
    TINY_JMP C
    DRIVER C
/* D: bare call stub; ret */
    .p2align 4
stubD: ret
    TINY_CALL D, stubD, stubD
    DRIVER D
/* E: nops (untraced) */
    .p2align 5
tinyE:
    nopl 0(%rax,%rax,1)
    addl $1, %eax
    nopl 0(%rax,%rax,1)
    ret
    DRIVER E
/* F: C plus the rseq-style store */
    TRAMP F, e, 0x12, rseq
    TRAMP F, x, 0x13, rseq
    TINY_JMP F
    DRIVER F
/* A2: call-based with load/add/store */
    ID_STUB stubG_e, 0x12, slotG
    ID_STUB stubG_x, 0x13, slotG
    .p2align 5
handlerG:
    LAS_RESERVE
    movq %r11, (%r10)
    LAS_COMMIT
    ret
9:  ud2
    TINY_CALL G, stubG_e, stubG_x
    DRIVER G
    .data
slotG: .quad handlerG
descF: .quad 0,0,0,0
slotA: .quad handlerA
    .section .note.GNU-stack,"",@progbits
