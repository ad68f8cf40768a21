# lit configuration of the ptcall pass tests (loaded from the configured lit.site.cfg.py).
import os
import sys
import lit.formats

config.name = "ptcall-pass"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".ll", ".c", ".cpp", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in",
                   "filecheck_versions.py"]
config.test_source_root = config.ptcall_src_root
config.test_exec_root = config.ptcall_obj_root

# FileCheck, not, llc, llvm-dis, ... from the LLVM that the plugin was built against
config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
# options reach the pass through the environment too: never inherit them
for var in list(config.environment):
    if var.startswith("PTCALL_"):
        del config.environment[var]

# Check prefixes by LLVM release. The pass makes the same sleds, stubs and map on every
# release, but LLVM prints some of it differently, and clang's pipelines change around it.
# A check line that reads the same everywhere keeps its plain prefix (CHECK, ASM, ...); a line
# that differs is written once per variant as PREFIX-TAG, with one of the two tags of its row
# below. FileCheck in a RUN line is filecheck_versions.py: for each prefix P it is given (CHECK
# if none), it also checks P-TAG for the tags of this release, and P-TAG1-TAG2 for two of them
# in the table's order (a line that differs in two ways: CHECK-OPAQUE-ICMPEXPR is 15 to 18).
# No RUN line names a release. Rows: (tag before, tag from, release, what differs).
LLVM_CHECK_TAGS = [
    # typed pointers (`void ()* @f`, `i8* bitcast (i64* @g to i8*)`) / opaque (`ptr @f`).
    # 15 and 16 still read typed IR as typed: %opt-ptcall asks them for opaque pointers, the
    # mode their clang compiles in. The inputs keep the typed syntax, which 17+ read as `ptr`.
    ("TYPED", "OPAQUE", 15),
    # clang -O1 marks no call `tail` (a call in tail position stays a call) / marks it, and
    # the backend emits `jmp callee # TAILCALL`
    ("O1CALL", "O1TAIL", 15),
    # a comdat function's sled section, `ptcall_sites,"aoG",@progbits,...`, names
    # GROUP,comdat,SYM / SYM,GROUP,comdat: in the pass's inline asm (pass/LLVMCompat.h,
    # LinkedSymbolBeforeGroup) and in llc's output (flags "aGo" / "aoG" there)
    ("GROUPSYM", "SYMGROUP", 18),
    # the constructor's test of the weak __ptcall_register_object: an `icmp` constant
    # expression in the `br` / an `icmp` instruction (constant expressions dropped icmp)
    ("ICMPEXPR", "ICMPINST", 19),
    # clang -O2 gives a function no return `range(...)` attribute / gives it one
    ("NORANGE", "RANGE", 19),
]
config.llvm_check_tags = [new if config.llvm_major >= since else old
                          for old, new, since in LLVM_CHECK_TAGS]
# for REQUIRES/UNSUPPORTED, should a test ever not apply to a release (none does today)
config.available_features.add(f"llvm-{config.llvm_major}")
config.available_features.add("typed-pointers" if config.llvm_major < 15 else "opaque-pointers")

versioned_filecheck = " ".join([
    sys.executable, os.path.join(config.ptcall_src_root, "filecheck_versions.py"),
    ",".join(config.llvm_check_tags), ",".join(t for row in LLVM_CHECK_TAGS for t in row[:2]),
    config.ptcall_filecheck])
# the bare word FileCheck in a RUN line (as LLVM's own lit configuration substitutes it)
config.substitutions.append((r"(?<![\w/%.-])FileCheck(?![\w.-])", versioned_filecheck))
config.substitutions.append(("%llvm-major", str(config.llvm_major)))

opaque_flag = " -opaque-pointers" if config.llvm_major in (15, 16) else ""
config.substitutions.append(
    ("%opt-ptcall", f"{config.ptcall_opt}{opaque_flag} -load-pass-plugin={config.ptcall_plugin}"))
# llc with the plugin loaded: its ret-sled step stands in for PatchableFunction (RetSleds.cpp)
config.substitutions.append(("%llc-ptcall", f"llc -load={config.ptcall_plugin}"))
config.substitutions.append(("%ptcall-cc", config.ptcall_cc))
config.substitutions.append(("%ptcall-cxx", config.ptcall_cxx))
config.substitutions.append(("%ptcall-include", config.ptcall_include))
config.substitutions.append(("%inputs", os.path.join(config.ptcall_src_root, "Inputs")))
