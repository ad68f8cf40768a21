#!/usr/bin/env bash
# Installs everything ptcall needs to build, test and benchmark, from Debian 12's packages.
# Idempotent; run as root (or with sudo available). Also enables Debian's source packages
# (deb-src), which the real-program test and bench/run.py use to fetch bzip2, lua5.4 and sqlite3 sources.
# The viewer tests (test/outputs/viewer_test.py) need Debian's Chromium, chromedriver, selenium and
# jsonschema, and speedscope from the npm registry, pinned in web/package-lock.json (npm ci).
# The runs database (ptcall db) builds on libsqlite3, libpq and libxxhash; its tests start a
# PostgreSQL server of their own (Debian's postgresql: initdb, pg_ctl) and use xxhsum.
# ptcall serve is built on libmicrohttpd; its page's charts are uPlot (npm, web/package.json),
# served from ptcall's data directory; the browser tests (test/web) use the Chromium above.
# graphviz: `dot` reads `ptcall graph` in the hostile-names test (test/outputs/names_test.py)
# ccache: test/pass-e2e checks that the compiler wrappers make its hash see ptcall's settings
# groff, man-db: test/package checks the generated man pages (groff -ww, man); debootstrap:
# scripts/test-package.sh installs the Debian package into a fresh Debian root
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
pkgs=(
  build-essential cmake ninja-build pkg-config
  clang-14 llvm-14-dev llvm-14-tools lld-14 lld libclang-rt-14-dev
  libipt-dev libelf-dev zlib1g-dev libdeflate-dev
  python3 valgrind uftrace binutils dpkg-dev time cppcheck
  llvm-14 tcl
  chromium chromium-driver python3-selenium python3-jsonschema nodejs
  libsqlite3-dev libpq-dev postgresql libxxhash-dev xxhash
  libmicrohttpd-dev
  graphviz
  ccache
  groff man-db debootstrap
)
# npm: Debian's package, unless npm is already there (NodeSource's nodejs ships its own npm and
# conflicts with Debian's)
if ! command -v npm >/dev/null 2>&1; then pkgs+=(npm); fi
need_update=0
src_list=/etc/apt/sources.list.d/ptcall-deb-src.sources
if ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  echo "setup: enabling Debian source packages in $src_list"
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  $SUDO tee "$src_list" >/dev/null <<EOS
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $codename
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
  need_update=1
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ] || [ "$need_update" = 1 ]; then
  echo "setup: apt-get update"
  $SUDO apt-get update -qq
fi
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ ! -d "$root/web/node_modules/speedscope" ] || [ ! -d "$root/web/node_modules/uplot" ]; then
  echo "setup: npm ci --prefix web (speedscope, uPlot, as pinned in web/package-lock.json)"
  npm ci --prefix "$root/web" --ignore-scripts --no-audit --no-fund --loglevel=error
fi
