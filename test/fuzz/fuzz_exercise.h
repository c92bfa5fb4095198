/*
 * fuzz_exercise.h
 *	  Using a value that passed validation as the SQL functions would:
 *	  contains (with and without a shorter window), info's statistics,
 *	  retirable on the directory alone, retire, the union's truncation, add,
 *	  and unions with filters of other k, each on its own copy.  Besides
 *	  memory safety, what the README promises is checked, on probe keys (for
 *	  a crafted value any key may be "present"):
 *	  - a key found with a window is found with any longer one, and at any
 *		earlier time (the query finds every run of k live hits);
 *	  - whatever the core writes validates again;
 *	  - retiring at t changes no answer at t or later, truncation none
 *		unless it dropped live slices, an insertion none at its time or
 *		later unless it truncated.
 */
#ifndef TLBF_FUZZ_EXERCISE_H
#define TLBF_FUZZ_EXERCISE_H

#include "fuzz_common.h"
#include "fuzz_memory.h"
#include "fuzz_merge.h"
#include "fuzz_probes.h"

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
		FUZZ_CHECK(stats.live_keys_low >= 0.0 &&
				   stats.live_keys_low <= stats.live_keys &&
				   stats.live_keys <= stats.live_keys_high,
				   "the live key estimate is a number within its range, >= 0");
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

/*
 * tlbf_union with filters of other k (tlbf_union_agg over filters built at
 * several error rates): the union takes the smallest k, and the front
 * filter's generation plan is rescaled to it.  Three partners: one hash
 * function, written just before the value's newest insertion (the value
 * is the front, its k lowered); the most hash functions, written just
 * after it (the partner is the front, its k lowered), under a cap; one
 * fewer than the value's, never written.  Then a key is added to each
 * union (the rescaled plan in use).  fuzz_merge_values checks the unions.
 */
static inline void
fuzz_exercise_unions(const Tlbf *f, size_t size)
{
	TlbfTime	base = fuzz_base_time(f);
	const int	ks[] = {1, TLBF_MAX_K, f->k > 1 ? f->k - 1 : 1};
	const TlbfTime times[] = {fuzz_add_time(base, -1), fuzz_add_time(base, 1), TLBF_NEVER};

	for (int p = 0; p < 3; p++)
	{
		Tlbf	   *other = fuzz_small_filter(f, ks[p], times[p]);
		const Tlbf *inputs[2] = {p == 1 ? other : f, p == 1 ? f : other};
		size_t		cap = p == 1 ? size / 2 : GLUE_MAX_FILTER_BYTES;
		size_t		out_size;
		bool		may_lose;
		Tlbf	   *out = fuzz_merge_values(inputs, 2, cap, &out_size, &may_lose);

		fuzz_exercise_insert(out, out_size, FUZZ_PROBES, fuzz_base_time(out),
							 2 * out_size + 65536);
		free(out);
		free(other);
	}
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

	fuzz_exercise_unions(f, size);
}

#endif							/* TLBF_FUZZ_EXERCISE_H */
