; Map version 6 (docs/map-format.md, "Sizes and callees"): per function its IR instructions,
; basic blocks and direct callees, each once in first-call order. A callee instrumented in
; the unit is named by its function index and its name; another (a declaration) by its
; name only (func 0xffffffff); calls through a pointer and intrinsics are not callees,
; memcpy is (a program may define its own). Debug intrinsics are not counted: caller's two
; llvm.dbg.value calls (debug records, not instructions, from LLVM 19) leave it 10 instructions.
; RUN: %opt-ptcall -passes=ptcall -S %s | FileCheck %s
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"
source_filename = "callees.c"

declare void @ext(i32)
declare void @llvm.memcpy.p0i8.p0i8.i64(i8*, i8*, i64, i1)
declare i32 @llvm.ctpop.i32(i32)
declare void @llvm.dbg.value(metadata, metadata, metadata)

define void @leaf() {
  ret void
}

define void @caller(void ()* %fp, i8* %d, i8* %s, i1 %c) !dbg !5 {
  call void @llvm.dbg.value(metadata i1 %c, metadata !8, metadata !DIExpression()), !dbg !9
  call void @leaf()
  call void @ext(i32 1)
  call void @leaf()
  call void %fp()
  %n = call i32 @llvm.ctpop.i32(i32 7)
  call void @llvm.dbg.value(metadata i32 %n, metadata !8, metadata !DIExpression()), !dbg !9
  br i1 %c, label %a, label %b
a:
  call void @llvm.memcpy.p0i8.p0i8.i64(i8* %d, i8* %s, i64 8, i1 false)
  br label %b
b:
  call void @ext(i32 %n)
  ret void
}

; Strings: "" (0) "callees.c" (1) "leaf" (11) "caller" (16) "ext" (23) and memcpy (27) by its
; base name "llvm.memcpy" on every release (the IR's overload suffix differs: .p0i8.p0i8.i64
; with typed pointers, .p0.p0.i64 with opaque ones).
; leaf: 1 instruction, 1 block, no callee. caller: 10 instructions in 3 blocks; callees
; (records 0..2): leaf (function 0), ext, memcpy (neither in the unit).
; CHECK: %ptcall.map_ext { i32 72, i32 3, i32 0, i32 248 },
; CHECK-SAME: [2 x %ptcall.map_func_ext] [%ptcall.map_func_ext { i32 1, i32 1, i32 0, i32 0 }, %ptcall.map_func_ext { i32 10, i32 3, i32 0, i32 3 }],
; CHECK-SAME: [3 x %ptcall.map_callee] [%ptcall.map_callee { i32 0, i32 11 }, %ptcall.map_callee { i32 -1, i32 23 }, %ptcall.map_callee { i32 -1, i32 27 }],
; CHECK-SAME: c"\00callees.c\00leaf\00caller\00ext\00llvm.memcpy\00

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2}
!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, emissionKind: FullDebug)
!1 = !DIFile(filename: "callees.c", directory: "/")
!2 = !{i32 2, !"Debug Info Version", i32 3}
!5 = distinct !DISubprogram(name: "caller", scope: !1, file: !1, line: 1, type: !6, unit: !0, spFlags: DISPFlagDefinition)
!6 = !DISubroutineType(types: !7)
!7 = !{null}
!8 = !DILocalVariable(name: "n", scope: !5, file: !1, line: 2, type: !10)
!9 = !DILocation(line: 2, scope: !5)
!10 = !DIBasicType(name: "int", size: 32, encoding: DW_ATE_signed)
