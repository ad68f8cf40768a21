#!/usr/bin/env bash
# Builds ptcall against one LLVM release and runs the core tests on it (docs/llvm-versions.md):
# the pass's lit tests, the wrappers, the runtime, the end-to-end programs (exact counts, the
# untraced and armed paths, C++ exceptions, longjmp, threads, fork, dlopen) and bzip2 from
# Debian's sources against clang's own PGO counts.
#
#   scripts/test-llvm.sh VERSION [--native | --root] [--all | -R REGEX]
#
# VERSION 14, 15, 16 (and 19, which Debian 12 also packages) build here, in ./build-llvmN, with
# Debian 12's packages. 17, 18 and 19 build inside a Debian 13 (trixie) root made with
# debootstrap: --native / --root force one or the other. --all runs the whole suite instead
# of the core; -R REGEX only the ctest names it matches. Roots are cached in $PTCALL_ROOTS (default /var/cache/ptcall/roots): the
# minimal one once, one per LLVM release with its packages; the package mirror is the one
# this machine's apt sources name, read at run time. Needs root for debootstrap and chroot.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)

usage() { echo "usage: scripts/test-llvm.sh VERSION [--native | --root] [--all | -R REGEX]" >&2; exit 2; }
[ $# -ge 1 ] || usage
version=$1
shift
case $version in
  *[!0-9]*|'') echo "test-llvm: '$version' is not an LLVM major version (tested: 14 to 19)" >&2; exit 2 ;;
esac
if [ "$version" -lt 14 ]; then
  echo "test-llvm: LLVM $version is older than ptcall supports (14 to 19)" >&2
  exit 2
fi
if [ "$version" -gt 19 ]; then
  echo "test-llvm: warning: LLVM $version is newer than the tested range (14 to 19); trying it" >&2
fi
where=""
scope=core
regex=
while [ $# -gt 0 ]; do
  case $1 in
    --native) where=native ;;
    --root) where=root ;;
    --all) scope=all ;;
    -R) [ $# -ge 2 ] || usage; scope=some; regex=$2; shift ;;
    *) usage ;;
  esac
  shift
done
if [ -z "$where" ]; then
  if [ "$version" -le 16 ]; then where=native; else where=root; fi
fi

# The core: ctest names (docs/llvm-versions.md lists what each covers).
core='^(lit-pass|pass-e2e|pass-wrapper-cmake|pass-ccache|pass-llvm-choice|runtime-.*|e2e-.*|real-bzip2-early|decoder-session)$'
ctest_args=(--output-on-failure -j"$(nproc)" --timeout 900)
sanitizer_tests=ON
if [ "$scope" = core ]; then ctest_args+=(-R "$core"); sanitizer_tests=OFF; fi
if [ "$scope" = some ]; then core=$regex; ctest_args+=(-R "$core"); sanitizer_tests=OFF; fi

if [ "$where" = native ]; then
  export PTCALL_LLVM=$version
  . scripts/llvm-choice.sh
  scripts/setup.sh --core
  PTCALL_CMAKE_ARGS="-DPTCALL_SANITIZER_TESTS=$sanitizer_tests" scripts/build.sh
  echo "test-llvm: LLVM $version, native ($(. /etc/os-release && echo "$PRETTY_NAME")), $scope tests"
  exec ctest --test-dir "$build" "${ctest_args[@]}"
fi

# ---- inside a Debian 13 root
if [ "$(id -u)" != 0 ]; then
  echo "test-llvm: LLVM $version is tested in a Debian 13 root, which needs root (debootstrap," \
       "chroot); run as root, or use --native if this machine packages LLVM $version" >&2
  exit 2
fi
command -v debootstrap >/dev/null || {
  echo "test-llvm: debootstrap is not installed: apt-get install debootstrap" >&2; exit 2; }
suite=trixie
roots=${PTCALL_ROOTS:-/var/cache/ptcall/roots}
base=$roots/$suite
root=$roots/$suite-llvm$version
mkdir -p "$roots"

# The mirror: the first Debian archive this machine's apt sources name (never written down).
mirror() {
  local m
  m=$(awk 'tolower($1) == "types:" { deb = ($0 ~ / deb( |$)/) }
           tolower($1) == "uris:" && deb && $2 !~ /security/ { print $2; exit }' \
        /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  if [ -z "$m" ]; then
    m=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/) { print $i; exit } }' \
          /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | grep -v security | head -n1 || true)
  fi
  [ -n "$m" ] || { echo "test-llvm: no Debian mirror in this machine's apt sources (/etc/apt)" >&2; exit 2; }
  echo "$m"
}

if [ ! -x "$base/bin/sh" ]; then
  echo "test-llvm: making a minimal Debian 13 root in $base (debootstrap, a few minutes, once)"
  rm -rf "$base.tmp"
  debootstrap --variant=minbase "$suite" "$base.tmp" "$(mirror)" > "$roots/$suite.debootstrap.log" 2>&1 || {
    echo "test-llvm: debootstrap failed; its log: $roots/$suite.debootstrap.log" >&2; exit 1; }
  mv "$base.tmp" "$base"
fi
if [ ! -x "$root/bin/sh" ]; then
  echo "test-llvm: copying it to $root for LLVM $version"
  rm -rf "$root.tmp"
  cp -a "$base" "$root.tmp"
  mv "$root.tmp" "$root"
fi

mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
mnt() { # mnt ARGS... TARGET
  mount "$@"
  mounted+=("${!#}")
}
mkdir -p "$root/proc" "$root/sys" "$root/dev/shm" "$root/dev/pts" "$root/src"
mnt -t proc proc "$root/proc"
mnt -o bind,ro /sys "$root/sys"
mnt -t tmpfs -o mode=1777 tmpfs "$root/dev/shm"
mnt -t devpts -o newinstance,ptmxmode=0666 devpts "$root/dev/pts"
for d in null zero full random urandom tty; do
  [ -e "$root/dev/$d" ] || { touch "$root/dev/$d"; mnt --bind "/dev/$d" "$root/dev/$d"; }
done
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

# The sources as they are in this checkout (tracked and new files; no build trees).
echo "test-llvm: copying the sources into $root/src"
find "$root/src" -mindepth 1 -maxdepth 1 ! -name 'build-llvm*' -exec rm -rf {} +
git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C "$root/src"
# the web page's npm libraries (pinned in web/package-lock.json), which the server's build
# installs: from this checkout, where scripts/setup.sh put them
if [ ! -d web/node_modules/uplot ]; then scripts/setup.sh; fi
tar -cf - web/node_modules | tar -xf - -C "$root/src"

echo "test-llvm: LLVM $version in Debian 13 ($root), $scope tests"
core_q=$(printf '%q' "$core")
chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 PTCALL_LLVM="$version" PTCALL_CMAKE_ARGS="-DPTCALL_SANITIZER_TESTS=$sanitizer_tests" /bin/bash -c "
set -euo pipefail
cd /src
scripts/setup.sh --core
scripts/build.sh
if [ '$scope' != all ]; then
  ctest --test-dir build-llvm$version --output-on-failure -j\$(nproc) --timeout 900 -R $core_q
else
  ctest --test-dir build-llvm$version --output-on-failure -j\$(nproc) --timeout 900
fi"
