/* SHA-1 written from FIPS 180-4: fingerprints and cache keys need git-compatible digests. */
#include <stdlib.h>
#include <string.h>

#include "merge/git/sha1_int.h"
#include "util/banned.h"

static uint32_t rol(uint32_t x, int n)
{
	return (x << n) | (x >> (32 - n));
}

static void block_portable(uint32_t *h, const unsigned char *p)
{
	uint32_t w[80], a, b, d, e, f, k, t, cc;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
	for (i = 16; i < 80; i++)
		w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	a = h[0];
	b = h[1];
	cc = h[2];
	d = h[3];
	e = h[4];
	for (i = 0; i < 80; i++) {
		if (i < 20) {
			f = (b & cc) | (~b & d);
			k = 0x5a827999;
		} else if (i < 40) {
			f = b ^ cc ^ d;
			k = 0x6ed9eba1;
		} else if (i < 60) {
			f = (b & cc) | (b & d) | (cc & d);
			k = 0x8f1bbcdc;
		} else {
			f = b ^ cc ^ d;
			k = 0xca62c1d6;
		}
		t = rol(a, 5) + f + e + k + w[i];
		e = d;
		d = cc;
		cc = rol(b, 30);
		b = a;
		a = t;
	}
	h[0] += a;
	h[1] += b;
	h[2] += cc;
	h[3] += d;
	h[4] += e;
}

static void blocks_portable(uint32_t *h, const unsigned char *p, size_t n)
{
	for (; n; n--, p += 64)
		block_portable(h, p);
}

#if defined(__x86_64__) && defined(__GNUC__)  /* clang defines __GNUC__ too */
#include <cpuid.h>
#include <immintrin.h>

#define SHA_NI __attribute__((target("sha,ssse3,sse4.1")))

/*
 * Four rounds at a time with the SHA extensions (Intel's SHA-1 instructions, from
 * their description in the Intel SDM): W holds the message schedule four words a
 * vector, newest in lane 3; `prev` is the state before the last four rounds, from
 * which sha1nexte derives the next E.  About ten times the portable speed: the
 * worker's 1.3 MB index is hashed on every bisection step.
 */
#define SHA_GROUPS(func)                                                              \
	for (; k < 5 * ((func) + 1); k++) {                                           \
		if (k >= 4)                                                           \
			w[k & 3] = _mm_sha1msg2_epu32(                                \
				_mm_xor_si128(_mm_sha1msg1_epu32(w[k & 3], w[(k + 1) & 3]), \
					      w[(k + 2) & 3]),                        \
				w[(k + 3) & 3]);                                      \
		e = _mm_sha1nexte_epu32(prev, w[k & 3]);                              \
		prev = abcd;                                                          \
		abcd = _mm_sha1rnds4_epu32(abcd, e, (func));                          \
	}

SHA_NI static void blocks_shani(uint32_t *h, const unsigned char *p, size_t n)
{
	const __m128i order = _mm_set_epi64x(0x0001020304050607LL, 0x08090a0b0c0d0e0fLL);
	__m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)h), 0x1b);
	__m128i e0 = _mm_set_epi32((int)h[4], 0, 0, 0);
	__m128i w[4], e, prev, abcd_in, e_in;
	int k, i;

	for (; n; n--, p += 64) {
		abcd_in = abcd;
		e_in = e0;
		for (i = 0; i < 4; i++)
			w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)),
						order);
		prev = abcd;
		abcd = _mm_sha1rnds4_epu32(abcd, _mm_add_epi32(e0, w[0]), 0);
		k = 1;
		SHA_GROUPS(0)
		SHA_GROUPS(1)
		SHA_GROUPS(2)
		SHA_GROUPS(3)
		e0 = _mm_sha1nexte_epu32(prev, e_in);
		abcd = _mm_add_epi32(abcd, abcd_in);
	}
	_mm_storeu_si128((__m128i *)h, _mm_shuffle_epi32(abcd, 0x1b));
	h[4] = (uint32_t)_mm_extract_epi32(e0, 3);
}

static int cpu_has_shani(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSSE3) || !(c & bit_SSE4_1))
		return 0;
	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA);
}
#else
static int cpu_has_shani(void)
{
	return 0;
}
#define blocks_shani blocks_portable
#endif

/*
 * The SHA extensions where the CPU has them (asked once); NEXTBOT_SHA1_PORTABLE
 * set: the portable code, for the tests of both.
 */
static void blocks(uint32_t *h, const unsigned char *p, size_t n)
{
	static int asked = -1;  /* threads may race to ask: the same answer */
	int has = __atomic_load_n(&asked, __ATOMIC_RELAXED);

	if (has < 0) {
		has = cpu_has_shani();
		__atomic_store_n(&asked, has, __ATOMIC_RELAXED);
	}
	(has && !getenv("NEXTBOT_SHA1_PORTABLE") ? blocks_shani : blocks_portable)(h, p, n);
}

void sha1_init(struct sha1_ctx *c)
{
	static const uint32_t iv[5] = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476,
					0xc3d2e1f0 };

	memcpy(c->h, iv, sizeof(iv));
	c->len = 0;
	c->used = 0;
}

void sha1_update(struct sha1_ctx *c, const void *data, size_t len)
{
	const unsigned char *p = data;

	c->len += len;
	if (c->used) {
		size_t n = 64 - c->used < len ? 64 - c->used : len;

		memcpy(c->block + c->used, p, n);
		c->used += n;
		p += n;
		len -= n;
		if (c->used < 64)
			return;
		blocks(c->h, c->block, 1);
		c->used = 0;
	}
	if (len >= 64)
		blocks(c->h, p, len / 64);
	p += len & ~(size_t)63;
	len &= 63;
	memcpy(c->block, p, len);
	c->used = len;
}

void sha1_final(unsigned char out[SHA1_RAWSZ], struct sha1_ctx *c)
{
	uint64_t bits = c->len * 8;
	unsigned char pad = 0x80, zero = 0, lenbuf[8];
	int i;

	sha1_update(c, &pad, 1);
	while (c->used != 56)
		sha1_update(c, &zero, 1);
	for (i = 0; i < 8; i++)
		lenbuf[i] = (unsigned char)(bits >> (56 - 8 * i));
	sha1_update(c, lenbuf, 8);
	for (i = 0; i < 20; i++)
		out[i] = (unsigned char)(c->h[i / 4] >> (24 - 8 * (i % 4)));
}

void sha1_raw(unsigned char out[SHA1_RAWSZ], const void *data, size_t len)
{
	struct sha1_ctx c;

	sha1_init(&c);
	sha1_update(&c, data, len);
	sha1_final(out, &c);
}

void sha1_hex(char out[SHA1_HEXSZ + 1], const void *data, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[SHA1_RAWSZ];
	int i;

	sha1_raw(raw, data, len);
	for (i = 0; i < SHA1_RAWSZ; i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 15];
	}
	out[SHA1_HEXSZ] = '\0';
}
