#!/usr/bin/env bash
# Uses an installed ptcall as a user would: ptcall-cc and ptcall-c++ build programs that
# `ptcall record` (soft backend) traces and `ptcall report` counts exactly; `man` shows every
# page (each command's page names every option its --help names) and groff renders them
# without a warning; the bash completion completes commands, options and choices; pkg-config
# gives ptcall.h and libptcall; find_package(ptcall) gives ptcall::runtime and
# ptcall_instrument(), which refuses a compiler that is not the matching clang.
#
#   check_installed.sh PREFIX WORKDIR
#
# Run by ctest (package-install: `cmake --install` into the build tree) and by
# scripts/test-package.sh inside a fresh Debian root (PREFIX=/usr, the .deb installed).
set -euo pipefail
prefix=$(cd "$1" && pwd) || { echo "FAIL: no directory $1" >&2; exit 1; }
work=$2
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
ok() { echo "ok: $*"; }

export PATH="$prefix/bin:$PATH"
export MANPATH="$prefix/share/man:"
pcdir=$(dirname "$(find "$prefix/lib" -name ptcall.pc -path '*/pkgconfig/*' | head -n 1)")
[ -f "$pcdir/ptcall.pc" ] || fail "no ptcall.pc under $prefix/lib"
export PKG_CONFIG_PATH="$pcdir"
rm -rf "$work"
mkdir -p "$work"
cd "$work"

for tool in ptcall ptcall-cc ptcall-c++; do
  [ "$(command -v $tool)" = "$prefix/bin/$tool" ] || fail "$tool is not $prefix/bin/$tool"
done
# the clang the wrappers drive: clang-N of the plugin's LLVM
major=$(ptcall-cc --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -n 1)
[ -n "$major" ] || fail "ptcall-cc --version does not name a clang version"
clang=clang-$major
command -v "$clang" >/dev/null || fail "$clang (the wrappers' compiler) is not installed"
ok "ptcall $(ptcall --version | cut -d' ' -f2), wrappers drive $clang"

# ---- trace a program built with the installed wrappers
cat >app.c <<'EOF'
#include <ptcall/ptcall.h>
__attribute__((noinline)) static int leaf(int x) { return x * 2; }
__attribute__((noinline)) int work(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += leaf(i);
    return s;
}
int main(void)
{
    ptcall_mark("start");
    return work(7) == 42 ? 0 : 1;
}
EOF
cat >app.cc <<'EOF'
struct Counter {
    int n = 0;
    __attribute__((noinline)) void bump() { n++; }
};
__attribute__((noinline)) static int run(Counter &c)
{
    for (int i = 0; i < 5; i++)
        c.bump();
    return c.n;
}
int main() { Counter c; return run(c) == 5 ? 0 : 1; }
EOF
inc=()
[ "$prefix" = /usr ] || inc=(-I"$prefix/include")
# calls of function $2 in report CSV $1
calls() { awk -F, -v f="$2" 'NR > 1 && $2 == f { print $7 }' "$1"; }
expect_calls() { # CSV FUNCTION N
  local got
  got=$(calls "$1" "$2")
  [ "$got" = "$3" ] || fail "$1: $2 called ${got:-0} times, expected $3"
}
ptcall-cc -O1 "${inc[@]}" app.c -o app
ptcall record --backend soft -q -o app.ptc -- ./app
ptcall report app.ptc --format csv >app.csv
expect_calls app.csv main 1
expect_calls app.csv work 1
expect_calls app.csv leaf 7
ok "ptcall-cc + ptcall record --backend soft + ptcall report: main 1, work 1, leaf 7 calls"
ptcall-c++ -O1 app.cc -o appxx
ptcall record --backend soft -q -o appxx.ptc -- ./appxx
ptcall report appxx.ptc --format csv >appxx.csv
expect_calls appxx.csv 'Counter::bump()' 5
expect_calls appxx.csv 'run(Counter&)' 1
ok "ptcall-c++: Counter::bump() 5 calls, run() 1"
# the cost model of record --overhead: the calibration program installed in lib/ptcall/
costs=$(XDG_CACHE_HOME="$work/cache" ptcall calibrate --env -q) || fail "ptcall calibrate failed"
[[ "$costs" =~ ^PTCALL_COSTS=event=[0-9.]+,count=-?[0-9.]+$ ]] || fail "ptcall calibrate --env: $costs"
[ -f "$work/cache/ptcall/costs.json" ] || fail "ptcall calibrate cached nothing"
ok "ptcall calibrate (installed ptcall-calib): $costs"

# ---- manual pages
pages=$(ptcall help --man-pages)
[ -n "$pages" ] || fail "ptcall help --man-pages lists nothing"
n=0
for page in $pages ptcall-cc ptcall-c++; do
  src=$(man -w "$page" 2>/dev/null) || fail "man -w $page: no page"
  # ptcall-c++(1) is a .so link to ptcall-cc(1), which man -w names
  case $src in
    "$prefix/share/man/man1/$page.1.gz") ;;
    "$prefix/share/man/man1/ptcall-cc.1.gz") [ "$page" = ptcall-c++ ] || fail "man $page finds $src" ;;
    *) fail "man $page finds $src" ;;
  esac
  MANWIDTH=100 man "$page" >man.txt 2>man.err || fail "man $page failed: $(cat man.err)"
  [ ! -s man.err ] || fail "man $page: $(cat man.err)"
  grep -q '^NAME' man.txt || fail "man $page has no NAME section"
  # groff's own warnings (-ww: all of them); a .so request (ptcall-c++) names a page
  # relative to the man directory, installed compressed
  file=man1/$page.1.gz
  so=$(zcat "$prefix/share/man/$file" | sed -n 's/^\.so //p')
  [ -z "$so" ] || file=$so.gz
  warn=$(cd "$prefix/share/man" && zcat "$file" | groff -man -Tutf8 -ww -z 2>&1) ||
    fail "groff $page failed: $warn"
  [ -z "$warn" ] || fail "groff -man -ww $page: $warn"
  # every option the command's --help names is on its page
  cmd=${page#ptcall-}
  case $page in ptcall|ptcall-cc|ptcall-c++) cmd= ;; esac
  if [ -n "$cmd" ]; then
    # shellcheck disable=SC2086 # "db-add" -> ptcall db add
    ptcall ${cmd//-/ } --help | grep -o '^  -[-a-z]*\(, --[-a-z]*\)\?' |
      grep -o -- '--[-a-z]*' >help-opts.txt
    [ -s help-opts.txt ] || fail "ptcall ${cmd//-/ } --help names no option"
    missing=$(grep -o -- '--[a-z][-a-z]*' man.txt | sort -u | grep -vxFf - help-opts.txt || true)
    [ -z "$missing" ] || fail "man $page does not name $(tr "\n" " " <<<"$missing")"
  fi
  n=$((n + 1))
done
MANWIDTH=100 man ptcall-record | grep -q -- '--backend auto|soft|pt' ||
  fail "man ptcall-record does not show --backend auto|soft|pt"
ok "$n manual pages: man finds and renders each, groff -ww is silent, each names its command's options"

# ---- bash completion
comp=$prefix/share/bash-completion/completions/ptcall
[ -f "$comp" ] || fail "no $comp"
if command -v pkg-config >/dev/null && pkg-config --exists bash-completion 2>/dev/null &&
   [ "$prefix" = /usr ]; then
  [ "$(pkg-config --variable=completionsdir bash-completion)" = "$(dirname "$comp")" ] ||
    fail "bash-completion loads from $(pkg-config --variable=completionsdir bash-completion)"
fi
got=$(bash -c '
  source "$1"
  t() { COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=(); _ptcall
        echo "${COMPREPLY[*]}"; }
  t ptcall rec; t ptcall record --back; t ptcall record --backend ""; t ptcall db q
  t ptcall report --so; t ptcall help --man ptcall-rec; complete -p ptcall' _ "$comp")
want='record
--backend
auto soft pt
query
--sort
ptcall-record
complete -o default -F _ptcall ptcall'
[ "$got" = "$want" ] || fail "bash completion: got
$got
expected
$want"
ok "bash completion: commands, subcommands, options, choices, man pages"

# ---- pkg-config: ptcall.h and libptcall
flags=$(pkg-config --cflags --libs ptcall) || fail "pkg-config ptcall failed"
case " $flags " in *" -lptcall "*) ;; *) fail "pkg-config --libs ptcall: '$flags' has no -lptcall" ;; esac
libdir=$(pkg-config --variable=libdir ptcall)
[ -f "$libdir/libptcall.so" ] || fail "pkg-config's libdir $libdir has no libptcall.so"
[ -f "$(pkg-config --variable=includedir ptcall)/ptcall/ptcall.h" ] || fail "pkg-config's includedir has no ptcall/ptcall.h"
cat >mark.c <<'EOF'
#include <ptcall/ptcall.h>
int main(void) { ptcall_mark("x"); return __ptcall_mark ? 0 : 3; }
EOF
# shellcheck disable=SC2046 # the flags are words
"$clang" mark.c -o mark $(pkg-config --cflags --libs ptcall) -Wl,-rpath,"$libdir"
./mark || fail "a program built with pkg-config's flags does not have the runtime linked"
ok "pkg-config ptcall: '$flags' builds a program with ptcall.h and libptcall"

# ---- find_package(ptcall)
mkdir -p proj
cp app.c mark.c proj/
cat >proj/CMakeLists.txt <<'EOF'
cmake_minimum_required(VERSION 3.20)
project(ptcall_user C)
find_package(ptcall 0.1 REQUIRED)
add_executable(app app.c)
ptcall_instrument(app)
add_executable(mark mark.c)
target_link_libraries(mark PRIVATE ptcall::runtime)
message(STATUS "ptcall ${ptcall_VERSION} for LLVM ${ptcall_LLVM_VERSION_MAJOR}")
EOF
cmake -S proj -B proj/build -DCMAKE_C_COMPILER="$clang" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >cmake.log 2>&1 || { cat cmake.log; fail "find_package(ptcall) project did not configure"; }
cmake --build proj/build >>cmake.log 2>&1 || { cat cmake.log; fail "the find_package(ptcall) project did not build"; }
proj/build/mark || fail "ptcall::runtime: the program has no runtime"
ptcall record --backend soft -q -o cm.ptc -- proj/build/app
ptcall report cm.ptc --format csv >cm.csv
expect_calls cm.csv main 1
expect_calls cm.csv work 1
expect_calls cm.csv leaf 7
ok "find_package(ptcall) + ptcall_instrument(app) with $clang: main 1, work 1, leaf 7 calls; ptcall::runtime links"
# another compiler: a clear error at configure time
other=
for c in gcc cc; do
  if command -v "$c" >/dev/null && ! "$c" --version 2>/dev/null | grep -q "clang version $major\."; then
    other=$c
    break
  fi
done
if [ -n "$other" ]; then
  if cmake -S proj -B proj/build-other -DCMAKE_C_COMPILER="$other" -DCMAKE_PREFIX_PATH="$prefix" \
      >other.log 2>&1; then
    fail "ptcall_instrument accepted $other"
  fi
  grep -q "ptcall_instrument(app): ptcall's pass is built for LLVM $major" other.log ||
    { cat other.log; fail "ptcall_instrument with $other: not the expected message"; }
  ok "ptcall_instrument refuses $other: $(grep -o "but this project's C compiler is [^(]*" other.log | head -n 1)"
else
  echo "ok: (no compiler other than $clang here: the refusal is not checked)"
fi
echo "PASS: installed ptcall in $prefix"
