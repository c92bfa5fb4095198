/*
 * fuzz_merge.h
 *	  The union as tlbf_merge_values (union.c) builds it for tlbf_union, ||
 *	  and the aggregates' final and serialize functions: merge (which keeps
 *	  at most TLBF_MAX_SLICES slices), then truncate to the size cap at the
 *	  union's newest time.  Checked:
 *	  - the merge takes at most the size tlbf_merge_bytes announced, exactly
 *		that if it kept every slice, and validates;
 *	  - every probe any input finds, at any time, the union finds (the
 *		README's promise for tlbf_union); if the merge had to drop slices,
 *		at its newest time and later, and only if it counted none as live;
 *	  - the truncated union validates, reaches the cap or k slices, and
 *		unless it dropped live slices answers as before from its newest
 *		time on.
 */
#ifndef TLBF_FUZZ_MERGE_H
#define TLBF_FUZZ_MERGE_H

#include "fuzz_common.h"
#include "fuzz_memory.h"
#include "fuzz_probes.h"

#define GLUE_MAX_FILTER_BYTES	(64 * 1024 * 1024)	/* tlbf.max_filter_bytes */

/*
 * Inputs must pass tlbf_merge_mismatch against the first.  Returns the
 * union, malloc'd, of *size bytes (its allocation may be larger), and
 * whether keys may have been lost: live slices dropped, by the merge or by
 * the cap (or not countable: 'truncated' stuck at its maximum).
 */
static inline Tlbf *
fuzz_merge_values(const Tlbf *const *inputs, int n, size_t cap, size_t *size,
				  bool *may_lose)
{
	size_t		bytes = tlbf_merge_bytes(inputs, n);
	Tlbf	   *out = fuzz_malloc(bytes);
	uint64_t	slices = 0;
	uint64_t	truncated = 0;
	bool		kept_all;
	bool		lost_live;
	TlbfTime	times[FUZZ_MAX_TIMES];
	int			ntimes;
	TlbfTime	base;
	uint32_t	before[2];
	uint32_t	dropped_live;

	for (int i = 0; i < n; i++)
	{
		slices += inputs[i]->nslices;
		truncated = fuzz_add_saturating(truncated, inputs[i]->truncated);
	}
	tlbf_merge(out, inputs, n);
	fuzz_check_valid(out, "the union of valid filters");
	kept_all = out->nslices == slices;
	FUZZ_CHECK(kept_all ? tlbf_size(out) == bytes : tlbf_size(out) < bytes,
			   "a union takes the size tlbf_merge_bytes gives, less what it dropped");
	FUZZ_CHECK(kept_all || slices > TLBF_MAX_SLICES, "a union drops slices only past the limit");
	FUZZ_CHECK(out->truncated >= truncated, "a union keeps its inputs' truncation counts");
	lost_live = !kept_all && (out->truncated != truncated || truncated == UINT64_MAX);

	base = fuzz_base_time(out);
	ntimes = fuzz_times(out, times);
	for (int t = 0; t < ntimes && !lost_live; t++)
	{
		uint32_t	any = 0;

		/* slices dropped as expired at the newest time only count before it */
		if (!kept_all && times[t] < base)
			continue;
		for (int i = 0; i < n; i++)
			any |= fuzz_answers(inputs[i], times[t]);
		FUZZ_CHECK((any & ~fuzz_answers(out, times[t])) == 0,
				   "the union finds every key an input finds, at any time");
	}

	before[0] = fuzz_answers(out, base);
	before[1] = fuzz_answers(out, fuzz_add_time(base, out->span));
	truncated = out->truncated;
	dropped_live = tlbf_truncate_to(out, cap, out->newest);
	fuzz_check_valid(out, "a union truncated to the cap");
	FUZZ_CHECK(tlbf_size(out) <= cap || out->nslices <= out->k,
			   "a truncated union reaches the cap or k slices");
	FUZZ_CHECK(out->truncated == fuzz_add_saturating(truncated, dropped_live),
			   "truncation counts the live slices it drops");
	if (dropped_live == 0)
		FUZZ_CHECK((before[0] & ~fuzz_answers(out, base)) == 0 &&
				   (before[1] & ~fuzz_answers(out, fuzz_add_time(base, out->span))) == 0,
				   "truncating a union without dropping live slices loses no key");
	*size = tlbf_size(out);
	*may_lose = lost_live || dropped_live > 0;
	return out;
}

/*
 * A small filter that merges with 'like' (same span, seed, error rate and
 * l) but has k hash functions: another partial state of an aggregate, or
 * another row of tlbf_union_agg, perhaps built at another error rate.  The
 * probe keys are added at 'at', unless it is TLBF_NEVER (an empty filter).
 */
static inline Tlbf *
fuzz_small_filter(const Tlbf *like, int k, TlbfTime at)
{
	TlbfParams	params = {like->span, like->error_rate, 16, k, like->l, like->seed};
	TlbfProblem problem;
	FuzzMemory	memory;
	Tlbf	   *f;

	FUZZ_CHECK(tlbf_check_params(&params, &problem),
			   "a valid value's parameters make a filter");
	f = fuzz_malloc(sizeof(Tlbf));
	tlbf_init(f, &params);
	fuzz_check_valid(f, "a new filter");
	fuzz_memory_init(&memory, sizeof(Tlbf), GLUE_MAX_FILTER_BYTES, false, 0);
	for (uint64_t key = 0; key < FUZZ_PROBES && at != TLBF_NEVER; key++)
		FUZZ_CHECK(fuzz_insert(&f, &memory, fuzz_key_hash(key, like->seed), at) == TLBF_OK,
				   "a small filter takes a few keys");
	return f;
}

#endif							/* TLBF_FUZZ_MERGE_H */
