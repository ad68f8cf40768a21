#!/usr/bin/env bash
# Installs everything ptcall needs to build, test and benchmark, from Debian's packages (Debian 12; Debian 13 for the LLVM 17-19 roots of scripts/test-llvm.sh).
# Idempotent; run as root (or with sudo available). Also enables Debian's source packages
# (deb-src), which the real-program test and bench/run.py use to fetch bzip2, lua5.4 and sqlite3 sources.
# The viewer tests (test/outputs/viewer_test.py) need Debian's Chromium, chromedriver, selenium and
# jsonschema, and speedscope from the npm registry, pinned in web/package-lock.json (npm ci).
# The runs database (ptcall db) builds on libsqlite3, libpq and libxxhash; its tests start a
# PostgreSQL server of their own (Debian's postgresql: initdb, pg_ctl) and use xxhsum.
# ptcall serve is built on libmicrohttpd; its page's charts are uPlot (npm, web/package.json),
# served from ptcall's data directory; the browser tests (test/web) use the Chromium above.
# graphviz: `dot` reads `ptcall graph` in the hostile-names test (test/outputs/names_test.py)
# protobuf-compiler: `protoc --decode` checks the Perfetto export against Perfetto's own .proto
# d3-flame-graph (with d3) and @hpcc-js/wasm-graphviz (npm, web/package.json): the flame graph
# and the call graph's layout in ptcall serve and ptcall html
# ccache: test/pass-e2e checks that the compiler wrappers make its hash see ptcall's settings
# groff, man-db: test/package checks the generated man pages (groff -ww, man); debootstrap:
# scripts/test-package.sh installs the Debian package into a fresh Debian root
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
# The LLVM release the pass is built for: PTCALL_LLVM (14 to 19), else the distribution's
# default clang (scripts/llvm-choice.sh). --core: only what building ptcall and its core tests
# need (scripts/test-llvm.sh installs that much in a Debian root of another release).
. "$root/scripts/llvm-choice.sh"
llvm=${PTCALL_LLVM:-14}
core=0
if [ "${1:-}" = --core ]; then core=1; fi
pkgs=(
  build-essential cmake ninja-build pkg-config python3 binutils file
  "clang-$llvm" "llvm-$llvm-dev" "llvm-$llvm-tools" "lld-$llvm" "llvm-$llvm"
  libipt-dev libelf-dev zlib1g-dev libdeflate-dev
  libsqlite3-dev libpq-dev libxxhash-dev libmicrohttpd-dev
  dpkg-dev ccache
)
# compiler-rt (sanitizers, libFuzzer, profiles): in libclang-common-15-dev for 15, its own
# package for the others
if [ "$llvm" = 15 ]; then pkgs+=(libclang-common-15-dev); else pkgs+=("libclang-rt-$llvm-dev"); fi
if [ "$core" = 0 ]; then
  pkgs+=(
    lld valgrind uftrace time cppcheck tcl
    chromium chromium-driver python3-selenium python3-jsonschema python3-scipy nodejs
    postgresql xxhash
    graphviz debootstrap groff man-db protobuf-compiler
    lcov
    redis-tools # redis-benchmark, for test/real/redis_e2e.py
    afl++ # afl-fuzz and afl-clang-fast, for test/cov/watch_test.py (cov-watch)
  )
fi
# npm: Debian's package, unless npm is already there (NodeSource's nodejs ships its own npm and
# conflicts with Debian's)
if [ "$core" = 0 ] && ! command -v npm >/dev/null 2>&1; then pkgs+=(npm); fi
need_update=0
# Source packages (deb-src) from the same archives as the machine's own Debian sources: their
# URIs, suites and keys are copied, so a user behind their own mirror or proxy is served by it
# and no mirror is named here.
src_list=/etc/apt/sources.list.d/ptcall-deb-src.sources
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
# (awk, not python: a fresh minimal Debian has no python3 before this script installs it)
deb_src_stanzas() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && [ "$f" != "$src_list" ] || continue
    awk -v codename="$codename" '
      function flush(   n, i, s, keep) {
        if (types ~ /(^| )deb( |$)/ && tolower(enabled) != "no" && uris != "") {
          n = split(suites, s, " "); keep = ""
          for (i = 1; i <= n; i++)
            if (s[i] == codename || index(s[i], codename "-") == 1) keep = keep (keep ? " " : "") s[i]
          if (keep != "") {
            printf "Types: deb-src\nURIs: %s\nSuites: %s\nComponents: %s\n", uris, keep, \
                   (comps != "" ? comps : "main")
            if (signed != "") printf "Signed-By: %s\n", signed
            print ""
          }
        }
        types = uris = suites = comps = signed = enabled = ""
      }
      /^[ \t]*$/ { flush(); next }
      /^[ \t]*#/ { next }
      { key = tolower($1); sub(/:$/, "", key); val = $0; sub(/^[^:]*:[ \t]*/, "", val)
        if (key == "types") types = val; else if (key == "uris") uris = val
        else if (key == "suites") suites = val; else if (key == "components") comps = val
        else if (key == "signed-by") signed = val; else if (key == "enabled") enabled = val }
      END { flush() }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk -v codename="$codename" '
      $1 == "deb" {
        i = 2; opts = ""
        if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) { opts = opts " " $i; i++ }; opts = opts " " $i; i++ }
        uri = $(i); suite = $(i + 1); comps = ""
        for (j = i + 2; j <= NF && $j !~ /^#/; j++) comps = comps (comps ? " " : "") $j
        if (suite == codename || index(suite, codename "-") == 1) {
          printf "Types: deb-src\nURIs: %s\nSuites: %s\nComponents: %s\n", uri, suite, comps
          if (match(opts, /signed-by=[^] ]+/)) printf "Signed-By: %s\n", substr(opts, RSTART + 10, RLENGTH - 10)
          print ""
        }
      }' "$f"
  done
}
has_other_deb_src() {
  grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/ \
    --exclude="$(basename "$src_list")"
}
if ! has_other_deb_src; then
  stanzas=$(deb_src_stanzas)
  if [ -z "$stanzas" ]; then
    echo "setup: no Debian '$codename' source is configured in /etc/apt (sources.list or" \
         "sources.list.d): add your mirror there; the real-program tests will say SKIP" >&2
  elif [ "$(cat "$src_list" 2>/dev/null)" != "$stanzas" ]; then
    echo "setup: enabling Debian source packages (deb-src) from the configured sources in $src_list"
    printf '%s\n' "$stanzas" | $SUDO tee "$src_list" >/dev/null
    need_update=1
  fi
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
if [ "$core" = 0 ] && { [ ! -d "$root/web/node_modules/speedscope" ] || [ ! -d "$root/web/node_modules/uplot" ]; }; then
  echo "setup: npm ci --prefix web (speedscope, uPlot, d3, d3-flame-graph, wasm-graphviz, as pinned in web/package-lock.json)"
  npm ci --prefix "$root/web" --ignore-scripts --no-audit --no-fund --loglevel=error
fi
