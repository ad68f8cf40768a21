; PTCALL_STUB_F_LEAF (256) marks the entry and exit records of a function that calls
; nothing: intrinsics that stay inline do not count as calls; real calls, memcpy and
; friends (they may reach a program's own instrumented memcpy) and inline asm do.
; Without exit stubs no record is marked.
; RUN: %opt-ptcall -passes=ptcall -S %s | FileCheck %s
; RUN: %opt-ptcall -passes='ptcall<no-exits>' -S %s | FileCheck %s --check-prefix=NOEXITS
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"
source_filename = "leaf.c"

declare void @ext()
declare void @llvm.memcpy.p0i8.p0i8.i64(i8*, i8*, i64, i1)
declare void @llvm.lifetime.start.p0i8(i64, i8*)
declare void @llvm.lifetime.end.p0i8(i64, i8*)
declare i32 @llvm.ctpop.i32(i32)

; function 0: a leaf with intrinsics that never become calls
define i32 @leaf(i32 %x) {
  %a = alloca i32
  %p = bitcast i32* %a to i8*
  call void @llvm.lifetime.start.p0i8(i64 4, i8* %p)
  store i32 %x, i32* %a
  %v = load i32, i32* %a
  call void @llvm.lifetime.end.p0i8(i64 4, i8* %p)
  %c = call i32 @llvm.ctpop.i32(i32 %v)
  ret i32 %c
}

; function 1: calls another function
define void @caller() {
  call void @ext()
  ret void
}

; function 2: memcpy
define void @copies(i8* %d, i8* %s) {
  call void @llvm.memcpy.p0i8.p0i8.i64(i8* %d, i8* %s, i64 64, i1 false)
  ret void
}

; function 3: inline asm of its own
define void @asm() {
  call void asm sideeffect "nop", ""()
  ret void
}

; CHECK: [8 x %ptcall.map_stub] [
; CHECK-SAME: @__ptcall_stub.0.entry.0 {{[^}]*}}, i32 0, i16 256, i16 0 }
; CHECK-SAME: @__ptcall_stub.0.exit.0 {{[^}]*}}, i32 0, i16 257, i16 0 }
; CHECK-SAME: @__ptcall_stub.1.entry.0 {{[^}]*}}, i32 1, i16 0, i16 0 }
; CHECK-SAME: @__ptcall_stub.1.exit.0 {{[^}]*}}, i32 1, i16 1, i16 0 }
; CHECK-SAME: @__ptcall_stub.2.entry.0 {{[^}]*}}, i32 2, i16 0, i16 0 }
; CHECK-SAME: @__ptcall_stub.2.exit.0 {{[^}]*}}, i32 2, i16 1, i16 0 }
; CHECK-SAME: @__ptcall_stub.3.entry.0 {{[^}]*}}, i32 3, i16 0, i16 0 }
; CHECK-SAME: @__ptcall_stub.3.exit.0 {{[^}]*}}, i32 3, i16 1, i16 0 }]

; NOEXITS: [4 x %ptcall.map_stub] [
; NOEXITS-SAME: @__ptcall_stub.0.entry.0 {{[^}]*}}, i32 0, i16 0, i16 0 }
