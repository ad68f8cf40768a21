; Exit sleds right before a plain `ret` move behind it in the code generator (RetSleds.cpp):
; the `ret` is the disarmed sled, 4 int3 bytes follow for the rel32 of the armed `jmp stub`,
; and the ptcall_sites entry names the ret with bit 0 of the stub set. Exits before a tail
; call, under a calling convention that keeps r10/r11, or with return hardening stay nop
; sleds; so does everything when PTCALL_RET_SLEDS=0 or without the plugin in llc.
; RUN: %opt-ptcall -passes=ptcall %s -o %t.bc
; RUN: %llc-ptcall -O2 %t.bc -o - | FileCheck %s
; RUN: env PTCALL_RET_SLEDS=0 %llc-ptcall -O2 %t.bc -o - | FileCheck %s --check-prefix=OFF
; RUN: llc -O2 %t.bc -o - | FileCheck %s --check-prefix=OFF
; RUN: %llc-ptcall -O0 %t.bc -o - | FileCheck %s --check-prefix=O0
; RUN: %llc-ptcall -O2 -filetype=obj %t.bc -o %t.o
; RUN: llvm-objdump -d --no-show-raw-insn %t.o | FileCheck %s --check-prefix=OBJ
; RUN: env PTCALL_RET_SLEDS=maybe not %opt-ptcall -passes=ptcall %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADENV
; BADENV: ptcall: PTCALL_RET_SLEDS must be 0 or 1, not 'maybe'

target triple = "x86_64-unknown-linux-gnu"

; CHECK-LABEL: two_returns:
; CHECK: retq
; CHECK-NEXT: #APP
; CHECK: .Lptcall_ret[[A:[0-9_]+]]:
; CHECK-COUNT-4: .byte 204
; CHECK-NEXT: .section ptcall_sites,"ao",@progbits,.Lptcall_ret[[A]]
; CHECK: .long (.Lptcall_ret[[A]]-1)-.Ltmp
; CHECK: .long (__ptcall_stub.0.exit.{{[01]}}-.Ltmp{{[0-9]+}})+1
; CHECK: retq
; CHECK-NEXT: #APP
; CHECK: .Lptcall_ret
; CHECK-LABEL: .Lfunc_end0:
; OFF-LABEL: two_returns:
; OFF-NOT: .Lptcall_ret
; OFF: .Lptcall_sled
; OFF: .Lptcall_sled
; OFF-NOT: .Lptcall_ret
; OFF: retq
; OFF-NOT: .Lptcall_ret
; O0-LABEL: two_returns:
; O0: retq
; O0-NEXT: #APP
; O0: .Lptcall_ret
; OBJ-LABEL: <two_returns>:
; OBJ: retq{{$}}
; OBJ-NEXT: int3
; OBJ-NEXT: int3
; OBJ-NEXT: int3
; OBJ-NEXT: int3
define i32 @two_returns(i32 %x) {
  %c = icmp sgt i32 %x, 3
  br i1 %c, label %a, label %b
a:
  %y = mul i32 %x, 7
  ret i32 %y
b:
  ret i32 0
}

declare i32 @callee(i32)

; The exit before a tail call stays a nop sled in front of the jump.
; CHECK-LABEL: tail:
; CHECK: .Lptcall_sled
; CHECK: .Lptcall_sled
; CHECK-NOT: .Lptcall_ret
; CHECK: jmp callee
define i32 @tail(i32 %x) {
  %r = tail call i32 @callee(i32 %x)
  ret i32 %r
}

; preserve_most keeps r10/r11 for the caller: the soft backend's handler may not clobber them
; behind the ret.
; CHECK-LABEL: keeps_regs:
; CHECK: .Lptcall_sled
; CHECK: .Lptcall_sled
; CHECK-NOT: .Lptcall_ret
; CHECK: .Lfunc_end2:
define preserve_mostcc i32 @keeps_regs(i32 %x) {
  %y = add i32 %x, 1
  ret i32 %y
}

; Load value injection hardening (-mlvi-cfi) rewrites the ret; -mharden-sls=ret (LLVM 15+)
; puts an int3 behind it.
; CHECK-LABEL: hardened:
; CHECK: .Lptcall_sled
; CHECK: .Lptcall_sled
; CHECK-NOT: .Lptcall_ret
; CHECK: .Lfunc_end3:
define i32 @hardened(i32 %x) #0 {
  %y = add i32 %x, 2
  ret i32 %y
}

attributes #0 = { "target-features"="+lvi-cfi" }
