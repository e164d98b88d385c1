#!/bin/sh
# The ABI check (libabigail). Two modes:
#   check_abi.sh dump  SRC BUILD LIB.so OUT.abi   write the ABI of LIB.so
#   check_abi.sh check SRC BUILD LIB.so BASE.abi  compare LIB.so with BASE.abi
#   check_abi.sh skip REASON                      exit 77 saying why
# Both describe the exported functions and the public types (those
# declared under include/cachenet) they reach, from the library's DWARF
# (src/meson.build builds the libraries with -g in every buildtype).
# check fails on any change abidiff reports other than an added function
# or variable: a removed or re-typed function, a changed struct layout, a
# changed enum; exit 77 (skip) when abidiff is missing.
set -eu
if [ "$1" = skip ]; then
	echo "SKIP: $2"
	exit 77
fi
mode=$1
src=$2
build=$3
lib=$4
abi=$5

# The exported functions and the types they reach; types defined outside
# the public headers (opaque structs such as cn_mbuf_pool) are private and
# dropped, so their internal layout may change. No locations, no paths.
dump() {
	if ! readelf -S "$lib" | grep -q '\.debug_info'; then
		echo "FAIL: $lib has no debug information (DWARF): abidw sees no types"
		exit 1
	fi
	abidw --headers-dir "$src/include/cachenet" --headers-dir "$build/include/cachenet" \
		--drop-private-types --no-corpus-path --no-comp-dir-path --no-show-locs \
		--no-elf-needed --type-id-style hash --out-file "$1" "$lib"
}

if ! command -v abidw >/dev/null || ! command -v abidiff >/dev/null; then
	echo "SKIP: abidw/abidiff not found (Debian: apt-get install abigail-tools)"
	exit 77
fi
case "$mode" in
dump)
	dump "$abi"
	;;
check)
	[ -f "$abi" ] || { echo "FAIL: no stored ABI $abi: run tools/abi-baseline"; exit 1; }
	# Both sides as abidw writes them (the same options, no file paths):
	# a comparison that does not depend on where either tree was.
	cur=$(mktemp /tmp/cn_abi.XXXXXX)
	trap 'rm -f "$cur"' EXIT
	dump "$cur"
	rc=0
	abidiff --no-added-syms "$abi" "$cur" || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo
		echo "FAIL: $(basename "$lib") differs from the stored ABI $abi (abidiff exit $rc)."
		echo "If the change is intended (an ABI change before a release), regenerate the"
		echo "stored ABI and commit it with the change:  tools/abi-baseline"
		exit 1
	fi
	echo "PASS: $(basename "$lib") matches $abi (added functions allowed)"
	;;
*)
	echo "usage: check_abi.sh dump|check SRC BUILD LIB.so ABI" >&2
	exit 2
	;;
esac
