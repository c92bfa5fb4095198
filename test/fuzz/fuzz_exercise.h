/*
 * fuzz_exercise.h
 *	  Using a value that passed validation as the SQL functions would:
 *	  contains (with and without a shorter window), info's statistics,
 *	  retirable on the directory alone, retire, the union's truncation and
 *	  add, each on its own copy.  Besides memory safety, what the README
 *	  promises is checked, on probe keys (for a crafted value any key may be
 *	  "present"):
 *	  - a key found with a window is found with any longer one, and at any
 *		earlier time (the query finds every run of k live hits);
 *	  - whatever the core writes validates again;
 *	  - retiring at t changes no answer at t or later, truncation none
 *		unless it dropped live slices, an insertion none at its time or
 *		later unless it truncated.
 */
#ifndef TLBF_FUZZ_EXERCISE_H
#define TLBF_FUZZ_EXERCISE_H

#include <math.h>

#include "fuzz_common.h"
#include "fuzz_memory.h"

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

/* Everything that only reads the value: contains, info, retirable. */
static inline void
fuzz_exercise_reads(const Tlbf *f)
{
	TlbfTime	times[FUZZ_MAX_TIMES];
	int			n = fuzz_times(f, times);
	uint32_t	earlier = UINT32_MAX;

	for (int i = 0; i < n; i++)
	{
		TlbfStats	stats;
		uint32_t	found = fuzz_answers(f, times[i]);

		/* later, fewer slices are live: the answers can only shrink */
		FUZZ_CHECK((found & ~earlier) == 0, "a key found at a time is found earlier");
		earlier = found;

		tlbf_stats(f, times[i], &stats);
		FUZZ_CHECK(stats.live_slices <= f->nslices, "live slices are slices");
		FUZZ_CHECK(stats.bits == tlbf_total_words(f) * 64, "stats count every bit");
		FUZZ_CHECK(stats.live_items >= 0.0, "the live item estimate is a number >= 0");
		FUZZ_CHECK((stats.oldest_live == TLBF_NEVER) == (stats.live_slices == 0),
				   "an oldest live time exactly when a slice is live");
		FUZZ_CHECK(tlbf_retirable_slices(f, times[i]) <= f->nslices,
				   "no more retirable slices than slices");
	}
}

/*
 * tlbf_retirable reads a prefix: the header and directory only.  Its check
 * must accept the prefix of every valid value, read nothing past it, and
 * refuse a prefix one byte too short.
 */
static inline void
fuzz_exercise_directory(const Tlbf *f, size_t size)
{
	size_t		prefix_len = tlbf_layout_bytes(f->nslices, 0);
	Tlbf	   *prefix = fuzz_clone(f, prefix_len);
	TlbfProblem problem;
	TlbfTime	times[FUZZ_MAX_TIMES];
	int			n = fuzz_times(f, times);

	FUZZ_CHECK(tlbf_validate_directory(prefix, prefix_len, size, &problem),
			   "the directory of a valid value validates");
	for (int i = 0; i < n; i++)
		FUZZ_CHECK(tlbf_retirable_slices(prefix, times[i]) ==
				   tlbf_retirable_slices(f, times[i]),
				   "retirable slices are read from the directory alone");
	FUZZ_CHECK(!tlbf_validate_directory(prefix, prefix_len - 1, size, &problem),
			   "a cut directory is refused");
	free(prefix);
}

/* tlbf_retire on a copy: answers at 'at' and later do not change. */
static inline void
fuzz_exercise_retire(const Tlbf *f, size_t size, TlbfTime at)
{
	Tlbf	   *copy = fuzz_clone(f, size);
	uint32_t	retirable = tlbf_retirable_slices(copy, at);
	uint32_t	before[2] = {fuzz_answers(f, at), fuzz_answers(f, fuzz_add_time(at, f->span))};

	tlbf_drop_expired(copy, at);
	fuzz_check_valid(copy, "a retired filter");
	FUZZ_CHECK(copy->nslices == f->nslices - retirable, "retire drops the retirable slices");
	FUZZ_CHECK(tlbf_retirable_slices(copy, at) == 0, "a retired filter has nothing to retire");
	FUZZ_CHECK(fuzz_answers(copy, at) == before[0] &&
			   fuzz_answers(copy, fuzz_add_time(at, f->span)) == before[1],
			   "retiring changes no answer at or after its time");
	free(copy);
}

/*
 * The union's truncation on a copy: it stops at the cap or at k slices,
 * and loses no key unless it counts a dropped live slice.
 */
static inline void
fuzz_exercise_truncate(const Tlbf *f, size_t size, size_t cap, TlbfTime at)
{
	Tlbf	   *copy = fuzz_clone(f, size);
	uint32_t	before = fuzz_answers(f, at);
	uint32_t	dropped_live = tlbf_truncate_to(copy, cap, at);

	fuzz_check_valid(copy, "a truncated filter");
	FUZZ_CHECK(tlbf_size(copy) <= cap || copy->nslices <= copy->k,
			   "truncation reaches the cap or k slices");
	FUZZ_CHECK(copy->truncated == fuzz_add_saturating(f->truncated, dropped_live),
			   "truncation counts the live slices it drops");
	if (dropped_live == 0)
		FUZZ_CHECK((before & ~fuzz_answers(copy, at)) == 0,
				   "truncation without dropped live slices loses no key");
	free(copy);
}

/*
 * tlbf_add on a copy, in memory that grows up to 'max_bytes': the key is
 * found (fuzz_insert checks it) and, unless the cap dropped live slices,
 * every probe found at the insertion's time or later still is.  (With
 * 'truncated' stuck at its maximum, a drop would not show: not checked.)
 */
static inline void
fuzz_exercise_insert(const Tlbf *f, size_t size, uint64_t key, TlbfTime at,
					 size_t max_bytes)
{
	Tlbf	   *copy = fuzz_clone(f, size);
	FuzzMemory	memory;
	TlbfTime	now = at < f->newest ? f->newest : at;
	TlbfTime	later = fuzz_add_time(now, f->span);
	uint32_t	before[2] = {fuzz_answers(f, now), fuzz_answers(f, later)};

	fuzz_memory_init(&memory, size, max_bytes, false, 0);
	if (fuzz_insert(&copy, &memory, fuzz_key_hash(key, f->seed), at) == TLBF_OK &&
		copy->truncated == f->truncated && f->truncated != UINT64_MAX)
		FUZZ_CHECK((before[0] & ~fuzz_answers(copy, now)) == 0 &&
				   (before[1] & ~fuzz_answers(copy, later)) == 0,
				   "an insertion loses no key at its time or later");
	free(copy);
}

/* All of the above, at the times that matter for this value. */
static inline void
fuzz_exercise(const Tlbf *f, size_t size)
{
	TlbfTime	times[FUZZ_MAX_TIMES];
	int			n = fuzz_times(f, times);
	size_t		max_bytes = 2 * size + 65536;

	fuzz_exercise_reads(f);
	fuzz_exercise_directory(f, size);
	for (int i = 0; i < n; i++)
	{
		fuzz_exercise_retire(f, size, times[i]);
		fuzz_exercise_truncate(f, size, size / 2, times[i]);
	}
	fuzz_exercise_truncate(f, size, 0, fuzz_base_time(f));
	fuzz_exercise_truncate(f, size, size - 1, fuzz_base_time(f));

	/* add to it: now, within the span, and after a pause past the span */
	fuzz_exercise_insert(f, size, FUZZ_PROBES, fuzz_base_time(f), max_bytes);
	fuzz_exercise_insert(f, size, FUZZ_PROBES + 1, fuzz_add_time(fuzz_base_time(f), -1),
						 max_bytes);
	fuzz_exercise_insert(f, size, FUZZ_PROBES + 2,
						 fuzz_add_time(fuzz_base_time(f), f->span + 1), max_bytes);
	/* and under a cap it is already over: live slices must go */
	fuzz_exercise_insert(f, size, FUZZ_PROBES + 3, fuzz_base_time(f), size / 2);
}

#endif							/* TLBF_FUZZ_EXERCISE_H */
