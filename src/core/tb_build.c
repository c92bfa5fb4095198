/*-------------------------------------------------------------------------
 *
 * tb_build.c
 *	  A format 3 filter built at once from keys known in advance, as an
 *	  aggregate without a declared capacity holds them until its end: the
 *	  keys of each generation counted (a HyperLogLog sketch of their
 *	  hashes), one band sized for the largest count, and every generation's
 *	  keys set in it.
 *
 * Nothing here depends on the order of the keys: the sketch's registers
 * keep maxima, and the bits are an OR; so whatever order or plan brought
 * the same keys, the filter has the same bytes.  One band for every
 * generation costs no more than a band per generation: a band has a piece
 * for every slot whatever it holds, so bands sized apart (10x apart after
 * a rate change) would add up to more than one band for the largest, and
 * a query would read a line of each.  A generation with fewer keys than
 * the largest just has a lower error rate.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "tb_bits.h"

/* Keys whose lines are prefetched ahead of the one being set. */
#define TB_BUILD_AHEAD 32

/*
 * Room above a count: the sketch's standard error is 1.04 / sqrt(16384) =
 * 0.8%, so 3% more is almost four of them (an exact count gets it too:
 * one rule, whichever counted).
 */
#define TB_BUILD_HEADROOM 1.03

void
tb_count_init(TbCounter *c)
{
	memset(c->reg, 0, sizeof(c->reg));
}

/* Count hashes (tb_count_one, tb.h). */
void
tb_count_add(TbCounter *c, const TlbfHash *hashes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tb_count_one(c, hashes[i]);
}

/*
 * Add what another sketch counted: the registers' maxima, as if its hashes
 * had been counted here (a hash counted by both changes nothing).
 */
void
tb_count_merge(TbCounter *into, const TbCounter *from)
{
	for (int i = 0; i < TB_COUNT_REGISTERS; i++)
		if (from->reg[i] > into->reg[i])
			into->reg[i] = from->reg[i];
}

/* Distinct keys the sketch saw: HyperLogLog, linear counting while few. */
double
tb_count_estimate(const TbCounter *c)
{
	const double m = (double) TB_COUNT_REGISTERS;
	double		sum = 0;
	int			zeros = 0;
	double		raw;
	static double powers[65];	/* 2^-rank: ranks are at most 51 */

	if (powers[0] == 0)
		for (int r = 0; r < 65; r++)
			powers[r] = ldexp(1.0, -r);
	for (int i = 0; i < TB_COUNT_REGISTERS; i++)
	{
		sum += powers[c->reg[i]];
		zeros += c->reg[i] == 0;
	}
	raw = 0.7213 / (1 + 1.079 / m) * m * m / sum;
	if (raw <= 2.5 * m && zeros > 0)
		return m * log(m / zeros);
	return raw;
}

static inline bool
hash_less(const TlbfHash *x, const TlbfHash *y)
{
	return x->a != y->a ? x->a < y->a : x->b < y->b;
}

/* Move hashes[i] down the max-heap of the first n. */
static void
sift_down(TlbfHash *hashes, size_t i, size_t n)
{
	for (;;)
	{
		size_t		largest = i,
					left = 2 * i + 1,
					right = 2 * i + 2;
		TlbfHash	swap;

		if (left < n && hash_less(&hashes[largest], &hashes[left]))
			largest = left;
		if (right < n && hash_less(&hashes[largest], &hashes[right]))
			largest = right;
		if (largest == i)
			return;
		swap = hashes[i];
		hashes[i] = hashes[largest];
		hashes[largest] = swap;
		i = largest;
	}
}

/*
 * Distinct keys among 'n' hashes, exactly (heapsorting them in place: the
 * core allocates nothing): for a few, where a sketch's 16 kB of registers
 * would cost more than the keys.
 */
double
tb_count_distinct(TlbfHash *hashes, size_t n)
{
	size_t		distinct = n > 0;

	for (size_t i = n / 2; i-- > 0;)
		sift_down(hashes, i, n);
	for (size_t end = n; end-- > 1;)
	{
		TlbfHash	swap = hashes[0];

		hashes[0] = hashes[end];
		hashes[end] = swap;
		sift_down(hashes, 0, end);
	}
	for (size_t i = 1; i < n; i++)
		distinct += hashes[i - 1].a != hashes[i].a || hashes[i - 1].b != hashes[i].b;
	return (double) distinct;
}

/*
 * Building, in four steps: the filter (made by tb_init, its newest time
 * and insertions set) gets its one band, with room for 'keys' in a
 * generation (the largest count, and the sketch's error); each generation
 * its slot (tb_build_generation: among those a query at the newest time
 * may ask, each in a slot of its own); then its keys, in any number of
 * calls (tb_build_add); then each slot its count of bits set
 * (tb_build_finish).  TLBF_OVER_LIMIT, the filter unchanged, if the
 * band would pass memory->max_bytes.
 */
TlbfStatus
tb_build_band(TbFilter **fp, TlbfMemory *memory, double keys)
{
	double		room = ceil(keys * TB_BUILD_HEADROOM) + 1;
	uint64_t	nlines = tb_lines_for(*fp, room < (double) TLBF_MAX_CAPACITY ?
									  (uint64_t) room : TLBF_MAX_CAPACITY);

	/* (a filter that has a band already is the caller's mistake: refused) */
	if ((*fp)->nbands != 0)
		return TLBF_OUT_OF_MEMORY;
	if (tb_layout_bytes(*fp, 1, nlines) > memory->max_bytes)
		return TLBF_OVER_LIMIT;
	return tb_add_band(fp, memory, nlines);
}

/* Give generation 'g', whose earliest key came at 'earliest', its slot in the band. */
void
tb_build_generation(TbFilter *f, int64_t g, TlbfTime earliest)
{
	TbSlot	   *slot = &tb_bands(f)[0].slot[tb_slot_of(f, g)];

	slot->generation = g;
	slot->started = earliest;
	slot->bits = 0;
}

/*
 * Set the keys' bits in piece 's' of the band, their lines prefetched a
 * few keys ahead.  Only ORed: the slot's count of bits set is taken once
 * at the end (tb_build_finish), not per key as tb_set_bits keeps it.
 */
static inline __attribute__((always_inline)) void
add_all(TbFilter *f, int s, const TlbfHash *hashes, size_t n, const int piece, const int k)
{
	uint64_t   *words = tb_words(f) + (uint64_t) s * piece;
	uint64_t	nlines = tb_bands(f)[0].nlines;
	uint64_t	group_words = tb_group_words(f);

	for (size_t i = 0; i < n; i++)
	{
		uint64_t   *line = words + tb_group_of(hashes[i], nlines) * group_words;
		uint64_t	masks[TB_LINE_WORDS * TB_MAX_LINES_PER_KEY];

		if (i + TB_BUILD_AHEAD < n)
			__builtin_prefetch(words + tb_group_of(hashes[i + TB_BUILD_AHEAD], nlines) * group_words, 1);
		if (piece == 2 && k == 8)
		{
			uint64_t	m0,
						m1;

			tb_key_masks_2x8(hashes[i], &m0, &m1);
			line[0] |= m0;
			line[1] |= m1;
			continue;
		}
		tb_key_masks(hashes[i], piece, k, masks);
		for (int w = 0; w < piece; w++)
			line[w] |= masks[w];
	}
}

/*
 * Set the keys of generation 'g' (given its slot by tb_build_generation),
 * their lines prefetched a few keys ahead: the hashes are all known, so
 * the misses of a large band overlap.
 */
void
tb_build_add(TbFilter *f, int64_t g, const TlbfHash *hashes, size_t n)
{
	int			s = tb_slot_of(f, g);
	int			piece = tb_piece_words(f);

	if (f->nbands != 1 || tb_bands(f)[0].slot[s].generation != g)
		return;
	if (piece == 2 && f->k == 8)
		add_all(f, s, hashes, n, 2, 8);
	else
		add_all(f, s, hashes, n, piece, f->k);
}

/*
 * Put hashes in the order of their bucket, the top byte of their first
 * half, through 'scratch' (room for n): a counting sort, stable.  A key's
 * group is floor(a * nlines / 2^64), so bucket i's keys fall in the i-th
 * 256th of a band of any size: set bucket by bucket, over many runs of
 * hashes, the keys of a large band touch a region that stays in the cache
 * (tb_build_add of each run's bucket i, then i + 1), not a line anywhere
 * in it.  offsets[i] .. offsets[i + 1] are bucket i's.
 */
void
tb_build_bucket(TlbfHash *hashes, size_t n, TlbfHash *scratch,
				size_t offsets[TB_BUILD_BUCKETS + 1])
{
	size_t		next[TB_BUILD_BUCKETS];

	memset(offsets, 0, (TB_BUILD_BUCKETS + 1) * sizeof(size_t));
	for (size_t i = 0; i < n; i++)
		offsets[(hashes[i].a >> 56) + 1]++;
	for (int b = 0; b < TB_BUILD_BUCKETS; b++)
	{
		offsets[b + 1] += offsets[b];
		next[b] = offsets[b];
	}
	for (size_t i = 0; i < n; i++)
		scratch[next[hashes[i].a >> 56]++] = hashes[i];
	memcpy(hashes, scratch, n * sizeof(TlbfHash));
}

/*
 * After the last key: each generation's count of bits set, from its
 * pieces (the band was all zeros: the bits each key found new add up to
 * those set, as tb_set_bits would have counted them, in one pass over the
 * band instead of a count per key).
 */
void
tb_build_finish(TbFilter *f)
{
	TbBand	   *b;
	const uint64_t *words = tb_words(f);
	uint64_t	group_words = tb_group_words(f);
	int			piece = tb_piece_words(f);
	int			slots = tb_slots(f);
	uint64_t	bits[TB_MAX_SLOTS] = {0};

	if (f->nbands != 1)
		return;
	b = &tb_bands(f)[0];
	for (uint64_t line = 0; line < b->nlines; line++)
	{
		const uint64_t *group = words + line * group_words;

		for (int s = 0; s < slots; s++)
			for (int w = 0; w < piece; w++)
				bits[s] += (uint64_t) tb_popcount(group[s * piece + w]);
	}
	for (int s = 0; s < slots; s++)
		if (b->slot[s].generation != TB_NO_GENERATION)
			b->slot[s].bits = bits[s];
}
