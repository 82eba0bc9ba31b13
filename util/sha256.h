/* SHA-256 (FIPS 180-4): the compiler cache's keys, where a collision must be out of reach. */
#ifndef UTIL_SHA256_H
#define UTIL_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32
#define SHA256_HEXSZ 64

/* Caller-owned; sha256_init() before use, nothing to release. */
struct sha256 {
	uint32_t h[8];
	uint64_t total;      /* bytes hashed so far */
	unsigned char block[64];
	size_t used;         /* bytes waiting in `block` */
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *data, size_t len);
/* Writes the digest; `c` must be initialised again before it is used again. */
void sha256_final(unsigned char out[SHA256_LEN], struct sha256 *c);
/* The digest as 64 lowercase hex digits and a NUL. */
void sha256_hex(char out[SHA256_HEXSZ + 1], const unsigned char digest[SHA256_LEN]);
/* Hashes what is left to read of `fd` into hex `out`: 0, or -1 (errno) when a read fails. */
int sha256_fd_hex(char out[SHA256_HEXSZ + 1], int fd);

#endif
