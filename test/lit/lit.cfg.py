# lit configuration of the ptcall pass tests (loaded from the configured lit.site.cfg.py).
import os
import lit.formats

config.name = "ptcall-pass"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".ll", ".c", ".cpp", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = config.ptcall_src_root
config.test_exec_root = config.ptcall_obj_root

# FileCheck, not, llc, llvm-dis, ... from the LLVM that the plugin was built against
config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
# options reach the pass through the environment too: never inherit them
for var in list(config.environment):
    if var.startswith("PTCALL_"):
        del config.environment[var]

config.substitutions.append(
    ("%opt-ptcall", f"{config.ptcall_opt} -load-pass-plugin={config.ptcall_plugin}"))
# llc with the plugin loaded: its ret-sled step stands in for PatchableFunction (RetSleds.cpp)
config.substitutions.append(("%llc-ptcall", f"llc -load={config.ptcall_plugin}"))
config.substitutions.append(("%ptcall-cc", config.ptcall_cc))
config.substitutions.append(("%ptcall-cxx", config.ptcall_cxx))
config.substitutions.append(("%ptcall-include", config.ptcall_include))
config.substitutions.append(("%inputs", os.path.join(config.ptcall_src_root, "Inputs")))
config.substitutions.append(("%FileCheck", config.ptcall_filecheck))
