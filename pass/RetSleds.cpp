//===- RetSleds.cpp - exit sleds behind `ret`: no instruction on the untraced path ----===//
//
// The IR pass can only put an exit sled *before* a function's `ret`, where an untraced run
// executes it (a 5-byte nop). This machine-level step moves it behind the `ret`: the
// `ret` itself is the disarmed sled, and the 4 bytes after it (never executed) take the
// rel32 of the `jmp stub` the runtime writes over it to arm it. The stub's own `ret` then
// returns to the function's caller. An untraced run executes nothing for the exit.
//
//     before (IR sled)                after (ret sled)
//     <epilogue-free tail>            <epilogue>
//     nopl 0(%rax,%rax)   # sled      ret               # site: c3, armed: e9 <rel32>
//     <epilogue>                      int3 x 4          # the rel32 once armed
//     ret
//
// Its table entry in ptcall_sites names the `ret` and has bit 0 of the stub set
// (docs/map-format.md, "Ret sleds"); the stub's map record is unchanged, so decoders see
// the same (function, exit) hit.
//
// LLVM 14 offers plugins no hook into the code generator, so this pass takes the place of
// PatchableFunction in the pass registry (its constructor is swapped when the plugin
// loads) and runs that pass first. PatchableFunction comes after prologue/epilogue
// insertion, block placement, FEntry and XRay, and before the emission of the function.
//
// A sled is moved only when nothing can observe the difference: it sits in the same block
// as the `ret`, with no call, branch, label or other inline asm between them; the `ret` is
// the plain 1-byte one and the last instruction of its block; the calling convention keeps
// %r10/%r11 dead at the return (the soft backend's handlers may clobber them); no
// return hardening rewrites or follows the `ret`. Everything else keeps its IR sled.
// If this pass does not run (LTO code generation in the linker, PTCALL_RET_SLEDS=0), every
// IR sled stays where it is, which is always correct.
//===----------------------------------------------------------------------------------===//

#include "HostLLVM.h"
#include "LLVMCompat.h"
#include "SledAsm.h"

#include "llvm/CodeGen/MachineBasicBlock.h"
#include "llvm/CodeGen/MachineFunction.h"
#include "llvm/CodeGen/MachineFunctionPass.h"
#include "llvm/CodeGen/MachineInstr.h"
#include "llvm/CodeGen/Passes.h"
#include "llvm/CodeGen/TargetInstrInfo.h"
#include "llvm/CodeGen/TargetSubtargetInfo.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/InitializePasses.h"
#include "llvm/PassInfo.h"
#include "llvm/PassRegistry.h"
#include "llvm/Target/TargetMachine.h"

#include <cstdlib>
#include <memory>

using namespace llvm;

namespace {

Pass *(*OriginalCtor)() = nullptr; // PatchableFunction's
bool Installed = false;

// runOnMachineFunction is protected in MachineFunctionPass; a member pointer taken through
// a derived class's using-declaration calls it on the wrapped pass.
struct MFPAccess : MachineFunctionPass {
  using MachineFunctionPass::runOnMachineFunction;
};

bool isPlainRet(const MachineInstr &MI, const TargetInstrInfo &TII) {
  if (!MI.isReturn() || MI.isCall())
    return false;
  StringRef N = TII.getName(MI.getOpcode());
  return N == "RET64" || N == "RETQ"; // `ret`, c3 (LLVM 14 spells it either way)
}

bool isMovableExitSled(const MachineInstr &MI) {
  if (!MI.isInlineAsm())
    return false;
  const char *Asm = MI.getOperand(InlineAsm::MIOp_AsmString).getSymbolName();
  return Asm && ptcall::compat::startsWith(Asm, ptcall::ExitSledMarker);
}

// The exit sled that covers Ret, if it may move behind it.
MachineInstr *sledBefore(MachineInstr &Ret) {
  MachineBasicBlock &MBB = *Ret.getParent();
  for (auto It = std::next(Ret.getReverseIterator()); It != MBB.rend(); ++It) {
    MachineInstr &I = *It;
    if (I.isInlineAsm())
      return isMovableExitSled(I) ? &I : nullptr;
    if (I.isMetaInstruction()) // CFI, debug values, KILL
      continue;
    unsigned Op = I.getOpcode();
    bool XRay = Op >= TargetOpcode::PATCHABLE_OP && Op <= TargetOpcode::PATCHABLE_TYPED_EVENT_CALL;
    if (I.isCall() || I.isBranch() || I.isTerminator() || I.isLabel() || I.isEHScopeReturn() ||
        XRay)
      return nullptr;
  }
  return nullptr;
}

bool functionAllows(const MachineFunction &MF) {
  const Function &F = MF.getFunction();
  if (MF.getTarget().getTargetTriple().getArch() != Triple::x86_64)
    return false;
  CallingConv::ID CC = F.getCallingConv();
  if (CC != CallingConv::C && CC != CallingConv::Fast)
    return false; // e.g. preserve_most/all: %r10/%r11 are callee-saved there
  StringRef Features = F.getFnAttribute("target-features").getValueAsString();
  // -mharden-sls puts an int3 behind the ret; LVI hardening replaces the ret
  if (Features.contains("+harden-sls-ret") || Features.contains("+lvi-cfi") ||
      Features.contains("+lvi-load-hardening"))
    return false;
  return true;
}

std::string retSledAsm(const Function &F) {
  std::string S;
  raw_string_ostream OS(S);
  OS << "# ptcall ret sled: the ret above is the site\n"
     << ".Lptcall_ret${:uid}:\n"
     << ".byte 0xcc, 0xcc, 0xcc, 0xcc\n"
     << ptcall::sitesPushSection(F, ".Lptcall_ret${:uid}")
     << ".p2align 2\n"
     << ".long .Lptcall_ret${:uid} - 1 - .\n"
     // bit 0 of the stub marks a ret sled; stubs are 16-byte aligned
     << ".long ${0:P} - . + " << PTCALL_SITE_RET << "\n"
     << ".popsection";
  OS.flush();
  return S;
}

bool placeRetSleds(MachineFunction &MF) {
  if (!functionAllows(MF))
    return false;
  const TargetInstrInfo &TII = *MF.getSubtarget().getInstrInfo();
  const char *Asm = nullptr;
  bool Changed = false;
  for (MachineBasicBlock &MBB : MF) {
    if (MBB.empty() || !isPlainRet(MBB.back(), TII))
      continue;
    MachineInstr &Ret = MBB.back();
    MachineInstr *Sled = sledBefore(Ret);
    if (!Sled)
      continue;
    if (!Asm)
      Asm = MF.createExternalSymbolName(retSledAsm(MF.getFunction()));
    // Same instruction, same operands (the stub is operand ${0}), new text, new place.
    Sled->getOperand(InlineAsm::MIOp_AsmString).ChangeToES(Asm);
    MBB.splice(MBB.end(), &MBB, Sled->getIterator());
    Changed = true;
  }
  return Changed;
}

class RetSledPass : public MachineFunctionPass {
  std::unique_ptr<Pass> Inner; // the PatchableFunction pass this one stands in for

public:
  static char ID;
  RetSledPass() : MachineFunctionPass(ID), Inner(OriginalCtor ? OriginalCtor() : nullptr) {}

  StringRef getPassName() const override {
    return "Implement the 'patchable-function' attribute; ptcall ret sleds";
  }

  bool doInitialization(Module &M) override {
    if (Inner)
      Inner->doInitialization(M);
    return MachineFunctionPass::doInitialization(M);
  }

  bool runOnMachineFunction(MachineFunction &MF) override {
    bool Changed = false;
    if (Inner) {
      bool (MachineFunctionPass::*Run)(MachineFunction &) = &MFPAccess::runOnMachineFunction;
      Changed = (static_cast<MachineFunctionPass *>(Inner.get())->*Run)(MF);
    }
    return placeRetSleds(MF) || Changed;
  }
};

char RetSledPass::ID = 0;

Pass *createRetSledPass() { return new RetSledPass(); }

// Swaps PatchableFunction's constructor in the pass registry for ours when the plugin is
// loaded (clang -fpass-plugin, opt/llc -load), before any code generator pipeline is built.
struct Installer {
  Installer() {
    // In another release's compiler no LLVM code may run (llvmGetPassPluginInfo says why).
    unsigned Host = ptcall::hostLLVMMajor();
    if (Host && Host != ptcall::compat::BuiltForMajor)
      return;
    if (const char *E = getenv("PTCALL_RET_SLEDS"))
      if (*E == '0' || StringRef(E).equals_insensitive("off") ||
          StringRef(E).equals_insensitive("no") || StringRef(E).equals_insensitive("false"))
        return;
    PassRegistry &R = *PassRegistry::getPassRegistry();
    initializePatchableFunctionPass(R);
    const PassInfo *PI = R.getPassInfo(&PatchableFunctionID);
    if (!PI || !PI->getNormalCtor() || PI->getNormalCtor() == createRetSledPass)
      return;
    OriginalCtor = PI->getNormalCtor();
    const_cast<PassInfo *>(PI)->setNormalCtor(createRetSledPass);
    Installed = true;
  }
} TheInstaller;

} // namespace

bool ptcall::retSledsInstalled() { return Installed; }
