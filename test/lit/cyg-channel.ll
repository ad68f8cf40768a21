; The no_instrument_function channel. With -finstrument-functions-after-inlining (added by
; the wrappers) clang gives every function that is NOT no_instrument_function the two
; post-inline cyg attributes. The pass instruments exactly those (plus clang's synthesised
; global-initialiser functions, which have no declaration to carry the attribute), and
; removes the attributes everywhere so that no __cyg_profile_* call is inserted later.
; RUN: %opt-ptcall '-passes=ptcall<ungated>' -S %s | FileCheck %s
; The wrappers also set PTCALL_CYG_CHANNEL=1 (pipeline parameter `cyg`): then a module
; without any marked function instruments nothing but the synthesised ones.
; RUN: sed -e 's/"instrument-function-[a-z-]*"="[a-z_]*"/"unrelated"/g' %s | %opt-ptcall '-passes=ptcall<cyg;ungated>' -S | FileCheck %s --check-prefix=NONE
; Without the channel (plain clang -fpass-plugin), every function is instrumented.
; RUN: sed -e 's/"instrument-function-[a-z-]*"="[a-z_]*"/"unrelated"/g' %s | %opt-ptcall '-passes=ptcall<ungated>' -S | FileCheck %s --check-prefix=ALL
; Nothing of the channel reaches the backend: no __cyg_profile_* calls in the code.
; RUN: %opt-ptcall '-passes=ptcall<ungated>' %s | llc -O0 -o - | FileCheck %s --check-prefix=ASM
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; CHECK-LABEL: define i32 @marked() #0 {
; CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.0.entry.0
; NONE-LABEL: define i32 @marked()
; NONE-NEXT: ret i32 1
; ALL-LABEL: define i32 @marked()
; ALL-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.0.entry.0
define i32 @marked() #0 {
  ret i32 1
}

; CHECK-LABEL: define i32 @no_instrument_function()
; CHECK-NEXT: ret i32 2
; ALL-LABEL: define i32 @no_instrument_function()
; ALL-NEXT: call void asm sideeffect
define i32 @no_instrument_function() {
  ret i32 2
}

; CHECK-LABEL: define internal void @__cxx_global_var_init()
; CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.1.entry.0
; NONE-LABEL: define internal void @__cxx_global_var_init()
; NONE-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.0.entry.0
define internal void @__cxx_global_var_init() {
  ret void
}

attributes #0 = { "instrument-function-entry-inlined"="__cyg_profile_func_enter" "instrument-function-exit-inlined"="__cyg_profile_func_exit" }

; ASM-NOT: __cyg_profile
; ASM: callq __ptcall_stub.0.entry.0
; ASM-NOT: __cyg_profile

; -finstrument-functions (pre-inline hooks) marks the same functions with attributes that
; clang's own instrumenter consumes: the pass reads them as the channel and keeps them.
; CHECK-LABEL: define i32 @user_cyg() #1 {
; CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.2.entry.0
define i32 @user_cyg() #1 {
  ret i32 4
}
attributes #1 = { "instrument-function-entry"="__cyg_profile_func_enter" "instrument-function-exit"="__cyg_profile_func_exit" }

; CHECK-NOT: instrument-function-{{.*}}inlined
; CHECK-NOT: ptcall-instrument
; CHECK: attributes #0 = { noredzone }
; CHECK-NEXT: attributes #1 = { noredzone "instrument-function-entry"="__cyg_profile_func_enter" "instrument-function-exit"="__cyg_profile_func_exit" }
; CHECK-NOT: instrument-function-{{.*}}inlined
; CHECK-NOT: ptcall-instrument
