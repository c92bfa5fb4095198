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
		live_inserts += tlbf_slice_load(&s[i]);
		if (stats->oldest_live == TLBF_NEVER || s[i].updated_at < stats->oldest_live)
			stats->oldest_live = s[i].updated_at;
	}

	/*
	 * Each distinct key went to k slices.  Live slices also hold some older
	 * keys (a slice lives as long as its newest key), so this overestimates
	 * the keys added within the span by up to k generations.
	 */
	stats->live_items = live_inserts / f->k;
}

double
tlbf_fill_ratio(const TlbfSlice *s)
{
	return (double) s->bits_set / ((double) s->nwords * 64);
}
