/*-------------------------------------------------------------------------
 *
 * tb_infer.c
 *	  How likely a "yes" of a format 3 filter is true (tlbf_probability):
 *	  the posterior probability that a key was added within a window, given
 *	  the pieces of its group a query reads and a prior.  The paper's
 *	  layout has its own (infer.c); the reasoning is the same, simpler here
 *	  because a key's bits lie in its own generation's piece alone.
 *
 * The hypotheses: the key was last added during generation g, in the
 * piece of band b that took g's keys then (an *entry*, one per band and
 * slot holding a generation the query asks); or it was not added in any
 * of them (N), its bits then there by chance.  Under N, a piece holds the
 * key's k bits with probability prod over words of d_w^k_w, the key's
 * draws falling uniformly in each word (tb_key_masks), d_w the word's
 * density of other keys' bits (log_chance): the piece read gives the
 * chance, uneven loads included.  Under "added in
 * entry e", e's piece holds them for certain, and every other piece is as
 * under N: so the likelihood ratio against N is 1 / chance_e if e's piece
 * holds every bit, else 0.
 *
 * Keys come back: a key last added in generation e may have been added in
 * an older generation o too, and then o's piece holds its bits for
 * certain.  Taking every other match for chance would make a key found in
 * two generations (an audience that returns) look half as likely within
 * the window as it is.  So under "last added in e", o's piece holds the
 * bits with probability rho + (1 - rho) chance_o, rho the share of e's
 * keys that o holds too; and misses them with (1 - rho) (1 - chance_o).
 * The ratio against N gains a factor (rho + (1 - rho) chance_o) / chance_o
 * for each older generation that holds the bits, (1 - rho) for each that
 * does not.  rho comes from the filter: the distinct keys of o, of e and
 * of both (the OR of their pieces, tb_stats.c) over a fixed sample of the
 * band's groups (RHO_SAMPLE, so that the cost is bounded), shared = keys_o
 * + keys_e - keys_both.  Only pieces of one band line up; across bands
 * rho is taken as 0.
 *
 * Priors, from the prior 'prior' that the key was added within the
 * window: keys are added at a steady rate over the times the filter took
 * keys, so a generation gets prior mass by the time it was taking keys
 * (from its start to the newest insertion) within the window, split
 * between its bands by the keys each holds of it.  The part of the oldest
 * generation before the window's start gets mass at the same rate, but
 * counts against the key (it was added, not within the window); N gets
 * what is left (none if the slack would take more than 1 - prior: it is
 * then scaled to 1 - prior).
 *
 *	  P(within | R) = sum_e c w_in(e) L_e / (sum_e c (w_in(e) + w_before(e)) L_e + P(N))
 *
 * No entry holding every bit: 0 (no false negatives).  Sums in logarithms,
 * scaled by the largest term: chances may be tiny.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "tb_bits.h"

#define TB_MAX_ENTRIES	(TB_MAX_BANDS * TB_MAX_SLOTS)
#define RHO_SAMPLE		256		/* groups of a band read for rho */
#define RHO_MAX			0.99

typedef struct Entry
{
	int64_t		generation;
	int			band;
	int			slot;
	double		keys;			/* the generation's keys in this band */
	double		share;			/* ... over its keys in every band */
	bool		held;			/* its piece holds every bit of the key */
	double		log_chance;		/* of that, for a key not added */
	double		log_ratio;		/* against N; -INFINITY if not held */
} Entry;

/*
 * log of the chance that a key not added has its bits in this piece: each
 * word's density of other keys' bits, measured on the positions the key
 * does not draw (which neither hypothesis touches: counting the key's own
 * bits would make every key added look like chance), to the power of the
 * key's draws in the word.  At least one bit in 64.
 */
static double
log_chance(const uint64_t *piece, const uint64_t *masks, int words, int k)
{
	double		log_p = 0.0;

	for (int w = 0; w < words; w++)
	{
		int			draws = (k - w + words - 1) / words;
		int			others = tb_popcount(piece[w] & ~masks[w]);
		int			free_bits = 64 - tb_popcount(masks[w]);
		double		density = free_bits > 0 ? (double) others / free_bits : 1.0;

		log_p += draws * log(fmax(density, 1.0 / 64));
	}
	return log_p;
}

/*
 * The share of the keys of slot 'newer' that slot 'older' of the same band
 * holds too, from the first RHO_SAMPLE groups: in [0, RHO_MAX].
 */
static double
shared_share(const TbFilter *f, int band, int older, int newer)
{
	const TbBand *b = &tb_bands(f)[band];
	const uint64_t *words = tb_words(f) + tb_band_word(f, band);
	int			piece = tb_piece_words(f);
	uint64_t	group_words = (uint64_t) tb_slots(f) * piece;
	uint64_t	n = b->nlines < RHO_SAMPLE ? b->nlines : RHO_SAMPLE;
	uint64_t	set_o = 0,
				set_n = 0,
				set_both = 0;
	double		keys_o,
				keys_n,
				shared;

	for (uint64_t g = 0; g < n; g++)
		for (int w = 0; w < piece; w++)
		{
			uint64_t	o = words[g * group_words + older * piece + w];
			uint64_t	x = words[g * group_words + newer * piece + w];

			set_o += (uint64_t) tb_popcount(o);
			set_n += (uint64_t) tb_popcount(x);
			set_both += (uint64_t) tb_popcount(o | x);
		}
	keys_o = tb_keys_estimate(f, (double) set_o, n);
	keys_n = tb_keys_estimate(f, (double) set_n, n);
	if (keys_n <= 0.0)
		return 0.0;
	shared = keys_o + keys_n - tb_keys_estimate(f, (double) set_both, n);
	return fmin(fmax(shared / keys_n, 0.0), RHO_MAX);
}

/*
 * Entry e's log likelihood ratio against N, its piece holding the key:
 * its own chance, and what each older generation of its band says about a
 * key that may have come back (see the file's header).
 */
static double
log_ratio_of(const TbFilter *f, const Entry *entry, int n, int e)
{
	double		log_ratio = -entry[e].log_chance;

	for (int o = 0; o < n; o++)
	{
		double		rho,
					chance;

		if (entry[o].band != entry[e].band || entry[o].generation >= entry[e].generation)
			continue;
		rho = shared_share(f, entry[e].band, entry[o].slot, entry[e].slot);
		if (!entry[o].held)
			log_ratio += log1p(-rho);
		else
		{
			chance = exp(entry[o].log_chance);
			log_ratio += log(rho + (1.0 - rho) * chance) - entry[o].log_chance;
		}
	}
	return log_ratio;
}

/* Length of [a, b) ∩ [c, d), 0 if empty. */
static double
overlap(TlbfTime a, TlbfTime b, TlbfTime c, TlbfTime d)
{
	TlbfTime	lo = a > c ? a : c;
	TlbfTime	hi = b < d ? b : d;

	return hi > lo ? (double) (hi - lo) : 0.0;
}

/*
 * The end of the times a generation starting at 'start' took keys: its
 * end, or just after the newest time the filter has seen (at least its
 * first microsecond, whatever a value from outside says).
 */
static TlbfTime
taking_until(const TbFilter *f, TlbfTime start)
{
	if (f->newest - start >= f->length)
		return start + f->length;
	return f->newest >= start ? f->newest + 1 : start + 1;
}

double
tb_posterior(const TbFilter *f, TlbfHash hash, TlbfTime at, int64_t window, double prior)
{
	const TbBand *b = tb_bands(f);
	const uint64_t *group[TB_MAX_BANDS];
	uint64_t	masks[TB_LINE_WORDS * TB_MAX_LINES_PER_KEY];
	Entry		entry[TB_MAX_ENTRIES];
	int			n = 0;
	int			slots = tb_slots(f);
	int			piece = tb_piece_words(f);
	TlbfTime	start = at - window;	/* the window is [start, at] */
	double		in_weight = 0.0,
				before_weight = 0.0,
				largest = -INFINITY,
				numerator = 0.0,
				denominator = 0.0,
				per_time,
				slack,
				not_recent,
				before_scale = 1.0;
	bool		held = false;

	if (prior <= 0.0 || f->newest == TLBF_NEVER)
		return 0.0;
	tb_key_groups(f, hash, tb_group_words(f), group);
	tb_key_masks(hash, piece, f->k, masks);
	for (int i = 0; i < f->nbands; i++)
		for (int s = 0; s < slots; s++)
		{
			const uint64_t *words = group[i] + s * piece;
			int64_t		g = b[i].slot[s].generation;

			if (!tb_asks(f, g, at, window))
				continue;
			entry[n].generation = g;
			entry[n].band = i;
			entry[n].slot = s;
			entry[n].keys = tb_keys_estimate(f, (double) b[i].slot[s].bits, b[i].nlines);
			entry[n].held = tb_piece_has(words, masks, piece);
			entry[n].log_chance = log_chance(words, masks, piece, f->k);
			held |= entry[n].held;
			n++;
		}
	if (!held)
		return 0.0;
	for (int e = 0; e < n; e++)
		entry[e].log_ratio = entry[e].held ? log_ratio_of(f, entry, n, e) : -INFINITY;

	/*
	 * Each entry's weights: the times its generation took keys (from its
	 * start to its end or the newest insertion) within the window and
	 * before it, in microseconds, times its band's share of the
	 * generation's keys.
	 */
	for (int e = 0; e < n; e++)
	{
		TlbfTime	g_start = entry[e].generation * f->length;
		TlbfTime	g_end = taking_until(f, g_start);
		double		all_keys = 0.0;

		for (int o = 0; o < n; o++)
			if (entry[o].generation == entry[e].generation)
				all_keys += entry[o].keys;
		entry[e].share = all_keys > 0 ? entry[e].keys / all_keys : 1.0;
		in_weight += entry[e].share * overlap(g_start, g_end, start, at + 1);
		before_weight += entry[e].share * overlap(g_start, g_end, g_start, start);
		if (entry[e].log_ratio > largest)
			largest = entry[e].log_ratio;
	}
	if (in_weight <= 0.0)
		return 0.0;
	per_time = prior / in_weight;
	slack = per_time * before_weight;
	not_recent = 1.0 - prior - slack;
	if (not_recent < 0.0)
	{
		before_scale = (1.0 - prior) / slack;
		not_recent = 0.0;
	}

	/* the sums, each term scaled by exp(-largest) */
	for (int e = 0; e < n; e++)
	{
		TlbfTime	g_start = entry[e].generation * f->length;
		TlbfTime	g_end = taking_until(f, g_start);
		double		ratio;

		if (entry[e].log_ratio == -INFINITY)
			continue;
		ratio = per_time * entry[e].share * exp(entry[e].log_ratio - largest);
		numerator += ratio * overlap(g_start, g_end, start, at + 1);
		denominator += ratio * (overlap(g_start, g_end, start, at + 1) +
								before_scale * overlap(g_start, g_end, g_start, start));
	}
	denominator += not_recent * exp(-largest);
	return denominator > 0.0 ? fmin(numerator / denominator, 1.0) : 0.0;
}
