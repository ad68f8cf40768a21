// C++ through ptcall-c++: demangled display names next to linkage names, source file and
// line from the DISubprogram with -g (the module's source name and line 0 without), and
// UNWIND / LANDING stubs around exception handling.
// RUN: %ptcall-cxx -fptcall-ungated -O1 -g -S -emit-llvm %s -o - | FileCheck %s --check-prefixes=CHECK,DBG
// RUN: %ptcall-cxx -fptcall-ungated -O1 -S -emit-llvm %s -o - | FileCheck %s --check-prefixes=CHECK,NODBG
#include <stdexcept>

namespace ns {
struct Widget {
    int v;
    __attribute__((noinline)) int get(int k) const;
};

int Widget::get(int k) const
{
    if (k > v)
        throw std::out_of_range("k");
    return v + k;
}

__attribute__((noinline)) int safe(const Widget &w, int k)
{
    try {
        return w.get(k);
    } catch (const std::out_of_range &) {
        return -1;
    }
}
} // namespace ns

// CHECK: @__ptcall_map = internal constant
// DBG-SAME: [2 x %ptcall.map_func] [%ptcall.map_func { i32 [[N1:[0-9]+]], i32 [[L1:[0-9]+]], i32 [[F:[0-9]+]], i32 14 }, %ptcall.map_func { i32 [[N2:[0-9]+]], i32 [[L2:[0-9]+]], i32 [[F]], i32 21 }]
// NODBG-SAME: [2 x %ptcall.map_func] [%ptcall.map_func { i32 {{[0-9]+}}, i32 {{[0-9]+}}, i32 1, i32 0 }, %ptcall.map_func { i32 {{[0-9]+}}, i32 {{[0-9]+}}, i32 1, i32 0 }]
// CHECK-SAME: c"\00{{[^"]*}}cxx-names.cpp\00ns::Widget::get(int) const\00_ZNK2ns6Widget3getEi\00
// DBG-SAME: ns::safe(ns::Widget const&, int)\00_ZN2ns4safeERKNS_6WidgetEi\00

// CHECK-LABEL: define dso_local noundef i32 @_ZNK2ns6Widget3getEi(
// CHECK: @__ptcall_stub.0.entry.0
// CHECK: @__ptcall_stub.0.exit.0
// CHECK-LABEL: define dso_local noundef i32 @_ZN2ns4safeERKNS_6WidgetEi(
// CHECK: @__ptcall_stub.1.entry.0
// CHECK: landingpad
// CHECK-NEXT: catch
// CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.1.landing.0
// CHECK: call void asm sideeffect {{.*}}@__ptcall_stub.1.unwind.0
// CHECK-NEXT: resume
