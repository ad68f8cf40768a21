; Map version 8 (docs/map-format.md, "Call graph for reachability"): per function its type id
; and whether its address is taken, per call through a pointer the called type id and its
; block, the functions of other units whose address the unit takes, and with `blocks` each
; block's successors. The type id is FNV-1a 64 of a spelling where every pointer is `p`, so
; typed (LLVM 14) and opaque (15+) pointers give the same ids:
;   i32(p,i64)  0xe44be2084e54a4bf = -1996253484506897217   (handler, cb, ext_cb, the icall)
;   v(i32)      logger's type                                (other)
; Taken: cb (stored in @spare), handler (in the table @tab), ext_cb (a declaration passed
; as an argument: a taken record by name). Not taken: direct (only called directly),
; viacast (called through a cast of itself: a direct call on every release), used (in
; llvm.used only), ctor (in llvm.global_ctors only).
; RUN: %opt-ptcall -passes='ptcall<early;blocks>' -S %s | FileCheck %s
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"
source_filename = "callgraph.c"

@spare = global i32 (i8*, i64)* @cb
@tab = constant [1 x i32 (i8*, i64)*] [i32 (i8*, i64)* @handler]
@llvm.used = appending global [1 x i8*] [i8* bitcast (void ()* @used to i8*)], section "llvm.metadata"
@llvm.global_ctors = appending global [1 x { i32, void ()*, i8* }] [{ i32, void ()*, i8* } { i32 65535, void ()* @ctor, i8* null }]

declare i32 @ext_cb(i8*, i64)
declare void @reg(i32 (i8*, i64)*)

define i32 @handler(i8* %d, i64 %n) {
  ret i32 0
}

define i32 @cb(i8* %d, i64 %n) {
  ret i32 1
}

define void @direct() {
  ret void
}

define void @viacast(i32 %x) {
  ret void
}

define void @used() {
  ret void
}

define void @ctor() {
  ret void
}

define i32 @caller(i32 (i8*, i64)* %fp, i8* %d, i1 %c) {
entry:
  call void @direct()
  call void bitcast (void (i32)* @viacast to void (i64)*)(i64 1)
  call void @reg(i32 (i8*, i64)* @ext_cb)
  br i1 %c, label %a, label %b
a:
  %r = call i32 %fp(i8* %d, i64 1)
  br label %b
b:
  ret i32 0
}

; Function graph records in table order: handler (taken), cb (taken), direct, viacast, used,
; ctor (none taken), caller (one indirect call, in its block 8 `a`). One taken record:
; ext_cb, type i32(p,i64), by name. Blocks: handler 0, cb 1, direct 2, viacast 3, used 4,
; ctor 5; caller: entry 6 -> a 8 and the block 7 that splits the critical edge entry -> b;
; 7 -> b 9; a 8 -> b 9; b 9 returns.
; CHECK: %ptcall.map_graph { i32 320, i32 1, i32 1, i32 10, i32 4, i32 0 },
; CHECK-SAME: [7 x %ptcall.map_func_graph] [%ptcall.map_func_graph { i64 -1996253484506897217, i32 1, i32 0, i32 0, i32 0 }, %ptcall.map_func_graph { i64 -1996253484506897217, i32 1, i32 0, i32 0, i32 0 }, %ptcall.map_func_graph { i64 7499306027347902606, i32 0, i32 0, i32 0, i32 0 }, %ptcall.map_func_graph { i64 {{-?[0-9]+}}, i32 0, i32 0, i32 0, i32 0 }, %ptcall.map_func_graph { i64 7499306027347902606, i32 0, i32 0, i32 0, i32 0 }, %ptcall.map_func_graph { i64 7499306027347902606, i32 0, i32 0, i32 0, i32 0 }, %ptcall.map_func_graph { i64 {{-?[0-9]+}}, i32 0, i32 0, i32 1, i32 0 }],
; CHECK-SAME: [1 x %ptcall.map_icall] [%ptcall.map_icall { i64 -1996253484506897217, i32 8, i32 0 }],
; CHECK-SAME: [1 x %ptcall.map_taken] [%ptcall.map_taken { i64 -1996253484506897217, i32 [[EXT:[0-9]+]], i32 0 }],
; CHECK-SAME: [10 x %ptcall.map_block_succ] [%ptcall.map_block_succ zeroinitializer, %ptcall.map_block_succ zeroinitializer, %ptcall.map_block_succ zeroinitializer, %ptcall.map_block_succ zeroinitializer, %ptcall.map_block_succ zeroinitializer, %ptcall.map_block_succ zeroinitializer, %ptcall.map_block_succ { i32 0, i32 2 }, %ptcall.map_block_succ { i32 2, i32 1 }, %ptcall.map_block_succ { i32 3, i32 1 }, %ptcall.map_block_succ { i32 4, i32 0 }],
; CHECK-SAME: [4 x i32] [i32 8, i32 7, i32 9, i32 9],
; CHECK-SAME: c"\00callgraph.c\00handler\00cb\00direct\00viacast\00used\00ctor\00caller\00reg\00ext_cb\00
