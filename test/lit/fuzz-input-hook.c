// The libFuzzer harness's entry hook (docs/cov.md, "The fork server at the harness"):
// LLVMFuzzerTestOneInput(const uint8_t *, size_t) calls __ptcall_fuzz_input(&data, &size)
// through a null-checked weak reference at its entry, before its entry stub (the server's
// call is never counted, each child's once), and every use of the arguments reads what the
// hook left in the two slots. Other functions, and other signatures, get nothing.
// RUN: %ptcall-cc -fptcall-ungated -O0 -fptcall-placement=early -S -emit-llvm %s -o - | FileCheck %s
// RUN: %ptcall-cc -fptcall-ungated -O2 -fptcall-placement=early -S -emit-llvm %s -o - | FileCheck %s
// RUN: %ptcall-cc -fptcall-ungated -O2 -S -emit-llvm %s -o - | FileCheck %s
// RUN: %ptcall-cc -fptcall-ungated -O3 -S -emit-llvm %s -o - | FileCheck %s
// It runs: a program whose own __ptcall_fuzz_input replaces the arguments, at each level
// and placement (the runtime's is interposed by the executable's definition).
// RUN: %ptcall-cc -O0 -fptcall-placement=early -DRUN_IT %s -o %t0 && %t0 | FileCheck %s --check-prefix=OUT
// RUN: %ptcall-cc -O1 -fptcall-placement=early -DRUN_IT %s -o %t1 && %t1 | FileCheck %s --check-prefix=OUT
// RUN: %ptcall-cc -O2 -DRUN_IT %s -o %t2 && %t2 | FileCheck %s --check-prefix=OUT
// RUN: %ptcall-cc -O3 -fptcall-placement=late -DRUN_IT %s -o %t3 && %t3 | FileCheck %s --check-prefix=OUT

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int other(const uint8_t *d, size_t n) { return n ? d[0] : -1; }

__attribute__((noinline)) int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int sum = 0;
  for (size_t i = 0; i < size; i++)
    sum += data[i];
  printf("size %zu sum %d first %c\n", size, sum, size ? data[0] : '-');
  return 0;
}

#ifdef RUN_IT
static const uint8_t replaced[] = "xyz";

void __ptcall_fuzz_input(const uint8_t **data, size_t *size) {
  if (*size == 5) { // "hello": the harness gets "xyz" instead
    *data = replaced;
    *size = 3;
  } else if (*size == 4) { // "four": the harness gets the empty input
    *size = 0;
  }
}

int main(void) {
  LLVMFuzzerTestOneInput((const uint8_t *)"hello", 5);
  LLVMFuzzerTestOneInput((const uint8_t *)"four", 4);
  LLVMFuzzerTestOneInput((const uint8_t *)"ab", 2);
  return other((const uint8_t *)"q", 1) == 'q' ? 0 : 1;
}
#endif

// OUT: size 3 sum 363 first x
// OUT-NEXT: size 0 sum 0 first -
// OUT-NEXT: size 2 sum 195 first a

// CHECK-LABEL: define {{.*}}i32 @other(
// CHECK-NOT: __ptcall_fuzz_input
// CHECK-LABEL: define {{.*}}i32 @LLVMFuzzerTestOneInput(
// the null check of the weak reference: either polarity, as the optimiser turns it (LLVM 19 at
// -O2 tests `eq` and swaps the branches)
// CHECK: icmp {{eq|ne}} {{.*}}@__ptcall_fuzz_input
// CHECK: call void @__ptcall_fuzz_input(
// CHECK: load
// CHECK: call void asm sideeffect {{.*}}@__ptcall_stub.{{[0-9]+}}.entry.0
// CHECK: declare extern_weak void @__ptcall_fuzz_input(
