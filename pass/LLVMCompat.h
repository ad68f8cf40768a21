//===- LLVMCompat.h - the LLVM API differences ptcall's pass meets, 14 to 19 ----------===//
//
// The pass is one source for every LLVM it supports (docs/pass.md, "LLVM versions"). Each
// API that changed between those releases is reached through one name here, so that the
// pass itself carries no version test. Keep this file the only place that reads
// LLVM_VERSION_MAJOR.
//===---------------------------------------------------------------------------------===//
#ifndef PTCALL_PASS_LLVM_COMPAT_H
#define PTCALL_PASS_LLVM_COMPAT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/Attributes.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/LLVMContext.h"

// LLVM 16 moved Triple to the TargetParser library (the old header forwarded until 17).
#if LLVM_VERSION_MAJOR >= 16
#include "llvm/TargetParser/Triple.h"
#else
#include "llvm/ADT/Triple.h"
#endif

#if LLVM_VERSION_MAJOR < 14
#error "ptcall's pass needs LLVM 14 or newer (docs/pass.md, LLVM versions)"
#endif

namespace ptcall {
namespace compat {

// StringRef::startswith/endswith were renamed starts_with/ends_with in 16 and removed in 19.
inline bool startsWith(llvm::StringRef S, llvm::StringRef Prefix) {
#if LLVM_VERSION_MAJOR >= 16
  return S.starts_with(Prefix);
#else
  return S.startswith(Prefix);
#endif
}

inline bool endsWith(llvm::StringRef S, llvm::StringRef Suffix) {
#if LLVM_VERSION_MAJOR >= 16
  return S.ends_with(Suffix);
#else
  return S.endswith(Suffix);
#endif
}

// A generic data pointer: i8* on LLVM 14 (typed pointers), `ptr` from 15 on, where
// Type::getInt8PtrTy went away in 17.
inline llvm::PointerType *bytePointerType(llvm::LLVMContext &C) {
#if LLVM_VERSION_MAJOR >= 17
  return llvm::PointerType::getUnqual(C);
#else
  return llvm::Type::getInt8PtrTy(C);
#endif
}

// Patchpoints: two intrinsics (void and i64) up to 18, one overloaded intrinsic from 19.
inline bool isPatchpoint(llvm::Intrinsic::ID ID) {
#if LLVM_VERSION_MAJOR >= 19
  return ID == llvm::Intrinsic::experimental_patchpoint;
#else
  return ID == llvm::Intrinsic::experimental_patchpoint_void ||
         ID == llvm::Intrinsic::experimental_patchpoint_i64;
#endif
}

// The function attributes that let later passes delete, hoist or merge a call because it
// has no side effect. LLVM 16 folded readnone/readonly/writeonly/argmemonly/
// inaccessiblememonly/inaccessiblemem_or_argmemonly into one `memory(...)` attribute;
// removing it leaves the effects unknown, as removing the old ones did.
inline llvm::ArrayRef<llvm::Attribute::AttrKind> purityAttributes() {
  static const llvm::Attribute::AttrKind Kinds[] = {
#if LLVM_VERSION_MAJOR >= 16
      llvm::Attribute::Memory,
#else
      llvm::Attribute::ReadNone,
      llvm::Attribute::ReadOnly,
      llvm::Attribute::WriteOnly,
      llvm::Attribute::ArgMemOnly,
      llvm::Attribute::InaccessibleMemOnly,
      llvm::Attribute::InaccessibleMemOrArgMemOnly,
#endif
      llvm::Attribute::Speculatable};
  return Kinds;
}

// `.section NAME,"oG",@progbits,...`: up to 17 the integrated assembler took the group before
// the SHF_LINK_ORDER symbol (GROUP,comdat,SYM); from 18 on it takes them in GNU as's order
// (SYM,GROUP,comdat) and refuses the other.
constexpr bool LinkedSymbolBeforeGroup = LLVM_VERSION_MAJOR >= 18;

// The LLVM release the plugin was compiled against, as a string kept in the plugin's file:
// the wrappers read it to refuse a clang of another release before that clang fails to load
// it (pass/ptcall-wrapper.sh.in, docs/pass.md).
constexpr unsigned BuiltForMajor = LLVM_VERSION_MAJOR;
#define PTCALL_PASS_LLVM_TAG "ptcall-pass-for-llvm-" LLVM_VERSION_STRING

} // namespace compat
} // namespace ptcall

#endif
