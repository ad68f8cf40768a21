; The map blob, field by field (include/ptcall/map_format.h): header, stub records with
; PC-relative stub_rel, function table, strings; its section, alignment and relocations.
; RUN: %opt-ptcall -passes=ptcall -S %s | FileCheck %s
; RUN: %opt-ptcall -passes=ptcall %s | llc -filetype=obj -relocation-model=pic -o %t.pic.o
; RUN: llvm-readelf -S -r -s %t.pic.o | FileCheck %s --check-prefix=OBJ
; RUN: llvm-objdump -d -j ptcall_stubs %t.pic.o | FileCheck %s --check-prefix=STUBS
; RUN: %opt-ptcall -passes=ptcall %s | llc -filetype=obj -relocation-model=static -o %t.static.o
; RUN: llvm-readelf -S -r -s %t.static.o | FileCheck %s --check-prefix=OBJ
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"
source_filename = "map.c"

define void @f() {
  ret void
}

define i32 @g(i1 %c) {
  br i1 %c, label %a, label %b
a:
  ret i32 1
b:
  ret i32 2
}

; 5 stubs (f: entry, exit 0; g: entry, exit 0, exit 1), 2 functions; both call nothing, so
; every record has kind | PTCALL_STUB_F_LEAF (256).
; stubs at 80, functions at 80 + 5*16 = 160, the v6 extension at 160 + 2*16 = 192 (16-byte
; header, 2 function records of 16 bytes, no callee: 48 bytes), the v8 call graph at 240
; (24-byte header, 2 function records of 24 bytes: 72 bytes), strings at 312:
; "" (0) "map.c" (1) "f" (7) "g" (9): 11 bytes, total 312 + 11 rounded up to 8 = 328.
; Type ids (map v8): FNV-1a 64 of f's `v()` (0x6812e3194e04808e) and g's `i32(i1)`.
; f: 1 instruction in 1 block; g: 3 instructions (br, ret, ret) in 3 blocks.
; flags 114 (exits, r11 and r10 scratch, call-site sleds, late, no CET); unit_hash = FNV-1a 64 of "map.c\0f\0g\0" = 0x67f41255354ad237.
; CHECK: @__ptcall_soft_slot = internal global i64 0, align 8
; CHECK: @__ptcall_map = internal constant %ptcall.map <{
; CHECK-SAME: %ptcall.map_header { i32 1296258128, i16 8, i16 80, i32 328, i32 242, i64 7490632237399593527, i32 5, i32 2, i32 80, i32 160, i32 312, i32 11,
; CHECK-TYPED-SAME: i64 sub (i64 ptrtoint (i64* @__ptcall_soft_slot to i64), i64 ptrtoint (i64* getelementptr inbounds (%ptcall.map, %ptcall.map* @__ptcall_map, i32 0, i32 0, i32 12) to i64)), i32 1, i32 192,
; CHECK-OPAQUE-SAME: i64 sub (i64 ptrtoint (ptr @__ptcall_soft_slot to i64), i64 ptrtoint (ptr getelementptr inbounds (%ptcall.map, ptr @__ptcall_map, i32 0, i32 0, i32 12) to i64)), i32 1, i32 192,
; CHECK-TYPED-SAME: i64 sub (i64 ptrtoint (i8* @__start_ptcall_sites to i64), i64 ptrtoint (i64* getelementptr inbounds (%ptcall.map, %ptcall.map* @__ptcall_map, i32 0, i32 0, i32 15) to i64)),
; CHECK-OPAQUE-SAME: i64 sub (i64 ptrtoint (ptr @__start_ptcall_sites to i64), i64 ptrtoint (ptr getelementptr inbounds (%ptcall.map, ptr @__ptcall_map, i32 0, i32 0, i32 15) to i64)),
; CHECK-TYPED-SAME: i64 sub (i64 ptrtoint (i8* @__stop_ptcall_sites to i64), i64 ptrtoint (i64* getelementptr inbounds (%ptcall.map, %ptcall.map* @__ptcall_map, i32 0, i32 0, i32 16) to i64)) },
; CHECK-OPAQUE-SAME: i64 sub (i64 ptrtoint (ptr @__stop_ptcall_sites to i64), i64 ptrtoint (ptr getelementptr inbounds (%ptcall.map, ptr @__ptcall_map, i32 0, i32 0, i32 16) to i64)) },
; CHECK-SAME: [5 x %ptcall.map_stub] [
; CHECK-TYPED-SAME: %ptcall.map_stub { i64 sub (i64 ptrtoint (void ()* @__ptcall_stub.0.entry.0 to i64), i64 ptrtoint (i64* getelementptr inbounds (%ptcall.map, %ptcall.map* @__ptcall_map, i32 0, i32 1, i32 0, i32 0) to i64)), i32 0, i16 256, i16 0 },
; CHECK-OPAQUE-SAME: %ptcall.map_stub { i64 sub (i64 ptrtoint (ptr @__ptcall_stub.0.entry.0 to i64), i64 ptrtoint (ptr getelementptr inbounds (%ptcall.map, ptr @__ptcall_map, i32 0, i32 1, i32 0, i32 0) to i64)), i32 0, i16 256, i16 0 },
; CHECK-TYPED-SAME: %ptcall.map_stub { i64 sub (i64 ptrtoint (void ()* @__ptcall_stub.0.exit.0 to i64), i64 ptrtoint (i64* getelementptr inbounds (%ptcall.map, %ptcall.map* @__ptcall_map, i32 0, i32 1, i32 1, i32 0) to i64)), i32 0, i16 257, i16 0 },
; CHECK-OPAQUE-SAME: %ptcall.map_stub { i64 sub (i64 ptrtoint (ptr @__ptcall_stub.0.exit.0 to i64), i64 ptrtoint (ptr getelementptr inbounds (%ptcall.map, ptr @__ptcall_map, i32 0, i32 1, i32 1, i32 0) to i64)), i32 0, i16 257, i16 0 },
; CHECK-TYPED-SAME: %ptcall.map_stub { i64 sub (i64 ptrtoint (void ()* @__ptcall_stub.1.entry.0 to i64), i64 ptrtoint (i64* getelementptr inbounds (%ptcall.map, %ptcall.map* @__ptcall_map, i32 0, i32 1, i32 2, i32 0) to i64)), i32 1, i16 256, i16 0 },
; CHECK-OPAQUE-SAME: %ptcall.map_stub { i64 sub (i64 ptrtoint (ptr @__ptcall_stub.1.entry.0 to i64), i64 ptrtoint (ptr getelementptr inbounds (%ptcall.map, ptr @__ptcall_map, i32 0, i32 1, i32 2, i32 0) to i64)), i32 1, i16 256, i16 0 },
; CHECK-TYPED-SAME: %ptcall.map_stub { i64 sub (i64 ptrtoint (void ()* @__ptcall_stub.1.exit.0 to i64), i64 ptrtoint (i64* getelementptr inbounds (%ptcall.map, %ptcall.map* @__ptcall_map, i32 0, i32 1, i32 3, i32 0) to i64)), i32 1, i16 257, i16 0 },
; CHECK-OPAQUE-SAME: %ptcall.map_stub { i64 sub (i64 ptrtoint (ptr @__ptcall_stub.1.exit.0 to i64), i64 ptrtoint (ptr getelementptr inbounds (%ptcall.map, ptr @__ptcall_map, i32 0, i32 1, i32 3, i32 0) to i64)), i32 1, i16 257, i16 0 },
; CHECK-TYPED-SAME: %ptcall.map_stub { i64 sub (i64 ptrtoint (void ()* @__ptcall_stub.1.exit.1 to i64), i64 ptrtoint (i64* getelementptr inbounds (%ptcall.map, %ptcall.map* @__ptcall_map, i32 0, i32 1, i32 4, i32 0) to i64)), i32 1, i16 257, i16 1 }],
; CHECK-OPAQUE-SAME: %ptcall.map_stub { i64 sub (i64 ptrtoint (ptr @__ptcall_stub.1.exit.1 to i64), i64 ptrtoint (ptr getelementptr inbounds (%ptcall.map, ptr @__ptcall_map, i32 0, i32 1, i32 4, i32 0) to i64)), i32 1, i16 257, i16 1 }],
; CHECK-SAME: [2 x %ptcall.map_func] [%ptcall.map_func { i32 7, i32 7, i32 1, i32 0 }, %ptcall.map_func { i32 9, i32 9, i32 1, i32 0 }],
; CHECK-SAME: %ptcall.map_ext { i32 48, i32 0, i32 0, i32 240 },
; CHECK-SAME: [2 x %ptcall.map_func_ext] [%ptcall.map_func_ext { i32 1, i32 1, i32 0, i32 0 }, %ptcall.map_func_ext { i32 3, i32 3, i32 0, i32 0 }],
; CHECK-SAME: [0 x %ptcall.map_callee] zeroinitializer, [0 x i8] zeroinitializer,
; CHECK-SAME: %ptcall.map_graph { i32 72, i32 0, i32 0, i32 0, i32 0, i32 0 },
; CHECK-SAME: [2 x %ptcall.map_func_graph] [%ptcall.map_func_graph { i64 7499306027347902606, i32 0, i32 0, i32 0, i32 0 }, %ptcall.map_func_graph { i64 -8637453439622686776, i32 0, i32 0, i32 0, i32 0 }],
; CHECK-SAME: [0 x %ptcall.map_icall] zeroinitializer, [0 x %ptcall.map_taken] zeroinitializer, [0 x %ptcall.map_block_succ] zeroinitializer, [0 x i32] zeroinitializer,
; CHECK-SAME: [16 x i8] c"\00map.c\00f\00g\00\00\00\00\00\00" }>, section "ptcall_map", align 8
; The blob is kept with llvm.used (SHF_GNU_RETAIN: survives lld --gc-sections), the slot
; and stubs with llvm.compiler.used.
; CHECK-TYPED: @llvm.used = appending global [1 x i8*] [i8* bitcast (%ptcall.map* @__ptcall_map to i8*)], section "llvm.metadata"
; CHECK-OPAQUE: @llvm.used = appending global [1 x ptr] [ptr @__ptcall_map], section "llvm.metadata"
; CHECK-TYPED: @llvm.compiler.used = appending global [6 x i8*] [i8* bitcast (i64* @__ptcall_soft_slot to i8*), i8* bitcast (void ()* @__ptcall_stub.0.entry.0 to i8*),
; CHECK-OPAQUE: @llvm.compiler.used = appending global [6 x ptr] [ptr @__ptcall_soft_slot, ptr @__ptcall_stub.0.entry.0,

; Sections: ptcall_map allocated read-only (A, plus R = SHF_GNU_RETAIN), 8-aligned,
; 328 bytes; ptcall_stubs AX, 16-aligned, 5 x 16 bytes; the slot in .bss; the retained
; empty ptcall_sites anchor and one linked-order ptcall_sites entry per sled (5).
; OBJ: ptcall_sites PROGBITS 0000000000000000 {{[0-9a-f]+}} 000000 00 AR 0 0 1
; OBJ-COUNT-5: ptcall_sites PROGBITS 0000000000000000 {{[0-9a-f]+}} 000008 00 AL {{[0-9]+}} 0 4
; OBJ: ptcall_stubs PROGBITS 0000000000000000 {{[0-9a-f]+}} 000050 00 AX 0 0 16
; OBJ: ptcall_map PROGBITS 0000000000000000 {{[0-9a-f]+}} 000148 00 AR 0 0 8
; A sled entry: the sled (PC-relative into the code) and its stub.
; OBJ: Relocation section '.relaptcall_sites' at offset {{.*}} contains 2 entries:
; OBJ-NEXT: Offset
; OBJ-NEXT: 0000000000000000 {{[0-9a-f]+}} R_X86_64_PC32 {{.*}} .text + 0
; OBJ-NEXT: 0000000000000004 {{[0-9a-f]+}} R_X86_64_PC32 {{.*}} ptcall_stubs + 0
; Relocations in the blob are PC-relative only (resolved by the static linker): the slot,
; the sled table bounds and the 5 stubs.
; OBJ: Relocation section '.relaptcall_map' at offset {{.*}} contains 8 entries:
; OBJ-NEXT: Offset
; OBJ-NEXT: 0000000000000030 {{[0-9a-f]+}} R_X86_64_PC64 {{.*}} .bss + 0
; OBJ-NEXT: 0000000000000040 {{[0-9a-f]+}} R_X86_64_PC64 {{.*}} __start_ptcall_sites + 0
; OBJ-NEXT: 0000000000000048 {{[0-9a-f]+}} R_X86_64_PC64 {{.*}} __stop_ptcall_sites + 0
; OBJ-NEXT: 0000000000000050 {{[0-9a-f]+}} R_X86_64_PC64 {{.*}} ptcall_stubs + 0
; OBJ-NEXT: 0000000000000060 {{[0-9a-f]+}} R_X86_64_PC64 {{.*}} ptcall_stubs + 10
; OBJ-NEXT: 0000000000000070 {{[0-9a-f]+}} R_X86_64_PC64 {{.*}} ptcall_stubs + 20
; OBJ-NEXT: 0000000000000080 {{[0-9a-f]+}} R_X86_64_PC64 {{.*}} ptcall_stubs + 30
; OBJ-NEXT: 0000000000000090 {{[0-9a-f]+}} R_X86_64_PC64 {{.*}} ptcall_stubs + 40
; OBJ: 0000000000000000 8 OBJECT LOCAL DEFAULT {{[0-9]+}} __ptcall_soft_slot

; Each stub is one ret padded with int3 to 16 bytes.
; STUBS: <__ptcall_stub.0.entry.0>:
; STUBS-NEXT: 0: c3 retq
; STUBS-NEXT: 1: cc int3
; STUBS: f: cc int3
; STUBS-EMPTY:
; STUBS-NEXT: <__ptcall_stub.0.exit.0>:
; STUBS-NEXT: 10: c3 retq
; STUBS: <__ptcall_stub.1.exit.1>:
; STUBS-NEXT: 40: c3 retq
; STUBS: 4f: cc int3
; STUBS-NOT: {{.}}
