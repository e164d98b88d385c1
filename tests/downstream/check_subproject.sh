#!/bin/sh
# Build tests/downstream/subproject (a project using cachenet through
# dependency('cachenet') / dependency('cachenet-lab') with a fallback) in a
# scratch directory whose subprojects/cachenet is this source tree; run
# both programs; check that the product program loads libcachenet.so from
# the subproject and neither the laboratory nor libpfm.
# Usage: check_subproject.sh SOURCE_DIR
set -eu
src=$1
work=$(mktemp -d /tmp/cn_subproject.XXXXXX)
trap 'rm -rf "$work"' EXIT

cp "$src/tests/downstream/subproject/meson.build" "$src/tests/downstream/prog.c" \
	"$src/tests/downstream/prog_lab.c" "$work/"
mkdir "$work/subprojects"
ln -s "$src" "$work/subprojects/cachenet"
meson setup "$work/build" "$work" --buildtype=release >"$work/setup.log" 2>&1 || {
	cat "$work/setup.log"; echo "FAIL: meson setup of the consumer"; exit 1; }
ninja -C "$work/build" -j2 >"$work/build.log" 2>&1 || {
	tail -n 60 "$work/build.log"; echo "FAIL: building the consumer"; exit 1; }

"$work/build/prog" | tee "$work/out.txt"
grep -q "^checksum .* verified" "$work/out.txt" || { echo "FAIL: prog output"; exit 1; }
"$work/build/prog_lab" | tee "$work/out_lab.txt"
grep -q "^cachenet-lab " "$work/out_lab.txt" || { echo "FAIL: prog_lab output"; exit 1; }

ldd "$work/build/prog" > "$work/ldd.txt"
grep -q "subprojects/cachenet/src/libcachenet.so" "$work/ldd.txt" || {
	cat "$work/ldd.txt"; echo "FAIL: prog not linked against the subproject's libcachenet.so"; exit 1; }
if grep -q "libcachenet-lab\|libpfm" "$work/ldd.txt"; then
	cat "$work/ldd.txt"; echo "FAIL: the product program loads the laboratory or libpfm"; exit 1
fi
ldd "$work/build/prog_lab" | grep -q "subprojects/cachenet/src/libcachenet-lab.so" || {
	echo "FAIL: prog_lab not linked against the subproject's libcachenet-lab.so"; exit 1; }
echo "PASS"
