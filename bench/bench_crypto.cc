// SPDX-License-Identifier: BSD-2-Clause
// ChaCha20 and AES-128-CTR side by side: cachenet's dispatched calls, each
// variant this CPU runs, and OpenSSL's EVP interface, in one binary.
//
//   chacha20/<impl>/<bytes>     out = in ^ keystream, out of place
//   aes128ctr/<impl>/<bytes>
//
// impl: cachenet        the checked whole-buffer call (cn_chacha20_xor with
//                       key, nonce and counter; cn_aes128ctr_xor with an
//                       expanded key and the counter block), as a stack
//                       would call it per packet
//       cachenet-<v>    variant <v> called directly (cn_*_impls())
//       openssl         EVP_EncryptUpdate on a context whose key and IV are
//                       set up outside the timed loop (EVP_chacha20,
//                       EVP_aes_128_ctr), i.e. OpenSSL's cheapest streaming
//                       use, with no per-call IV setup (ours has one)
//   <impl>-cold         the same with both buffers flushed from every cache
//                       level before each call (untimed, Measure::pause())
//
// Each implementation's output is checked against cachenet's generic
// variant before timing; a mismatch skips the benchmark with an error.
// Buffers: source page-aligned, destination 2 KB into its page (see
// bench_csum.cc on 4K aliasing).
#include "harness/cn_bench.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cachenet/crypto.h"

#include <cstdlib>

#ifdef CN_HAVE_OPENSSL
#include <openssl/crypto.h>
#include <openssl/evp.h>
#endif

namespace {

const size_t kSizes[] = { 64, 576, 1460, 4096, 9000, 16384, 65536 };
constexpr size_t kDstOffset = 2048;

const uint8_t kKey[32] = { 0x1c, 0x92, 0x40, 0xa5, 0xeb, 0x55, 0xd3, 0x8a, 0xf3, 0x33, 0x88,
			   0x86, 0x04, 0xf6, 0xb5, 0xf0, 0x47, 0x39, 0x17, 0xc1, 0x40, 0x2b,
			   0x80, 0x09, 0x9d, 0xca, 0x5c, 0xbc, 0x20, 0x70, 0x75, 0xc0 };
const uint8_t kNonce[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };
constexpr uint32_t kCounter = 1;
// AES counter block: nonce in the top 96 bits, a 32-bit block counter.
const uint8_t kIv[16] = { 0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7,
			  0xf8, 0xf9, 0xfa, 0xfb, 0, 0, 0, 1 };

struct Bufs {
	uint8_t *src, *dst;
	size_t n;
	explicit Bufs(size_t len) : n(len)
	{
		src = static_cast<uint8_t *>(cnbench::alloc_buffer(len, 0));
		dst = static_cast<uint8_t *>(cnbench::alloc_buffer(len, kDstOffset));
		std::memset(dst, 0, len);
	}
	~Bufs()
	{
		cnbench::free_buffer(src);
		cnbench::free_buffer(dst);
	}
	Bufs(const Bufs &) = delete;
	Bufs &operator=(const Bufs &) = delete;
};

std::vector<uint8_t> expected_chacha(const uint8_t *src, size_t n)
{
	std::vector<uint8_t> out(n);
	struct cn_chacha20 st;
	cn_chacha20_init(&st, kKey, kNonce, kCounter);
	cn_chacha20_xor_generic(&st, src, out.data(), n);
	return out;
}

std::vector<uint8_t> expected_aes(const uint8_t *src, size_t n)
{
	std::vector<uint8_t> out(n);
	struct cn_aes128_key k;
	cn_aes128_expand_key_generic(&k, kKey);
	cn_aes128ctr_xor_generic(&k, kIv, src, out.data(), n);
	return out;
}

// fn(src, dst, n) performs one encryption; setup() runs untimed before the
// first (correctness) call.
template <typename F>
void bm(benchmark::State &st, F fn, size_t n, bool cold, bool aes)
{
	Bufs b(n);
	std::vector<uint8_t> want = aes ? expected_aes(b.src, n) : expected_chacha(b.src, n);
	fn(b.src, b.dst, n);
	if (std::memcmp(b.dst, want.data(), n) != 0) {
		st.SkipWithError("wrong output");
		return;
	}
	{
		cnbench::Measure m(st, n);
		for (auto _ : st) {
			if (cold)
				m.flush(b.src, n, b.dst, n);
			fn(b.src, b.dst, n);
			benchmark::ClobberMemory();
		}
		m.finish();
	}
	st.SetBytesProcessed((int64_t)st.iterations() * (int64_t)n);
}

// make() builds a fresh callable per benchmark run (OpenSSL contexts are
// per run, set up here, outside the timed loop).
template <typename Make> void add(const char *family, const std::string &impl, Make make, bool aes)
{
	for (size_t n : kSizes) {
		for (int cold = 0; cold < 2; cold++) {
			std::string name = std::string(family) + "/" + impl + (cold ? "-cold" : "") + "/" +
					   std::to_string(n);
			cnbench::add(name, [make, n, cold, aes](benchmark::State &st) {
				auto fn = make();
				bm(st, fn, n, cold != 0, aes);
			});
		}
	}
}

#ifdef CN_HAVE_OPENSSL
// One EVP context per benchmark run; Init resets the stream to the start
// (used once before the correctness check), Update is what is timed.
struct Evp {
	EVP_CIPHER_CTX *ctx = nullptr;
	Evp(const EVP_CIPHER *c, const uint8_t *key, const uint8_t *iv)
	{
		ctx = EVP_CIPHER_CTX_new();
		if (ctx)
			EVP_EncryptInit_ex(ctx, c, nullptr, key, iv);
	}
	~Evp() { EVP_CIPHER_CTX_free(ctx); }
	Evp(const Evp &) = delete;
	Evp &operator=(const Evp &) = delete;
};
#endif

void register_all()
{
	add("chacha20", "cachenet",
	    [] {
		    return [](const uint8_t *s, uint8_t *d, size_t n) {
			    cn_chacha20_xor(kKey, kNonce, kCounter, s, d, n);
		    };
	    },
	    false);
	const struct cn_chacha20_impl *ci[8];
	size_t nc = cn_chacha20_impls(ci, 8);
	for (size_t i = 0; i < nc && i < 8; i++) {
		cn_chacha20_fn f = ci[i]->xor_fn;
		add("chacha20", std::string("cachenet-") + ci[i]->name,
		    [f] {
			    return [f](const uint8_t *s, uint8_t *d, size_t n) {
				    struct cn_chacha20 st;
				    cn_chacha20_init(&st, kKey, kNonce, kCounter);
				    f(&st, s, d, n);
			    };
		    },
		    false);
	}

	add("aes128ctr", "cachenet",
	    [] {
		    auto k = std::make_shared<cn_aes128_key>();
		    cn_aes128_expand_key(k.get(), kKey);
		    return [k](const uint8_t *s, uint8_t *d, size_t n) {
			    cn_aes128ctr_xor(k.get(), kIv, s, d, n);
		    };
	    },
	    true);
	const struct cn_aes128ctr_impl *ai[8];
	size_t na = cn_aes128ctr_impls(ai, 8);
	for (size_t i = 0; i < na && i < 8; i++) {
		cn_aes128ctr_fn f = ai[i]->xor_fn;
		cn_aes128_expand_fn e = ai[i]->expand;
		add("aes128ctr", std::string("cachenet-") + ai[i]->name,
		    [f, e] {
			    auto k = std::make_shared<cn_aes128_key>();
			    e(k.get(), kKey);
			    return [f, k](const uint8_t *s, uint8_t *d, size_t n) { f(k.get(), kIv, s, d, n); };
		    },
		    true);
	}

#ifdef CN_HAVE_OPENSSL
	// The peer's tier, next to cn_impl_* (harness): OpenSSL picks its code
	// path from CPUID unless OPENSSL_ia32cap masks features, as
	// CACHENET_CPU_DISABLE does for ours.
	const char *cap = std::getenv("OPENSSL_ia32cap");
	benchmark::AddCustomContext("openssl_ia32cap", cap ? cap : "");
	benchmark::AddCustomContext("openssl_version", OpenSSL_version(OPENSSL_VERSION));
	add("chacha20", "openssl",
	    [] {
		    // EVP_chacha20's IV: 32-bit little-endian block counter, then
		    // the 96-bit nonce (RFC 8439 state words 12..15).
		    uint8_t iv[16] = { (uint8_t)kCounter, (uint8_t)(kCounter >> 8),
				       (uint8_t)(kCounter >> 16), (uint8_t)(kCounter >> 24) };
		    std::memcpy(iv + 4, kNonce, 12);
		    auto e = std::make_shared<Evp>(EVP_chacha20(), kKey, iv);
		    auto first = std::make_shared<bool>(true);
		    return [e, first, iv](const uint8_t *s, uint8_t *d, size_t n) {
			    int outl = 0;
			    if (*first) { // the checked call starts at block kCounter
				    EVP_EncryptInit_ex(e->ctx, nullptr, nullptr, nullptr, iv);
				    *first = false;
			    }
			    EVP_EncryptUpdate(e->ctx, d, &outl, s, (int)n);
		    };
	    },
	    false);
	add("aes128ctr", "openssl",
	    [] {
		    auto e = std::make_shared<Evp>(EVP_aes_128_ctr(), kKey, kIv);
		    auto first = std::make_shared<bool>(true);
		    return [e, first](const uint8_t *s, uint8_t *d, size_t n) {
			    int outl = 0;
			    if (*first) {
				    EVP_EncryptInit_ex(e->ctx, nullptr, nullptr, nullptr, kIv);
				    *first = false;
			    }
			    EVP_EncryptUpdate(e->ctx, d, &outl, s, (int)n);
		    };
	    },
	    true);
#endif
}

} // namespace

CN_BENCH_MAIN(register_all)
