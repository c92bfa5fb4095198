/*-------------------------------------------------------------------------
 *
 * tb_bits.h
 *	  Where a key's bits lie in a band: its group of lines, from the hash's
 *	  first half by a multiply-shift (so that folding a band of n groups
 *	  onto n / d keeps every key's group: floor(floor(x n) / d) = floor(x n /
 *	  d)); its k bits in the piece of its slot, from the second half alone:
 *	  bit i in word i mod (words of a piece), at the top six bits of b
 *	  times the i-th odd salt.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TB_BITS_H
#define TB_BITS_H

#include "tb.h"

/*
 * Fixed forever by format 3: 64 odd constants (splitmix64 from the seed
 * "timeblks", lowest bit set).
 */
static const uint64_t tb_salts[TB_MAX_K] = {
	UINT64_C(0x31983647eadace21), UINT64_C(0x56220825afce263d),
	UINT64_C(0x89a9eec5e57a1ddd), UINT64_C(0x1fa6bb3edb212ea9),
	UINT64_C(0x0d6c25a9bbd0ce4b), UINT64_C(0xc6a86cd49878006f),
	UINT64_C(0xc1cd03da7bb6a4c5), UINT64_C(0xcd79d596ad329901),
	UINT64_C(0x0ce602b2c66717eb), UINT64_C(0x6879a24619d6d61b),
	UINT64_C(0x302741861c5ff9f5), UINT64_C(0x9ceeee8b5bfc65e9),
	UINT64_C(0xe2df0e10291e0715), UINT64_C(0x1d8ab12211eedc75),
	UINT64_C(0x02474e905dd06ebb), UINT64_C(0xd0bfb890bc7db711),
	UINT64_C(0x13206f01f0527c87), UINT64_C(0xd17e0e237f5d5e5f),
	UINT64_C(0x3266f0c4e92d139d), UINT64_C(0xd15b22565bfc4733),
	UINT64_C(0x9057bdf145122b09), UINT64_C(0xa3bd31403e10495d),
	UINT64_C(0xdd12ea73d8d657e1), UINT64_C(0x8953a3e5b7769449),
	UINT64_C(0x88625bd517ca900d), UINT64_C(0xba4c3a9e12233055),
	UINT64_C(0x7498b484511c6fe1), UINT64_C(0x4c4eb750d97b3597),
	UINT64_C(0x704da9f1383d0b77), UINT64_C(0x97cc6d072c053407),
	UINT64_C(0x599184beb6768553), UINT64_C(0x339097b720e206a7),
	UINT64_C(0xf6a7abc7d923b8db), UINT64_C(0xe853fd59d8fde3c9),
	UINT64_C(0xb43185dfdf0fa0d1), UINT64_C(0xcff6d3c42db473b5),
	UINT64_C(0x1b6bd657374bb3ab), UINT64_C(0xa26e77d6bb290eb9),
	UINT64_C(0xd35c90582e537b97), UINT64_C(0x41dbe0fabaff94ff),
	UINT64_C(0x6dadef56cc762083), UINT64_C(0x0f58a7c97c835e05),
	UINT64_C(0xee06af7e377eef53), UINT64_C(0x35d5040a8795f493),
	UINT64_C(0xcba2dd34af05df31), UINT64_C(0x3ad1a11ac668ac49),
	UINT64_C(0xe60b603fcf22c27f), UINT64_C(0xa483578a02f36fdd),
	UINT64_C(0x656d3c2c5bed34c9), UINT64_C(0xc0b978a40e6934eb),
	UINT64_C(0xc912d36a8d1a4519), UINT64_C(0x41d7d053f6412fe7),
	UINT64_C(0x0ead26760077e6eb), UINT64_C(0x8bcd30314ec967e1),
	UINT64_C(0x8f338db102407fb5), UINT64_C(0x120bf86a223c5c33),
	UINT64_C(0x6f36947181f3bcf5), UINT64_C(0x4c29d5f0c79c6e6b),
	UINT64_C(0x7b3dcb4f82aea855), UINT64_C(0xb474750dca3795a5),
	UINT64_C(0x658f3c8ba11b3d63), UINT64_C(0x7bb63ee02f6cd043),
	UINT64_C(0x8b5d63d6af8798d3), UINT64_C(0xf11352c96bb2d10d),
};

/*
 * The key's bits in each of the 'piece' words of a piece (any piece of any
 * band): bit i in word i mod piece, gathered in a register word by word.
 * Always inlined, so that callers passing constants get unrolled loops.
 */
static inline __attribute__((always_inline)) void
tb_key_masks(TlbfHash h, int piece, int k, uint64_t *masks)
{
	for (int w = 0; w < piece; w++)
	{
		uint64_t	m = 0;

		for (int i = w; i < k; i += piece)
			m |= UINT64_C(1) << ((h.b * tb_salts[i]) >> 58);
		masks[w] = m;
	}
}

/*
 * tb_key_masks for the layout at 1% (pieces of two words, k = 8), written
 * out: as a call with constants GCC does not unroll its loops at -O2, and
 * the masks go through the stack (measured: 15.2 against 19.6 ns a query at
 * 1M keys).
 */
static inline __attribute__((always_inline)) void
tb_key_masks_2x8(TlbfHash h, uint64_t *m0, uint64_t *m1)
{
	uint64_t	a = 0,
				b = 0;

#pragma GCC unroll 4
	for (int i = 0; i < 8; i += 2)
	{
		a |= UINT64_C(1) << ((h.b * tb_salts[i]) >> 58);
		b |= UINT64_C(1) << ((h.b * tb_salts[i + 1]) >> 58);
	}
	*m0 = a;
	*m1 = b;
}

/*
 * Bits set in a word, without a call: builds for any x86-64 have no
 * popcnt instruction, and __builtin_popcountll becomes a library call on
 * every insertion's path.
 */
static inline int
tb_popcount(uint64_t x)
{
	x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
	x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
	x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
	return (int) ((x * UINT64_C(0x0101010101010101)) >> 56);
}

/* The key's group of lines in a band of 'nlines' groups. */
static inline uint64_t
tb_group_of(TlbfHash h, uint64_t nlines)
{
	return (uint64_t) (((unsigned __int128) h.a * nlines) >> 64);
}

static inline __attribute__((always_inline)) bool
tb_piece_has(const uint64_t *piece, const uint64_t *masks, int words)
{
	uint64_t	missing = 0;

	for (int w = 0; w < words; w++)
		missing |= masks[w] & ~piece[w];
	return missing == 0;
}

/*
 * OR the key's bits into 'words', a piece; the bits it found unset.  The
 * layout at 1% goes word by word in registers: as a loop over the mask
 * array, the compiler loads both masks as one vector from the stack, which
 * must wait for their two stores to retire (a failed store forwarding: a
 * third of tb_insert_many's time at 1M keys).
 */
static inline __attribute__((always_inline)) uint64_t
tb_or_key(uint64_t *words, TlbfHash hash, const int piece, const int k)
{
	uint64_t	masks[TB_LINE_WORDS * TB_MAX_LINES_PER_KEY];
	uint64_t	fresh = 0;

	if (piece == 2 && k == 8)
	{
		uint64_t	m0,
					m1,
					w0 = words[0],
					w1 = words[1];

		tb_key_masks_2x8(hash, &m0, &m1);
		words[0] = w0 | m0;
		words[1] = w1 | m1;
		return (uint64_t) (tb_popcount(m0 & ~w0) + tb_popcount(m1 & ~w1));
	}
	tb_key_masks(hash, piece, k, masks);
	for (int w = 0; w < piece; w++)
	{
		fresh += (uint64_t) tb_popcount(masks[w] & ~words[w]);
		words[w] |= masks[w];
	}
	return fresh;
}

/*
 * Set the key's bits in piece 's' of band 'band'; count the key if one was
 * new.  Inlined for each layout, as tb_query's body (tb_insert and
 * tb_build share it).
 */
static inline __attribute__((always_inline)) void
tb_set_bits(TbFilter *f, int band, int s, TlbfHash hash, TlbfTime at, const int piece,
		 const int k)
{
	TbBand	   *b = &tb_bands(f)[band];
	uint64_t   *words = tb_words(f) + tb_band_word(f, band) +
		tb_group_of(hash, b->nlines) * tb_group_words(f) + (uint64_t) s * piece;
	uint64_t	fresh = tb_or_key(words, hash, piece, k);

	/* (a count from outside may be too high: it never passes the pieces' bits) */
	b->slot[s].bits += fresh;
	if (b->slot[s].bits > b->nlines * 64 * (uint64_t) piece)
		b->slot[s].bits = b->nlines * 64 * (uint64_t) piece;
	/* (out of order: the earliest key's time, for the rate) */
	if (at < b->slot[s].started)
		b->slot[s].started = at;
}

/*
 * Does a query at 'at' over 'window' ask generation g: does it overlap
 * [at - window, at]?  Compared by times, without dividing: generation g
 * starts at g * length, and overlaps when it starts at or before 'at' and
 * after at - window - length.
 */
static inline bool
tb_asks(const TbFilter *f, int64_t g, TlbfTime at, int64_t window)
{
	return g != TB_NO_GENERATION && g * f->length <= at &&
		g * f->length > at - window - f->length;
}

/*
 * The key's group in every band, prefetched (both ends of a group of
 * several lines) before any is read, so that the misses overlap.
 */
static inline __attribute__((always_inline)) void
tb_key_groups(const TbFilter *f, TlbfHash hash, uint64_t group_words, const uint64_t **group)
{
	const TbBand *b = tb_bands(f);
	const uint64_t *words = tb_words(f);
	uint64_t	word = 0;

	for (int i = 0; i < f->nbands; i++)
	{
		group[i] = words + word + tb_group_of(hash, b[i].nlines) * group_words;
		__builtin_prefetch(group[i]);
		if (group_words > TB_LINE_WORDS)
			__builtin_prefetch(group[i] + group_words - 1);
		word += b[i].nlines * group_words;
	}
}

#endif							/* TB_BITS_H */
