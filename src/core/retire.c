/*-------------------------------------------------------------------------
 *
 * retire.c
 *	  Dropping slices from the old end: expired ones (free of charge: they
 *	  already count as misses), or live ones when a size cap demands it
 *	  (counted in 'truncated': the only way a key can be lost).
 *
 * Only the old end is trimmed, never the middle, so the remaining slices
 * keep their neighbours and every answer for a time at or after the
 * retirement stays the same.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "tlbf.h"

/* A slice is expired when its last insertion is older than at - window. */
bool
tlbf_is_expired(const TlbfSlice *s, TlbfTime at, int64_t window)
{
	return s->updated_at < at - window;
}

/* Keep the first 'keep' slices: the bits move up to the shorter directory. */
static void
keep_newest(Tlbf *f, uint32_t keep)
{
	const TlbfSlice *s = tlbf_slices(f);
	uint64_t	words = keep == 0 ? 0 : (uint64_t) s[keep - 1].offset + s[keep - 1].nwords;
	uint64_t   *from = tlbf_words(f);

	f->nslices = keep;
	memmove(tlbf_words(f), from, words * sizeof(uint64_t));
}

/*
 * How many slices are expired at 'at' and may go.  If the newest insertion
 * itself has expired, all of them (the filter starts afresh on its next
 * insertion); otherwise the k newest, which share that time, stay.
 */
uint32_t
tlbf_retirable_slices(const Tlbf *f, TlbfTime at)
{
	const TlbfSlice *s = tlbf_slices(f);
	uint32_t	keep = f->nslices;

	if (keep > 0 && f->newest < at - f->span)
		return keep;
	while (keep > f->k && tlbf_is_expired(&s[keep - 1], at, f->span))
		keep--;
	return f->nslices - keep;
}

/* Drop the slices that are expired at 'at'; returns the new size. */
size_t
tlbf_drop_expired(Tlbf *f, TlbfTime at)
{
	uint32_t	retirable = tlbf_retirable_slices(f, at);

	if (retirable > 0)
		keep_newest(f, f->nslices - retirable);
	return tlbf_size(f);
}

/*
 * Drop slices from the old end, live or not, until the filter fits in
 * max_bytes and has at most TLBF_MAX_SLICES slices (a union may have more),
 * or only the k newest are left.  Returns how many live slices went (they
 * are added to f->truncated).
 */
uint32_t
tlbf_truncate_to(Tlbf *f, size_t max_bytes, TlbfTime at)
{
	const TlbfSlice *s = tlbf_slices(f);
	uint32_t	keep = f->nslices;
	uint32_t	dropped_live = 0;

	while (keep > f->k &&
		   (keep > TLBF_MAX_SLICES ||
			tlbf_layout_bytes(keep, (uint64_t) s[keep - 1].offset + s[keep - 1].nwords) > max_bytes))
	{
		if (!tlbf_is_expired(&s[keep - 1], at, f->span))
			dropped_live++;
		keep--;
	}
	if (keep != f->nslices)
		keep_newest(f, keep);
	f->truncated = tlbf_add_saturating(f->truncated, dropped_live);
	return dropped_live;
}
