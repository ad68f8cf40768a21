; A LANDING stub right after every call to a returns_twice function (setjmp): when
; longjmp lands there, the function's frame is on top of the stack again.
; RUN: %opt-ptcall '-passes=ptcall<ungated>' -S %s | FileCheck %s
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

%struct.jmp_buf = type { [8 x i64], i32, [16 x i64] }
declare i32 @_setjmp(%struct.jmp_buf*) returns_twice
declare i32 @plain(%struct.jmp_buf*)

define i32 @f(%struct.jmp_buf* %b) {
; CHECK-LABEL: define i32 @f(
; CHECK: call void asm sideeffect {{.*}}@__ptcall_stub.0.entry.0
; CHECK-TYPED-NEXT: %r = call i32 @_setjmp(%struct.jmp_buf* %b)
; CHECK-OPAQUE-NEXT: %r = call i32 @_setjmp(ptr %b)
; CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.0.landing.0
; CHECK-TYPED-NEXT: %s = call i32 @plain(%struct.jmp_buf* %b) #[[RT:[0-9]+]]
; CHECK-OPAQUE-NEXT: %s = call i32 @plain(ptr %b) #[[RT:[0-9]+]]
; CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.0.landing.1
; CHECK-TYPED-NEXT: %t = call i32 @plain(%struct.jmp_buf* %b)
; CHECK-OPAQUE-NEXT: %t = call i32 @plain(ptr %b)
; CHECK-NEXT: %sum = add i32 %r, %s
; CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.0.exit.0
; CHECK-NEXT: ret i32 %sum
  %r = call i32 @_setjmp(%struct.jmp_buf* %b)
  %s = call i32 @plain(%struct.jmp_buf* %b) returns_twice
  %t = call i32 @plain(%struct.jmp_buf* %b)
  %sum = add i32 %r, %s
  ret i32 %sum
}

; An invoked returns_twice call: the LANDING stub goes to the start of the normal
; successor (the edge is split when the successor has other predecessors).
declare i32 @__gxx_personality_v0(...)
define i32 @g(%struct.jmp_buf* %b, i1 %c) personality i8* bitcast (i32 (...)* @__gxx_personality_v0 to i8*) {
; CHECK-LABEL: define i32 @g(
; CHECK-NEXT: entry:
; CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.1.entry.0
; CHECK-NEXT: br i1 %c, label %inv, label %join
; CHECK: inv:
; CHECK-TYPED-NEXT: %r = invoke i32 @_setjmp(%struct.jmp_buf* %b)
; CHECK-OPAQUE-NEXT: %r = invoke i32 @_setjmp(ptr %b)
; CHECK-NEXT: to label %[[SPLIT:.*]] unwind label %lpad
; CHECK: [[SPLIT]]:
; CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.1.landing.0
; CHECK-NEXT: br label %join
; CHECK: join:
; CHECK-NEXT: %v = phi i32 [ 0, %entry ], [ %r, %[[SPLIT]] ]
entry:
  br i1 %c, label %inv, label %join
inv:
  %r = invoke i32 @_setjmp(%struct.jmp_buf* %b) to label %join unwind label %lpad
join:
  %v = phi i32 [ 0, %entry ], [ %r, %inv ]
  ret i32 %v
lpad:
  %lp = landingpad { i8*, i32 } cleanup
  resume { i8*, i32 } %lp
}

; CHECK: attributes #[[RT]] = { returns_twice }
