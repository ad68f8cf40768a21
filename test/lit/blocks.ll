; Map version 7 (docs/map-format.md, "Blocks and lines"): with the `blocks` option every
; basic block of an instrumented function increments its own 64-bit counter through the
; unit's counter pointer (a load, a load, an add, a store: no call), after the critical
; edges were split: f's edge entry -> join is critical (entry has two successors, join two
; predecessors), so f has 4 counted blocks. The map's blocks part names each block's function
; and its source lines (the entry block: the entry stub's line 1 and line 2; the split edge's
; jump keeps the line of the branch it came from, 2); the flag is 256 (PTCALL_MAP_F_BLOCKS). Without the option nothing of
; it is emitted.
; RUN: %opt-ptcall -passes='ptcall<early;blocks>' -S %s | FileCheck %s
; RUN: %opt-ptcall -passes='ptcall<early>' -S %s | FileCheck %s --check-prefix=PLAIN
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"
source_filename = "blocks.c"

define i32 @f(i32 %x) !dbg !5 {
entry:
  %c = icmp sgt i32 %x, 0, !dbg !8
  br i1 %c, label %then, label %join, !dbg !8
then:
  %y = add i32 %x, 1, !dbg !9
  br label %join, !dbg !9
join:
  %r = phi i32 [ %y, %then ], [ 0, %entry ]
  ret i32 %r, !dbg !10
}

; CHECK: @__ptcall_blocks_ptr = internal global {{.*}}@__ptcall_blocks
; CHECK: @__ptcall_blocks = internal global [4 x i64] zeroinitializer
; CHECK: %ptcall.map_header { i32 1296258128, i16 8, i16 80, i32 {{[0-9]+}}, i32 499,
; CHECK-SAME: %ptcall.map_blocks { i32 {{[0-9]+}}, i32 4, i32 {{[0-9]+}}, i32 0,
; CHECK-SAME: [4 x %ptcall.map_block] [%ptcall.map_block { i32 0, i32 0, i32 2 }, %ptcall.map_block { i32 0, i32 2, i32 1 }, %ptcall.map_block { i32 0, i32 3, i32 1 }, %ptcall.map_block { i32 0, i32 4, i32 1 }],
; CHECK-SAME: [5 x %ptcall.map_line] [%ptcall.map_line { i32 [[F:[0-9]+]], i32 1 }, %ptcall.map_line { i32 [[F]], i32 2 }, %ptcall.map_line { i32 [[F]], i32 2 }, %ptcall.map_line { i32 [[F]], i32 3 }, %ptcall.map_line { i32 [[F]], i32 4 }]
; CHECK-LABEL: define i32 @f(
; CHECK: entry:
; CHECK: [[P:%.*]] = load {{.*}}, {{.*}} @__ptcall_blocks_ptr
; CHECK-NEXT: [[C:%.*]] = getelementptr inbounds i64, {{.*}} [[P]], i64 0
; CHECK-NEXT: [[V:%.*]] = load i64, {{.*}} [[C]]
; CHECK-NEXT: [[N:%.*]] = add i64 [[V]], 1
; CHECK-NEXT: store i64 [[N]], {{.*}} [[C]]
; CHECK: entry.join_crit_edge:
; CHECK: getelementptr inbounds i64, {{.*}}, i64 1
; CHECK: then:
; CHECK: getelementptr inbounds i64, {{.*}}, i64 2
; CHECK: join:
; CHECK: getelementptr inbounds i64, {{.*}}, i64 3
; PLAIN-NOT: __ptcall_blocks
; PLAIN-NOT: map_blocks

!llvm.module.flags = !{!0}
!llvm.dbg.cu = !{!1}
!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = distinct !DICompileUnit(language: DW_LANG_C99, file: !2, producer: "t", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly)
!2 = !DIFile(filename: "blocks.c", directory: "/src")
!3 = !DISubroutineType(types: !4)
!4 = !{}
!5 = distinct !DISubprogram(name: "f", scope: !2, file: !2, line: 1, type: !3, scopeLine: 1, spFlags: DISPFlagDefinition, unit: !1)
!8 = !DILocation(line: 2, column: 7, scope: !5)
!9 = !DILocation(line: 3, column: 5, scope: !5)
!10 = !DILocation(line: 4, column: 3, scope: !5)
