/*
 * fuzz_probes.h
 *	  Asking a value about a few probe keys at the times that matter for
 *	  it, so that two values (before and after an operation, or inputs and
 *	  their union) can be compared by their answers.
 */
#ifndef TLBF_FUZZ_PROBES_H
#define TLBF_FUZZ_PROBES_H

#include "fuzz_common.h"

#define FUZZ_PROBES		4		/* probe keys */
#define FUZZ_WINDOWS	3		/* the span, half of it, a microsecond */
#define FUZZ_MAX_TIMES	12
#define FUZZ_MANY_SLICES 1024	/* past this, fewer times are asked about */

/*
 * Which probes are found at 'at': bit FUZZ_WINDOWS * key + w, w = 0 for the
 * span and w = 2 for the shortest window.  A shorter window only makes
 * fewer slices live, so it finds a subset.
 */
static inline uint32_t
fuzz_answers(const Tlbf *f, TlbfTime at)
{
	int64_t		half = f->span / 2;
	int64_t		windows[FUZZ_WINDOWS] = {f->span, half, half < 1 ? half : 1};
	uint32_t	found = 0;

	for (int key = 0; key < FUZZ_PROBES; key++)
	{
		TlbfHash	hash = fuzz_key_hash((uint64_t) key, f->seed);
		bool		longer = true;

		for (int w = 0; w < FUZZ_WINDOWS; w++)
		{
			bool		hit = tlbf_query(f, hash, at, windows[w]);

			FUZZ_CHECK(longer || !hit, "a key found in a window is found in a longer one");
			longer = hit;
			found |= (uint32_t) hit << (FUZZ_WINDOWS * key + w);
		}
	}
	return found;
}

static int
fuzz_compare_times(const void *a, const void *b)
{
	TlbfTime	x = *(const TlbfTime *) a;
	TlbfTime	y = *(const TlbfTime *) b;

	return (x > y) - (x < y);
}

/*
 * Times worth asking at, in increasing order: around the newest insertion
 * and the slices' times (where liveness changes), and the range's ends.
 * A query may visit every slice; for a filter of many slices (a union of
 * unions) only the times around the newest insertion are taken.
 */
static inline int
fuzz_times(const Tlbf *f, TlbfTime *times)
{
	const TlbfSlice *s = tlbf_slices(f);
	TlbfTime	base = fuzz_base_time(f);
	int			n = 0;

	times[n++] = base;
	times[n++] = fuzz_add_time(base, f->span);
	times[n++] = fuzz_add_time(base, f->span + 1);
	if (f->nslices > FUZZ_MANY_SLICES)
		return n;				/* already in order */
	times[n++] = fuzz_add_time(base, -f->span);
	times[n++] = TLBF_TIME_MIN;
	times[n++] = TLBF_TIME_END - 1;
	if (f->nslices > 0)
	{
		TlbfTime	oldest = s[f->nslices - 1].updated_at;
		TlbfTime	middle = s[f->nslices / 2].updated_at;

		if (oldest != TLBF_NEVER)
		{
			times[n++] = fuzz_add_time(oldest, f->span);
			times[n++] = fuzz_add_time(oldest, f->span + 1);
		}
		if (middle != TLBF_NEVER)
		{
			times[n++] = fuzz_add_time(middle, f->span);
			times[n++] = fuzz_add_time(middle, f->span + 1);
		}
	}
	qsort(times, n, sizeof(TlbfTime), fuzz_compare_times);
	return n;
}

#endif							/* TLBF_FUZZ_PROBES_H */
