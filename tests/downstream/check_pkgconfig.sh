#!/bin/sh
# Install the build into a scratch tree with `meson install --destdir`, then
# build two programs exactly as a user would, against the shared libraries
# and again statically:
#   cc prog.c     $(pkg-config --cflags --libs cachenet)       product only
#   cc prog_lab.c $(pkg-config --cflags --libs cachenet-lab)   the laboratory
# and check what was installed: both libraries with versioned sonames,
# exporting only cn_* names; the product needing no libpfm; no programs
# unless the build was configured with -Dinstall_tools=true.
# Usage: check_pkgconfig.sh BUILD_DIR SOURCE_DIR INSTALL_TOOLS [EXTRA_CFLAGS]
set -eu
build=$1
src=$2
install_tools=$3
extra=${4:-}
cc=${CC:-cc}
dest=$(mktemp -d /tmp/cn_downstream.XXXXXX)
trap 'rm -rf "$dest"' EXIT

meson install -C "$build" --destdir "$dest" --no-rebuild >"$dest/install.log" 2>&1 || {
	cat "$dest/install.log"; echo "FAIL: meson install"; exit 1; }

pc=$(find "$dest" -name cachenet.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: no cachenet.pc installed"; exit 1; }
[ -f "$(dirname "$pc")/cachenet-lab.pc" ] || { echo "FAIL: no cachenet-lab.pc installed"; exit 1; }
export PKG_CONFIG_SYSROOT_DIR="$dest"
# the installed tree first; the system's .pc files stay visible for what
# cachenet's own .pc files require (libxdp and libbpf with AF_XDP)
export PKG_CONFIG_PATH=$(dirname "$pc")
echo "pkg-config cachenet: $(pkg-config --cflags --libs cachenet)"
echo "pkg-config cachenet-lab: $(pkg-config --cflags --libs cachenet-lab)"

# pkgconf prefixes variables with the sysroot already
libdir=$(pkg-config --variable=libdir cachenet)
incdir=$(pkg-config --variable=includedir cachenet)
for f in libcachenet.a libcachenet-lab.a; do
	[ -f "$libdir/$f" ] || { echo "FAIL: no $f"; exit 1; }
done
for h in cachenet.h tsc.h pcap.h impair.h lab.h lab/perf.h lab/sim.h lab/cache.h lab/netdev.h \
	lab/sockbuf_naive.h; do
	[ -f "$incdir/cachenet/$h" ] || { echo "FAIL: header cachenet/$h not installed"; exit 1; }
done

# programs: only with -Dinstall_tools=true
progs=$(find "$dest" -type f \( -path '*/bin/*' -o -path '*/libexec/*' \) | sed "s|^$dest||")
if [ "$install_tools" = true ]; then
	[ -n "$progs" ] || { echo "FAIL: -Dinstall_tools=true installed no programs"; exit 1; }
else
	[ -z "$progs" ] || { echo "FAIL: programs installed without -Dinstall_tools=true:"; echo "$progs"; exit 1; }
fi

# product: shared, exactly the user's command; no laboratory, no libpfm
# shellcheck disable=SC2046,SC2086
"$cc" $extra "$src/tests/downstream/prog.c" $(pkg-config --cflags --libs cachenet) -o "$dest/prog"
LD_LIBRARY_PATH="$libdir" "$dest/prog" > "$dest/out.txt"
cat "$dest/out.txt"
grep -q "^checksum .* verified" "$dest/out.txt" || { echo "FAIL: program output"; exit 1; }
LD_LIBRARY_PATH="$libdir" ldd "$dest/prog" > "$dest/ldd.txt"
grep -q "$libdir/libcachenet.so" "$dest/ldd.txt" || {
	echo "FAIL: program not linked against the installed shared library"; exit 1; }
if grep -q "libcachenet-lab\|libpfm" "$dest/ldd.txt"; then
	cat "$dest/ldd.txt"; echo "FAIL: a product program loads the laboratory or libpfm"; exit 1
fi

# laboratory: shared
# shellcheck disable=SC2046,SC2086
"$cc" $extra "$src/tests/downstream/prog_lab.c" $(pkg-config --cflags --libs cachenet-lab) -o "$dest/prog_lab"
LD_LIBRARY_PATH="$libdir" "$dest/prog_lab" > "$dest/out_lab.txt"
cat "$dest/out_lab.txt"
grep -q "^cachenet-lab " "$dest/out_lab.txt" || { echo "FAIL: lab program output"; exit 1; }
LD_LIBRARY_PATH="$libdir" ldd "$dest/prog_lab" | grep -q "$libdir/libcachenet-lab.so" || {
	echo "FAIL: lab program not linked against the installed libcachenet-lab.so"; exit 1; }

# the DPDK adapter, when built: its own .pc and library; the product
# itself must not load DPDK
if [ -f "$(dirname "$pc")/cachenet-dpdk.pc" ]; then
	[ -f "$incdir/cachenet/dpdk.h" ] || { echo "FAIL: header cachenet/dpdk.h not installed"; exit 1; }
	# the sysroot prefixes libdpdk's system paths too (its -I and
	# -include rte_config.h): add them again as a user's system has them
	# shellcheck disable=SC2046,SC2086
	"$cc" $extra "$src/tests/downstream/prog_dpdk.c" $(pkg-config --cflags --libs cachenet-dpdk) \
		$(PKG_CONFIG_SYSROOT_DIR= pkg-config --cflags libdpdk) -o "$dest/prog_dpdk"
	LD_LIBRARY_PATH="$libdir" "$dest/prog_dpdk" | grep -q "^cachenet-dpdk linked" || {
		echo "FAIL: dpdk program"; exit 1; }
	LD_LIBRARY_PATH="$libdir" ldd "$dest/prog_dpdk" | grep -q "$libdir/libcachenet-dpdk.so" || {
		echo "FAIL: dpdk program not linked against the installed libcachenet-dpdk.so"; exit 1; }
	if LD_LIBRARY_PATH="$libdir" ldd "$dest/prog" | grep -q "librte_"; then
		echo "FAIL: a product program loads DPDK"; exit 1
	fi
	echo "cachenet-dpdk: $(pkg-config --libs cachenet-dpdk | cut -c1-60)..."
fi

# static: the .a files plus Libs.private
# shellcheck disable=SC2046,SC2086
"$cc" $extra "$src/tests/downstream/prog.c" $(pkg-config --cflags cachenet) \
	"$libdir/libcachenet.a" $(pkg-config --static --libs-only-l cachenet | sed 's/-lcachenet//') \
	-o "$dest/prog-static"
"$dest/prog-static" | grep -q "^checksum .* verified" || { echo "FAIL: static program"; exit 1; }
# shellcheck disable=SC2046,SC2086
"$cc" $extra "$src/tests/downstream/prog_lab.c" $(pkg-config --cflags cachenet-lab) \
	"$libdir/libcachenet-lab.a" "$libdir/libcachenet.a" \
	$(pkg-config --static --libs-only-l cachenet-lab | sed 's/-lcachenet-lab//; s/-lcachenet//') \
	-o "$dest/prog_lab-static"
"$dest/prog_lab-static" | grep -q "^cachenet-lab " || { echo "FAIL: static lab program"; exit 1; }

# the shared objects: versioned sonames, nothing but cn_* exported, and
# the product needs no libpfm and no valgrind
for lib in libcachenet libcachenet-lab; do
	so=$(ls "$libdir/$lib".so.* | head -n 1)
	soname=$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
	case "$soname" in
		"$lib".so.[0-9]*) echo "soname: $soname" ;;
		*) echo "FAIL: soname '$soname'"; exit 1 ;;
	esac
	# (version nodes, type A, are not symbols)
	bad=$(nm -D --defined-only "$so" | awk '$2 != "A" {print $3}' | sed 's/@.*//' | grep -v '^cn_' || true)
	[ -z "$bad" ] || { echo "FAIL: $lib exports symbols outside cn_*:"; echo "$bad"; exit 1; }
	internal=$(nm -D --defined-only "$so" | awk '{print $3}' | grep '^cn__' || true)
	[ -z "$internal" ] || { echo "FAIL: $lib exports internal cn__ symbols: $internal"; exit 1; }
	echo "$lib exports $(nm -D --defined-only "$so" | grep -c ' T cn_') cn_* functions"
done
so=$(ls "$libdir"/libcachenet.so.* | head -n 1)
if readelf -d "$so" | grep NEEDED | grep -q "libpfm\|valgrind"; then
	readelf -d "$so" | grep NEEDED; echo "FAIL: libcachenet.so needs libpfm or valgrind"; exit 1
fi
echo "libcachenet.so needs: $(readelf -d "$so" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"
echo "PASS"
