/*-------------------------------------------------------------------------
 *
 * tb_merge.c
 *	  The union of format 3 filters, and folding bands to fit their keys.
 *
 * A key's bits depend on its hash and generation only (tb_bits.h), and a
 * generation has the same slot in every filter of the same parameters, so
 * two bands of one size merge by OR into the band one builder would have
 * made of all their keys; a band of n groups also folds exactly onto one
 * of n / d.  tb_union adds each band of the source (its generations still
 * within the span) to the destination:
 *
 *	  - OR'ed into a band whose size divides its own (the source folded onto
 *		it) or whose size its own divides (that band folded first), if every
 *		generation of both (keys estimated from the bits set: keys common to
 *		both count once) fits the smaller size;
 *	  - else kept as a band of its own (a query reads one more line);
 *	  - else, with TB_MAX_BANDS bands already or no room for one more
 *		under memory->max_bytes, OR'ed into the band with
 *		which it shares the largest size, both folded onto it: no key is
 *		lost, the error rate rises.
 *
 * Two kept generations never share a slot (they are fewer than 'slots'
 * apart), so the pieces of a slot always hold one generation.  Filters
 * built apart over the same time range with one declared capacity unite
 * into the bytes of one builder, and so do filters of consecutive time
 * ranges whose cuts fall on generation boundaries.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "tb_bits.h"

/* Why two filters cannot be united, or TB_MERGE_OK. */
TbMismatch
tb_merge_mismatch(const TbFilter *a, const TbFilter *b)
{
	TlbfKeys	joined;

	if (a->span != b->span)
		return TB_MERGE_SPAN;
	if (a->error_rate != b->error_rate || a->bits_per_key != b->bits_per_key ||
		a->k != b->k || a->lines_per_key != b->lines_per_key)
		return TB_MERGE_ERROR_RATE;
	if (a->generations != b->generations)
		return TB_MERGE_GENERATIONS;
	if (a->hash_scheme != b->hash_scheme)
		return TB_MERGE_HASH_SCHEME;
	/* a filter that holds no key yet takes the other's kind and seed */
	if (a->inserted == 0 || b->inserted == 0)
		return TB_MERGE_OK;
	if (a->seed != b->seed)
		return TB_MERGE_SEED;
	if (!tlbf_keys_join(tb_keys_of(a), tb_keys_of(b), &joined))
		return TB_MERGE_KINDS;
	return TB_MERGE_OK;
}

/* The slots of a band holding generations from 'oldest' on, as bits. */
static unsigned
live_slots(const TbFilter *f, const TbBand *b, int64_t oldest)
{
	unsigned	live = 0;

	for (int s = 0; s < tb_slots(f); s++)
		if (b->slot[s].generation != TB_NO_GENERATION && b->slot[s].generation >= oldest)
			live |= 1u << s;
	return live;
}

/*
 * Bands a (an groups, slots 'amask') and b (bn groups, slots 'bmask'),
 * both multiples of t, folded onto t groups and OR'ed: the bits set in
 * each slot, and the result in 'out' unless NULL ('out' may be a, when an
 * == t).  Slots in neither mask come out zero.
 */
static inline __attribute__((always_inline)) void
fold_or_layout(const uint64_t *a, uint64_t an, unsigned amask,
			   const uint64_t *b, uint64_t bn, unsigned bmask, uint64_t t,
			   uint64_t set[TB_MAX_SLOTS], uint64_t *out, const int slots, const int piece,
			   const int group)
{
	uint64_t	da = an / t,
				db = bn / t;

	memset(set, 0, TB_MAX_SLOTS * sizeof(uint64_t));
	for (uint64_t j = 0; j < t; j++)
	{
		uint64_t	line[TB_LINE_WORDS * TB_MAX_LINES_PER_KEY] = {0};

		for (int s = 0; s < slots; s++)
		{
			uint64_t   *w = &line[s * piece];

			if (amask & (1u << s))
				for (uint64_t d = 0; d < da; d++)
					for (int i = 0; i < piece; i++)
						w[i] |= a[(j * da + d) * group + s * piece + i];
			if (bmask & (1u << s))
				for (uint64_t d = 0; d < db; d++)
					for (int i = 0; i < piece; i++)
						w[i] |= b[(j * db + d) * group + s * piece + i];
			for (int i = 0; i < piece; i++)
				set[s] += (uint64_t) tb_popcount(w[i]);
		}
		if (out != NULL)
			memcpy(&out[j * group], line, group * sizeof(uint64_t));
		if ((j & 0xffff) == 0)
			tlbf_check_interrupts();
	}
}

/* (the body inlined for the layout at 1%, so that its loops unroll) */
static void
fold_or(const TbFilter *f, const uint64_t *a, uint64_t an, unsigned amask,
		const uint64_t *b, uint64_t bn, unsigned bmask, uint64_t t,
		uint64_t set[TB_MAX_SLOTS], uint64_t *out)
{
	if (tb_slots(f) == 4 && tb_piece_words(f) == 2 && tb_group_words(f) == 8)
		fold_or_layout(a, an, amask, b, bn, bmask, t, set, out, 4, 2, 8);
	else
		fold_or_layout(a, an, amask, b, bn, bmask, t, set, out, tb_slots(f), tb_piece_words(f),
					   (int) tb_group_words(f));
}

static uint64_t
gcd(uint64_t a, uint64_t b)
{
	while (b != 0)
	{
		uint64_t	r = a % b;

		a = b;
		b = r;
	}
	return a;
}

/*
 * OR source band sb (words sw, slots smask) into destination band 'di',
 * both folded onto t groups; 'set' the bits of each slot after it.
 */
static void
or_into(TbFilter *d, int di, uint64_t t, const TbBand *sb, const uint64_t *sw,
		unsigned smask, uint64_t set[TB_MAX_SLOTS])
{
	TbBand	   *db = &tb_bands(d)[di];
	unsigned	dmask = live_slots(d, db, INT64_MIN);

	if (db->nlines != t)
		tb_fold_band(d, di, db->nlines / t);
	fold_or(d, tb_words(d) + tb_band_word(d, di), t, dmask, sw, sb->nlines, smask, t,
			set, tb_words(d) + tb_band_word(d, di));
	for (int s = 0; s < tb_slots(d); s++)
	{
		TbSlot	   *ds = &db->slot[s];
		const TbSlot *ss = &sb->slot[s];

		if (!(smask & (1u << s)))
			continue;
		if (ds->generation == TB_NO_GENERATION)
			*ds = *ss;
		else if (ss->started < ds->started)
			ds->started = ss->started;
		ds->bits = set[s];
	}
}

static TlbfStatus
union_band(TbFilter **dp, TlbfMemory *memory, const TbBand *sb, const uint64_t *sw,
		   unsigned smask)
{
	TbFilter   *d = *dp;
	uint64_t	set[TB_MAX_SLOTS];
	int			best = -1;
	uint64_t	best_gcd = 0;
	TbBand	   *db;

	for (int i = d->nbands - 1; i >= 0; i--)
	{
		uint64_t	dn = tb_bands(d)[i].nlines;
		uint64_t	t = dn < sb->nlines ? dn : sb->nlines;
		unsigned	dmask = live_slots(d, &tb_bands(d)[i], INT64_MIN);
		uint64_t	capacity = tb_capacity_of(d, t);
		bool		fit = true;

		if (gcd(dn, sb->nlines) > best_gcd)
		{
			best_gcd = gcd(dn, sb->nlines);
			best = i;
		}
		if (dn % t != 0 || sb->nlines % t != 0)
			continue;
		fold_or(d, tb_words(d) + tb_band_word(d, i), dn, dmask, sw, sb->nlines, smask, t, set, NULL);
		for (int s = 0; s < tb_slots(d); s++)
			if ((dmask | smask) & (1u << s))
				fit &= tb_keys_of_bits(d, set[s], t) <= capacity + capacity / 16;
		if (fit)
		{
			or_into(d, i, t, sb, sw, smask, set);
			return TLBF_OK;
		}
	}
	if (d->nbands < TB_MAX_BANDS &&
		tb_layout_bytes(d, (uint64_t) d->nbands + 1, tb_total_groups(d) + sb->nlines) <= memory->max_bytes)
	{
		TlbfStatus	status = tb_add_band(dp, memory, sb->nlines);

		if (status != TLBF_OK)
			return status;
		d = *dp;
		db = &tb_bands(d)[d->nbands - 1];
		fold_or(d, sw, sb->nlines, smask, sw, sb->nlines, 0, sb->nlines, set,
				tb_words(d) + tb_band_word(d, d->nbands - 1));
		for (int s = 0; s < tb_slots(d); s++)
			if (smask & (1u << s))
				db->slot[s] = sb->slot[s];
		return TLBF_OK;
	}
	/* too many bands, or no room for one more: fold into the one sharing the largest size */
	if (best < 0)
		return TLBF_OVER_LIMIT;	/* no band at all, and no room for one */
	or_into(d, best, best_gcd, sb, sw, smask, set);
	return TLBF_OK;
}

/*
 * dst |= src (tb_merge_mismatch(dst, src) must be NULL; src is not dst).
 * Grows dst through 'memory'; on failure (TLBF_OUT_OF_MEMORY, or
 * TLBF_OVER_LIMIT when dst has no band and one would not fit under
 * memory->max_bytes) dst holds a part of src's keys.
 */
TlbfStatus
tb_union(TbFilter **dp, TlbfMemory *memory, const TbFilter *src)
{
	TbFilter   *d = *dp;
	TlbfKeys	joined;
	const TbBand *sb = tb_bands(src);
	const uint64_t *words = tb_words(src);
	uint64_t	word = 0;
	int64_t		oldest;

	if (d->inserted == 0)
	{
		/* holding no key yet (so no bit), it takes the other's kind and seed */
		d->key_fields = src->key_fields;
		d->key_kinds = src->key_kinds;
		d->seed = src->seed;
	}
	else if (src->inserted > 0 && tlbf_keys_join(tb_keys_of(d), tb_keys_of(src), &joined))
	{
		d->key_fields = joined.fields;
		d->key_kinds = joined.kinds;
	}
	if (d->capacity != src->capacity || ((d->flags ^ src->flags) & TB_DECLARED) != 0)
	{
		/* sized apart: the union's next generations follow the rate */
		d->flags &= ~TB_DECLARED;
		if (src->capacity > d->capacity)
			d->capacity = src->capacity;
	}
	d->inserted = tlbf_add_saturating(d->inserted, src->inserted);
	d->truncated = tlbf_add_saturating(d->truncated, src->truncated);
	if (src->newest != TLBF_NEVER)
		tb_retire(d, src->newest);
	if (d->newest == TLBF_NEVER)
		return TLBF_OK;
	oldest = tb_oldest_kept(d, d->newest);
	for (int i = 0; i < src->nbands; i++)
	{
		const uint64_t *sw = words + word;
		unsigned	smask = live_slots(src, &sb[i], oldest);

		word += sb[i].nlines * tb_group_words(src);
		if (smask != 0)
		{
			TlbfStatus	status = union_band(dp, memory, &sb[i], sw, smask);

			if (status != TLBF_OK)
				return status;
		}
	}
	return TLBF_OK;
}

/*
 * Fold every band onto the fewest groups that still hold the keys of each
 * of its generations at the error rate (halving while the half fits): for
 * a filter built generously (an aggregate's) before it is stored.
 */
void
tb_fold_to_fit(TbFilter *f)
{
	for (int i = 0; i < f->nbands; i++)
	{
		TbBand	   *b = &tb_bands(f)[i];
		uint64_t	keys = 0;
		uint64_t	divisor = 1;

		for (int s = 0; s < tb_slots(f); s++)
			if (b->slot[s].generation != TB_NO_GENERATION &&
				tb_keys_of_bits(f, b->slot[s].bits, b->nlines) > keys)
				keys = tb_keys_of_bits(f, b->slot[s].bits, b->nlines);
		while ((b->nlines / divisor) % 2 == 0 &&
			   keys <= tb_capacity_of(f, b->nlines / divisor / 2))
			divisor *= 2;
		tb_fold_band(f, i, divisor);
	}
}
