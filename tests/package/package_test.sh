#!/usr/bin/env bash
# The Debian package (cmake/Package.cmake) as a user gets it: built with cpack from this build
# tree, checked for the files a user needs and for a Depends line naming the package of every
# library the program links, installed, and toured with the installed program from a directory
# outside the source tree: --version (which must name the installed presets, not the source
# tree's), info, a kernel on an installed preset, a zoo model, --help-all and the man page.
# As root it installs for real (dpkg -i, then dpkg --purge: removed, no record left), unless a sfumato package is already
# installed here (that one is left alone); otherwise it unpacks the package into a scratch root
# (dpkg -x) and runs the program from there.
# usage: package_test.sh BUILD_DIR SOURCE_DIR WORK_DIR. Exit 77: skipped (no dpkg or cpack).
set -euo pipefail
build="$1"
src="$2"
work="$3"
for tool in dpkg dpkg-deb cpack readelf; do
  if ! command -v "$tool" >/dev/null; then
    echo "skipped: no $tool on this machine (the Debian package test needs dpkg, dpkg-deb, cpack and readelf)"
    exit 77
  fi
done

fail() {
  echo "FAILED: $*" >&2
  exit 1
}
trap 'echo "FAILED: line $LINENO: $BASH_COMMAND" >&2' ERR
# Runs a command of the tour, shows it and its output; a non-zero exit fails the test.
step() {
  echo "\$ $*"
  local rc=0
  "$@" >"$tour/step.out" 2>&1 || rc=$?
  [ "$rc" = 0 ] || { cat "$tour/step.out"; fail "'$*' exited with $rc"; }
  head -n 12 "$tour/step.out"
}

rm -rf "$work"
mkdir -p "$work/pkg"
tour="$(mktemp -d /tmp/sfumato-package-tour.XXXXXX)"
installed=0
cleanup() {
  if [ "$installed" = 1 ]; then
    for _ in $(seq 30); do dpkg --purge sfumato >>"$work/dpkg.log" 2>&1 && break; sleep 5; done
  fi
  rm -rf "$tour"
}
trap cleanup EXIT

# 1. Build the package.
echo "== cpack -G DEB"
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/pkg" >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; fail "cpack"; }
deb="$(ls "$work"/pkg/sfumato_*.deb 2>/dev/null | head -n 1 || true)"
[ -n "$deb" ] || { cat "$work/cpack.log"; fail "cpack wrote no sfumato_*.deb"; }
version="$(sed -n 's/^project(sfumato VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")"
echo "$(basename "$deb"): $(du -k "$deb" | cut -f1) KiB, version $(dpkg-deb -f "$deb" Version)"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "package version $(dpkg-deb -f "$deb" Version), project version $version"

# 2. What it holds: the program, its man page, every preset of configs/, the Ascend C layer
#    (library, headers, scripts, CMake packages) and the docs.
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's#^\./#/#' >"$work/contents.txt"
need=(/usr/bin/sfumato /usr/share/man/man1/sfumato.1.gz /usr/lib/libsfumato_ascendc.so
      /usr/bin/sfumato-asc /usr/bin/ascendc-build
      /usr/include/sfumato/ascendc/kernel_operator.h /usr/include/sfumato/ascendc/acl/acl.h
      /usr/lib/cmake/sfumato/sfumatoConfig.cmake /usr/lib/cmake/ASC/ASCConfig.cmake
      /usr/share/doc/sfumato/README.md /usr/share/doc/sfumato/reference.md)
for f in "$src"/configs/*.ini "$src"/configs/llm/*.json; do need+=("/usr/share/sfumato/${f#"$src"/}"); done
for f in "$src"/docs/guide/*.md; do need+=("/usr/share/doc/sfumato/guide/$(basename "$f")"); done
for f in "${need[@]}"; do
  grep -qx -- "$f" "$work/contents.txt" || fail "the package lacks $f"
done
echo "contents: $(wc -l <"$work/contents.txt") entries, the ${#need[@]} required ones present"

# 3. Depends: for every library the program and libsfumato_ascendc need (ELF NEEDED), the Debian
#    package that provides it on this machine must be named.
depends="$(dpkg-deb -f "$deb" Depends)"
echo "Depends: $depends"
libs=()
for elf in "$build/bin/sfumato" "$build/lib/libsfumato_ascendc.so"; do
  for lib in $(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    # "lib => path (addr)", or "path (addr)" for the dynamic loader.
    path="$(ldd "$elf" | awk -v l="$lib" '$1 == l { print $3 } substr($1, length($1) - length(l)) == "/" l { print $1 }' | head -n 1)"
    [ -n "$path" ] || fail "$lib (needed by $elf) not found by ldd"
    libs+=("$path")
  done
done
# dpkg knows a file by the path its package installed it under (/lib or /usr/lib, merged): ask for
# both at once (one read of dpkg's database).
paths=()
for path in $(printf '%s\n' "${libs[@]}" | sort -u); do paths+=("$path" "$(readlink -f "$path")"); done
dpkg -S "${paths[@]}" >"$work/owners.txt" 2>/dev/null || true
for path in $(printf '%s\n' "${libs[@]}" | sort -u); do
  pkg="$(awk -v a="$path" -v b="$(readlink -f "$path")" '$2 == a || $2 == b { sub(/:.*/, "", $1); print $1; exit }' "$work/owners.txt")"
  [ -n "$pkg" ] || fail "no Debian package owns $path"
  echo "$depends" | tr ',' '\n' | sed 's/^ *//; s/ .*//' | grep -qx -- "$pkg" ||
    fail "$(basename "$path") comes from $pkg, which Depends does not name"
done
echo "Depends names the package of each of the $(printf '%s\n' "${libs[@]}" | sort -u | wc -l) libraries linked"

# 4. Install it.
prefix=""
if [ "$(id -u)" = 0 ]; then
  exec 9>/tmp/sfumato-package-test.lock
  flock -w 900 9 || fail "another package test held the lock for 15 minutes"
  if dpkg-query -W -f='${Status}' sfumato 2>/dev/null | grep -q "ok installed"; then
    echo "note: a sfumato package is installed on this machine already; leaving it alone and unpacking with dpkg -x"
  else
    echo "== dpkg -i $(basename "$deb")"
    ok=0
    for _ in $(seq 30); do  # dpkg waits for no one: another apt or dpkg may hold its lock
      installed=1
      if dpkg -i "$deb" >"$work/dpkg.log" 2>&1; then ok=1; break; fi
      grep -qi "lock" "$work/dpkg.log" || break
      sleep 10
    done
    [ "$ok" = 1 ] || { cat "$work/dpkg.log"; fail "dpkg -i"; }
    prefix=/usr
  fi
else
  echo "note: not root, so no dpkg -i: unpacking with dpkg -x into a scratch root"
fi
if [ -z "$prefix" ]; then
  dpkg -x "$deb" "$work/root"
  prefix="$work/root/usr"
fi
sf="$prefix/bin/sfumato"
presets="$prefix/share/sfumato/configs"
[ -x "$sf" ] || fail "$sf is not there after installing"

# 5. The tour, from a directory outside the source tree.
cd "$tour"
step "$sf" --version
grep -qx "sfumato $version" "$tour/step.out" || fail "--version does not say sfumato $version"
grep -qx "presets: $presets" "$tour/step.out" || fail "the installed program does not use the installed presets ($presets)"
step "$sf" info --config "$presets/tiny.ini"
step "$sf" info --config ascend910b-like
step "$sf" kernel add --n 65536 --config "$presets/tiny.ini" --out out/add
grep -q '"passed": *true' out/add/summary.json || fail "kernel add: the check did not pass (out/add/summary.json)"
# The documentation's spelling of a preset works from anywhere.
step "$sf" kernel add --n 65536 --config configs/tiny.ini --mode timing
step "$sf" run zoo:mlp --config configs/tiny.ini --mode timing --out out/mlp
[ -s out/mlp/trace.json ] && [ -s out/mlp/stats.h5 ] || fail "run zoo:mlp wrote no trace.json or stats.h5"
step "$sf" train-step zoo:mlp --system system-tiny --mode timing
"$sf" --help-all >help-all.txt || fail "--help-all"
for c in $("$sf" --help | sed -n 's/^  \([a-z-]*\) .*/\1/p'); do
  grep -q "^== sfumato $c: " help-all.txt || fail "--help-all lacks the command $c"
done
grep -q -- "--l2 arg" help-all.txt || fail "--help-all lacks the kernel options"
echo "--help-all: $(grep -c '^== sfumato ' help-all.txt) commands, $(wc -l <help-all.txt) lines"
if command -v man >/dev/null; then
  MANWIDTH=100 man -l "$prefix/share/man/man1/sfumato.1.gz" >man.txt 2>man.err || { cat man.err; fail "man -l"; }
  for c in $("$sf" --help | sed -n 's/^  \([a-z-]*\) .*/\1/p'); do
    grep -q "sfumato $c\$" man.txt || fail "the man page lacks the command $c"
  done
  echo "man -l sfumato.1.gz: $(wc -l <man.txt) lines"
fi
if [ "$prefix" = /usr ]; then
  [ "$(command -v sfumato)" = /usr/bin/sfumato ] || echo "note: sfumato on the PATH is $(command -v sfumato), not /usr/bin/sfumato"
  echo "== dpkg --purge sfumato"
  dpkg --purge sfumato >>"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg --purge"; }
  installed=0
  [ ! -e /usr/bin/sfumato ] && [ ! -e /usr/share/sfumato/configs/tiny.ini ] || fail "dpkg --purge left files behind"
  ! dpkg-query -W sfumato >/dev/null 2>&1 || fail "dpkg --purge left sfumato in dpkg's database"
fi
echo "package test passed"
