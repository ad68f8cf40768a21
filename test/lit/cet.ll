; Under CET (module flag cf-protection-branch, clang -fcf-protection) each stub is
; endbr64; ret, padded to 16 bytes; the stubs are nocf_check so the backend adds no second
; endbr64; the map says PTCALL_MAP_F_CET.
; RUN: %opt-ptcall '-passes=ptcall<ungated>' -S %s | FileCheck %s
; RUN: %opt-ptcall '-passes=ptcall<ungated>' %s | llc -filetype=obj -o %t.o
; RUN: llvm-objdump -d -j ptcall_stubs %t.o | FileCheck %s --check-prefix=STUBS
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

define void @f() {
  ret void
}

; CHECK: %ptcall.map_header { i32 1296258128, i16 8, i16 80, i32 {{[0-9]+}}, i32 86,
; CHECK: define internal void @__ptcall_stub.0.entry.0() #[[STUB:[0-9]+]] section "ptcall_stubs" align 16 {
; CHECK-NEXT: call void asm sideeffect "endbr64\0A\09ret # ptcall stub 0x{{[0-9a-f]+}} 0\0A\09.fill 11, 1, 0xcc"
; CHECK: attributes #[[STUB]] = { naked nocf_check noinline nounwind "ptcall-stub" }

; STUBS: <__ptcall_stub.0.entry.0>:
; STUBS-NEXT: 0: f3 0f 1e fa endbr64
; STUBS-NEXT: 4: c3 retq
; STUBS-NEXT: 5: cc int3
; STUBS: f: cc int3
; STUBS-EMPTY:
; STUBS-NEXT: <__ptcall_stub.0.exit.0>:
; STUBS-NEXT: 10: f3 0f 1e fa endbr64
; STUBS-NEXT: 14: c3 retq

!llvm.module.flags = !{!0}
!0 = !{i32 4, !"cf-protection-branch", i32 1}
