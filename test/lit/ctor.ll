; Registration: a constructor at priority 100 (before user constructors, 101..65535) calls
; __ptcall_register_object(__start_ptcall_map, __stop_ptcall_map, __start_ptcall_stubs,
; __stop_ptcall_stubs) if that weak symbol is non-null; a destructor at the same priority
; (runs after user destructors) calls __ptcall_unregister_object(__start_ptcall_map).
; The section bounds are extern_weak hidden: each object binds its own.
; RUN: %opt-ptcall '-passes=ptcall<ungated>' -S %s | FileCheck %s
; RUN: %opt-ptcall '-passes=ptcall<ungated>' %s | llc -O2 -relocation-model=pic -o - | FileCheck %s --check-prefix=ASM
; A module without instrumented functions gets no map and no constructor:
; RUN: %opt-ptcall '-passes=ptcall<include=%inputs/include.txt;ungated>' -S %s | FileCheck %s --check-prefix=NONE
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@llvm.global_ctors = appending global [1 x { i32, void ()*, i8* }] [{ i32, void ()*, i8* } { i32 65535, void ()* @user_ctor, i8* null }]

define internal void @user_ctor() {
  ret void
}

; CHECK: @__start_ptcall_map = extern_weak hidden constant i8
; CHECK: @__stop_ptcall_map = extern_weak hidden constant i8
; CHECK: @__start_ptcall_stubs = extern_weak hidden constant i8
; CHECK: @__stop_ptcall_stubs = extern_weak hidden constant i8
; CHECK-TYPED: @llvm.global_ctors = appending global [2 x { i32, void ()*, i8* }] [{ i32, void ()*, i8* } { i32 65535, void ()* @user_ctor, i8* null }, { i32, void ()*, i8* } { i32 100, void ()* @__ptcall_module_ctor, i8* null }]
; CHECK-OPAQUE: @llvm.global_ctors = appending global [2 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 65535, ptr @user_ctor, ptr null }, { i32, ptr, ptr } { i32 100, ptr @__ptcall_module_ctor, ptr null }]
; CHECK-TYPED: @llvm.global_dtors = appending global [1 x { i32, void ()*, i8* }] [{ i32, void ()*, i8* } { i32 100, void ()* @__ptcall_module_dtor, i8* null }]
; CHECK-OPAQUE: @llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 100, ptr @__ptcall_module_dtor, ptr null }]

; the user's constructor is an ordinary function: instrumented
; CHECK-LABEL: define internal void @user_ctor()
; CHECK-NEXT: call void asm sideeffect {{.*}}@__ptcall_stub.0.entry.0

; CHECK-TYPED: declare extern_weak void @__ptcall_register_object(i8*, i8*, i8*, i8*) #[[NU:[0-9]+]]
; CHECK-OPAQUE: declare extern_weak void @__ptcall_register_object(ptr, ptr, ptr, ptr) #[[NU:[0-9]+]]
; CHECK-TYPED: declare extern_weak void @__ptcall_unregister_object(i8*) #[[NU]]
; CHECK-OPAQUE: declare extern_weak void @__ptcall_unregister_object(ptr) #[[NU]]

; CHECK-LABEL: define internal void @__ptcall_module_ctor()
; CHECK-NEXT: entry:
; CHECK-TYPED-NEXT: br i1 icmp ne (void (i8*, i8*, i8*, i8*)* @__ptcall_register_object, void (i8*, i8*, i8*, i8*)* null), label %call, label %ret
; CHECK-OPAQUE-ICMPEXPR-NEXT: br i1 icmp ne (ptr @__ptcall_register_object, ptr null), label %call, label %ret
; CHECK-ICMPINST-NEXT: %0 = icmp ne ptr @__ptcall_register_object, null
; CHECK-ICMPINST-NEXT: br i1 %0, label %call, label %ret
; CHECK: call:
; CHECK-TYPED-NEXT: call void @__ptcall_register_object(i8* @__start_ptcall_map, i8* @__stop_ptcall_map, i8* @__start_ptcall_stubs, i8* @__stop_ptcall_stubs)
; CHECK-OPAQUE-NEXT: call void @__ptcall_register_object(ptr @__start_ptcall_map, ptr @__stop_ptcall_map, ptr @__start_ptcall_stubs, ptr @__stop_ptcall_stubs)
; CHECK-NEXT: br label %ret
; CHECK: ret:
; CHECK-NEXT: ret void

; CHECK-LABEL: define internal void @__ptcall_module_dtor()
; CHECK-NEXT: entry:
; CHECK-TYPED-NEXT: br i1 icmp ne (void (i8*)* @__ptcall_unregister_object, void (i8*)* null), label %call, label %ret
; CHECK-OPAQUE-ICMPEXPR-NEXT: br i1 icmp ne (ptr @__ptcall_unregister_object, ptr null), label %call, label %ret
; CHECK-ICMPINST-NEXT: %0 = icmp ne ptr @__ptcall_unregister_object, null
; CHECK-ICMPINST-NEXT: br i1 %0, label %call, label %ret
; CHECK: call:
; CHECK-TYPED-NEXT: call void @__ptcall_unregister_object(i8* @__start_ptcall_map)
; CHECK-OPAQUE-NEXT: call void @__ptcall_unregister_object(ptr @__start_ptcall_map)
; CHECK: attributes #[[NU]] = { nounwind }

; ASM: .section .init_array.100,"aw",@init_array
; ASM-NEXT: .p2align 3
; ASM-NEXT: .quad __ptcall_module_ctor
; ASM: .section .fini_array.100,"aw",@fini_array
; ASM-NEXT: .p2align 3
; ASM-NEXT: .quad __ptcall_module_dtor

; NONE-NOT: ptcall_map
; NONE-NOT: __ptcall_module_ctor
; NONE-NOT: __ptcall_stub
