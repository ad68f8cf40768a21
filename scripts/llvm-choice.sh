# Sourced by the build and test scripts: the LLVM release and the build directory.
#   PTCALL_LLVM       LLVM major version to build the pass for (tested: 14 to 19). Unset: the
#                     distribution's default clang (Debian 12: 14, Debian 13: 19); elsewhere
#                     CMake's rule (docs/pass.md, "LLVM versions") chooses and says which.
#   PTCALL_BUILD_DIR  the build directory: ./build, or ./build-llvmN when PTCALL_LLVM=N is given.
build=${PTCALL_BUILD_DIR:-build}
if [ -n "${PTCALL_LLVM:-}" ]; then
  case $PTCALL_LLVM in
    *[!0-9]*) echo "ptcall: PTCALL_LLVM='$PTCALL_LLVM' is not a major version number (e.g. PTCALL_LLVM=19)" >&2
              exit 2 ;;
  esac
  build=${PTCALL_BUILD_DIR:-build-llvm$PTCALL_LLVM}
else
  case $(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}") in
    bookworm) PTCALL_LLVM=14 ;;
    trixie) PTCALL_LLVM=19 ;;
  esac
fi
# exported, so that the scripts this one runs (setup.sh, build.sh) use the same directory
export PTCALL_LLVM
export PTCALL_BUILD_DIR=$build
