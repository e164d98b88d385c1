#!/bin/sh
# The byte-order types really check: tests/strict/host_order_port.c, which
# assigns a host-order port and address to network-order fields,
#  - compiles in the default mode (plain integer typedefs: nothing checks),
#  - fails in strict mode (CN_STRICT_BYTE_ORDER) with the compiler's type
#    error on exactly those two lines,
#  - and compiles in strict mode with the conversions (-DCN_STRICT_CONTROL),
#    so the failure is the type error and not a broken include.
# The library, the examples and the unit tests compiled in strict mode are
# this test's dependencies (cn_strict_* in tests/meson.build).
# Usage: check_strict.sh SRCDIR BUILDDIR CC [CC ARGS...]
set -u
export LC_ALL=C
src=$1 build=$2
shift 2
f=$src/tests/strict/host_order_port.c
flags="-std=c11 -Wall -Wextra -fsyntax-only -I$src/include -I$build/include"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$@" $flags "$f" >"$out" 2>&1 || { cat "$out"; echo "FAIL: default mode must accept it"; exit 1; }
"$@" $flags -DCN_STRICT_BYTE_ORDER -DCN_STRICT_CONTROL "$f" >"$out" 2>&1 ||
	{ cat "$out"; echo "FAIL: strict mode must accept the converted values"; exit 1; }
if "$@" $flags -DCN_STRICT_BYTE_ORDER "$f" >"$out" 2>&1; then
	echo "FAIL: strict mode accepted a host-order port and address"
	exit 1
fi
cat "$out"
n=$(grep -cE 'error: .*assigning to .*cn_be(16|32)_t' "$out")
[ "$n" -eq 2 ] || { echo "FAIL: expected 2 assignment errors, saw $n"; exit 1; }
echo "ok: strict mode refuses both host-order assignments"
