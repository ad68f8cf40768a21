#!/usr/bin/env bash
# fetch-debian-source.sh PACKAGE DEST: unpacks Debian's source package PACKAGE into DEST
# (once; later calls reuse it). Needs deb-src enabled, which scripts/setup.sh does.
set -euo pipefail
pkg=$1 dest=$2
if [ -f "$dest/.ptcall-unpacked" ]; then exit 0; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! (cd "$work" && apt-get source --download-only "$pkg" >/dev/null 2>"$work/err"); then
  echo "fetch-debian-source: 'apt-get source $pkg' failed: $(tail -n 1 "$work/err")" >&2
  echo "fetch-debian-source: run scripts/setup.sh (it enables deb-src and runs apt-get update)" >&2
  exit 1
fi
rm -rf "$dest"
dpkg-source --no-check -x "$work"/"$pkg"_*.dsc "$dest" >/dev/null
touch "$dest/.ptcall-unpacked"
