; Include and exclude lists (names or fnmatch globs, one per line, # comments), matched
; against the linkage name, the demangled name and the demangled name without parameters;
; minimum size in IR instructions.
; RUN: %opt-ptcall '-passes=ptcall<include=%inputs/include.txt;ungated>' -S %s | FileCheck %s --check-prefix=INC
; RUN: %opt-ptcall '-passes=ptcall<exclude=%inputs/exclude.txt;ungated>' -S %s | FileCheck %s --check-prefix=EXC
; RUN: %opt-ptcall '-passes=ptcall<include=%inputs/include.txt;exclude=%inputs/exclude.txt;ungated>' -S %s | FileCheck %s --check-prefix=BOTH
; RUN: %opt-ptcall '-passes=ptcall<min-size=3;ungated>' -S %s | FileCheck %s --check-prefix=MIN
; The same options through the environment (how the wrappers pass them to the plugin):
; RUN: env PTCALL_INCLUDE=%inputs/include.txt %opt-ptcall '-passes=ptcall<ungated>' -S %s | FileCheck %s --check-prefix=INC
; RUN: env PTCALL_MIN_SIZE=3 %opt-ptcall '-passes=ptcall<ungated>' -S %s | FileCheck %s --check-prefix=MIN
; Errors:
; RUN: not %opt-ptcall '-passes=ptcall<include=%inputs/missing.txt;ungated>' -S %s 2>&1 | FileCheck %s --check-prefix=ERR
; RUN: not %opt-ptcall '-passes=ptcall<bogus>' -S %s 2>&1 | FileCheck %s --check-prefix=BAD
; RUN: env PTCALL_PLACEMENT=sideways not %opt-ptcall '-passes=ptcall<ungated>' -S %s 2>&1 | FileCheck %s --check-prefix=ENV
; ERR: ptcall: cannot read include list '{{.*}}missing.txt'
; BAD: ptcall: unknown ptcall parameter 'bogus'
; ENV: ptcall: PTCALL_PLACEMENT must be 'early' or 'late', not 'sideways'
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; INC-LABEL: define i32 @keep_small()
; INC-NEXT: call void asm
; EXC-LABEL: define i32 @keep_small()
; EXC-NEXT: call void asm
; BOTH-LABEL: define i32 @keep_small()
; BOTH-NEXT: call void asm
; MIN-LABEL: define i32 @keep_small()
; MIN-NEXT: ret i32 1
define i32 @keep_small() {
  ret i32 1
}

; INC-LABEL: define i32 @keep_but_excluded(i32 %x)
; INC-NEXT: call void asm
; EXC-LABEL: define i32 @keep_but_excluded(i32 %x)
; EXC-NEXT: %a = add
; BOTH-LABEL: define i32 @keep_but_excluded(i32 %x)
; BOTH-NEXT: %a = add
; MIN-LABEL: define i32 @keep_but_excluded(i32 %x)
; MIN-NEXT: call void asm
define i32 @keep_but_excluded(i32 %x) {
  %a = add i32 %x, 1
  %b = mul i32 %a, 3
  ret i32 %b
}

; callee(int), listed by its linkage name
; INC-LABEL: define i32 @_Z6calleei(i32 %x)
; INC-NEXT: call void asm
; BOTH-LABEL: define i32 @_Z6calleei(i32 %x)
; BOTH-NEXT: call void asm
define i32 @_Z6calleei(i32 %x) {
  ret i32 %x
}

; ns::f(int): excluded by the demangled glob ns::*, not included
; INC-LABEL: define i32 @_ZN2ns1fEi(i32 %x)
; INC-NEXT: ret i32
; EXC-LABEL: define i32 @_ZN2ns1fEi(i32 %x)
; EXC-NEXT: ret i32
; BOTH-LABEL: define i32 @_ZN2ns1fEi(i32 %x)
; BOTH-NEXT: ret i32
define i32 @_ZN2ns1fEi(i32 %x) {
  ret i32 %x
}

; other(): not included
; INC-LABEL: define void @other()
; INC-NEXT: ret void
; EXC-LABEL: define void @other()
; EXC-NEXT: call void asm
define void @other() {
  ret void
}
