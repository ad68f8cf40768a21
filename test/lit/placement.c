// Placement. late (default): after inlining, so an inlined static helper has no stubs of
// its own and is not in the map. early: before inlining, so the helper's stubs are inlined
// with its body into every caller and the map has it (flag PTCALL_MAP_F_EARLY = 1).
// RUN: %ptcall-cc -fptcall-ungated -O2 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=LATE
// RUN: %ptcall-cc -fptcall-ungated -O2 -fptcall-placement=early -S -emit-llvm %s -o - | FileCheck %s --check-prefix=EARLY
// RUN: env PTCALL_PLACEMENT=early %ptcall-cc -fptcall-ungated -O2 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=EARLY
// the flag wins over the environment
// RUN: env PTCALL_PLACEMENT=early %ptcall-cc -fptcall-ungated -O2 -fptcall-placement=late -S -emit-llvm %s -o - | FileCheck %s --check-prefix=LATE
// early at -O0 and under -flto as well
// RUN: %ptcall-cc -fptcall-ungated -O0 -fptcall-placement=early -S -emit-llvm %s -o - | FileCheck %s --check-prefix=EARLY0
// RUN: %ptcall-cc -fptcall-ungated -O2 -flto -fptcall-placement=early -c %s -o %t.bc
// RUN: llvm-dis %t.bc -o - | FileCheck %s --check-prefix=EARLY
// exits off: entry stubs only, flags 0
// RUN: %ptcall-cc -fptcall-ungated -O2 -fptcall-no-exits -S -emit-llvm %s -o - | FileCheck %s --check-prefix=NOEXITS
// RUN: env PTCALL_EXITS=0 %ptcall-cc -fptcall-ungated -O2 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=NOEXITS

static int helper(int x) { return x * 3 + 1; }
int a(int x) { return helper(x) + 1; }
int b(int x) { return helper(x) - 1; }

// LATE: %ptcall.map_header { i32 1296258128, i16 8, i16 80, i32 {{[0-9]+}}, i32 82, i64 {{-?[0-9]+}}, i32 4, i32 2,
// LATE-NOT: helper
// LATE-NORANGE: define dso_local i32 @a(
// LATE-RANGE: define dso_local range(i32 -2147483646, -2147483648) i32 @a(
// LATE-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.0.entry.0
// LATE-NEXT: mul
// LATE-NOT: @__ptcall_stub
// LATE: @__ptcall_stub.0.exit.0
// LATE-NEXT: ret i32

// EARLY: %ptcall.map_header { i32 1296258128, i16 8, i16 80, i32 {{[0-9]+}}, i32 83, i64 {{-?[0-9]+}}, i32 6, i32 3,
// EARLY-SAME: c"\00{{.*}}placement.c\00a\00helper\00b\00
// EARLY-NORANGE: define dso_local i32 @a(
// EARLY-RANGE: define dso_local range(i32 -2147483646, -2147483648) i32 @a(
// EARLY-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.[[A:[0-9]]].entry.0
// EARLY-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.[[H:[0-9]]].entry.0
// EARLY-NEXT: mul
// EARLY: call void asm sideeffect {{.*}}@__ptcall_stub.[[H]].exit.0
// EARLY: call void asm sideeffect {{.*}}@__ptcall_stub.[[A]].exit.0
// EARLY-NEXT: ret i32
// EARLY-NORANGE: define dso_local i32 @b(
// EARLY-RANGE: define dso_local range(i32 -2147483648, 2147483647) i32 @b(
// EARLY-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.[[B:[0-9]]].entry.0
// EARLY-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.[[H]].entry.0

// EARLY0: i32 83, i64 {{-?[0-9]+}}, i32 6, i32 3,
// EARLY0: define internal i32 @helper(

// NOEXITS: %ptcall.map_header { i32 1296258128, i16 8, i16 80, i32 {{[0-9]+}}, i32 80, i64 {{-?[0-9]+}}, i32 2, i32 2,
// NOEXITS-NOT: .exit.
