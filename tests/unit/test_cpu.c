/* SPDX-License-Identifier: BSD-2-Clause */
/* cpu: detection agrees with the kernel's view (/proc/cpuinfo), names
 * parse and print, and CACHENET_CPU_DISABLE masks features off. */
#include "cn_test.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cachenet/cpu.h"

/* The line of the first CPU in /proc/cpuinfo that starts with @p key
 * ("flags" on x86, "Features" on ARM), from its ':', or NULL. */
static char *cpuinfo_flags(const char *key)
{
	static char line[8192];
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return NULL;
	char *found = NULL;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, strlen(key)) == 0) {
			found = strchr(line, ':');
			break;
		}
	}
	fclose(f);
	return found;
}

static int has_flag(const char *flags, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = flags; (p = strstr(p, name)) != NULL; p += n)
		if ((p[-1] == ' ' || p[-1] == ':') && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
			return 1;
	return 0;
}

static void detection_matches_cpuinfo(void **state)
{
	(void)state;
#if defined(__x86_64__)
	const char *flags = cpuinfo_flags("flags");
	if (!flags)
		skip();
	/* The kernel clears AVX flags when it does not enable the state, so
	 * its view is what our OS-aware detection must report. */
	static const struct { uint64_t bit; const char *flag; } map[] = {
		{ CN_CPU_SSE2, "sse2" },           { CN_CPU_SSSE3, "ssse3" },
		{ CN_CPU_SSE41, "sse4_1" },        { CN_CPU_SSE42, "sse4_2" },
		{ CN_CPU_PCLMULQDQ, "pclmulqdq" }, { CN_CPU_AESNI, "aes" },
		{ CN_CPU_AVX, "avx" },             { CN_CPU_AVX2, "avx2" },
		{ CN_CPU_BMI1, "bmi1" },           { CN_CPU_BMI2, "bmi2" },
		{ CN_CPU_ADX, "adx" },             { CN_CPU_AVX512F, "avx512f" },
		{ CN_CPU_AVX512BW, "avx512bw" },   { CN_CPU_AVX512VL, "avx512vl" },
		{ CN_CPU_AVX512DQ, "avx512dq" },   { CN_CPU_AVX512VBMI, "avx512vbmi" },
		{ CN_CPU_VAES, "vaes" },           { CN_CPU_VPCLMULQDQ, "vpclmulqdq" },
		{ CN_CPU_CLFLUSHOPT, "clflushopt" }, { CN_CPU_CLWB, "clwb" },
		{ CN_CPU_RDTSCP, "rdtscp" },       { CN_CPU_HYPERVISOR, "hypervisor" },
		{ CN_CPU_AVX512VNNI, "avx512_vnni" },
	};
	uint64_t det = cn_cpu_features_detected();
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		int ours = (det & map[i].bit) != 0;
		int kernel = has_flag(flags, map[i].flag);
		if (ours != kernel)
			fail_msg("%s: cachenet says %d, /proc/cpuinfo says %d", map[i].flag, ours, kernel);
	}
	/* Implications the dispatchers rely on. */
	if (det & CN_CPU_AVX2)
		assert_true(det & CN_CPU_AVX);
	if (det & CN_CPU_AVX512BW)
		assert_true(det & CN_CPU_AVX512F);
	assert_true(det & CN_CPU_SSE2); /* x86-64 baseline */
	assert_true(strlen(cn_cpu_vendor()) == 12);
#elif defined(__aarch64__)
	uint64_t det = cn_cpu_features_detected();
	/* Advanced SIMD is part of ARMv8-A, and Linux reports it. */
	assert_true(det & CN_CPU_NEON);
	/* Under qemu-user /proc/cpuinfo is the host's, without the line. */
	const char *flags = cpuinfo_flags("Features");
	if (!flags)
		skip();
	assert_int_equal((det & CN_CPU_NEON) != 0, has_flag(flags, "asimd"));
#else
	skip();
#endif
}

static void names_parse_and_format(void **state)
{
	(void)state;
	uint64_t m = 0;
	char err[80] = "";

	assert_int_equal(cn_cpu_features_parse("avx2, aes,avx512", &m, err, sizeof(err)), 0);
	assert_true(m == (CN_CPU_AVX2 | CN_CPU_AESNI | CN_CPU_AVX512_ALL));
	assert_int_equal(cn_cpu_features_parse("AVX2", &m, NULL, 0), 0);
	assert_true(m == CN_CPU_AVX2);
	assert_int_equal(cn_cpu_features_parse("avx2,avx9000", &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "avx9000"));
	assert_int_equal(cn_cpu_features_parse("", &m, err, sizeof(err)), 0);
	assert_true(m == 0);
	assert_int_equal(cn_cpu_features_parse("all", &m, err, sizeof(err)), 0);
	assert_true((m & cn_cpu_features_detected()) == cn_cpu_features_detected());

	/* Every single bit has a name, and format → parse is the identity. */
	uint64_t all = 0;
	for (int b = 0; b < 63; b++) {
		const char *n = cn_cpu_feature_name(1ull << b);
		if (n)
			all |= 1ull << b;
	}
	assert_true(all & CN_CPU_INVARIANT_TSC);
	assert_null(cn_cpu_feature_name(CN_CPU_AVX2 | CN_CPU_AVX));
	char buf[512];
	size_t need = cn_cpu_features_format(all, buf, sizeof(buf));
	assert_int_equal(need, strlen(buf));
	assert_int_equal(cn_cpu_features_parse(buf, &m, err, sizeof(err)), 0);
	assert_true(m == all);
	/* Truncation is reported, and the output stays terminated. */
	char small[8];
	assert_true(cn_cpu_features_format(all, small, sizeof(small)) == need);
	assert_true(strlen(small) < sizeof(small));
}

static void disable_env_masks_features(void **state)
{
	(void)state;
	/* The mask is read once per process: look at fresh ones (started
	 * through the emulator in a cross build: CN_TEST_WRAPPER, empty in a
	 * native one). */
	char self[4096], cmd[8400];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(len > 0);
	self[len] = '\0';
	snprintf(cmd, sizeof(cmd),
		 "CACHENET_CPU_DISABLE=avx2,avx512,aes $CN_TEST_WRAPPER '%s' --print-features 2>&1; "
		 "CACHENET_CPU_DISABLE=bogus $CN_TEST_WRAPPER '%s' --print-features 2>&1", self, self);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char out[1024] = "";
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);

	uint64_t usable1, det1, usable2, det2;
	char *second = strstr(out, "cachenet: CACHENET_CPU_DISABLE: unknown CPU feature 'bogus'");
	assert_non_null(second);
	assert_int_equal(sscanf(out, "%" SCNx64 " %" SCNx64, &usable1, &det1), 2);
	char *last = strrchr(out, '\n');
	*last = '\0';
	last = strrchr(out, '\n');
	assert_int_equal(sscanf(last + 1, "%" SCNx64 " %" SCNx64, &usable2, &det2), 2);

	assert_true(det1 == cn_cpu_features_detected());
	assert_true((usable1 & (CN_CPU_AVX2 | CN_CPU_AVX512_ALL | CN_CPU_AESNI)) == 0);
	assert_true(usable1 == (det1 & ~(CN_CPU_AVX2 | CN_CPU_AVX512_ALL | CN_CPU_AESNI)));
	/* A bad mask is reported and ignored, never half-applied. */
	assert_true(usable2 == det2);
	assert_false(cn_cpu_has(CN_CPU_AVX2) && !(det1 & CN_CPU_AVX2));
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--print-features") == 0) {
		printf("%" PRIx64 " %" PRIx64 "\n", cn_cpu_features(), cn_cpu_features_detected());
		return 0;
	}
	const struct CMUnitTest tests[] = {
		CN_T(detection_matches_cpuinfo), CN_T(names_parse_and_format),
		CN_T(disable_env_masks_features),
	};
	return cmocka_run_group_tests_name("cpu", tests, NULL, NULL);
}
