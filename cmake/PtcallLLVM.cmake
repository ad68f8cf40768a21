# Chooses the LLVM the pass is built for, and the clang the wrappers drive with it.
#
# The rule (docs/pass.md, "LLVM versions"), first match wins:
#   1. PTCALL_LLVM (-DPTCALL_LLVM=19, or the environment variable at the first configure);
#   2. the C compiler, when it is clang (-DCMAKE_C_COMPILER=clang-18 gives LLVM 18);
#   3. the `clang` on PATH (the distribution's default clang: 14 on Debian 12, 19 on 13);
#   4. the newest tested release whose development files are installed.
# The choice and the reason are printed at every configure. Sets PTCALL_LLVM_MAJOR,
# PTCALL_CLANG, PTCALL_CLANGXX and PTCALL_LLVM_BIN (the release's tools: llvm-profdata,
# llvm-cov, ld.lld, ...) and loads LLVM's own CMake package.

set(PTCALL_LLVM_TESTED 14 15 16 17 18 19)
list(GET PTCALL_LLVM_TESTED 0 PTCALL_LLVM_OLDEST)
list(GET PTCALL_LLVM_TESTED -1 PTCALL_LLVM_NEWEST)
set(PTCALL_LLVM "$ENV{PTCALL_LLVM}" CACHE STRING
    "LLVM major version to build the pass for (${PTCALL_LLVM_OLDEST} to ${PTCALL_LLVM_NEWEST}); empty: chosen by the rule in docs/pass.md")

# Where LLVM V's CMake package is: Debian's /usr/lib/llvm-V, or any llvm-config-V /
# llvm-config of that major version on PATH (other distributions, source builds).
function(ptcall_llvm_cmake_dir version out)
  set(dir "")
  if(EXISTS "/usr/lib/llvm-${version}/lib/cmake/llvm/LLVMConfig.cmake")
    set(dir "/usr/lib/llvm-${version}/lib/cmake/llvm")
  else()
    foreach(cfg llvm-config-${version} llvm-config${version} llvm-config)
      find_program(_ptc_cfg_${version}_${cfg} NAMES ${cfg} NO_CACHE)
      if(_ptc_cfg_${version}_${cfg})
        execute_process(COMMAND ${_ptc_cfg_${version}_${cfg}} --version
                        OUTPUT_VARIABLE v OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
        string(REGEX MATCH "^[0-9]+" major "${v}")
        if(major STREQUAL version)
          execute_process(COMMAND ${_ptc_cfg_${version}_${cfg}} --cmakedir
                          OUTPUT_VARIABLE d OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
          if(EXISTS "${d}/LLVMConfig.cmake")
            set(dir "${d}")
            break()
          endif()
        endif()
      endif()
    endforeach()
  endif()
  set(${out} "${dir}" PARENT_SCOPE)
endfunction()

# The major version a clang executable reports, or empty.
function(ptcall_clang_major exe out)
  execute_process(COMMAND ${exe} --version OUTPUT_VARIABLE v ERROR_QUIET)
  string(REGEX MATCH "clang version ([0-9]+)" m "${v}")
  set(${out} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

# Every installed release from 13 (to name it as unsupported) to a few past the newest.
set(PTCALL_LLVM_INSTALLED "")
math(EXPR _ptc_last "${PTCALL_LLVM_NEWEST} + 3")
foreach(v RANGE 13 ${_ptc_last})
  ptcall_llvm_cmake_dir(${v} d)
  if(d)
    list(APPEND PTCALL_LLVM_INSTALLED ${v})
  endif()
endforeach()
string(REPLACE ";" ", " _ptc_installed_text "${PTCALL_LLVM_INSTALLED}")
if(NOT _ptc_installed_text)
  set(_ptc_installed_text "none")
endif()

if(PTCALL_LLVM)
  set(_ptc_major "${PTCALL_LLVM}")
  set(_ptc_reason "named by PTCALL_LLVM")
elseif(CMAKE_C_COMPILER_ID STREQUAL "Clang")
  string(REGEX MATCH "^[0-9]+" _ptc_major "${CMAKE_C_COMPILER_VERSION}")
  set(_ptc_reason "the C compiler is clang ${_ptc_major}")
else()
  set(_ptc_major "")
  find_program(_ptc_path_clang NAMES clang NO_CACHE)
  if(_ptc_path_clang)
    ptcall_clang_major(${_ptc_path_clang} _ptc_major)
    set(_ptc_reason "`clang` on PATH (${_ptc_path_clang}) is clang ${_ptc_major}")
  endif()
  if(NOT _ptc_major OR NOT _ptc_major IN_LIST PTCALL_LLVM_INSTALLED)
    set(_ptc_major "")
    foreach(v IN LISTS PTCALL_LLVM_TESTED)
      if(v IN_LIST PTCALL_LLVM_INSTALLED)
        set(_ptc_major ${v})
      endif()
    endforeach()
    set(_ptc_reason "the newest tested release installed")
  endif()
endif()

if(NOT _ptc_major)
  message(FATAL_ERROR
    "ptcall: no LLVM development files found (tested: ${PTCALL_LLVM_OLDEST} to ${PTCALL_LLVM_NEWEST}). "
    "Install one, e.g. on Debian `apt-get install llvm-14-dev clang-14` (scripts/setup.sh does), "
    "then configure again, or name one with -DPTCALL_LLVM=N.")
endif()
if(NOT _ptc_major MATCHES "^[0-9]+$")
  message(FATAL_ERROR "ptcall: PTCALL_LLVM='${_ptc_major}' is not a major version number; "
                      "use e.g. -DPTCALL_LLVM=19 (tested: ${PTCALL_LLVM_OLDEST} to ${PTCALL_LLVM_NEWEST}).")
endif()
if(_ptc_major LESS PTCALL_LLVM_OLDEST)
  message(FATAL_ERROR
    "ptcall: LLVM ${_ptc_major} (${_ptc_reason}) is older than ptcall supports "
    "(${PTCALL_LLVM_OLDEST} to ${PTCALL_LLVM_NEWEST}). Install llvm-${PTCALL_LLVM_OLDEST}-dev and "
    "clang-${PTCALL_LLVM_OLDEST} or newer and configure with -DPTCALL_LLVM=N "
    "(installed here: ${_ptc_installed_text}).")
endif()
if(_ptc_major GREATER PTCALL_LLVM_NEWEST)
  message(WARNING
    "ptcall: LLVM ${_ptc_major} (${_ptc_reason}) is newer than the releases ptcall is tested "
    "with (${PTCALL_LLVM_OLDEST} to ${PTCALL_LLVM_NEWEST}); trying it. If the pass does not "
    "build or its tests fail, configure with -DPTCALL_LLVM=${PTCALL_LLVM_NEWEST}.")
endif()

ptcall_llvm_cmake_dir(${_ptc_major} _ptc_dir)
if(NOT _ptc_dir)
  message(FATAL_ERROR
    "ptcall: LLVM ${_ptc_major} was chosen (${_ptc_reason}) but its development files are not "
    "installed. Install them (Debian: `apt-get install llvm-${_ptc_major}-dev clang-${_ptc_major}`) "
    "or choose an installed release with -DPTCALL_LLVM=N (installed here: ${_ptc_installed_text}).")
endif()

# A change of release in an existing build tree: forget what was found for the old one.
if(DEFINED PTCALL_LLVM_MAJOR_CACHED AND NOT PTCALL_LLVM_MAJOR_CACHED STREQUAL _ptc_major)
  message(STATUS "ptcall: LLVM changes from ${PTCALL_LLVM_MAJOR_CACHED} to ${_ptc_major} in this build tree")
  unset(LLVM_DIR CACHE)
  unset(PTCALL_CLANG CACHE)
  unset(PTCALL_CLANGXX CACHE)
endif()
set(PTCALL_LLVM_MAJOR_CACHED "${_ptc_major}" CACHE INTERNAL "")

find_package(LLVM CONFIG REQUIRED PATHS "${_ptc_dir}" NO_DEFAULT_PATH)
if(NOT LLVM_VERSION_MAJOR STREQUAL _ptc_major)
  message(FATAL_ERROR "ptcall: ${_ptc_dir} holds LLVM ${LLVM_PACKAGE_VERSION}, not ${_ptc_major}; "
                      "remove LLVM_DIR from the cache (or the build directory) and configure again.")
endif()
set(PTCALL_LLVM_MAJOR ${LLVM_VERSION_MAJOR})
set(PTCALL_LLVM_BIN "${LLVM_TOOLS_BINARY_DIR}")

# The wrappers' compiler: clang of the same release, never another one found first on PATH.
find_program(PTCALL_CLANG NAMES clang clang-${PTCALL_LLVM_MAJOR} HINTS "${PTCALL_LLVM_BIN}" NO_DEFAULT_PATH)
find_program(PTCALL_CLANG NAMES clang-${PTCALL_LLVM_MAJOR})
find_program(PTCALL_CLANGXX NAMES clang++ clang++-${PTCALL_LLVM_MAJOR} HINTS "${PTCALL_LLVM_BIN}" NO_DEFAULT_PATH)
find_program(PTCALL_CLANGXX NAMES clang++-${PTCALL_LLVM_MAJOR})
foreach(_ptc_cc PTCALL_CLANG PTCALL_CLANGXX)
  if(NOT ${_ptc_cc})
    message(FATAL_ERROR
      "ptcall: LLVM ${PTCALL_LLVM_MAJOR}'s development files are installed but not its clang. "
      "Install it (Debian: `apt-get install clang-${PTCALL_LLVM_MAJOR}`) or choose another "
      "release with -DPTCALL_LLVM=N (installed here: ${_ptc_installed_text}).")
  endif()
  ptcall_clang_major(${${_ptc_cc}} _ptc_cc_major)
  if(NOT _ptc_cc_major STREQUAL PTCALL_LLVM_MAJOR)
    message(FATAL_ERROR
      "ptcall: ${${_ptc_cc}} is clang ${_ptc_cc_major}, not ${PTCALL_LLVM_MAJOR}: the pass only "
      "loads into the clang of its own LLVM. Install clang-${PTCALL_LLVM_MAJOR} or set "
      "${_ptc_cc} to it.")
  endif()
endforeach()

message(NOTICE "ptcall: LLVM ${LLVM_PACKAGE_VERSION} (${_ptc_reason}); clang ${PTCALL_CLANG}; "
               "installed: ${_ptc_installed_text}; another with -DPTCALL_LLVM=N")
