// Through the wrapper (clang -fpass-plugin, late placement) at every -O level: the stub
// calls survive as `call __ptcall_stub...`, leaves stay frameless, red-zone users adjust
// rsp instead, no_instrument_function / PTCALL_NO_INSTRUMENT functions get no stubs, and
// no __cyg_profile_* call is left behind by the no_instrument_function channel.
// Live calls (-fptcall-ungated) show the stub calls in the code:
// RUN: %ptcall-cc -fptcall-ungated -I%ptcall-include -O0 -S %s -o - | FileCheck %s --check-prefixes=CHECK,NOTC --implicit-check-not=__cyg_profile
// RUN: %ptcall-cc -fptcall-ungated -I%ptcall-include -O1 -S %s -o - | FileCheck %s --check-prefixes=CHECK,OPT,O1 --implicit-check-not=__cyg_profile
// RUN: %ptcall-cc -fptcall-ungated -I%ptcall-include -O2 -S %s -o - | FileCheck %s --check-prefixes=CHECK,OPT,TC --implicit-check-not=__cyg_profile
// RUN: %ptcall-cc -fptcall-ungated -I%ptcall-include -O3 -S %s -o - | FileCheck %s --check-prefixes=CHECK,OPT,TC --implicit-check-not=__cyg_profile
// RUN: %ptcall-cc -fptcall-ungated -I%ptcall-include -Os -S %s -o - | FileCheck %s --check-prefixes=CHECK,OPT,TC --implicit-check-not=__cyg_profile
// early placement: same stubs, but the exit stub before `ret` keeps the call a call
// RUN: %ptcall-cc -fptcall-ungated -I%ptcall-include -O2 -fptcall-placement=early -S %s -o - | FileCheck %s --check-prefixes=CHECK,OPT,NOTC --implicit-check-not=__cyg_profile
// Sleds (the default) at every level: nops listed in ptcall_sites, no call in the code
// RUN: %ptcall-cc -I%ptcall-include -O0 -S %s -o - | FileCheck %s --check-prefix=SLED --implicit-check-not=__cyg_profile
// RUN: %ptcall-cc -I%ptcall-include -O2 -S %s -o - | FileCheck %s --check-prefixes=SLED,SLEDOPT --implicit-check-not=__cyg_profile
// RUN: %ptcall-cc -I%ptcall-include -O3 -S %s -o - | FileCheck %s --check-prefixes=SLED,SLEDOPT --implicit-check-not=__cyg_profile
// -flto: the pass runs in the pre-link (compile-time) pipeline, the bitcode is instrumented
// RUN: %ptcall-cc -I%ptcall-include -O2 -flto -c %s -o %t.bc
// RUN: llvm-dis %t.bc -o - | FileCheck %s --check-prefix=LTO --implicit-check-not=__cyg_profile
// RUN: %ptcall-cc -I%ptcall-include -O2 -flto=thin -c %s -o %t.thin.bc
// RUN: llvm-dis %t.thin.bc -o - | FileCheck %s --check-prefix=LTO --implicit-check-not=__cyg_profile
#include "ptcall/ptcall.h"

// CHECK-LABEL: leaf:
// OPT-NOT: push
// OPT-NOT: %rsp
// CHECK: #APP
// CHECK-NEXT: callq __ptcall_stub.[[LEAF:[0-9]+]].entry.0
// CHECK-NEXT: #NO_APP
// OPT-NOT: push
// OPT-NOT: %rsp
// CHECK: callq __ptcall_stub.[[LEAF]].exit.0
// OPT-NEXT: #NO_APP
// OPT-NEXT: {{retq|jmp}}
// A sled: the nop's bytes and its table entry; the leaf stays frameless, nothing is called.
// SLED-LABEL: leaf:
// SLEDOPT-NOT: push
// SLEDOPT-NOT: %rsp
// SLED: .Lptcall_sled[[SE:[0-9]+]]:
// SLED-NEXT: .byte 15
// SLED-NEXT: .byte 31
// SLED-NEXT: .byte 68
// SLED-NEXT: .byte 0
// SLED-NEXT: .byte 0
// SLED-NEXT: .section ptcall_sites,"ao",@progbits,.Lptcall_sled[[SE]]
// SLED: .long __ptcall_stub.[[SLEAF:[0-9]+]].entry.0-
// SLEDOPT-NOT: push
// SLEDOPT-NOT: %rsp
// SLED-NOT: callq
// The exit sled moved behind the ret (a ret sled: RetSleds.cpp), its stub tagged with bit 0.
// SLEDOPT: retq
// SLEDOPT-NEXT: #APP
// SLED: .Lptcall_ret
// SLED: .long (__ptcall_stub.[[SLEAF]].exit.0-{{.*}})+1
int leaf(int a, int b) { return a * b + 1; }

// CHECK-LABEL: redzone_user:
// OPT: subq ${{[0-9]+}}, %rsp
// CHECK: callq __ptcall_stub.{{[0-9]+}}.entry.0
// CHECK: callq __ptcall_stub.{{[0-9]+}}.exit.0
// CHECK-NEXT: #NO_APP
// CHECK-NEXT: {{retq|jmp|addq|.LBB}}
int redzone_user(int i)
{
    volatile int buf[8];
    buf[i & 7] = i;
    return buf[(i + 1) & 7];
}

// CHECK-LABEL: skipped_cyg:
// CHECK-NOT: __ptcall_stub
// CHECK: .cfi_endproc
__attribute__((no_instrument_function)) int skipped_cyg(int x) { return x + 2; }

// CHECK-LABEL: skipped_annot:
// CHECK-NOT: __ptcall_stub
// CHECK: .cfi_endproc
PTCALL_NO_INSTRUMENT int skipped_annot(int x) { return x + 3; }

// CHECK-LABEL: tail:
// (the out-of-line entry stub call may come after the body)
// CHECK-DAG: callq __ptcall_stub.[[TAIL:[0-9]+]].entry.0
// (-O1 marks no call `tail` on LLVM 14: there is no `tail` call to keep; 15 and later do)
// NOTC-DAG: callq ext
// O1-O1CALL-DAG: callq ext
// CHECK: callq __ptcall_stub.[[TAIL]].exit.0
// TC-NEXT: #NO_APP
// TC-NEXT: jmp ext{{(@PLT)?}} # TAILCALL
// O1-O1TAIL-NEXT: #NO_APP
// O1-O1TAIL-NEXT: jmp ext{{(@PLT)?}} # TAILCALL
int ext(int);
int tail(int x) { return ext(x + 1); }

// CHECK: .section ptcall_stubs,"ax",@progbits
// CHECK: .p2align 4, 0x90
// CHECK-NEXT: .type __ptcall_stub.[[LEAF]].entry.0,@function
// CHECK-NEXT: __ptcall_stub.[[LEAF]].entry.0:
// CHECK: #APP
// CHECK-NEXT: retq # ptcall stub 0x{{[0-9a-f]+}} 0
// CHECK-NEXT: .fill 15, 1, 0xcc
// CHECK: .section ptcall_map,"aR",@progbits
// CHECK: .section .init_array.100,"aw",@init_array

// LTO-NORANGE: define dso_local i32 @leaf(i32 noundef %0, i32 noundef %1)
// LTO-RANGE: define dso_local range(i32 -2147483647, -2147483648) i32 @leaf(i32 noundef %0, i32 noundef %1)
// LTO-TYPED-NEXT: call void asm sideeffect ".p2align 3,0x2e,4\0A.Lptcall_sled${:uid}:{{.*}}", "i,~{dirflag},~{fpsr},~{flags},~{r10},~{r11}"(void ()* @__ptcall_stub.0.entry.0)
// LTO-OPAQUE-NEXT: call void asm sideeffect ".p2align 3,0x2e,4\0A.Lptcall_sled${:uid}:{{.*}}", "i,~{dirflag},~{fpsr},~{flags},~{r10},~{r11}"(ptr @__ptcall_stub.0.entry.0)
// LTO-NORANGE: define dso_local i32 @skipped_cyg(
// LTO-RANGE: define dso_local range(i32 -2147483646, -2147483648) i32 @skipped_cyg(
// LTO-NOT: __ptcall_stub
// LTO: ret i32
