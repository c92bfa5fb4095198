/*-------------------------------------------------------------------------
 *
 * hash.c
 *	  Hashing a key's bytes: one XXH3-128 per key, split into the two halves
 *	  of double hashing (slice function j is a + j*b, see query.c).
 *
 * xxHash comes from Debian's libxxhash-dev.  It is compiled inline here so
 * that short keys (the common 8-byte integer) take the specialised path
 * without a library call.
 *
 *-------------------------------------------------------------------------
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "tlbf.h"

/* Inline in both functions below: for an integer, the length is known. */
static inline TlbfHash
hash_bytes(const void *data, size_t len, uint64_t seed)
{
	XXH128_hash_t h = XXH3_128bits_withSeed(data, len, seed);
	TlbfHash	result;

	result.a = h.low64;
	result.b = h.high64;
	return result;
}

TlbfHash
tlbf_hash_bytes(const void *data, size_t len, uint64_t seed)
{
	return hash_bytes(data, len, seed);
}

/* An integer key (every integer and timestamp type hashes this way). */
TlbfHash
tlbf_hash_int64(int64_t value, uint64_t seed)
{
	return hash_bytes(&value, sizeof(value), seed);
}
