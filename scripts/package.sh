#!/usr/bin/env bash
# Builds ptcall's Debian package for each LLVM version given, into dist/ (docs/install.md):
#
#   scripts/package.sh [VERSION...]        e.g. scripts/package.sh 14 19
#
# VERSION is an LLVM major version whose clang and llvm-dev are installed
# (/usr/lib/llvm-VERSION); default: the version ./build was configured with, else 14.
# Each version is configured in build-pkg-VERSION (prefix /usr, -DPTCALL_LLVM=VERSION, the
# wrappers driving /usr/bin/clang-VERSION), only what gets installed is built (not the tests),
# and cpack (DEB, dependencies from dpkg-shlibdeps) writes
# dist/ptcall-llvmVERSION_<version>-1_<arch>.deb. scripts/test-package.sh installs one into a
# fresh Debian root and uses it there. The packages of different versions conflict (each
# Provides and Conflicts with `ptcall`): one is installed at a time.
# PTCALL_JOBS: parallel build jobs (default 2).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

default_version() {
  local cache=build/CMakeCache.txt v=
  if [ -f "$cache" ]; then
    v=$(sed -n 's/^PTCALL_LLVM:[A-Z]*=\([0-9][0-9]*\)$/\1/p' "$cache")
    [ -n "$v" ] || v=$(sed -n 's|^LLVM_DIR:PATH=/usr/lib/llvm-\([0-9][0-9]*\)/.*|\1|p' "$cache")
  fi
  echo "${v:-14}"
}

versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=("$(default_version)")
for v in "${versions[@]}"; do
  case $v in
    ''|*[!0-9]*) echo "package: '$v' is not an LLVM major version (14, 19, ...)" >&2; exit 2 ;;
  esac
  for f in /usr/lib/llvm-"$v"/cmake/LLVMConfig.cmake /usr/lib/llvm-"$v"/lib/cmake/llvm/LLVMConfig.cmake; do
    [ -f "$f" ] && continue 2
  done
  echo "package: LLVM $v is not installed (no /usr/lib/llvm-$v/cmake): apt-get install" \
       "llvm-$v-dev clang-$v" >&2
  exit 2
done
for tool in cmake cpack ninja dpkg-shlibdeps dpkg-deb; do
  command -v "$tool" >/dev/null ||
    { echo "package: $tool is missing: run scripts/setup.sh" >&2; exit 2; }
done

mkdir -p dist
for v in "${versions[@]}"; do
  b=build-pkg-$v
  echo "package: LLVM $v in $b"
  cmake -S . -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
    -DPTCALL_LLVM="$v" -DLLVM_DIR="/usr/lib/llvm-$v/lib/cmake/llvm" \
    -DPTCALL_CLANG="/usr/bin/clang-$v" -DPTCALL_CLANGXX="/usr/bin/clang++-$v" \
    -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON >"$b.configure.log" 2>&1 ||
    { tail -n 30 "$b.configure.log" >&2; echo "package: configuring $b failed ($b.configure.log)" >&2; exit 1; }
  rm -f "$b.configure.log"
  ninja -C "$b" -j"${PTCALL_JOBS:-2}" ptcall_installed
  rm -rf "$b/package"
  (cd "$b" && cpack -G DEB >cpack.log 2>&1) ||
    { tail -n 30 "$b/cpack.log" >&2; echo "package: cpack failed ($b/cpack.log)" >&2; exit 1; }
  deb=$(ls "$b"/package/ptcall-llvm"$v"_*.deb)
  # the wrappers drive clang-$v: the package must depend on it
  dpkg-deb -f "$deb" Depends | grep -q "clang-$v" ||
    { echo "package: $deb does not depend on clang-$v" >&2; exit 1; }
  mv -f "$deb" dist/
  echo "package: dist/$(basename "$deb"): $(dpkg-deb -f "dist/$(basename "$deb")" Depends)"
done
