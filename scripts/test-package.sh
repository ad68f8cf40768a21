#!/usr/bin/env bash
# Installs a ptcall Debian package into a fresh Debian root and uses it there as a user would
# (test/package/check_installed.sh: ptcall-cc, ptcall record and report with exact counts,
# ptcall-c++, man pages, bash completion, pkg-config, find_package(ptcall)). docs/install.md.
#
#   scripts/test-package.sh [--suite bookworm|trixie] [--llvm N] [DEB]
#       DEB: default the newest dist/ptcall-llvmN_*.deb (any N without --llvm). --suite: the
#       Debian release of the root (default: this machine's).
#   scripts/test-package.sh --ctest [--suite S] [--llvm N] [DEB]
#       as ctest runs it: prints a SKIP line and exits 77 unless PTCALL_TEST_PACKAGE=1, the
#       user is root and DEB exists (the test takes minutes and downloads packages).
#
# Needs root (debootstrap, chroot, mount) and a Debian mirror: the first `deb` source of this
# machine's release in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list. A pristine
# minbase root per release is kept in /var/cache/ptcall/roots/SUITE (made once with
# debootstrap --variant=minbase); each run copies it to a scratch directory, so every run
# starts from a fresh root, and removes the copy at the end.
set -euo pipefail
root_dir=$(cd "$(dirname "$0")/.." && pwd)
cache=/var/cache/ptcall/roots
host_suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
suite=$host_suite
ctest=0
deb=
llvm='*'

while [ $# -gt 0 ]; do
  case $1 in
    --ctest) ctest=1 ;;
    --suite) suite=${2:?--suite needs a Debian release name}; shift ;;
    --suite=*) suite=${1#*=} ;;
    --llvm) llvm=${2:?--llvm needs an LLVM major version}; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "test-package: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) deb=$1 ;;
  esac
  shift
done
if [ -z "$deb" ]; then
  # shellcheck disable=SC2086 # $llvm may be a glob
  deb=$(ls -t "$root_dir"/dist/ptcall-llvm$llvm"_"*.deb 2>/dev/null | head -n 1 || true)
fi

skip() {
  echo "SKIP: $*"
  exit 77
}
if [ "$ctest" = 1 ]; then
  [ "${PTCALL_TEST_PACKAGE:-0}" = 1 ] ||
    skip "the Debian package test takes minutes, needs root and a mirror: run" \
         "PTCALL_TEST_PACKAGE=1 ctest -R package-deb, or scripts/package.sh then" \
         "scripts/test-package.sh (docs/install.md)"
  [ "$(id -u)" = 0 ] || skip "the Debian package test needs root (debootstrap, chroot)"
  if [ -z "$deb" ] || [ ! -f "$deb" ]; then skip "no package in dist/: run scripts/package.sh first"; fi
fi
[ "$(id -u)" = 0 ] || { echo "test-package: run as root (debootstrap, chroot, mount)" >&2; exit 2; }
if [ -z "$deb" ] || [ ! -f "$deb" ]; then
  echo "test-package: no package ${deb:-in dist/}: run scripts/package.sh first" >&2
  exit 2
fi
command -v debootstrap >/dev/null ||
  { echo "test-package: debootstrap is missing: apt-get install debootstrap (scripts/setup.sh)" >&2; exit 2; }
case $suite in
  *[!a-z]*|'') echo "test-package: --suite takes a Debian release name (bookworm, trixie)" >&2; exit 2 ;;
esac

# The mirror of this machine's Debian: read at run time, never written down anywhere.
mirror() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    # deb822 stanzas: the URIs of one whose Types has deb and whose Suites has this release
    awk -v s="$host_suite" '
      BEGIN { RS = ""; FS = "\n" }
      {
        t = 0; u = ""; ok = 0
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^Types:/ && $i ~ /[ \t]deb([ \t]|$)/) t = 1
          if ($i ~ /^URIs:/) { split($i, w, /[ \t]+/); u = w[2] }
          if ($i ~ /^Suites:/) { n = split($i, w, /[ \t]+/); for (k = 2; k <= n; k++) if (w[k] == s) ok = 1 }
        }
        if (t && ok && u != "") { print u; exit }
      }' "$f"
  done
  if [ -f /etc/apt/sources.list ]; then
    sed -E 's/\[[^]]*\]//' /etc/apt/sources.list |
      awk -v s="$host_suite" '$1 == "deb" && $3 == s { print $2; exit }'
  fi
}
uri=$(mirror | head -n 1)
[ -n "$uri" ] || { echo "test-package: no deb source of $host_suite in /etc/apt/sources.list(.d): cannot find a mirror" >&2; exit 2; }

start=$(date +%s)
# The pristine root of this release, made once (a lock keeps two runs from making it twice).
mkdir -p "$cache"
exec 9>"$cache/.lock-$suite"
flock 9
if [ ! -d "$cache/$suite" ]; then
  echo "test-package: debootstrap --variant=minbase $suite (once, into $cache/$suite)"
  rm -rf "$cache/$suite.tmp"
  debootstrap --variant=minbase "$suite" "$cache/$suite.tmp" "$uri" >"$cache/$suite.log" 2>&1 ||
    { echo "test-package: debootstrap failed: see $cache/$suite.log" >&2; exit 1; }
  mv "$cache/$suite.tmp" "$cache/$suite"
fi
flock -u 9

scratch=$(mktemp -d /var/tmp/ptcall-pkgtest.XXXXXX)
chr=$scratch/root
cleanup() {
  local m
  for m in "$chr/proc" "$chr/dev/pts"; do
    if mountpoint -q "$m" 2>/dev/null; then umount "$m" || umount -l "$m" || true; fi
  done
  # never remove a root that still has something mounted in it
  if ! grep -q " $scratch/" /proc/mounts; then
    rm -rf "$scratch"
  else
    echo "test-package: $scratch still has mounts: left in place" >&2
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir "$chr"
cp -a "$cache/$suite/." "$chr/"
mount -t proc proc "$chr/proc"
cp /etc/resolv.conf "$chr/etc/resolv.conf" 2>/dev/null || true
cp "$deb" "$chr/tmp/"
install -m 0755 "$root_dir/test/package/check_installed.sh" "$chr/tmp/check_installed.sh"

in_root() { chroot "$chr" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
                       LANG=C.UTF-8 "$@"; }
echo "test-package: $(basename "$deb") into a fresh Debian $suite root ($scratch)"
in_root apt-get update -qq
echo "test-package: apt-get install ./$(basename "$deb")"
in_root apt-get install -y -qq --no-install-recommends "./tmp/$(basename "$deb")" >"$scratch/install.log" 2>&1 ||
  { tail -n 30 "$scratch/install.log" >&2; echo "test-package: the package did not install" >&2; exit 1; }
# what the test needs besides the package (not dependencies of it)
echo "test-package: apt-get install man-db cmake make pkgconf bash-completion (test prerequisites)"
in_root apt-get install -y -qq --no-install-recommends man-db cmake make pkgconf bash-completion \
  >>"$scratch/install.log" 2>&1 ||
  { tail -n 30 "$scratch/install.log" >&2; echo "test-package: the test's prerequisites did not install" >&2; exit 1; }
# shellcheck disable=SC2016 # dpkg-query's own ${...} fields
in_root dpkg-query -W -f='installed: ${Package} ${Version}\n' "$(dpkg-deb -f "$deb" Package)"
in_root useradd -m -s /bin/bash tester
echo "test-package: as user tester: test/package/check_installed.sh /usr"
chroot --userspec=tester:tester "$chr" env -i HOME=/home/tester USER=tester \
  PATH=/usr/bin:/bin LANG=C.UTF-8 bash /tmp/check_installed.sh /usr /home/tester/work
echo "test-package: PASS ($(basename "$deb") on Debian $suite, $(($(date +%s) - start)) s)"
