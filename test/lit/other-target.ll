; Only x86-64 ELF is instrumented: other targets are left alone (with a warning), but the
; no_instrument_function channel is still consumed so that no __cyg_profile_* call appears.
; RUN: %opt-ptcall '-passes=ptcall<ungated>' -S %s 2>%t.err | FileCheck %s
; RUN: FileCheck %s --check-prefix=WARN < %t.err
; WARN: ptcall: warning: target 'aarch64-unknown-linux-gnu' is not x86-64 ELF; other.c is not instrumented
target datalayout = "e-m:e-i8:8:32-i16:16:32-i64:64-i128:128-n32:64-S128"
target triple = "aarch64-unknown-linux-gnu"
source_filename = "other.c"

; CHECK-NOT: __ptcall
; CHECK-LABEL: define i32 @f() {
; CHECK-NEXT: ret i32 1
; CHECK-NOT: instrument-function
; CHECK-NOT: __ptcall
define i32 @f() #0 {
  ret i32 1
}
attributes #0 = { "instrument-function-entry-inlined"="__cyg_profile_func_enter" "instrument-function-exit-inlined"="__cyg_profile_func_exit" }
