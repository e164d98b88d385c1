#!/bin/sh
# Install the build into a scratch tree with `meson install --destdir`, then
# build tests/downstream/prog.c exactly as a user would, with
#   cc prog.c $(pkg-config --cflags --libs cachenet)
# against the shared library, and again statically, and check the ABI the
# shared object exports (only cn_*, versioned soname).
# Usage: check_pkgconfig.sh BUILD_DIR SOURCE_DIR [EXTRA_CFLAGS]
set -eu
build=$1
src=$2
extra=${3:-}
cc=${CC:-cc}
dest=$(mktemp -d /tmp/cn_downstream.XXXXXX)
trap 'rm -rf "$dest"' EXIT

meson install -C "$build" --destdir "$dest" --no-rebuild >"$dest/install.log" 2>&1 || {
	cat "$dest/install.log"; echo "FAIL: meson install"; exit 1; }

pc=$(find "$dest" -name cachenet.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: no cachenet.pc installed"; exit 1; }
export PKG_CONFIG_SYSROOT_DIR="$dest"
export PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_LIBDIR=$(dirname "$pc")
echo "pkg-config: $(pkg-config --cflags --libs cachenet)"

# pkgconf prefixes variables with the sysroot already
libdir=$(pkg-config --variable=libdir cachenet)
so=$(ls "$libdir"/libcachenet.so.* | head -n 1)
[ -f "$libdir/libcachenet.a" ] || { echo "FAIL: no static library"; exit 1; }
[ -f "$(pkg-config --variable=includedir cachenet)/cachenet/cachenet.h" ] || {
	echo "FAIL: headers not installed"; exit 1; }

# shared, exactly the user's command
# shellcheck disable=SC2046,SC2086
"$cc" $extra "$src/tests/downstream/prog.c" $(pkg-config --cflags --libs cachenet) -o "$dest/prog"
LD_LIBRARY_PATH="$libdir" "$dest/prog" > "$dest/out.txt"
cat "$dest/out.txt"
grep -q "^cachenet " "$dest/out.txt" || { echo "FAIL: program output"; exit 1; }
LD_LIBRARY_PATH="$libdir" ldd "$dest/prog" | grep -q "$libdir/libcachenet.so" || {
	echo "FAIL: program not linked against the installed shared library"; exit 1; }

# static: the .a plus Libs.private
# shellcheck disable=SC2046,SC2086
"$cc" $extra "$src/tests/downstream/prog.c" $(pkg-config --cflags cachenet) \
	"$libdir/libcachenet.a" $(pkg-config --static --libs-only-l cachenet | sed 's/-lcachenet//') \
	-o "$dest/prog-static"
"$dest/prog-static" | grep -q "^cachenet " || { echo "FAIL: static program"; exit 1; }

# ABI: a versioned soname and nothing but cn_* exported
soname=$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
case "$soname" in
	libcachenet.so.[0-9]*) echo "soname: $soname" ;;
	*) echo "FAIL: soname '$soname'"; exit 1 ;;
esac
bad=$(nm -D --defined-only "$so" | awk '{print $3}' | sed 's/@.*//' | grep -v '^cn_' | grep -v '^CACHENET_' || true)
[ -z "$bad" ] || { echo "FAIL: exported symbols outside cn_*:"; echo "$bad"; exit 1; }
internal=$(nm -D --defined-only "$so" | awk '{print $3}' | grep '^cn__' || true)
[ -z "$internal" ] || { echo "FAIL: internal cn__ symbols exported: $internal"; exit 1; }
echo "exported: $(nm -D --defined-only "$so" | grep -c ' T cn_') cn_* functions"
echo "PASS"
