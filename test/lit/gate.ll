; Gated call sites (the default): each stub call sits in its own cold block, reached when
; the unit's slot (volatile load, never hoisted or merged) is non-zero; the tail call that
; feeds `ret` stays right before it; llc moves the calls out of line so the untraced path
; is `cmpq $0, slot(%rip); jne` (not taken).
; RUN: %opt-ptcall -passes=ptcall -S %s | FileCheck %s
; RUN: %opt-ptcall -passes=ptcall %s | llc -O2 -o - | FileCheck %s --check-prefix=ASM
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

declare i32 @callee(i32)

; CHECK: %ptcall.map_header { i32 1296258128, i16 2, i16 64, i32 {{[0-9]+}}, i32 26,
; CHECK-LABEL: define i32 @f(i32 %x)
; CHECK-NEXT: entry:
; CHECK-NEXT: %slot = alloca i32
; CHECK-NEXT: %ptcall.armed = load volatile i64, i64* @__ptcall_soft_slot, align 8
; CHECK-NEXT: %ptcall.gate = icmp ne i64 %ptcall.armed, 0
; CHECK-NEXT: br i1 %ptcall.gate, label %[[E:.*]], label %[[EC:.*]], !prof ![[COLD:[0-9]+]]
; CHECK: [[E]]:
; CHECK-NEXT: call void asm sideeffect "call ${0:P}", "i,~{dirflag},~{fpsr},~{flags},~{r11}"(void ()* @__ptcall_stub.0.entry.0)
; CHECK-NEXT: br label %[[EC]]
; CHECK: [[EC]]:
; CHECK-NEXT: %y = add i32 %x, 1
; CHECK-NEXT: %ptcall.armed1 = load volatile i64, i64* @__ptcall_soft_slot, align 8
; CHECK-NEXT: %ptcall.gate2 = icmp ne i64 %ptcall.armed1, 0
; CHECK-NEXT: br i1 %ptcall.gate2, label %[[X:.*]], label %[[XC:.*]], !prof ![[COLD]]
; CHECK: [[X]]:
; CHECK-NEXT: call void asm sideeffect "call ${0:P}", "i,~{dirflag},~{fpsr},~{flags},~{r11}"(void ()* @__ptcall_stub.0.exit.0)
; CHECK-NEXT: br label %[[XC]]
; CHECK: [[XC]]:
; CHECK-NEXT: %r = tail call i32 @callee(i32 %y)
; CHECK-NEXT: ret i32 %r
; CHECK: ![[COLD]] = !{!"branch_weights", i32 1, i32 1048576}
define i32 @f(i32 %x) {
entry:
  %slot = alloca i32
  %y = add i32 %x, 1
  %r = tail call i32 @callee(i32 %y)
  ret i32 %r
}

; ASM-LABEL: f:
; ASM: cmpq $0, __ptcall_soft_slot(%rip)
; ASM-NEXT: jne .LBB0_[[E:[0-9]+]]
; ASM: cmpq $0, __ptcall_soft_slot(%rip)
; ASM-NEXT: jne .LBB0_[[X:[0-9]+]]
; ASM: jmp callee@PLT # TAILCALL
; ASM: .LBB0_[[E]]:
; ASM: callq __ptcall_stub.0.entry.0
; ASM: .LBB0_[[X]]:
; ASM: callq __ptcall_stub.0.exit.0
