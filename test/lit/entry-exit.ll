; Entry stub after the leading allocas, one exit stub per return (sites 0, 1, ...), the
; function marked noredzone, memory attributes dropped; stub definitions.
; RUN: %opt-ptcall '-passes=ptcall<ungated>' -S %s | FileCheck %s
; RUN: %opt-ptcall '-passes=ptcall<ungated>' -S %s | FileCheck %s --check-prefix=UNGATED
; UNGATED: %ptcall.map_header { i32 1296258128, i16 8, i16 80, i32 {{[0-9]+}}, i32 82,
; UNGATED-LABEL: define i32 @two_returns(i32 %x)
; UNGATED-TYPED: call void asm sideeffect "call ${0:P}", "i,~{dirflag},~{fpsr},~{flags},~{r10},~{r11}"(void ()* @__ptcall_stub.0.entry.0)
; UNGATED-OPAQUE: call void asm sideeffect "call ${0:P}", "i,~{dirflag},~{fpsr},~{flags},~{r10},~{r11}"(ptr @__ptcall_stub.0.entry.0)
; UNGATED-NOT: cmpq
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; CHECK-TYPED: @llvm.compiler.used = appending global [5 x i8*] [i8* bitcast (i64* @__ptcall_soft_slot to i8*), i8* bitcast (void ()* @__ptcall_stub.0.entry.0 to i8*), i8* bitcast (void ()* @__ptcall_stub.0.exit.0 to i8*), i8* bitcast (void ()* @__ptcall_stub.0.exit.1 to i8*), i8* bitcast (void ()* @__ptcall_stub.1.entry.0 to i8*)]
; CHECK-OPAQUE: @llvm.compiler.used = appending global [5 x ptr] [ptr @__ptcall_soft_slot, ptr @__ptcall_stub.0.entry.0, ptr @__ptcall_stub.0.exit.0, ptr @__ptcall_stub.0.exit.1, ptr @__ptcall_stub.1.entry.0]

define i32 @two_returns(i32 %x) readnone {
; CHECK-LABEL: define i32 @two_returns(i32 %x)
; CHECK-SAME: #[[ATTR:[0-9]+]]
; CHECK-NEXT: entry:
; CHECK-NEXT: %slot = alloca i32
; CHECK-TYPED-NEXT: call void asm sideeffect "call ${0:P}", "i,~{dirflag},~{fpsr},~{flags},~{r10},~{r11}"(void ()* @__ptcall_stub.0.entry.0) #[[CALLATTR:[0-9]+]]
; CHECK-OPAQUE-NEXT: call void asm sideeffect "call ${0:P}", "i,~{dirflag},~{fpsr},~{flags},~{r10},~{r11}"(ptr @__ptcall_stub.0.entry.0) #[[CALLATTR:[0-9]+]]
; CHECK-NEXT: %c = icmp sgt i32 %x, 0
entry:
  %slot = alloca i32
  %c = icmp sgt i32 %x, 0
  br i1 %c, label %pos, label %neg
; CHECK: pos:
; CHECK-TYPED-NEXT: call void asm sideeffect "call ${0:P}", "i,~{dirflag},~{fpsr},~{flags},~{r10},~{r11}"(void ()* @__ptcall_stub.0.exit.0)
; CHECK-OPAQUE-NEXT: call void asm sideeffect "call ${0:P}", "i,~{dirflag},~{fpsr},~{flags},~{r10},~{r11}"(ptr @__ptcall_stub.0.exit.0)
; CHECK-NEXT: ret i32 1
pos:
  ret i32 1
; CHECK: neg:
; CHECK-TYPED-NEXT: call void asm sideeffect "call ${0:P}", "i,~{dirflag},~{fpsr},~{flags},~{r10},~{r11}"(void ()* @__ptcall_stub.0.exit.1)
; CHECK-OPAQUE-NEXT: call void asm sideeffect "call ${0:P}", "i,~{dirflag},~{fpsr},~{flags},~{r10},~{r11}"(ptr @__ptcall_stub.0.exit.1)
; CHECK-NEXT: ret i32 0
neg:
  ret i32 0
}

; A function without a return (noreturn): entry stub only.
declare void @abort() noreturn
define void @no_return() {
; CHECK-LABEL: define void @no_return()
; CHECK-NEXT: call void asm sideeffect "call ${0:P}", {{.*}}@__ptcall_stub.1.entry.0
; CHECK-NEXT: call void @abort()
; CHECK-NEXT: unreachable
  call void @abort()
  unreachable
}

; Stubs: internal, naked, noinline, nounwind, section ptcall_stubs, align 16, a bare ret
; padded with int3 to 16 bytes, a distinct comment each.
; CHECK: define internal void @__ptcall_stub.0.entry.0() #[[STUB:[0-9]+]] section "ptcall_stubs" align 16 {
; CHECK-NEXT: call void asm sideeffect "ret # ptcall stub 0x[[HASH:[0-9a-f]+]] 0\0A\09.fill 15, 1, 0xcc", "~{dirflag},~{fpsr},~{flags}"()
; CHECK-NEXT: unreachable
; CHECK: define internal void @__ptcall_stub.0.exit.0() #[[STUB]] section "ptcall_stubs" align 16 {
; CHECK-NEXT: "ret # ptcall stub 0x[[HASH]] 1\0A\09.fill 15, 1, 0xcc"
; CHECK: define internal void @__ptcall_stub.0.exit.1() #[[STUB]] section "ptcall_stubs" align 16 {
; CHECK-NEXT: "ret # ptcall stub 0x[[HASH]] 2\0A\09.fill 15, 1, 0xcc"
; CHECK: define internal void @__ptcall_stub.1.entry.0() #[[STUB]] section "ptcall_stubs" align 16 {
; CHECK-NEXT: "ret # ptcall stub 0x[[HASH]] 3\0A\09.fill 15, 1, 0xcc"

; CHECK: attributes #[[ATTR]] = { noredzone }
; CHECK: attributes #[[STUB]] = { naked noinline nounwind "ptcall-stub" }
; CHECK: attributes #[[CALLATTR]] = { nounwind }
