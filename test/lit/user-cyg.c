// A program that uses -finstrument-functions itself: the driver keeps only the last
// -finstrument-functions* flag, so the user's flag replaces the wrappers' channel flag.
// clang's pre-inline attributes mark the same functions; the pass reads them (and leaves
// them to clang): both the cyg hooks and the ptcall stubs are there, and
// no_instrument_function functions get neither.
// RUN: %ptcall-cc -fptcall-ungated -O2 -finstrument-functions -S %s -o - | FileCheck %s
// RUN: %ptcall-cc -fptcall-ungated -O2 -fptcall-placement=early -finstrument-functions -S %s -o - | FileCheck %s

// CHECK-LABEL: traced:
// CHECK-DAG: callq __cyg_profile_func_enter
// CHECK-DAG: callq __ptcall_stub.0.entry.0
// CHECK-DAG: callq __cyg_profile_func_exit
// CHECK-DAG: callq __ptcall_stub.0.exit.0
// CHECK: .cfi_endproc
__attribute__((noinline)) int traced(int x) { return x * 7; }

// CHECK-LABEL: untraced:
// CHECK-NOT: callq
// CHECK: .cfi_endproc
__attribute__((no_instrument_function, noinline)) int untraced(int x) { return x * 9; }
