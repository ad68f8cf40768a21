; Exit stubs and tail calls: a `tail` call that feeds the `ret` gets the exit stub before
; the call (so the backend can still emit `jmp callee`); `musttail` likewise; a tail call
; whose result is not returned, or a plain call, gets it right before the `ret`.
; RUN: %opt-ptcall '-passes=ptcall<ungated>' -S %s | FileCheck %s
; RUN: %opt-ptcall '-passes=ptcall<ungated>' -S %s | llc -O2 -o - | FileCheck %s --check-prefix=ASM
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

declare i32 @callee(i32)
declare i8* @callee_ptr(i32)
declare void @llvm.memcpy.p0i8.p0i8.i64(i8*, i8*, i64, i1)

define i32 @tail_feeds_ret(i32 %x) {
; CHECK-LABEL: define i32 @tail_feeds_ret(
; CHECK: @__ptcall_stub.0.entry.0
; CHECK-NEXT: @__ptcall_stub.0.exit.0
; CHECK-NEXT: %r = tail call i32 @callee(i32 %x)
; CHECK-NEXT: ret i32 %r
  %r = tail call i32 @callee(i32 %x)
  ret i32 %r
}
; ASM-LABEL: tail_feeds_ret:
; ASM: callq __ptcall_stub.0.entry.0
; ASM; ASM-NEXT: #NO_APP
; ASM-NEXT: #APP
; ASM-NEXT: callq __ptcall_stub.0.exit.0
; ASM; ASM-NEXT: #NO_APP
; ASM-NEXT: jmp callee@PLT # TAILCALL

define i32* @tail_through_bitcast(i32 %x) {
; CHECK-TYPED-LABEL: define i32* @tail_through_bitcast(
; CHECK-OPAQUE-LABEL: define ptr @tail_through_bitcast(
; CHECK: @__ptcall_stub.1.exit.0
; CHECK-TYPED-NEXT: %p = tail call i8* @callee_ptr(i32 %x)
; CHECK-OPAQUE-NEXT: %p = tail call ptr @callee_ptr(i32 %x)
; CHECK-TYPED-NEXT: %q = bitcast i8* %p to i32*
; CHECK-OPAQUE-NEXT: %q = bitcast ptr %p to ptr
; CHECK-TYPED-NEXT: ret i32* %q
; CHECK-OPAQUE-NEXT: ret ptr %q
  %p = tail call i8* @callee_ptr(i32 %x)
  %q = bitcast i8* %p to i32*
  ret i32* %q
}

define i32 @musttail_call(i32 %x) {
; CHECK-LABEL: define i32 @musttail_call(
; CHECK: @__ptcall_stub.2.exit.0
; CHECK-NEXT: %r = musttail call i32 @callee(i32 %x)
; CHECK-NEXT: ret i32 %r
  %r = musttail call i32 @callee(i32 %x)
  ret i32 %r
}

define void @tail_void(i8* %d, i8* %s) {
; CHECK-LABEL: define void @tail_void(
; CHECK: @__ptcall_stub.3.exit.0
; CHECK-NEXT: tail call void @llvm.memcpy
; CHECK-NEXT: ret void
  tail call void @llvm.memcpy.p0i8.p0i8.i64(i8* %d, i8* %s, i64 4096, i1 false)
  ret void
}

define i32 @tail_result_unused(i32 %x) {
; CHECK-LABEL: define i32 @tail_result_unused(
; CHECK: %r = tail call i32 @callee(i32 %x)
; CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.4.exit.0
; CHECK-NEXT: ret i32 0
  %r = tail call i32 @callee(i32 %x)
  ret i32 0
}

define i32 @not_tail(i32 %x) {
; CHECK-LABEL: define i32 @not_tail(
; CHECK: %r = call i32 @callee(i32 %x)
; CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.5.exit.0
; CHECK-NEXT: ret i32 %r
  %r = call i32 @callee(i32 %x)
  ret i32 %r
}
; ASM-LABEL: not_tail:
; ASM: callq callee
; ASM: callq __ptcall_stub.5.exit.0
; ASM: retq
