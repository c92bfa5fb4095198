/*-------------------------------------------------------------------------
 *
 * hashing.h
 *	  How every structure of the evaluation turns a key into positions.
 *
 * All of them hash a key once with the core's tlbf_hash_bytes (XXH3-128),
 * derive their probes by double hashing (a + j*b) and map a probe onto a
 * range with a multiply-shift, exactly as the tlbf core does.  So the
 * comparison is between structures, not between hash functions.
 *
 *-------------------------------------------------------------------------
 */
#ifndef EVAL_HASHING_H
#define EVAL_HASHING_H

#include <stdint.h>

#include "tlbf.h"

/* Keys are 64-bit integers hashed as their 8 bytes, seed 0. */
static inline TlbfHash
eval_hash(uint64_t key)
{
	return tlbf_hash_bytes(&key, sizeof(key), 0);
}

/* x mapped onto [0, n) by multiply-shift: no division, no modulo bias. */
static inline uint64_t
eval_range(uint64_t x, uint64_t n)
{
	return (uint64_t) (((unsigned __int128) x * n) >> 64);
}

/* Probe j of a key, mapped onto [0, n). */
static inline uint64_t
eval_probe(TlbfHash h, uint32_t j, uint64_t n)
{
	return eval_range(h.a + (uint64_t) j * h.b, n);
}

#endif							/* EVAL_HASHING_H */
