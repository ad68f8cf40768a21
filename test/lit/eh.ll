; C++ EH: a LANDING stub right after each landingpad instruction, an UNWIND stub right
; before each resume; sites numbered per kind within the function.
; RUN: %opt-ptcall '-passes=ptcall<ungated>' -S %s | FileCheck %s
; RUN: %opt-ptcall '-passes=ptcall<ungated>' -S %s | FileCheck %s --check-prefix=MAP
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

declare void @may_throw(i32)
declare void @cleanup()
declare i32 @__gxx_personality_v0(...)

define void @two_pads(i32 %x) personality i8* bitcast (i32 (...)* @__gxx_personality_v0 to i8*) {
; CHECK-LABEL: define void @two_pads(
; CHECK-NEXT: entry:
; CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.0.entry.0
entry:
  invoke void @may_throw(i32 %x) to label %next unwind label %lpad1
next:
  invoke void @may_throw(i32 1) to label %done unwind label %lpad2
; CHECK: done:
; CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.0.exit.0
; CHECK-NEXT: ret void
done:
  ret void
; CHECK: lpad1:
; CHECK-TYPED-NEXT: %lp1 = landingpad { i8*, i32 }
; CHECK-OPAQUE-NEXT: %lp1 = landingpad { ptr, i32 }
; CHECK-NEXT: cleanup
; CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.0.landing.0
; CHECK-NEXT: call void @cleanup()
; CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.0.unwind.0
; CHECK-TYPED-NEXT: resume { i8*, i32 } %lp1
; CHECK-OPAQUE-NEXT: resume { ptr, i32 } %lp1
lpad1:
  %lp1 = landingpad { i8*, i32 } cleanup
  call void @cleanup()
  resume { i8*, i32 } %lp1
; CHECK: lpad2:
; CHECK-TYPED-NEXT: %lp2 = landingpad { i8*, i32 }
; CHECK-OPAQUE-NEXT: %lp2 = landingpad { ptr, i32 }
; CHECK-TYPED-NEXT: catch i8* null
; CHECK-OPAQUE-NEXT: catch ptr null
; CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.0.landing.1
; CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.0.exit.1
; CHECK-NEXT: ret void
lpad2:
  %lp2 = landingpad { i8*, i32 } catch i8* null
  ret void
}

; The map records kind (0 entry, 1 exit, 2 unwind, 3 landing) and site of every stub, in
; the order the stubs were planned: entry, then in instruction order.
; MAP: @__ptcall_map = internal constant
; MAP-SAME: @__ptcall_stub.0.entry.0 {{[^}]*}}, i32 0, i16 0, i16 0 }
; MAP-SAME: @__ptcall_stub.0.exit.0 {{[^}]*}}, i32 0, i16 1, i16 0 }
; MAP-SAME: @__ptcall_stub.0.landing.0 {{[^}]*}}, i32 0, i16 3, i16 0 }
; MAP-SAME: @__ptcall_stub.0.unwind.0 {{[^}]*}}, i32 0, i16 2, i16 0 }
; MAP-SAME: @__ptcall_stub.0.landing.1 {{[^}]*}}, i32 0, i16 3, i16 1 }
; MAP-SAME: @__ptcall_stub.0.exit.1 {{[^}]*}}, i32 0, i16 1, i16 1 }
