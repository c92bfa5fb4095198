/*-------------------------------------------------------------------------
 *
 * bits.h
 *	  Where a key's bit lies in a slice, and reading and setting it.
 *
 * Slice function j is h_j = a + j*b (double hashing); its value is mapped
 * onto the slice's bits with a multiply-shift range reduction, which needs
 * no division and keeps every bit reachable for any slice size.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_BITS_H
#define TLBF_BITS_H

#include "tlbf.h"

static inline uint64_t
tlbf_bit_position(TlbfHash h, const TlbfSlice *s)
{
	uint64_t	x = h.a + (uint64_t) s->hash_index * h.b;
	uint64_t	nbits = (uint64_t) s->nwords * 64;

	return (uint64_t) (((unsigned __int128) x * nbits) >> 64);
}

static inline bool
tlbf_test_bit(const uint64_t *words, const TlbfSlice *s, TlbfHash h)
{
	uint64_t	pos = tlbf_bit_position(h, s);

	return (words[s->offset + (pos >> 6)] >> (pos & 63)) & 1;
}

/* Set the key's bit; true if it was not set before. */
static inline bool
tlbf_set_bit(uint64_t *words, const TlbfSlice *s, TlbfHash h)
{
	uint64_t	pos = tlbf_bit_position(h, s);
	uint64_t   *word = &words[s->offset + (pos >> 6)];
	uint64_t	mask = UINT64_C(1) << (pos & 63);
	bool		was_clear = (*word & mask) == 0;

	*word |= mask;
	return was_clear;
}

#endif							/* TLBF_BITS_H */
