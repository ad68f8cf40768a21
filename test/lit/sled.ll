; Call-site sleds (the default): each stub call is an inline-asm 5-byte nop that never
; straddles an 8-byte boundary (where it would, CS prefixes in front of it make it one longer
; instruction, not an alignment nop and the sled), with a (sled, stub) entry in ptcall_sites,
; linked to the sled's section and, for a comdat function, in its group. The runtime arms a
; site by writing `call stub` over the nop. The map says PTCALL_MAP_F_SLEDS (32) and names the
; object's table through __start/__stop_ptcall_sites (hidden, not weak: the map stays
; read-only), and a retained empty anchor keeps the section in every such object.
; RUN: %opt-ptcall -passes=ptcall -S %s | FileCheck %s
; RUN: %opt-ptcall -passes=ptcall %s | llc -O2 -o - | FileCheck %s --check-prefix=ASM
; RUN: %opt-ptcall -passes=ptcall %s | llc -O2 -filetype=obj -o %t.o
; RUN: llvm-objdump -d %t.o | FileCheck %s --check-prefix=OBJ
; RUN: llvm-readelf -S %t.o | FileCheck %s --check-prefix=SEC
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

$inl = comdat any

declare i32 @callee(i32)

; CHECK: module asm ".pushsection ptcall_sites,\22aR\22,@progbits"
; CHECK-NEXT: module asm ".popsection"
; CHECK: %ptcall.map_header { i32 1296258128, i16 8, i16 80, i32 {{[0-9]+}}, i32 242,
; CHECK: @__start_ptcall_sites = external hidden constant i8
; CHECK: @__stop_ptcall_sites = external hidden constant i8
; CHECK-LABEL: define i32 @f(i32 %x)
; CHECK-NEXT: entry:
; CHECK-NEXT: %slot = alloca i32
; CHECK-TYPED-NEXT: call void asm sideeffect ".p2align 3,0x2e,4\0A.Lptcall_sled${:uid}:\0A.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\0A.pushsection ptcall_sites,\22ao\22,@progbits,.Lptcall_sled${:uid}\0A.p2align 2\0A.long .Lptcall_sled${:uid} - .\0A.long ${0:P} - .\0A.popsection", "i,~{dirflag},~{fpsr},~{flags},~{r10},~{r11}"(void ()* @__ptcall_stub.0.entry.0)
; CHECK-OPAQUE-NEXT: call void asm sideeffect ".p2align 3,0x2e,4\0A.Lptcall_sled${:uid}:\0A.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\0A.pushsection ptcall_sites,\22ao\22,@progbits,.Lptcall_sled${:uid}\0A.p2align 2\0A.long .Lptcall_sled${:uid} - .\0A.long ${0:P} - .\0A.popsection", "i,~{dirflag},~{fpsr},~{flags},~{r10},~{r11}"(ptr @__ptcall_stub.0.entry.0)
; CHECK-NEXT: %y = add i32 %x, 1
; CHECK-TYPED-NEXT: call void asm sideeffect {{.*}}(void ()* @__ptcall_stub.0.exit.0)
; CHECK-OPAQUE-NEXT: call void asm sideeffect {{.*}}(ptr @__ptcall_stub.0.exit.0)
; CHECK-NEXT: %r = tail call i32 @callee(i32 %y)
; CHECK-NEXT: ret i32 %r
define i32 @f(i32 %x) {
entry:
  %slot = alloca i32
  %y = add i32 %x, 1
  %r = tail call i32 @callee(i32 %y)
  ret i32 %r
}

; CHECK-LABEL: define linkonce_odr i32 @inl(i32 %x) #{{[0-9]+}} comdat
; CHECK-NEXT: call void asm sideeffect {{.*}}ptcall_sites,\22aoG\22,@progbits,
; CHECK-GROUPSYM-SAME: \22inl\22,comdat,.Lptcall_sled${:uid}\0A
; CHECK-SYMGROUP-SAME: .Lptcall_sled${:uid},\22inl\22,comdat\0A
; CHECK-TYPED-SAME: (void ()* @__ptcall_stub.1.entry.0)
; CHECK-OPAQUE-SAME: (ptr @__ptcall_stub.1.entry.0)
define linkonce_odr i32 @inl(i32 %x) comdat {
  %y = mul i32 %x, 3
  ret i32 %y
}

; No compare, no branch, no call in the untraced code: nops and the tail call.
; ASM-LABEL: f:
; ASM-NOT: cmpq
; ASM: .p2align 3, 0x2e, 4
; ASM-NEXT: .Lptcall_sled[[E:[0-9]+]]:
; ASM: .section ptcall_sites,"ao",@progbits,.Lptcall_sled[[E]]
; ASM: .long .Lptcall_sled[[E]]-.Ltmp{{[0-9]+}}
; ASM: .long __ptcall_stub.0.entry.0-.Ltmp{{[0-9]+}}
; ASM: .Lptcall_sled[[X:[0-9]+]]:
; ASM: .long __ptcall_stub.0.exit.0-.Ltmp{{[0-9]+}}
; ASM-NOT: callq __ptcall_stub
; ASM: jmp callee@PLT # TAILCALL
; ASM-LABEL: inl:
; ASM-GROUPSYM: .section ptcall_sites,"aGo",@progbits,inl,comdat,.Lptcall_sled{{[0-9]+}}
; ASM-SYMGROUP: .section ptcall_sites,"aoG",@progbits,.Lptcall_sled{{[0-9]+}},inl,comdat

; The entry sled follows a 4-byte `subq`: four prefixes take it to offset 8, in one instruction
; with the nop. The exit sled at offset 0x10 needs one.
; OBJ-LABEL: <f>:
; OBJ-NEXT: 0: 48 83 ec 04 subq
; OBJ-NEXT: 4: 2e 2e 2e 2e 0f 1f 44 00 00 nopl %cs:(%rax,%rax)
; OBJ-NEXT: d: ff c7 incl
; OBJ-NEXT: f: 2e 0f 1f 44 00 00 nopl %cs:(%rax,%rax)
; OBJ-NOT: call
; OBJ: jmp
; OBJ-LABEL: <inl>:
; OBJ-NEXT: 0: 0f 1f 44 00 00 nopl (%rax,%rax)

; SEC: ptcall_sites PROGBITS {{.*}} AR
; SEC: ptcall_sites PROGBITS {{.*}} AL
; SEC: ptcall_sites PROGBITS {{.*}} AL
; SEC: ptcall_sites PROGBITS {{.*}} ALG
; SEC: ptcall_sites PROGBITS {{.*}} ALG
