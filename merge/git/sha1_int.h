/* SHA-1 (FIPS 180-4) for breakage fingerprints and verdict-cache keys; not for security. */
#ifndef MERGE_SHA1_INT_H
#define MERGE_SHA1_INT_H

#include <stddef.h>
#include <stdint.h>

#define SHA1_RAWSZ 20
#define SHA1_HEXSZ (2 * SHA1_RAWSZ)

struct sha1_ctx {
	uint32_t h[5];
	uint64_t len;            /* bytes hashed so far */
	unsigned char block[64];
	size_t used;             /* bytes waiting in `block` */
};

void sha1_init(struct sha1_ctx *c);
void sha1_update(struct sha1_ctx *c, const void *data, size_t len);
void sha1_final(unsigned char out[SHA1_RAWSZ], struct sha1_ctx *c);

/* One-shot: SHA-1(data) into `out`. */
void sha1_raw(unsigned char out[SHA1_RAWSZ], const void *data, size_t len);

/* One-shot: the 40 lowercase hex digits of SHA-1(data) and a NUL into `out`. */
void sha1_hex(char out[SHA1_HEXSZ + 1], const void *data, size_t len);

#endif
