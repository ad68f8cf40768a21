//===- SledAsm.h - assembler text shared by the IR pass and the ret-sled pass --------===//
//
// Both halves of the plugin write entries of the object's ptcall_sites table from inline
// asm: the IR pass for every call-site sled, the machine-level ret-sled pass
// (RetSleds.cpp) when it moves an exit sled behind the function's `ret`. They must agree
// on the section flags and on the marker that tells the second which sleds it may move.
//===----------------------------------------------------------------------------------===//
#ifndef PTCALL_PASS_SLEDASM_H
#define PTCALL_PASS_SLEDASM_H

#include "LLVMCompat.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/IR/Comdat.h"
#include "llvm/IR/Function.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

#include "ptcall/map_format.h"

namespace ptcall {

// First line of the asm of an exit sled that the IR pass placed right before a `ret`: only
// such a sled may become a ret sled (an exit before a tail call, an unwind or a landing
// sled never does).
constexpr const char *ExitSledMarker = "# ptcall exit sled";

// `.pushsection` of the ptcall_sites table for an entry about code of F: SHF_LINK_ORDER
// to the section holding LinkSym, and in F's comdat group if F has one, so that linkers
// drop the entry together with that code (comdat deduplication, --gc-sections).
inline std::string sitesPushSection(const llvm::Function &F, llvm::StringRef LinkSym) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << ".pushsection " PTCALL_SITES_SECTION ",\"ao";
  if (const llvm::Comdat *CD = F.getComdat()) {
    std::string Group;
    for (char Ch : CD->getName()) // '$' starts an operand in inline asm
      Group += Ch == '$' ? std::string("$$") : std::string(1, Ch);
    // The assembler's order of the two operands changed in LLVM 18 (LLVMCompat.h).
    if (compat::LinkedSymbolBeforeGroup)
      OS << "G\",@progbits," << LinkSym << ",\"" << Group << "\",comdat\n";
    else
      OS << "G\",@progbits,\"" << Group << "\",comdat," << LinkSym << "\n";
  } else {
    OS << "\",@progbits," << LinkSym << "\n";
  }
  OS.flush();
  return S;
}

// Whether the ret-sled pass is installed in this process (RetSleds.cpp): only then can an
// object compiled here hold ret sleds.
bool retSledsInstalled();

} // namespace ptcall

#endif
