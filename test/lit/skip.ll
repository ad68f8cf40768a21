; What is never instrumented: declarations, naked functions, available_externally bodies,
; functions annotated "ptcall_no_instrument" (PTCALL_NO_INSTRUMENT), pre-split coroutines,
; and the pass's own stubs / constructor / destructor (running the pass twice is a no-op).
; RUN: %opt-ptcall '-passes=ptcall<ungated>' -S %s | FileCheck %s
; RUN: %opt-ptcall '-passes=ptcall<ungated>,ptcall<ungated>' -S %s | FileCheck %s
; RUN: %opt-ptcall '-passes=ptcall<ungated>' -S %s | FileCheck %s --check-prefix=MAP
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@.str = private unnamed_addr constant [21 x i8] c"ptcall_no_instrument\00", section "llvm.metadata"
@.str.other = private unnamed_addr constant [6 x i8] c"other\00", section "llvm.metadata"
@.file = private unnamed_addr constant [6 x i8] c"x.c\00\00\00", section "llvm.metadata"
@llvm.global.annotations = appending global [2 x { i8*, i8*, i8*, i32, i8* }] [
  { i8*, i8*, i8*, i32, i8* } { i8* bitcast (i32 ()* @annotated to i8*), i8* getelementptr inbounds ([21 x i8], [21 x i8]* @.str, i32 0, i32 0), i8* getelementptr inbounds ([6 x i8], [6 x i8]* @.file, i32 0, i32 0), i32 1, i8* null },
  { i8*, i8*, i8*, i32, i8* } { i8* bitcast (i32 ()* @other_annotation to i8*), i8* getelementptr inbounds ([6 x i8], [6 x i8]* @.str.other, i32 0, i32 0), i8* getelementptr inbounds ([6 x i8], [6 x i8]* @.file, i32 0, i32 0), i32 2, i8* null }
], section "llvm.metadata"

; MAP: @__ptcall_map = internal constant %ptcall.map <{ %ptcall.map_header { i32 1296258128, i16 8, i16 80, i32 {{[0-9]+}}, i32 82, i64 {{-?[0-9]+}}, i32 4, i32 2,
; MAP-SAME: c"\00{{.*}}\00instrumented\00other_annotation\00

declare i32 @declared()

; CHECK-LABEL: define i32 @instrumented()
; CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.0.entry.0
define i32 @instrumented() {
  ret i32 1
}

; CHECK-LABEL: define i32 @annotated()
; CHECK-NEXT: ret i32 2
define i32 @annotated() {
  ret i32 2
}

; another annotation does not opt out
; CHECK-LABEL: define i32 @other_annotation()
; CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.1.entry.0
define i32 @other_annotation() {
  ret i32 3
}

; CHECK-LABEL: define void @naked()
; CHECK-NEXT: call void asm sideeffect "ret", ""()
; CHECK-NEXT: unreachable
define void @naked() naked {
  call void asm sideeffect "ret", ""()
  unreachable
}

; CHECK-LABEL: define available_externally i32 @avail()
; CHECK-NEXT: ret i32 4
define available_externally i32 @avail() {
  ret i32 4
}

; CHECK-TYPED-LABEL: define i8* @coro()
; CHECK-OPAQUE-LABEL: define ptr @coro()
; CHECK-TYPED-NEXT: ret i8* null
; CHECK-OPAQUE-NEXT: ret ptr null
define i8* @coro() "coroutine.presplit"="0" {
  ret i8* null
}

; CHECK: define internal void @__ptcall_stub.0.entry.0()
; CHECK-NEXT: call void asm sideeffect "ret # ptcall stub
; CHECK: define internal void @__ptcall_module_ctor()
; CHECK-NOT: __ptcall_stub
; CHECK: ret void
; CHECK: define internal void @__ptcall_module_dtor()
; CHECK-NOT: __ptcall_stub
; CHECK: ret void
; CHECK-NOT: __ptcall_stub.2
