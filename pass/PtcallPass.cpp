//===- PtcallPass.cpp - ptcall instrumentation pass (LLVM 14-19 new PM plugin) ---===//
//
// Adds to every function a call to an *entry stub* at its start and an *exit stub*
// before each return (plus UNWIND stubs before `resume` and LANDING stubs at landing
// pads and after returns_twice calls). Every stub is an internal naked function in the
// code section `ptcall_stubs` whose body is a bare `ret` (endbr64 + ret under CET) padded
// with int3 to PTCALL_STUB_STRIDE bytes. Each module also gets one map blob in section
// `ptcall_map` (see include/ptcall/map_format.h, docs/map-format.md) and a constructor /
// destructor pair that registers the object with the runtime if it is present.
//
// Options come from pipeline parameters (opt -passes='ptcall<early;no-exits>') or from
// the environment (PTCALL_PLACEMENT, PTCALL_EXITS, ...), which is how the compiler
// wrappers ptcall-cc / ptcall-c++ configure a `clang -fpass-plugin=` run. See
// docs/pass.md.
//===----------------------------------------------------------------------------===//

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fnmatch.h>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "HostLLVM.h"
#include "LLVMCompat.h"
#include "SledAsm.h"
#include "ptcall/map_format.h"

using namespace llvm;
namespace compat = ptcall::compat;

namespace {

void addFuzzInputHook(Module &M); // the libFuzzer harness's entry hook, below

// ---- names the pass owns ------------------------------------------------------------
constexpr const char *StubPrefix = "__ptcall_stub.";
constexpr const char *MapName = "__ptcall_map";
constexpr const char *SlotName = "__ptcall_soft_slot";
constexpr const char *CtorName = "__ptcall_module_ctor";
constexpr const char *DtorName = "__ptcall_module_dtor";
constexpr const char *DoneMD = "ptcall.instrumented";
constexpr const char *CygMD = "ptcall.cyg_channel";
constexpr const char *InstrumentAttr = "ptcall-instrument";
constexpr const char *StubAttr = "ptcall-stub";
constexpr const char *CygEntryAttr = "instrument-function-entry-inlined";
constexpr const char *CygExitAttr = "instrument-function-exit-inlined";
// -finstrument-functions (pre-inline cyg hooks) marks the same functions; the driver keeps
// only the last of the -finstrument-functions* flags, so a user's own -finstrument-functions
// replaces the wrappers' flag. Those attributes are the user's: read, never removed.
constexpr const char *UserCygEntryAttr = "instrument-function-entry";
constexpr const char *UserCygExitAttr = "instrument-function-exit";
constexpr const char *NoInstrumentAnnotation = "ptcall_no_instrument";
// Runs before user constructors (101..65535, and the default 65535); its destructor
// runs after theirs. 0..100 are reserved for the implementation; sanitizers use 0/1.
constexpr int CtorPriority = 100;

// ---- options -------------------------------------------------------------------------
struct Options {
  bool Early = false;      // placement early (PipelineStartEP) instead of late
  bool Exits = true;       // exit / unwind / landing stubs
  unsigned MinSize = 0;    // functions with fewer IR instructions are skipped
  std::string Include;     // file of names/globs: only these are instrumented
  std::string Exclude;     // file of names/globs: these are not instrumented
  bool CygChannel = false; // functions without the cyg "-inlined" attributes are
                           // no_instrument_function (set by the wrappers)
  bool Gated = true;       // call sites are nop sleds the runtime arms (map v3 SLEDS);
                           // off: every site always calls its stub
  bool Blocks = false;     // one counter per basic block (map v7 BLOCKS; -fptcall-cov)
};

bool parseBool(StringRef V, bool &Out) {
  V = V.trim();
  if (V == "1" || V.equals_insensitive("on") || V.equals_insensitive("yes") ||
      V.equals_insensitive("true")) {
    Out = true;
    return true;
  }
  if (V == "0" || V.equals_insensitive("off") || V.equals_insensitive("no") ||
      V.equals_insensitive("false")) {
    Out = false;
    return true;
  }
  return false;
}

[[noreturn]] void fatal(const Twine &Msg) {
  report_fatal_error("ptcall: " + Msg, /*gen_crash_diag=*/false);
}

Options optionsFromEnv() {
  Options O;
  if (const char *P = getenv("PTCALL_PLACEMENT")) {
    StringRef V(P);
    if (V == "early")
      O.Early = true;
    else if (V == "late" || V.empty())
      O.Early = false;
    else
      fatal("PTCALL_PLACEMENT must be 'early' or 'late', not '" + V + "'");
  }
  if (const char *P = getenv("PTCALL_EXITS"))
    if (*P && !parseBool(P, O.Exits))
      fatal("PTCALL_EXITS must be 0 or 1, not '" + Twine(P) + "'");
  if (const char *P = getenv("PTCALL_NO_EXITS")) {
    bool NoExits = false;
    if (*P && !parseBool(P, NoExits))
      fatal("PTCALL_NO_EXITS must be 0 or 1, not '" + Twine(P) + "'");
    if (NoExits)
      O.Exits = false;
  }
  if (const char *P = getenv("PTCALL_MIN_SIZE"))
    if (*P && StringRef(P).trim().getAsInteger(10, O.MinSize))
      fatal("PTCALL_MIN_SIZE must be a number, not '" + Twine(P) + "'");
  if (const char *P = getenv("PTCALL_GATED"))
    if (*P && !parseBool(P, O.Gated))
      fatal("PTCALL_GATED must be 0 or 1, not '" + Twine(P) + "'");
  // read by RetSleds.cpp when the plugin loads; checked here, where an error can be reported
  if (const char *P = getenv("PTCALL_RET_SLEDS")) {
    bool RetSleds = true;
    if (*P && !parseBool(P, RetSleds))
      fatal("PTCALL_RET_SLEDS must be 0 or 1, not '" + Twine(P) + "'");
  }
  if (const char *P = getenv("PTCALL_BLOCKS"))
    if (*P && !parseBool(P, O.Blocks))
      fatal("PTCALL_BLOCKS must be 0 or 1, not '" + Twine(P) + "'");
  if (const char *P = getenv("PTCALL_INCLUDE"))
    O.Include = P;
  if (const char *P = getenv("PTCALL_EXCLUDE"))
    O.Exclude = P;
  if (const char *P = getenv("PTCALL_CYG_CHANNEL"))
    if (*P && !parseBool(P, O.CygChannel))
      fatal("PTCALL_CYG_CHANNEL must be 0 or 1, not '" + Twine(P) + "'");
  return O;
}

// Pipeline parameters:
// ptcall<early;late;exits;no-exits;gated;ungated;min-size=N;include=F;exclude=F;cyg>
bool parseParams(StringRef Params, Options &O, std::string &Err) {
  SmallVector<StringRef, 8> Parts;
  Params.split(Parts, ';', -1, /*KeepEmpty=*/false);
  for (StringRef P : Parts) {
    if (P == "early")
      O.Early = true;
    else if (P == "late")
      O.Early = false;
    else if (P == "exits")
      O.Exits = true;
    else if (P == "no-exits")
      O.Exits = false;
    else if (P == "cyg")
      O.CygChannel = true;
    else if (P == "gated")
      O.Gated = true;
    else if (P == "ungated")
      O.Gated = false;
    else if (P == "blocks")
      O.Blocks = true;
    else if (P == "no-blocks")
      O.Blocks = false;
    else if (P.consume_front("min-size=")) {
      if (P.getAsInteger(10, O.MinSize)) {
        Err = "bad min-size";
        return false;
      }
    } else if (P.consume_front("include="))
      O.Include = P.str();
    else if (P.consume_front("exclude="))
      O.Exclude = P.str();
    else {
      Err = ("unknown ptcall parameter '" + P + "'").str();
      return false;
    }
  }
  return true;
}

std::vector<std::string> loadPatterns(const std::string &Path, const char *What) {
  std::vector<std::string> Out;
  auto BufOrErr = MemoryBuffer::getFile(Path, /*IsText=*/true);
  if (!BufOrErr)
    fatal(Twine("cannot read ") + What + " list '" + Path +
          "': " + BufOrErr.getError().message());
  SmallVector<StringRef, 64> Lines;
  (*BufOrErr)->getBuffer().split(Lines, '\n');
  for (StringRef L : Lines) {
    L = L.trim();
    if (L.empty() || compat::startsWith(L, "#"))
      continue;
    Out.push_back(L.str());
  }
  return Out;
}

uint64_t fnv1a64(uint64_t H, StringRef S) {
  for (unsigned char Ch : S) {
    H ^= Ch;
    H *= 0x100000001b3ULL;
  }
  return H;
}
constexpr uint64_t FnvInit = 0xcbf29ce484222325ULL;

// Names a function is matched by in include/exclude lists: linkage name, demangled
// name, and (for Itanium names) the qualified name without parameters.
struct FuncNames {
  std::string Linkage, Display, Qualified;
};

FuncNames namesOf(const Function &F) {
  FuncNames N;
  N.Linkage = F.getName().str();
  N.Display = demangle(N.Linkage);
  ItaniumPartialDemangler D;
  if (!D.partialDemangle(N.Linkage.c_str()) && D.isFunction()) {
    size_t Sz = 0;
    if (char *Buf = D.getFunctionName(nullptr, &Sz)) {
      N.Qualified = Buf;
      std::free(Buf);
    }
  }
  return N;
}

bool matchesAny(const std::vector<std::string> &Pats, const FuncNames &N) {
  for (const std::string &P : Pats) {
    for (const std::string *S : {&N.Linkage, &N.Display, &N.Qualified}) {
      if (S->empty())
        continue;
      if (*S == P || fnmatch(P.c_str(), S->c_str(), 0) == 0)
        return true;
    }
  }
  return false;
}

// Compiler-synthesised functions that have no source declaration: clang never gives
// them the cyg attributes, but they cannot carry no_instrument_function either.
bool isSynthesized(StringRef Name) {
  return compat::startsWith(Name, "__cxx_global_var_init") || compat::startsWith(Name, "_GLOBAL__sub_I_") ||
         compat::startsWith(Name, "__cxx_global_array_dtor") || Name == "__clang_call_terminate";
}

class StringTable {
  std::string Data;
  StringMap<uint32_t> Index;

public:
  StringTable() { Data.push_back('\0'); } // offset 0: ""
  uint32_t add(StringRef S) {
    if (S.empty())
      return 0;
    auto It = Index.find(S);
    if (It != Index.end())
      return It->second;
    uint32_t Off = Data.size();
    Data.append(S.begin(), S.end());
    Data.push_back('\0');
    Index[S] = Off;
    return Off;
  }
  const std::string &data() const { return Data; }
};

struct StubRec {
  Function *Stub;
  uint32_t Func;
  uint16_t Kind;
  uint16_t Site;
};

struct FuncRec {
  uint32_t Name, Linkage, File, Line;
  // map version 6 (struct ptcall_map_func_ext): size, and direct callees (first-call order)
  uint32_t Insts = 0, Blocks = 0;
  std::vector<const Function *> Callees;
  // map version 8 (struct ptcall_map_func_graph): type id, address taken, and the indirect
  // calls (type id, block), each (type, block) once
  uint64_t TypeId = 0;
  uint32_t GFlags = 0;
  std::vector<std::pair<uint64_t, const BasicBlock *>> ICalls;
};

// Map version 7: one counted basic block, its function and source lines (string offsets).
struct BlockRec {
  uint32_t Func;
  std::vector<uint32_t> Succs; // map v8: its successors' block indices (unit-wide)
  std::vector<std::pair<uint32_t, uint32_t>> Lines; // (file, line), distinct, first seen first
};

// One planned stub call: a stub of Kind/Site, called right before Before.
struct Site {
  uint16_t Kind;
  Instruction *Before; // or, with AfterInvoke, the invoke whose normal edge gets the call
  DebugLoc DL;
  bool AfterInvoke = false;
};

class Instrumenter {
  Module &M;
  const Options &O;
  LLVMContext &C;
  bool CET = false;
  std::vector<StubRec> Stubs;
  std::vector<FuncRec> Funcs;
  StringTable Strs;
  uint64_t UnitHash = FnvInit;
  GlobalVariable *Slot = nullptr; // the unit's soft-handler slot
  std::vector<Function *> Work;   // the functions instrumented, in function-table order
  std::vector<BlockRec> Blocks;   // map v7: the counted blocks, in counter order
  GlobalVariable *BlockPtr = nullptr; // the unit's counter pointer (the runtime repoints it)
  std::map<const BasicBlock *, uint32_t> BlockIndex; // map v8: counted block -> its index
  std::vector<const Function *> TakenFns;  // map v8: address taken, not in the table
  std::vector<std::pair<uint64_t, uint32_t>> Taken; // their (type id, name)

public:
  Instrumenter(Module &M, const Options &O) : M(M), O(O), C(M.getContext()) {}
  bool run();

private:
  std::set<const Function *> annotatedNoInstrument();
  bool shouldInstrument(Function &F, bool Cyg, const std::set<const Function *> &NoInstr,
                        const std::vector<std::string> &Inc,
                        const std::vector<std::string> &Exc);
  std::vector<Site> planSites(Function &F);
  Function *makeStub(uint32_t FuncIdx, uint16_t Kind, uint16_t Site, unsigned Serial);
  void emitCall(Function *Stub, Instruction *Before, const DebugLoc &DL, bool ExitAtRet);
  void countBlocks(Function &F, uint32_t FuncIdx);
  void emitMap();
  void emitRegistration();
};

std::set<const Function *> Instrumenter::annotatedNoInstrument() {
  std::set<const Function *> Out;
  GlobalVariable *GA = M.getNamedGlobal("llvm.global.annotations");
  if (!GA || !GA->hasInitializer())
    return Out;
  auto *Arr = dyn_cast<ConstantArray>(GA->getInitializer());
  if (!Arr)
    return Out;
  for (const Use &U : Arr->operands()) {
    auto *CS = dyn_cast<ConstantStruct>(U.get());
    if (!CS || CS->getNumOperands() < 2)
      continue;
    auto *F = dyn_cast<Function>(CS->getOperand(0)->stripPointerCasts());
    auto *StrGV = dyn_cast<GlobalVariable>(CS->getOperand(1)->stripPointerCasts());
    if (!F || !StrGV || !StrGV->hasInitializer())
      continue;
    auto *Str = dyn_cast<ConstantDataSequential>(StrGV->getInitializer());
    if (!Str || !Str->isString())
      continue;
    StringRef S = Str->getAsString();
    if (compat::endsWith(S, StringRef("\0", 1)))
      S = S.drop_back();
    if (S == NoInstrumentAnnotation)
      Out.insert(F);
  }
  return Out;
}

unsigned countInstructions(const Function &F) {
  unsigned N = 0;
  for (const BasicBlock &BB : F)
    for (const Instruction &I : BB)
      if (!isa<DbgInfoIntrinsic>(I))
        ++N;
  return N;
}

bool Instrumenter::shouldInstrument(Function &F, bool Cyg,
                                    const std::set<const Function *> &NoInstr,
                                    const std::vector<std::string> &Inc,
                                    const std::vector<std::string> &Exc) {
  if (F.isDeclaration() || F.hasAvailableExternallyLinkage())
    return false;
  if (F.hasFnAttribute(Attribute::Naked))
    return false;
  if (F.hasFnAttribute(StubAttr) || compat::startsWith(F.getName(), StubPrefix) ||
      F.getSection() == PTCALL_STUB_SECTION)
    return false;
  if (F.getName() == CtorName || F.getName() == DtorName)
    return false;
  // Pre-split coroutines: the split would scatter the stubs over ramp and resume
  // functions (only reachable with early placement).
  if (F.hasFnAttribute("coroutine.presplit"))
    return false;
  if (Cyg && !F.hasFnAttribute(InstrumentAttr) && !isSynthesized(F.getName()))
    return false; // __attribute__((no_instrument_function))
  if (NoInstr.count(&F))
    return false; // PTCALL_NO_INSTRUMENT
  if (O.MinSize && countInstructions(F) < O.MinSize)
    return false;
  if (!Inc.empty() || !Exc.empty()) {
    FuncNames N = namesOf(F);
    if (!Inc.empty() && !matchesAny(Inc, N))
      return false;
    if (matchesAny(Exc, N))
      return false;
  }
  return true;
}

// A function that calls nothing: between its entry and a return of the same activation no
// instrumented code can run on its thread but a signal handler, so a recorder may take its
// entry for the whole call (PTCALL_STUB_F_LEAF). Intrinsics count as calls only where they
// can become one that reaches program code: memcpy and friends (a program may define and
// instrument its own), statepoints and patchpoints. Inline asm may hide a call.
// The function a call names directly (not through a pointer), or null; intrinsics are not
// calls, but memcpy/memmove/memset (a program may define its own), as callsNothing counts.
const Function *directCallee(const CallBase &CB) {
  const Function *Callee = dyn_cast_or_null<Function>(CB.getCalledOperand()->stripPointerCasts());
  if (!Callee || CB.isInlineAsm())
    return nullptr;
  if (Callee->isIntrinsic() && !isa<MemIntrinsic>(&CB))
    return nullptr;
  return Callee;
}

// The name a callee record carries: the linkage name, or for an intrinsic its base name
// (`llvm.memcpy`), which every LLVM release spells alike (the overload suffix is
// `.p0i8.p0i8.i64` with typed pointers, `.p0.p0.i64` with opaque ones).
StringRef calleeName(const Function &Callee) {
  if (Callee.isIntrinsic())
    return Intrinsic::getBaseName(Callee.getIntrinsicID());
  return Callee.getName();
}

// Map version 8: a function type's kind spelling, the same with typed and opaque pointers
// (LLVM 14 .. 19): every pointer is one token `p` (its address space after it when not 0),
// so `int (*)(char *)` and `int (*)(struct s *)` spell alike. Coarser than C's types on
// purpose: what survives to IR is what every release spells the same way.
void spellType(Type *T, std::string &Out) {
  if (T->isVoidTy()) {
    Out += 'v';
  } else if (T->isIntegerTy()) {
    Out += 'i' + std::to_string(T->getIntegerBitWidth());
  } else if (T->isHalfTy()) {
    Out += "f16";
  } else if (T->isBFloatTy()) {
    Out += "bf16";
  } else if (T->isFloatTy()) {
    Out += "f32";
  } else if (T->isDoubleTy()) {
    Out += "f64";
  } else if (T->isX86_FP80Ty()) {
    Out += "f80";
  } else if (T->isFP128Ty()) {
    Out += "f128";
  } else if (T->isPPC_FP128Ty()) {
    Out += "ppcf128";
  } else if (T->isPointerTy()) {
    Out += 'p';
    if (unsigned AS = T->getPointerAddressSpace())
      Out += std::to_string(AS);
  } else if (auto *VT = dyn_cast<VectorType>(T)) {
    ElementCount EC = VT->getElementCount();
    Out += '<';
    if (EC.isScalable())
      Out += "vscale ";
    Out += std::to_string(EC.getKnownMinValue()) + " x ";
    spellType(VT->getElementType(), Out);
    Out += '>';
  } else if (auto *AT = dyn_cast<ArrayType>(T)) {
    Out += '[' + std::to_string(AT->getNumElements()) + " x ";
    spellType(AT->getElementType(), Out);
    Out += ']';
  } else if (auto *ST = dyn_cast<StructType>(T)) {
    Out += '{';
    for (unsigned I = 0; I < ST->getNumElements(); ++I) {
      if (I)
        Out += ',';
      spellType(ST->getElementType(I), Out);
    }
    Out += '}';
  } else {
    Out += 'o'; // label, metadata, token, target types: never a C parameter
  }
}

// "ret(param,param,...)" with `...` last for varargs, e.g. `i32(p,i64)` for
// LLVMFuzzerTestOneInput; its FNV-1a 64 is the type id.
uint64_t typeId(FunctionType *FT) {
  std::string S;
  spellType(FT->getReturnType(), S);
  S += '(';
  for (unsigned I = 0; I < FT->getNumParams(); ++I) {
    if (I)
      S += ',';
    spellType(FT->getParamType(I), S);
  }
  if (FT->isVarArg())
    S += FT->getNumParams() ? ",..." : "...";
  S += ')';
  return fnv1a64(FnvInit, S);
}

// Whether a use of a function other than as a direct call's callee reaches it: stored,
// passed, in an initializer or a vtable. A direct call through a cast of the function (an
// unprototyped C call on LLVM 14's typed pointers) is a direct call on every release; a place
// in llvm.used / llvm.compiler.used (`__attribute__((used))`) or in llvm.global_ctors /
// global_dtors (run by the loader, never by the program's indirect calls) is not a taking.
bool usesTakeAddress(const Value *V) {
  for (const Use &U : V->uses()) {
    const User *Us = U.getUser();
    if (const auto *CB = dyn_cast<CallBase>(Us)) {
      if (CB->isCallee(&U))
        continue;
      return true;
    }
    if (const auto *CE = dyn_cast<ConstantExpr>(Us)) {
      if (CE->isCast()) {
        if (usesTakeAddress(CE))
          return true;
        continue;
      }
      return true;
    }
    if (isa<ConstantArray>(Us) || isa<ConstantStruct>(Us)) {
      bool Special = true;
      for (const User *G : Us->users()) {
        const Value *Top = G;
        if (isa<ConstantArray>(G)) // global_ctors: { i32, ptr, ptr } inside an array
          for (const User *GG : G->users())
            Top = GG;
        const auto *GV = dyn_cast<GlobalVariable>(Top);
        StringRef N = GV ? GV->getName() : "";
        if (N != "llvm.used" && N != "llvm.compiler.used" && N != "llvm.global_ctors" &&
            N != "llvm.global_dtors")
          Special = false;
      }
      if (Special && !Us->users().empty())
        continue;
      return true;
    }
    return true; // a store, a global's initializer, a select, an alias, ...
  }
  return false;
}

// Map version 6: F's IR instructions and blocks, and its direct callees, each once, in the
// order of their first call. Measured before the stub calls exist.
void measure(const Function &F, FuncRec &FR) {
  std::set<const Function *> Seen;
  for (const BasicBlock &BB : F) {
    FR.Blocks++;
    for (const Instruction &I : BB) {
      if (isa<DbgInfoIntrinsic>(I))
        continue; // debug info is not code: -g must not change the figures
      FR.Insts++;
      if (const auto *CB = dyn_cast<CallBase>(&I)) {
        if (const Function *Callee = directCallee(*CB)) {
          if (Seen.insert(Callee).second)
            FR.Callees.push_back(Callee);
        } else if (!CB->isInlineAsm() &&
                   !isa<Function>(CB->getCalledOperand()->stripPointerCasts())) {
          // map v8: a call through a pointer, by the type it calls
          std::pair<uint64_t, const BasicBlock *> IC(typeId(CB->getFunctionType()), &BB);
          if (std::find(FR.ICalls.begin(), FR.ICalls.end(), IC) == FR.ICalls.end())
            FR.ICalls.push_back(IC);
        }
      }
    }
  }
  FR.TypeId = typeId(F.getFunctionType());
  if (usesTakeAddress(&F))
    FR.GFlags |= PTCALL_MAP_FUNC_F_ADDRESS_TAKEN;
}

bool callsNothing(const Function &F) {
  for (const BasicBlock &BB : F)
    for (const Instruction &I : BB) {
      const auto *CB = dyn_cast<CallBase>(&I);
      if (!CB)
        continue;
      const auto *II = dyn_cast<IntrinsicInst>(CB);
      if (!II || !isa<CallInst>(CB) || isa<MemIntrinsic>(II))
        return false;
      if (II->getIntrinsicID() == Intrinsic::experimental_gc_statepoint ||
          compat::isPatchpoint(II->getIntrinsicID()))
        return false;
    }
  return true;
}

// Is R fed by a tail call the backend may turn into a sibling call? Returns that call.
CallInst *feedingTailCall(ReturnInst *R) {
  Instruction *I = R->getPrevNode();
  while (I && (isa<DbgInfoIntrinsic>(I) || isa<BitCastInst>(I)))
    I = I->getPrevNode();
  auto *CI = dyn_cast_or_null<CallInst>(I);
  if (!CI || !CI->isTailCall() || CI->isInlineAsm())
    return nullptr;
  if (const Function *Callee = CI->getCalledFunction())
    if (Callee->isIntrinsic() && !isa<MemIntrinsic>(CI))
      return nullptr; // lowered inline, not a call
  Value *RV = R->getReturnValue();
  if (RV && RV->stripPointerCasts() != CI && RV != CI)
    return nullptr; // the call's result is not what is returned: no sibling call
  return CI;
}

std::vector<Site> Instrumenter::planSites(Function &F) {
  std::vector<Site> Sites;
  DISubprogram *SP = F.getSubprogram();

  // Entry: after the leading allocas of the entry block (keeps them static for the
  // inliner), before anything else.
  BasicBlock &EntryBB = F.getEntryBlock();
  BasicBlock::iterator IP = EntryBB.getFirstInsertionPt();
  while (IP != EntryBB.end() && isa<AllocaInst>(*IP))
    ++IP;
  DebugLoc EntryDL;
  if (SP)
    EntryDL = DILocation::get(C, SP->getScopeLine() ? SP->getScopeLine() : SP->getLine(),
                              0, SP);
  Sites.push_back({PTCALL_STUB_ENTRY, &*IP, EntryDL});
  if (!O.Exits)
    return Sites;

  for (BasicBlock &BB : F) {
    for (Instruction &I : BB) {
      if (auto *LP = dyn_cast<LandingPadInst>(&I)) {
        Instruction *After = &*BB.getFirstInsertionPt();
        Sites.push_back({PTCALL_STUB_LANDING, After, LP->getDebugLoc()});
      } else if (auto *R = dyn_cast<ReturnInst>(&I)) {
        Instruction *Before = R;
        if (CallInst *MT = BB.getTerminatingMustTailCall())
          Before = MT;
        else if (CallInst *TC = feedingTailCall(R))
          Before = TC;
        Sites.push_back({PTCALL_STUB_EXIT, Before, R->getDebugLoc()});
      } else if (auto *Res = dyn_cast<ResumeInst>(&I)) {
        Sites.push_back({PTCALL_STUB_UNWIND, Res, Res->getDebugLoc()});
      } else if (auto *CB = dyn_cast<CallBase>(&I)) {
        if (!CB->hasFnAttr(Attribute::ReturnsTwice) || CB->isInlineAsm())
          continue;
        if (auto *CI = dyn_cast<CallInst>(CB)) {
          if (Instruction *Next = CI->getNextNode())
            Sites.push_back({PTCALL_STUB_LANDING, Next, CI->getDebugLoc()});
        } else if (auto *II = dyn_cast<InvokeInst>(CB)) {
          // Planned now, the edge is split below when the stubs are emitted: record the
          // invoke itself and resolve later.
          Sites.push_back({PTCALL_STUB_LANDING, II, II->getDebugLoc(), true});
        }
      }
    }
  }
  return Sites;
}

Function *Instrumenter::makeStub(uint32_t FuncIdx, uint16_t Kind, uint16_t Site,
                                 unsigned Serial) {
  static const char *KindNames[] = {"entry", "exit", "unwind", "landing"};
  FunctionType *FT = FunctionType::get(Type::getVoidTy(C), false);
  Function *S = Function::Create(FT, GlobalValue::InternalLinkage,
                                 Twine(StubPrefix) + Twine(FuncIdx) + "." +
                                     KindNames[Kind] + "." + Twine(Site),
                                 M);
  S->addFnAttr(Attribute::Naked);
  S->addFnAttr(Attribute::NoInline);
  S->addFnAttr(Attribute::NoUnwind);
  S->addFnAttr(StubAttr);
  if (CET)
    S->addFnAttr(Attribute::NoCfCheck); // the asm body carries the endbr64 itself
  S->setSection(PTCALL_STUB_SECTION);
  S->setAlignment(Align(PTCALL_STUB_STRIDE));
  // Body: a bare ret, padded with int3 to exactly one stride so the runtime can patch
  // the whole slot and stubs sit back to back. The comment is unique per stub (unit
  // hash + serial) so MergeFunctions cannot fold stubs together, even after full LTO.
  unsigned BodyBytes = (CET ? 4 : 0) + 1;
  std::string Asm;
  raw_string_ostream OS(Asm);
  if (CET)
    OS << "endbr64\n\t";
  OS << "ret # ptcall stub " << format_hex(UnitHash, 18) << " " << Serial << "\n\t"
     << ".fill " << (PTCALL_STUB_STRIDE - BodyBytes) << ", 1, 0xcc";
  OS.flush();
  InlineAsm *IA = InlineAsm::get(FT, Asm, "~{dirflag},~{fpsr},~{flags}",
                                 /*hasSideEffects=*/true);
  BasicBlock *BB = BasicBlock::Create(C, "", S);
  CallInst::Create(FT, IA, "", BB);
  new UnreachableInst(C, BB);
  return S;
}

// A disarmed call site (PTCALL_MAP_F_SLEDS): a 5-byte nop that the runtime overwrites with
// `call stub` to arm it, plus its entry (sled, stub) in the object's ptcall_sites table.
// - `.p2align 3,0x2e,4` keeps the sled inside one aligned 8-byte word, so arming or disarming
//   is a single atomic store. It pads only when the sled would straddle one, and with CS
//   segment prefixes (0x2e), not a nop: the 1-4 prefixes join the sled into one instruction
//   (`cs nopl`, and `cs call`/`cs jmp` once armed; the prefix is ignored in 64-bit mode), so an
//   untraced run executes one instruction per site, not two. The prefixes never change, so a
//   thread fetching the sled mid-arming still sees either the whole old or the whole new
//   instruction;
// - the table entry is SHF_LINK_ORDER to the sled's own section, and in the function's
//   comdat group, so the linkers drop it with that section (comdat deduplication,
//   --gc-sections) instead of failing on a reference into a discarded section;
// - ${:uid} gives every emitted copy of the asm its own label, so code duplication by the
//   backend (tail duplication of a `ret` block) yields one table entry per copy.
std::string sledAsm(const Function &F, bool ExitAtRet) {
  std::string Asm;
  raw_string_ostream OS(Asm);
  if (ExitAtRet)
    OS << ptcall::ExitSledMarker << "\n";
  OS << ".p2align 3,0x2e,4\n"
     << ".Lptcall_sled${:uid}:\n"
     << ".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
     << ptcall::sitesPushSection(F, ".Lptcall_sled${:uid}")
     << ".p2align 2\n"
     << ".long .Lptcall_sled${:uid} - .\n"
     << ".long ${0:P} - .\n"
     << ".popsection";
  OS.flush();
  return Asm;
}

// The source path of a debug location: the directory joined when the file is relative, so
// that lcov's genhtml and llvm-cov's export name the same file.
std::string locFile(const DILocation *L) {
  std::string F = L->getFilename().str(), D = L->getDirectory().str();
  if (F.empty() || F[0] == '/' || D.empty())
    return F;
  return D + (D.back() == '/' ? "" : "/") + F;
}

// Map version 7: one counter per basic block, incremented where the block starts (a load of
// the unit's counter pointer, a load, an add and a store: no call). Critical edges are split
// first, as SanitizerCoverage's edge mode does, so that every edge taken runs a block of its
// own: a block reached implies the edge into it. 64-bit counters rather than 8-bit saturating
// ones: lcov's line hit counts need the real numbers, and an 8-bit counter would wrap (or, made
// saturating, need a compare) in any loop of 256 rounds; the memory is 8 bytes per block.
void Instrumenter::countBlocks(Function &F, uint32_t FuncIdx) {
  Type *I64 = Type::getInt64Ty(C);
  PointerType *PtrTy = PointerType::getUnqual(I64);
  SplitAllCriticalEdges(F, CriticalEdgeSplittingOptions().setIgnoreUnreachableDests());
  for (BasicBlock &BB : F) {
    // blocks nothing reaches (clang's code after a return) would only read as never reached
    if (&BB != &F.getEntryBlock() && pred_empty(&BB))
      continue;
    BasicBlock::iterator At = BB.getFirstInsertionPt();
    if (At == BB.end())
      continue; // a catchswitch block: no room for an instruction
    BlockRec R;
    R.Func = FuncIdx;
    std::set<std::pair<uint32_t, uint32_t>> Seen;
    for (Instruction &I : BB) {
      if (isa<DbgInfoIntrinsic>(I))
        continue;
      const DILocation *L = I.getDebugLoc().get();
      if (!L || !L->getLine())
        continue;
      std::pair<uint32_t, uint32_t> FL(Strs.add(locFile(L)), L->getLine());
      if (Seen.insert(FL).second)
        R.Lines.push_back(FL);
    }
    BlockIndex[&BB] = Blocks.size();
    IRBuilder<> B(&BB, At);
    LoadInst *P = B.CreateLoad(PtrTy, BlockPtr);
    Value *Cell = B.CreateConstInBoundsGEP1_64(I64, P, Blocks.size());
    LoadInst *V = B.CreateLoad(I64, Cell);
    B.CreateStore(B.CreateAdd(V, ConstantInt::get(I64, 1)), Cell);
    Blocks.push_back(std::move(R));
  }
  // map v8: each counted block's counted successors (the CFG after the split; a successor
  // with no counter of its own, a catchswitch, is left out)
  for (BasicBlock &BB : F) {
    auto It = BlockIndex.find(&BB);
    if (It == BlockIndex.end())
      continue;
    std::vector<uint32_t> &Out = Blocks[It->second].Succs;
    for (const BasicBlock *S : successors(&BB)) {
      auto SI = BlockIndex.find(S);
      if (SI != BlockIndex.end() && std::find(Out.begin(), Out.end(), SI->second) == Out.end())
        Out.push_back(SI->second);
    }
  }
}

void Instrumenter::emitCall(Function *Stub, Instruction *Before, const DebugLoc &DL,
                            bool ExitAtRet) {
  // An inline-asm `call` rather than an IR call: the function stays a leaf as far as the
  // backend is concerned (no frame set-up, no caller-saved spills), and a stub call
  // before `ret` can never become a sibling `jmp stub`. x86 asm clobbers are explicit.
  FunctionType *FT =
      FunctionType::get(Type::getVoidTy(C), {Stub->getType()}, /*isVarArg=*/false);
  // %r11 and %r10 are declared clobbered: the soft backend's patched stub passes the
  // stub's id in r11 (PTCALL_MAP_F_SCRATCH_R11) and jumps to a handler that works in r10
  // (PTCALL_MAP_F_SCRATCH_R10) instead of saving registers on the stack. Both are
  // caller-saved scratch registers; at a function's entry r10 carries only a `nest` static
  // chain, which the compiler then moves out of the way, so the clobbers cost nothing at
  // the entry or the exits.
  const char *Clobbers = "i,~{dirflag},~{fpsr},~{flags},~{r10},~{r11}";
  InlineAsm *IA =
      InlineAsm::get(FT, O.Gated ? sledAsm(*Before->getFunction(), ExitAtRet) : "call ${0:P}",
                     Clobbers, /*hasSideEffects=*/true);
  Instruction *At = Before;
  CallInst *CI = CallInst::Create(FT, IA, {Stub}, "", At);
  CI->addFnAttr(Attribute::NoUnwind);
  if (DL)
    CI->setDebugLoc(DL);
}

// An instrumented function has a side effect (the stub call): drop the memory-effect
// attributes inferred for it, on the function and on calls to it, so that no later pass
// deletes, hoists or merges such calls (and with them the function's entry/exit events).
void dropPurity(Function &F) {
  ArrayRef<Attribute::AttrKind> Kinds = compat::purityAttributes();
  for (Attribute::AttrKind K : Kinds)
    F.removeFnAttr(K);
  for (User *U : F.users())
    if (auto *CB = dyn_cast<CallBase>(U))
      if (CB->getCalledOperand() == &F)
        for (Attribute::AttrKind K : Kinds)
          CB->removeFnAttr(K);
}

// Reads (and consumes) the no_instrument_function channel of one function: true if clang
// marked it as "instrument me".
bool takeCygMark(Function &F) {
  bool Marked = false;
  if (F.hasFnAttribute(CygEntryAttr) || F.hasFnAttribute(CygExitAttr)) {
    Marked = true;
    F.removeFnAttr(CygEntryAttr);
    F.removeFnAttr(CygExitAttr);
  }
  if (F.hasFnAttribute(UserCygEntryAttr) || F.hasFnAttribute(UserCygExitAttr))
    Marked = true;
  if (Marked && !F.isDeclaration())
    F.addFnAttr(InstrumentAttr);
  return Marked;
}

bool Instrumenter::run() {
  if (M.getNamedMetadata(DoneMD))
    return false; // already instrumented (e.g. a ThinLTO backend reloading the plugin)
  Triple TT(M.getTargetTriple());
  if (!M.getTargetTriple().empty() &&
      (TT.getArch() != Triple::x86_64 || !TT.isOSBinFormatELF())) {
    // The stubs are x86 code and the map is x86-64 ELF data: leave other targets alone.
    errs() << "ptcall: warning: target '" << M.getTargetTriple()
           << "' is not x86-64 ELF; " << M.getSourceFileName() << " is not instrumented\n";
    for (Function &F : M) { // still consume the channel: no __cyg_profile_* calls
      takeCygMark(F);
      F.removeFnAttr(InstrumentAttr);
    }
    M.getOrInsertNamedMetadata(DoneMD);
    return true;
  }

  if (auto *Flag = mdconst::extract_or_null<ConstantInt>(
          M.getModuleFlag("cf-protection-branch")))
    CET = !Flag->isZero();

  // The no_instrument_function channel: with -finstrument-functions-after-inlining
  // clang gives every function *without* no_instrument_function the two cyg
  // attributes. Turn them into our own marker and remove them, so that the backend's
  // post-inline instrumenter inserts no __cyg_profile_* calls.
  bool Cyg = O.CygChannel || M.getNamedMetadata(CygMD);
  for (Function &F : M)
    if (takeCygMark(F))
      Cyg = true;

  std::vector<std::string> Inc, Exc;
  if (!O.Include.empty())
    Inc = loadPatterns(O.Include, "include");
  if (!O.Exclude.empty())
    Exc = loadPatterns(O.Exclude, "exclude");
  std::set<const Function *> NoInstr = annotatedNoInstrument();

  Work.clear();
  for (Function &F : M)
    if (shouldInstrument(F, Cyg, NoInstr, Inc, Exc))
      Work.push_back(&F);
  for (Function &F : M)
    F.removeFnAttr(InstrumentAttr);

  M.getOrInsertNamedMetadata(DoneMD);
  if (Work.empty())
    return true;

  // Identity: FNV-1a 64 over the source name and the linkage names of the instrumented
  // functions, each followed by a NUL byte, in function-table order.
  std::string Source = M.getSourceFileName();
  UnitHash = fnv1a64(FnvInit, Source);
  UnitHash = fnv1a64(UnitHash, StringRef("\0", 1));
  for (Function *F : Work) {
    UnitHash = fnv1a64(UnitHash, F->getName());
    UnitHash = fnv1a64(UnitHash, StringRef("\0", 1));
  }

  Strs.add(Source);
  // Writable soft-handler slot: the software backend stores its handler's address here
  // and patches the stubs to jump through it.
  Slot = new GlobalVariable(M, Type::getInt64Ty(C), /*isConstant=*/false,
                            GlobalValue::InternalLinkage,
                            ConstantInt::get(Type::getInt64Ty(C), 0), SlotName);
  Slot->setAlignment(Align(8));
  if (O.Blocks) {
    // internal, but its address escapes into the map: no pass may fold its loads into the
    // initial value, which the runtime replaces before main
    BlockPtr = new GlobalVariable(M, PointerType::getUnqual(Type::getInt64Ty(C)),
                                  /*isConstant=*/false, GlobalValue::InternalLinkage, nullptr,
                                  "__ptcall_blocks_ptr");
    BlockPtr->setAlignment(Align(8));
  }
  // map v8: functions of no record here whose address the unit takes, found before the
  // stubs exist (the stub calls name their stubs as operands)
  {
    std::set<const Function *> InWork(Work.begin(), Work.end());
    for (const Function &G : M)
      if (!InWork.count(&G) && !G.isIntrinsic() && usesTakeAddress(&G))
        TakenFns.push_back(&G);
  }
  unsigned Serial = 0;
  for (uint32_t FI = 0; FI < Work.size(); ++FI) {
    Function &F = *Work[FI];
    FuncRec FR;
    FR.Name = Strs.add(demangle(F.getName().str()));
    FR.Linkage = Strs.add(F.getName());
    if (DISubprogram *SP = F.getSubprogram()) {
      FR.File = Strs.add(SP->getFilename());
      FR.Line = SP->getLine();
    } else {
      FR.File = Strs.add(Source);
      FR.Line = 0;
    }
    measure(F, FR);
    for (const Function *Callee : FR.Callees) // named before the string table is laid out
      Strs.add(calleeName(*Callee));
    Funcs.push_back(FR);

    // decided before the stub calls exist (they are inline asm)
    const bool Leaf = O.Exits && callsNothing(F);
    std::vector<Site> Sites = planSites(F);
    uint16_t Next[4] = {0, 0, 0, 0};
    for (Site &S : Sites) {
      Instruction *Before = S.Before;
      if (S.AfterInvoke) { // returns_twice invoke: at the start of its normal successor
        auto *II = cast<InvokeInst>(Before);
        BasicBlock *Dest = II->getNormalDest();
        if (!Dest->getSinglePredecessor())
          Dest = SplitEdge(II->getParent(), Dest);
        Before = &*Dest->getFirstInsertionPt();
      }
      if (Next[S.Kind] == UINT16_MAX)
        continue; // site numbers exhausted: leave the rest uninstrumented
      uint16_t SiteNo = S.Kind == PTCALL_STUB_ENTRY ? 0 : Next[S.Kind]++;
      Function *Stub = makeStub(FI, S.Kind, SiteNo, Serial++);
      uint16_t MapKind = S.Kind;
      if (Leaf && (S.Kind == PTCALL_STUB_ENTRY || S.Kind == PTCALL_STUB_EXIT))
        MapKind |= PTCALL_STUB_F_LEAF;
      Stubs.push_back({Stub, FI, MapKind, SiteNo});
      // an exit right before its `ret` may move behind it (RetSleds.cpp)
      emitCall(Stub, Before, S.DL, S.Kind == PTCALL_STUB_EXIT && isa<ReturnInst>(Before));
    }
    // The call pushes a return address below the stack pointer.
    F.addFnAttr(Attribute::NoRedZone);
    dropPurity(F);
    if (O.Blocks)
      countBlocks(F, FI);
  }
  if (O.Blocks) { // the counters themselves, now that their number is known
    auto *ArrTy = ArrayType::get(Type::getInt64Ty(C), Blocks.empty() ? 1 : Blocks.size());
    auto *Arr = new GlobalVariable(M, ArrTy, /*isConstant=*/false, GlobalValue::InternalLinkage,
                                   ConstantAggregateZero::get(ArrTy), "__ptcall_blocks");
    Arr->setAlignment(Align(8));
    BlockPtr->setInitializer(ConstantExpr::getPointerCast(Arr, BlockPtr->getValueType()));
  }

  for (const Function *G : TakenFns) // named before the string table is laid out
    Taken.push_back({typeId(G->getFunctionType()), Strs.add(G->getName())});
  addFuzzInputHook(M);
  emitMap();
  emitRegistration();
  return true;
}

void Instrumenter::emitMap() {
  Type *I8 = Type::getInt8Ty(C), *I16 = Type::getInt16Ty(C), *I32 = Type::getInt32Ty(C),
       *I64 = Type::getInt64Ty(C);

  StructType *HdrTy = StructType::create(
      C, {I32, I16, I16, I32, I32, I64, I32, I32, I32, I32, I32, I32, I64, I32, I32, I64, I64},
      "ptcall.map_header");
  StructType *StubTy = StructType::create(C, {I64, I32, I16, I16}, "ptcall.map_stub");
  StructType *FuncTy = StructType::create(C, {I32, I32, I32, I32}, "ptcall.map_func");
  StructType *ExtTy = StructType::create(C, {I32, I32, I32, I32}, "ptcall.map_ext");
  StructType *FuncExtTy = StructType::create(C, {I32, I32, I32, I32}, "ptcall.map_func_ext");
  StructType *CalleeTy = StructType::create(C, {I32, I32}, "ptcall.map_callee");
  StructType *BlocksTy = StructType::create(C, {I32, I32, I32, I32, I64}, "ptcall.map_blocks");
  StructType *BlockTy = StructType::create(C, {I32, I32, I32}, "ptcall.map_block");
  StructType *LineTy = StructType::create(C, {I32, I32}, "ptcall.map_line");
  StructType *GraphTy =
      StructType::create(C, {I32, I32, I32, I32, I32, I32}, "ptcall.map_graph");
  StructType *FuncGraphTy =
      StructType::create(C, {I64, I32, I32, I32, I32}, "ptcall.map_func_graph");
  StructType *ICallTy = StructType::create(C, {I64, I32, I32}, "ptcall.map_icall");
  StructType *TakenTy = StructType::create(C, {I64, I32, I32}, "ptcall.map_taken");
  StructType *SuccTy = StructType::create(C, {I32, I32}, "ptcall.map_block_succ");

  const uint32_t NS = Stubs.size(), NF = Funcs.size();
  uint32_t NC = 0;
  std::map<const Function *, uint32_t> Index; // instrumented functions of this unit
  for (const FuncRec &F : Funcs)
    NC += F.Callees.size();
  for (uint32_t I = 0; I < NF; ++I)
    Index[Work[I]] = I;
  const uint32_t HdrSize = sizeof(struct ptcall_map_header);
  const uint32_t StubsOff = HdrSize;
  const uint32_t FuncsOff = StubsOff + NS * sizeof(struct ptcall_map_stub);
  const uint32_t ExtOff = FuncsOff + NF * sizeof(struct ptcall_map_func); // 8-aligned
  const uint32_t ExtSize = sizeof(struct ptcall_map_ext) +
                           NF * sizeof(struct ptcall_map_func_ext) +
                           NC * sizeof(struct ptcall_map_callee);
  // version 7: the blocks part (header, blocks, lines), after the callees
  const uint32_t NB = Blocks.size();
  uint32_t NL = 0;
  for (const BlockRec &B : Blocks)
    NL += B.Lines.size();
  const uint32_t BlocksOff = O.Blocks ? ExtOff + ExtSize : 0; // 8-aligned, as ExtSize
  const uint32_t BlocksSize = O.Blocks ? sizeof(struct ptcall_map_blocks) +
                                             NB * sizeof(struct ptcall_map_block) +
                                             NL * sizeof(struct ptcall_map_line)
                                       : 0;
  // version 8: the call-graph part, 8-aligned after the blocks part (12-byte block records
  // can leave it 4 bytes short of alignment)
  const uint32_t GraphPad = (ExtOff + ExtSize + BlocksSize) % 8 ? 4 : 0;
  const uint32_t GraphOff = ExtOff + ExtSize + BlocksSize + GraphPad;
  uint32_t NI = 0, NSucc = 0;
  for (const FuncRec &F : Funcs)
    NI += F.ICalls.size();
  for (const BlockRec &B : Blocks)
    NSucc += B.Succs.size();
  const uint32_t NT = Taken.size();
  const uint32_t NSuccPadded = NSucc + (NSucc % 2); // the part ends 8-aligned
  const uint32_t GraphSize = sizeof(struct ptcall_map_graph) +
                             NF * sizeof(struct ptcall_map_func_graph) +
                             NI * sizeof(struct ptcall_map_icall) +
                             NT * sizeof(struct ptcall_map_taken) +
                             NB * sizeof(struct ptcall_map_block_succ) + NSuccPadded * 4;
  const uint32_t StrOff = GraphOff + GraphSize;
  const uint32_t StrSize = Strs.data().size();
  const uint32_t Total = (StrOff + StrSize + 7) & ~7u;

  ArrayType *StubArrTy = ArrayType::get(StubTy, NS);
  ArrayType *FuncArrTy = ArrayType::get(FuncTy, NF);
  ArrayType *StrArrTy = ArrayType::get(I8, Total - StrOff);
  ArrayType *FuncExtArrTy = ArrayType::get(FuncExtTy, NF);
  ArrayType *CalleeArrTy = ArrayType::get(CalleeTy, NC);
  ArrayType *BlockArrTy = ArrayType::get(BlockTy, NB);
  ArrayType *LineArrTy = ArrayType::get(LineTy, NL);
  ArrayType *PadTy = ArrayType::get(I8, GraphPad);
  ArrayType *FuncGraphArrTy = ArrayType::get(FuncGraphTy, NF);
  ArrayType *ICallArrTy = ArrayType::get(ICallTy, NI);
  ArrayType *TakenArrTy = ArrayType::get(TakenTy, NT);
  ArrayType *SuccArrTy = ArrayType::get(SuccTy, NB);
  ArrayType *SuccIdxArrTy = ArrayType::get(I32, NSuccPadded);
  SmallVector<Type *, 10> Parts = {HdrTy, StubArrTy, FuncArrTy, ExtTy, FuncExtArrTy, CalleeArrTy};
  if (O.Blocks) {
    Parts.push_back(BlocksTy);
    Parts.push_back(BlockArrTy);
    Parts.push_back(LineArrTy);
  }
  for (Type *T : {(Type *)PadTy, (Type *)GraphTy, (Type *)FuncGraphArrTy, (Type *)ICallArrTy,
                  (Type *)TakenArrTy, (Type *)SuccArrTy, (Type *)SuccIdxArrTy})
    Parts.push_back(T);
  Parts.push_back(StrArrTy);
  StructType *BlobTy = StructType::create(C, Parts, "ptcall.map", /*isPacked=*/true);
  const DataLayout &DL = M.getDataLayout();
  if (DL.getTypeAllocSize(HdrTy) != HdrSize || DL.getTypeAllocSize(BlobTy) != Total)
    fatal("internal error: map blob layout does not match map_format.h");

  // Create the global first (empty), so that the initializer can refer to its fields.
  auto *Map = new GlobalVariable(M, BlobTy, /*isConstant=*/true, GlobalValue::InternalLinkage,
                                 nullptr, MapName);
  Map->setSection(PTCALL_MAP_SECTION);
  Map->setAlignment(Align(8));

  auto fieldAddr = [&](std::initializer_list<unsigned> Idx) -> Constant * {
    SmallVector<Constant *, 4> Ids;
    Ids.push_back(ConstantInt::get(I32, 0));
    for (unsigned I : Idx)
      Ids.push_back(ConstantInt::get(I32, I));
    return ConstantExpr::getPtrToInt(ConstantExpr::getInBoundsGetElementPtr(BlobTy, Map, Ids),
                                     I64);
  };
  auto rel = [&](Constant *Target, Constant *FieldAddr) -> Constant * {
    return ConstantExpr::getSub(ConstantExpr::getPtrToInt(Target, I64), FieldAddr);
  };

  uint32_t Flags = 0;
  if (O.Early)
    Flags |= PTCALL_MAP_F_EARLY;
  if (O.Exits)
    Flags |= PTCALL_MAP_F_EXITS;
  if (CET)
    Flags |= PTCALL_MAP_F_CET;
  if (O.Gated)
    Flags |= PTCALL_MAP_F_SLEDS;
  Flags |= PTCALL_MAP_F_SCRATCH_R11 | PTCALL_MAP_F_SCRATCH_R10;
  if (O.Gated && O.Exits && ptcall::retSledsInstalled())
    Flags |= PTCALL_MAP_F_RET_SLEDS;
  if (O.Blocks)
    Flags |= PTCALL_MAP_F_BLOCKS;
  uint32_t SourceName = Strs.add(M.getSourceFileName()); // added before layout
  const uint32_t StrSizeFinal = Strs.data().size();
  if (StrSizeFinal != StrSize)
    fatal("internal error: string table changed after layout");

  // The object's sled table: every unit names the same linker-defined bounds. The section
  // always exists in an object with sled units (the retained anchor emitted below), so the
  // bounds are declared hidden and *not* weak: the PC-relative fields then resolve at link
  // time and the map stays read-only, with no dynamic relocation (a weak bound would make
  // LLVM put the map in writable data).
  auto SitesRel = [&](unsigned Field) -> Constant * {
    if (!O.Gated)
      return ConstantInt::get(I64, 0);
    StringRef Name =
        Field == 15 ? "__start_" PTCALL_SITES_SECTION : "__stop_" PTCALL_SITES_SECTION;
    GlobalVariable *B = M.getNamedGlobal(Name);
    if (!B) {
      B = new GlobalVariable(M, I8, /*isConstant=*/true, GlobalValue::ExternalLinkage, nullptr,
                             Name);
      B->setVisibility(GlobalValue::HiddenVisibility);
    }
    return rel(B, fieldAddr({0, Field}));
  };
  if (O.Gated)
    M.appendModuleInlineAsm(".pushsection " PTCALL_SITES_SECTION ",\"aR\",@progbits\n"
                            ".popsection");
  Constant *Hdr = ConstantStruct::get(
      HdrTy, {ConstantInt::get(I32, PTCALL_MAP_MAGIC), ConstantInt::get(I16, PTCALL_MAP_VERSION),
              ConstantInt::get(I16, HdrSize), ConstantInt::get(I32, Total),
              ConstantInt::get(I32, Flags), ConstantInt::get(I64, UnitHash),
              ConstantInt::get(I32, NS), ConstantInt::get(I32, NF),
              ConstantInt::get(I32, StubsOff), ConstantInt::get(I32, FuncsOff),
              ConstantInt::get(I32, StrOff), ConstantInt::get(I32, StrSize),
              rel(Slot, fieldAddr({0, 12})), ConstantInt::get(I32, SourceName),
              ConstantInt::get(I32, ExtOff), SitesRel(15), SitesRel(16)});

  std::vector<Constant *> StubCs;
  for (uint32_t I = 0; I < NS; ++I) {
    const StubRec &S = Stubs[I];
    StubCs.push_back(ConstantStruct::get(
        StubTy, {rel(S.Stub, fieldAddr({1, I, 0})), ConstantInt::get(I32, S.Func),
                 ConstantInt::get(I16, S.Kind), ConstantInt::get(I16, S.Site)}));
  }
  std::vector<Constant *> FuncCs;
  for (const FuncRec &F : Funcs)
    FuncCs.push_back(ConstantStruct::get(
        FuncTy, {ConstantInt::get(I32, F.Name), ConstantInt::get(I32, F.Linkage),
                 ConstantInt::get(I32, F.File), ConstantInt::get(I32, F.Line)}));
  // version 6: sizes and direct callees
  Constant *Ext = ConstantStruct::get(ExtTy, {ConstantInt::get(I32, ExtSize),
                                              ConstantInt::get(I32, NC),
                                              ConstantInt::get(I32, BlocksOff),
                                              ConstantInt::get(I32, GraphOff)});
  std::vector<Constant *> FuncExtCs, CalleeCs;
  for (const FuncRec &F : Funcs) {
    FuncExtCs.push_back(ConstantStruct::get(
        FuncExtTy, {ConstantInt::get(I32, F.Insts), ConstantInt::get(I32, F.Blocks),
                    ConstantInt::get(I32, CalleeCs.size()),
                    ConstantInt::get(I32, F.Callees.size())}));
    for (const Function *Callee : F.Callees) {
      auto It = Index.find(Callee);
      CalleeCs.push_back(ConstantStruct::get(
          CalleeTy, {ConstantInt::get(I32, It == Index.end() ? PTCALL_MAP_NO_FUNC : It->second),
                     ConstantInt::get(I32, Strs.add(calleeName(*Callee)))}));
    }
  }
  if (Strs.data().size() != StrSize)
    fatal("internal error: a callee's name was not in the string table");
  std::string StrBytes = Strs.data();
  StrBytes.resize(Total - StrOff, '\0');
  Constant *StrC = ConstantDataArray::getRaw(StrBytes, StrBytes.size(), I8);

  SmallVector<Constant *, 10> Init = {
      Hdr, ConstantArray::get(StubArrTy, StubCs), ConstantArray::get(FuncArrTy, FuncCs), Ext,
      ConstantArray::get(FuncExtArrTy, FuncExtCs), ConstantArray::get(CalleeArrTy, CalleeCs)};
  if (O.Blocks) {
    std::vector<Constant *> BlockCs, LineCs;
    for (const BlockRec &B : Blocks) {
      BlockCs.push_back(ConstantStruct::get(
          BlockTy, {ConstantInt::get(I32, B.Func), ConstantInt::get(I32, LineCs.size()),
                    ConstantInt::get(I32, B.Lines.size())}));
      for (const auto &L : B.Lines)
        LineCs.push_back(ConstantStruct::get(
            LineTy, {ConstantInt::get(I32, L.first), ConstantInt::get(I32, L.second)}));
    }
    Init.push_back(ConstantStruct::get(
        BlocksTy, {ConstantInt::get(I32, BlocksSize), ConstantInt::get(I32, NB),
                   ConstantInt::get(I32, NL), ConstantInt::get(I32, 0),
                   rel(BlockPtr, fieldAddr({6, 4}))}));
    Init.push_back(ConstantArray::get(BlockArrTy, BlockCs));
    Init.push_back(ConstantArray::get(LineArrTy, LineCs));
  }
  { // version 8: the call graph
    std::vector<Constant *> FG, IC, TK, SC, SI;
    for (const FuncRec &F : Funcs) {
      FG.push_back(ConstantStruct::get(
          FuncGraphTy, {ConstantInt::get(I64, F.TypeId), ConstantInt::get(I32, F.GFlags),
                        ConstantInt::get(I32, IC.size()), ConstantInt::get(I32, F.ICalls.size()),
                        ConstantInt::get(I32, 0)}));
      for (const auto &X : F.ICalls) {
        auto It = BlockIndex.find(X.second);
        IC.push_back(ConstantStruct::get(
            ICallTy, {ConstantInt::get(I64, X.first),
                      ConstantInt::get(I32, It == BlockIndex.end() ? PTCALL_MAP_NO_BLOCK
                                                                   : It->second),
                      ConstantInt::get(I32, 0)}));
      }
    }
    for (const auto &T : Taken)
      TK.push_back(ConstantStruct::get(TakenTy, {ConstantInt::get(I64, T.first),
                                                 ConstantInt::get(I32, T.second),
                                                 ConstantInt::get(I32, 0)}));
    for (const BlockRec &B : Blocks) {
      SC.push_back(ConstantStruct::get(
          SuccTy, {ConstantInt::get(I32, SI.size()), ConstantInt::get(I32, B.Succs.size())}));
      for (uint32_t X : B.Succs)
        SI.push_back(ConstantInt::get(I32, X));
    }
    while (SI.size() < NSuccPadded)
      SI.push_back(ConstantInt::get(I32, 0));
    Init.push_back(ConstantAggregateZero::get(PadTy));
    Init.push_back(ConstantStruct::get(
        GraphTy, {ConstantInt::get(I32, GraphSize), ConstantInt::get(I32, NI),
                  ConstantInt::get(I32, NT), ConstantInt::get(I32, O.Blocks ? NB : 0),
                  ConstantInt::get(I32, NSucc), ConstantInt::get(I32, 0)}));
    Init.push_back(ConstantArray::get(FuncGraphArrTy, FG));
    Init.push_back(ConstantArray::get(ICallArrTy, IC));
    Init.push_back(ConstantArray::get(TakenArrTy, TK));
    Init.push_back(ConstantArray::get(SuccArrTy, SC));
    Init.push_back(ConstantArray::get(SuccIdxArrTy, SI));
  }
  Init.push_back(StrC);
  Map->setInitializer(ConstantStruct::get(BlobTy, Init));

  // The PC-relative fields are "local relocations": LLVM 14 keeps the explicit section
  // read-only ("a") in PIC code too, and the static linker resolves them (no dynamic
  // relocations); test/pass-e2e checks both.
  // The map goes to llvm.used: LLVM then marks its section SHF_GNU_RETAIN, which keeps it
  // under lld's --gc-sections (lld 14 defaults to -z start-stop-gc, so __start_ptcall_map
  // references alone do not). The retained map references the stubs and the slot, which
  // keeps them too. The stubs stay in llvm.compiler.used: all of them share one plain
  // `ptcall_stubs` input section per object.
  appendToUsed(M, {Map});
  SmallVector<GlobalValue *, 64> Used;
  Used.push_back(Slot);
  if (BlockPtr)
    Used.push_back(BlockPtr);
  for (const StubRec &S : Stubs)
    Used.push_back(S.Stub);
  appendToCompilerUsed(M, Used);
}

GlobalVariable *weakHiddenBound(Module &M, StringRef Name) {
  Type *I8 = Type::getInt8Ty(M.getContext());
  if (GlobalVariable *G = M.getNamedGlobal(Name))
    return G;
  auto *G = new GlobalVariable(M, I8, /*isConstant=*/true, GlobalValue::ExternalWeakLinkage,
                               nullptr, Name);
  G->setVisibility(GlobalValue::HiddenVisibility);
  return G;
}

Function *weakRuntimeFunction(Module &M, StringRef Name, FunctionType *FT) {
  if (Function *F = M.getFunction(Name))
    return F;
  Function *F = Function::Create(FT, GlobalValue::ExternalWeakLinkage, Name, M);
  F->addFnAttr(Attribute::NoUnwind);
  return F;
}

// The libFuzzer harness's entry hook (docs/cov.md, "The fork server at the harness"): at the
// entry of LLVMFuzzerTestOneInput(const uint8_t *, size_t), a call through a null-checked
// weak reference to __ptcall_fuzz_input(&data, &size), through which the runtime may replace
// both arguments. Under `cov run` its first call becomes the fork server and each child
// returns with the tool's input, so libFuzzer's own start-up runs once, not per input.
// Placed after the entry stub exists and before it: a child's call is counted when it
// returns from the hook, the server's never (it never returns), so each child's counter is 1.
void addFuzzInputHook(Module &M) {
  Function *F = M.getFunction("LLVMFuzzerTestOneInput");
  if (!F || F->isDeclaration() || F->arg_size() != 2 ||
      !F->getArg(0)->getType()->isPointerTy() || !F->getArg(1)->getType()->isIntegerTy(64))
    return;
  LLVMContext &C = M.getContext();
  PointerType *I8P = compat::bytePointerType(C);
  Type *DataTy = F->getArg(0)->getType(), *SizeTy = F->getArg(1)->getType();
  FunctionType *HookTy = FunctionType::get(Type::getVoidTy(C), {I8P, I8P}, false);
  Function *Hook = weakRuntimeFunction(M, "__ptcall_fuzz_input", HookTy);
  BasicBlock &Entry = F->getEntryBlock();
  IRBuilder<> A(&Entry, Entry.getFirstInsertionPt());
  AllocaInst *DataSlot = A.CreateAlloca(DataTy, nullptr, "ptcall.fuzz.data");
  AllocaInst *SizeSlot = A.CreateAlloca(SizeTy, nullptr, "ptcall.fuzz.size");
  BasicBlock::iterator IP = Entry.getFirstInsertionPt();
  while (IP != Entry.end() && isa<AllocaInst>(*IP))
    ++IP;
  Instruction *First = &*IP; // the entry stub's call, when F is instrumented
  DebugLoc DL;
  if (DISubprogram *SP = F->getSubprogram())
    DL = DILocation::get(C, SP->getScopeLine() ? SP->getScopeLine() : SP->getLine(), 0, SP);
  BasicBlock *Head = First->getParent();
  BasicBlock *Rest = Head->splitBasicBlock(First, "ptcall.fuzz.rest");
  BasicBlock *Call = BasicBlock::Create(C, "ptcall.fuzz.call", F, Rest);
  Head->getTerminator()->eraseFromParent();
  IRBuilder<> B(Head);
  B.SetCurrentDebugLocation(DL);
  StoreInst *SD = B.CreateStore(F->getArg(0), DataSlot);
  StoreInst *SS = B.CreateStore(F->getArg(1), SizeSlot);
  Value *Present = B.CreateICmpNE(Hook, ConstantPointerNull::get(Hook->getType()));
  B.CreateCondBr(Present, Call, Rest);
  B.SetInsertPoint(Call);
  B.CreateCall(HookTy, Hook,
               {B.CreatePointerCast(DataSlot, I8P), B.CreatePointerCast(SizeSlot, I8P)});
  B.CreateBr(Rest);
  B.SetInsertPoint(Rest, Rest->getFirstInsertionPt());
  LoadInst *D = B.CreateLoad(DataTy, DataSlot, "ptcall.fuzz.d");
  LoadInst *N = B.CreateLoad(SizeTy, SizeSlot, "ptcall.fuzz.n");
  F->getArg(0)->replaceUsesWithIf(D, [&](Use &U) { return U.getUser() != SD; });
  F->getArg(1)->replaceUsesWithIf(N, [&](Use &U) { return U.getUser() != SS; });
}

void Instrumenter::emitRegistration() {
  Type *VoidTy = Type::getVoidTy(C);
  PointerType *I8P = compat::bytePointerType(C);
  FunctionType *RegTy = FunctionType::get(VoidTy, {I8P, I8P, I8P, I8P}, false);
  FunctionType *UnregTy = FunctionType::get(VoidTy, {I8P}, false);
  FunctionType *VoidFT = FunctionType::get(VoidTy, false);

  Function *Reg = weakRuntimeFunction(M, PTCALL_REGISTER_SYMBOL, RegTy);
  Function *Unreg = weakRuntimeFunction(M, PTCALL_UNREGISTER_SYMBOL, UnregTy);
  GlobalVariable *MapStart = weakHiddenBound(M, "__start_" PTCALL_MAP_SECTION);
  GlobalVariable *MapStop = weakHiddenBound(M, "__stop_" PTCALL_MAP_SECTION);
  GlobalVariable *StubStart = weakHiddenBound(M, "__start_" PTCALL_STUB_SECTION);
  GlobalVariable *StubStop = weakHiddenBound(M, "__stop_" PTCALL_STUB_SECTION);

  auto makeCaller = [&](const char *Name, Function *Callee, ArrayRef<Value *> Args) {
    Function *F = Function::Create(VoidFT, GlobalValue::InternalLinkage, Name, M);
    F->addFnAttr(Attribute::NoUnwind);
    F->addFnAttr(Attribute::NoInline);
    F->addFnAttr(StubAttr); // never instrumented
    BasicBlock *Entry = BasicBlock::Create(C, "entry", F);
    BasicBlock *Call = BasicBlock::Create(C, "call", F);
    BasicBlock *Ret = BasicBlock::Create(C, "ret", F);
    IRBuilder<> B(Entry);
    Value *Present = B.CreateICmpNE(Callee, ConstantPointerNull::get(Callee->getType()));
    B.CreateCondBr(Present, Call, Ret);
    B.SetInsertPoint(Call);
    SmallVector<Value *, 4> Cast;
    for (Value *A : Args)
      Cast.push_back(B.CreatePointerCast(A, I8P));
    B.CreateCall(Callee->getFunctionType(), Callee, Cast);
    B.CreateBr(Ret);
    B.SetInsertPoint(Ret);
    B.CreateRetVoid();
    return F;
  };
  Function *Ctor =
      makeCaller(CtorName, Reg, {MapStart, MapStop, StubStart, StubStop});
  Function *Dtor = makeCaller(DtorName, Unreg, {MapStart});
  appendToGlobalCtors(M, Ctor, CtorPriority);
  appendToGlobalDtors(M, Dtor, CtorPriority);
}

struct PtcallPass : PassInfoMixin<PtcallPass> {
  Options O;
  explicit PtcallPass(Options O) : O(std::move(O)) {}
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    Instrumenter I(M, O);
    return I.run() ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
  static bool isRequired() { return true; } // run at -O0 and under optnone too
};

// Early step of late placement: moves the cyg channel into our own attribute before
// anything in the pipeline can consume it, and records that the channel is active.
struct PtcallPreparePass : PassInfoMixin<PtcallPreparePass> {
  bool CygChannel;
  explicit PtcallPreparePass(bool Cyg) : CygChannel(Cyg) {}
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    bool Seen = CygChannel;
    for (Function &F : M)
      if (takeCygMark(F))
        Seen = true;
    if (!Seen)
      return PreservedAnalyses::all();
    M.getOrInsertNamedMetadata(CygMD);
    return PreservedAnalyses::none();
  }
  static bool isRequired() { return true; }
};

} // namespace

// Kept in the plugin's file (used, so no linker drops it) for the wrappers' version check.
extern "C" __attribute__((used, visibility("default"))) const char ptcall_pass_llvm_tag[] =
    PTCALL_PASS_LLVM_TAG;

extern "C" LLVM_ATTRIBUTE_WEAK __attribute__((visibility("default"))) ::llvm::PassPluginLibraryInfo
llvmGetPassPluginInfo() {
  // Loaded into another LLVM release, any LLVM call may crash the compiler: say so with libc
  // only, and give an API version no host accepts, so that it refuses the plugin cleanly.
  unsigned Host = ptcall::hostLLVMMajor();
  if (Host && Host != compat::BuiltForMajor) {
    std::fprintf(stderr,
                 "ptcall: this pass plugin is built for LLVM %u but the compiler runs LLVM %u: "
                 "use the ptcall-cc/ptcall-c++ or the plugin of a ptcall built for LLVM %u "
                 "(PTCALL_LLVM=%u scripts/build.sh, or the ptcall-llvm%u package)\n",
                 compat::BuiltForMajor, Host, Host, Host, Host);
    return {0, "ptcall", "0.1", nullptr};
  }
  return {LLVM_PLUGIN_API_VERSION, "ptcall", "0.1", [](PassBuilder &PB) {
            PB.registerPipelineStartEPCallback(
                [](ModulePassManager &MPM, OptimizationLevel) {
                  Options O = optionsFromEnv();
                  if (O.Early)
                    MPM.addPass(PtcallPass(O));
                  else
                    MPM.addPass(PtcallPreparePass(O.CygChannel));
                });
            PB.registerOptimizerLastEPCallback(
                [](ModulePassManager &MPM, OptimizationLevel) {
                  Options O = optionsFromEnv();
                  if (!O.Early)
                    MPM.addPass(PtcallPass(O));
                });
            PB.registerPipelineParsingCallback(
                [](StringRef Name, ModulePassManager &MPM,
                   ArrayRef<PassBuilder::PipelineElement>) {
                  if (Name == "ptcall-prepare") {
                    MPM.addPass(PtcallPreparePass(false));
                    return true;
                  }
                  if (!Name.consume_front("ptcall"))
                    return false;
                  Options O = optionsFromEnv();
                  if (!Name.empty()) {
                    if (!Name.consume_front("<") || !Name.consume_back(">"))
                      return false;
                    std::string Err;
                    if (!parseParams(Name, O, Err))
                      fatal(Err);
                  }
                  MPM.addPass(PtcallPass(O));
                  return true;
                });
          }};
}
