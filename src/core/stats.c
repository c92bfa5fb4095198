/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  Figures about a filter for tlbf_info() and the evaluation.
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf.h"

void
tlbf_stats(const Tlbf *f, TlbfTime at, TlbfStats *stats)
{
	const TlbfSlice *s = tlbf_slices(f);
	double		live_inserts = 0.0;

	stats->live_slices = 0;
	stats->oldest_live = TLBF_NEVER;
	stats->bits = tlbf_total_words(f) * 64;
	for (uint32_t i = 0; i < f->nslices; i++)
	{
		if (tlbf_is_expired(&s[i], at, f->span))
			continue;
		stats->live_slices++;
		live_inserts += (double) s[i].inserted;
		if (stats->oldest_live == TLBF_NEVER || s[i].updated_at < stats->oldest_live)
			stats->oldest_live = s[i].updated_at;
	}

	/*
	 * Each insertion went to k slices.  Live slices also hold some older
	 * insertions (a slice lives as long as its newest key), so this
	 * overestimates the keys added within the span by up to a generation.
	 */
	stats->live_items = live_inserts / f->k;
}

double
tlbf_fill_ratio(const Tlbf *f, uint32_t slice)
{
	const TlbfSlice *s = &tlbf_slices(f)[slice];
	const uint64_t *w = tlbf_words(f) + s->offset;
	uint64_t	set = 0;

	for (uint32_t i = 0; i < s->nwords; i++)
		set += (uint64_t) __builtin_popcountll(w[i]);
	return (double) set / ((double) s->nwords * 64);
}
