/*
 * test_structure.c
 *	  How the slices behave: shifting and sizing, growth past k+l and the
 *	  way back, retirement that leaves answers unchanged, the size cap, and
 *	  the union of two filters.
 */
#include <math.h>

#include "harness.h"

#define START	INT64_C(757382400000000)	/* 2024-01-01 00:00 UTC */
#define SPAN	(60 * SECOND)

/*
 * No slice still being written is filled past half its bits by more than k
 * and four standard deviations of the fill (the bits a given number of keys
 * set vary), and every slice's count of set bits is exact.
 */
static void
assert_slices_within_capacity(const Tlbf *f)
{
	const TlbfSlice *s = tlbf_slices(f);
	const uint64_t *words = tlbf_words(f);

	for (uint32_t i = 0; i < f->nslices; i++)
	{
		double		bits = s[i].nwords * 64.0;
		uint64_t	ones = 0;

		if (i < f->k)
			assert_true((double) s[i].bits_set <= bits / 2 + f->k + 4 * sqrt(bits) / 2);
		for (uint32_t w = 0; w < s[i].nwords; w++)
			ones += (uint64_t) __builtin_popcountll(words[s[i].offset + w]);
		assert_int_equal(s[i].bits_set, ones);
	}
}

/*
 * Through rate changes of 100x in both directions, every insertion keeps
 * the written slices within capacity.
 */
static void
test_slices_stay_within_capacity(void **state)
{
	TestFilter	t;
	TlbfTime	at = START;
	uint64_t	key = 0;

	tf_create(&t, SPAN, 0.01, 1000);
	for (int phase = 0; phase < 6; phase++)
	{
		int64_t		gap = phase % 2 ? 100 : 10000;	/* 10k/s or 100/s */

		for (int i = 0; i < 30000; i++)
		{
			at += gap;
			tf_add(&t, key++, at);
			assert_slices_within_capacity(t.f);
		}
	}
	tf_free(&t);
}

/*
 * With a capacity guess 10x too small the filter keeps its unexpired
 * slices and grows past k+l; once the new slices are sized for the real
 * rate it comes back to k+l (plus the slices about to expire: the sizing
 * aims at span/l per generation but measures the rate a generation late).
 */
static void
test_growth_and_return(void **state)
{
	TestFilter	t;
	TlbfTime	at = START;
	uint64_t	key = 0;
	uint32_t	most = 0;

	tf_create(&t, SPAN, 0.01, 600);
	for (int i = 0; i < 600000; i++)	/* 10 spans at 1000/s */
	{
		at += 1000;
		tf_add(&t, key++, at);
		if (t.f->nslices > most)
			most = t.f->nslices;
	}
	assert_true(most > (uint32_t) (t.f->k + t.f->l));
	assert_true(t.f->nslices <= (uint32_t) (t.f->k + t.f->l + 2));
	/* and the newest slice is sized for the observed rate: 60000 per span */
	assert_in_range(tlbf_slices(t.f)[0].nwords * 64,
					(uint64_t) (0.9 * 10 * 60000 / 25 / 0.693),
					(uint64_t) (1.2 * 10 * 60000 / 25 / 0.693));
	tf_free(&t);
}

/*
 * A burst, then a stream 1000 times slower.  The slices sized for the burst
 * are not left to fill at the slow rate (which would keep the burst's keys
 * in slices still being written, and the filter burst-sized, for a very
 * long time): a generation ends at the latest after twice its planned
 * span/l.  So span + 2k*span/l after the burst its slices have expired, its
 * keys are reported only at the false-positive rate, and the filter is the
 * size the slow stream alone gets.
 */
static void
test_burst_then_slow(void **state)
{
	TestFilter	t,
				slow_only;
	TlbfTime	at = START;
	TlbfTime	burst_end;
	uint64_t	key = 0;
	uint64_t	burst_keys;
	int64_t		forgotten_after;
	long		reported = 0;

	tf_create(&t, SPAN, 0.01, 1000);
	tf_create(&slow_only, SPAN, 0.01, 1000);
	for (int i = 0; i < 300000; i++)	/* 300,000 keys in 0.3 s */
		tf_add(&t, key++, ++at);
	burst_keys = key;
	burst_end = at;
	forgotten_after = SPAN + 2 * t.f->k * (SPAN / t.f->l);
	while (at < burst_end + forgotten_after + SECOND)	/* then 100 a second */
	{
		at += 10 * 1000;
		tf_add(&t, key, at);
		tf_add(&slow_only, key, at);
		key++;
	}
	for (uint64_t k = 0; k < burst_keys; k++)
		reported += tf_has(&t, k, at);
	print_message("burst then 1000x slower: %ld of %lu burst keys reported, %zu bytes (slow stream alone: %zu)\n",
				  reported, (unsigned long) burst_keys, tlbf_size(t.f), tlbf_size(slow_only.f));
	assert_true(reported <= 1.25 * 0.01 * burst_keys);
	assert_true(tlbf_size(t.f) <= 1.25 * tlbf_size(slow_only.f));
	tf_free(&t);
	tf_free(&slow_only);
}

/*
 * Repeats of a key within a generation set no new bit and do not count
 * towards capacity: a stream where every key comes five times in a row
 * gets the same filter size as the stream of its distinct keys.
 */
static void
test_repeats_do_not_grow_the_filter(void **state)
{
	TestFilter	distinct,
				repeated;
	TlbfTime	at = START;

	tf_create(&distinct, SPAN, 0.01, 1000);
	tf_create(&repeated, SPAN, 0.01, 1000);
	for (int i = 0; i < 100000; i++)
	{
		at += 2000;
		tf_add(&distinct, (uint64_t) i, at);
		for (int r = 0; r < 5; r++)
			tf_add(&repeated, (uint64_t) i, at + r);
	}
	print_message("distinct keys: %zu bytes; each key five times: %zu bytes\n",
				  tlbf_size(distinct.f), tlbf_size(repeated.f));
	assert_true(tlbf_size(repeated.f) <= 1.05 * tlbf_size(distinct.f));
	assert_int_equal(repeated.f->inserted, 5 * distinct.f->inserted);
	tf_free(&distinct);
	tf_free(&repeated);
}

/* An insertion with an older time counts as one at the newest time. */
static void
test_older_times_are_clamped(void **state)
{
	TestFilter	t;

	tf_create(&t, SPAN, 0.01, 1000);
	tf_add(&t, 1, START + 10 * SECOND);
	tf_add(&t, 2, START);
	assert_int_equal(t.f->newest, START + 10 * SECOND);
	assert_int_equal(tlbf_slices(t.f)[0].updated_at, START + 10 * SECOND);
	/* key 2 lives until the clamped time plus the span */
	assert_true(tf_has(&t, 2, START + 10 * SECOND + SPAN));
	tf_free(&t);
}

/*
 * Feed 'seconds' of a bursty stream with times in random order within each
 * second; keys from 'first' on, 'stride' apart.
 */
static void
feed_bursty(TestFilter *t, uint64_t first, uint64_t stride, int seconds)
{
	TlbfTime	at = START;
	uint64_t	rng = 7;

	for (int s = 0; s < seconds; s++)
	{
		int			n = (s % 50 < 5) ? 2000 : 100;

		for (int i = 0; i < n; i++)
		{
			at = START + s * SECOND + (int64_t) (rng_uniform(&rng) * SECOND);
			tf_add(t, first, at);
			first += stride;
		}
	}
}

/*
 * Retiring at time T changes no answer for a query at T or later, present
 * or absent key, whatever T is relative to the newest insertion.
 */
static void
test_retire_keeps_answers(void **state)
{
	TestFilter	t;
	TlbfTime	newest;
	const int64_t offsets[] = {0, SPAN / 3, SPAN - 1, SPAN, SPAN + 1, 3 * SPAN};

	tf_create(&t, SPAN, 0.01, 1000);
	feed_bursty(&t, 0, 1, 200);
	newest = t.f->newest;
	for (size_t o = 0; o < sizeof(offsets) / sizeof(offsets[0]); o++)
	{
		TlbfTime	retire_at = newest + offsets[o];
		size_t		size = tlbf_size(t.f);
		Tlbf	   *copy = malloc(size);
		long		dropped;

		memcpy(copy, t.f, size);
		tlbf_drop_expired(copy, retire_at);
		assert_valid(copy, "a retired filter");
		dropped = (long) t.f->nslices - copy->nslices;
		assert_true(offsets[o] <= SPAN || copy->nslices == 0);
		for (uint64_t key = 0; key < 60000; key += 3)
		{
			uint64_t	probe = key % 2 ? key : ABSENT_BASE + key;

			for (int64_t later = 0; later <= SPAN; later += SPAN / 4)
				assert_int_equal(tlbf_query(t.f, key_hash(probe), retire_at + later, SPAN),
								 tlbf_query(copy, key_hash(probe), retire_at + later, SPAN));
		}
		print_message("retire at newest + %.0f s: %ld of %u slices dropped\n",
					  (double) offsets[o] / SECOND, dropped, t.f->nslices);
		free(copy);
	}
	tf_free(&t);
}

/* The size cap: the filter stays under it, and says when it lost keys. */
static void
test_size_cap(void **state)
{
	TestFilter	t;
	TlbfTime	at = START;
	size_t		largest = 0;

	tf_create(&t, SPAN, 0.01, 6000);
	t.memory.max_bytes = 20000;
	for (int i = 0; i < 200000; i++)
	{
		at += 1000;				/* 60000 per span: ten times the cap's room */
		tf_add(&t, (uint64_t) i, at);
		if (tlbf_size(t.f) > largest)
			largest = tlbf_size(t.f);
	}
	assert_true(largest <= 20000);
	assert_true(t.f->truncated > 0);
	tf_free(&t);

	/* too small for even the first k slices: refused, filter unchanged */
	tf_create(&t, SPAN, 0.01, 6000);
	t.memory.max_bytes = sizeof(Tlbf) + 100;
	assert_int_equal(tlbf_insert(&t.f, &t.memory, key_hash(1), START), TLBF_OVER_LIMIT);
	assert_int_equal(t.f->nslices, 0);
	assert_int_equal(t.f->inserted, 0);
	tf_free(&t);

	/* a fixed region that cannot grow */
	tf_create(&t, SPAN, 0.01, 6000);
	t.memory.resize = NULL;
	assert_int_equal(tlbf_insert(&t.f, &t.memory, key_hash(1), START), TLBF_OUT_OF_MEMORY);
	tf_free(&t);
}

/*
 * A burst at one instant (a transaction's keys, all at its start) under a
 * fixed size cap, as a shared filter's region.  The filter holds its
 * capacity's worth of keys at one instant, without dropping a live slice; when it is full and may drop none (keep_live), an insertion
 * fails and changes nothing.
 */
static void
test_burst_under_cap(void **state)
{
	TestFilter	t;
	uint64_t	key = 0;
	uint64_t	held;
	long		absent = 0;
	TlbfStatus	status = TLBF_OK;

	tf_create(&t, SPAN, 0.001, 200000);
	t.memory.max_bytes = 3000000;	/* about what a shared filter's region gets */
	t.memory.keep_live = true;
	for (; key < 200000; key++)
		assert_int_equal(tlbf_insert(&t.f, &t.memory, key_hash(key), START), TLBF_OK);
	while (status == TLBF_OK && key < 10000000)
	{
		status = tlbf_insert(&t.f, &t.memory, key_hash(key), START);
		if (status == TLBF_OK)
			key++;
	}
	held = key;
	print_message("one instant, a cap of 3,000,000 bytes: %lu keys held, %zu bytes, %u slices\n",
				  (unsigned long) held, tlbf_size(t.f), t.f->nslices);
	assert_int_equal(status, TLBF_OVER_LIMIT);
	assert_true(held >= 200000);
	assert_true(tlbf_size(t.f) <= 3000000);
	assert_int_equal(t.f->truncated, 0);
	assert_int_equal(t.f->inserted, held);
	for (uint64_t k = 0; k < held; k++)
		absent += !tlbf_query(t.f, key_hash(k), START, SPAN);
	assert_int_equal(absent, 0);

	/* allowed to drop live slices, it takes every key, and says it dropped */
	t.memory.keep_live = false;
	for (int i = 0; i < 1000000 && t.f->truncated == 0; i++)
		assert_int_equal(tlbf_insert(&t.f, &t.memory, key_hash(key++), START), TLBF_OK);
	assert_true(t.f->truncated > 0);
	assert_true(tlbf_size(t.f) <= 3000000);
	tf_free(&t);
}

/*
 * New keys much faster than the capacity said, early in a long span (a
 * dedup trigger's first seconds: every key is new), some dated a little
 * before others already added (a shared filter folds keys as their
 * transactions commit, not as they started), under a fixed region that
 * may drop no live slice: a key dated before its generation began reads as
 * a burst at one instant, and grows the next slice as much as growth
 * allows.  The filter still holds its capacity before it is full, and
 * misses none of the keys it took.
 */
static void
test_fast_start_under_cap(void **state)
{
	TestFilter	t;
	int64_t		hour = INT64_C(3600000000);
	uint64_t	key = 0;
	long		absent = 0;
	TlbfTime	at = START;
	TlbfStatus	status = TLBF_OK;

	tf_create(&t, hour, 0.001, 200000);
	t.memory.max_bytes = 2940888;	/* the region tlbf_shared_create gives it */
	t.memory.keep_live = true;
	while (status == TLBF_OK && key < 2000000)
	{
		/*
		 * 10,000 new keys a second; one in seven dated 20 ms earlier, as a
		 * transaction that started before others but committed after them
		 * enters a shared filter's bits (keys are folded as they commit)
		 */
		at += 100;
		status = tlbf_insert(&t.f, &t.memory, key_hash(key),
							 key % 7 == 0 ? at - 20000 : at);
		if (status == TLBF_OK)
			key++;
	}
	print_message("10,000 new keys a second into a span of an hour, a region of 2,940,888 bytes: "
				  "%lu keys held, %u slices\n", (unsigned long) key, t.f->nslices);
	assert_true(key >= 200000);
	assert_true(tlbf_size(t.f) <= 2940888);
	assert_int_equal(t.f->truncated, 0);
	for (uint64_t k = 0; k < key; k++)
		absent += !tlbf_query(t.f, key_hash(k), at, hour);
	assert_int_equal(absent, 0);
	tf_free(&t);
}

static Tlbf *
merged(const Tlbf *a, const Tlbf *b)
{
	const Tlbf *inputs[] = {a, b};
	Tlbf	   *out = malloc(tlbf_merge_bytes(inputs, 2));
	TlbfProblem problem;

	assert_null(tlbf_merge_mismatch(a, b));
	tlbf_merge(out, inputs, 2);
	if (!tlbf_validate(out, tlbf_size(out), &problem))
		fail_msg("invalid union: %s", problem.message);
	return out;
}

/*
 * The union of filters built from the two halves of one stream (keys
 * split by parity, both over the same time) finds every key of either.
 */
static void
test_union_no_false_negatives(void **state)
{
	TestFilter	even,
				odd;
	TlbfTime	newest;
	Tlbf	   *both;
	uint64_t	absent = ABSENT_BASE;
	long		hits = 0;

	tf_create(&even, SPAN, 0.01, 1000);
	tf_create(&odd, SPAN, 0.01, 1000);
	feed_bursty(&even, 0, 2, 200);
	feed_bursty(&odd, 1, 2, 200);
	newest = even.f->newest > odd.f->newest ? even.f->newest : odd.f->newest;
	both = merged(even.f, odd.f);
	assert_int_equal(both->inserted, even.f->inserted + odd.f->inserted);

	for (uint64_t key = 0; key < 2 * even.f->inserted; key++)
	{
		const Tlbf *half = key % 2 ? odd.f : even.f;

		/* whatever a half finds at any time, the union finds */
		for (int64_t later = -SPAN; later <= SPAN; later += SPAN / 2)
			if (tlbf_query(half, key_hash(key), newest + later, SPAN))
				assert_true(tlbf_query(both, key_hash(key), newest + later, SPAN));
	}
	for (int i = 0; i < 200000; i++)
		hits += tlbf_query(both, key_hash(absent++), newest, SPAN);
	print_message("union of two halves: false-positive rate %.5f\n", hits / 200000.0);
	free(both);
	tf_free(&even);
	tf_free(&odd);
}

/* The union keeps working: new keys go in, nothing old is lost. */
static void
test_union_then_insert(void **state)
{
	TestFilter	a,
				b,
				u;
	TlbfTime	at;
	KeyLog		log = {0};

	tf_create(&a, SPAN, 0.01, 1000);
	tf_create_kl(&b, SPAN, 0.001, 1000, 13, 23);	/* a different k */
	for (int i = 0; i < 20000; i++)
	{
		at = START + i * 2000;
		tf_add(i % 3 ? &a : &b, (uint64_t) i, at);
		keylog_add(&log, (uint64_t) i, at);
	}
	u.f = merged(a.f, b.f);
	u.memory = a.memory;
	u.memory.allocated = tlbf_size(u.f);
	assert_int_equal(u.f->k, 10);
	assert_int_equal(keylog_false_negatives(&log, &u, at), 0);
	for (int i = 20000; i < 60000; i++)
	{
		at = START + i * 2000;
		tf_add(&u, (uint64_t) i, at);
		keylog_add(&log, (uint64_t) i, at);
		if (i % 1000 == 0)
			assert_int_equal(keylog_false_negatives(&log, &u, at), 0);
	}
	keylog_free(&log);
	tf_free(&a);
	tf_free(&b);
	tf_free(&u);
}

/*
 * Many inputs at once, the same one twice, and an empty one: every key of
 * every input is still found, and the newest input comes first.
 */
static void
test_union_of_many(void **state)
{
	TestFilter	parts[4];
	const Tlbf *inputs[6];
	Tlbf	   *out;
	TlbfProblem problem;

	for (int p = 0; p < 4; p++)
	{
		tf_create(&parts[p], SPAN, 0.01, 500);
		for (int i = 0; i < 3000 * p; i++)
			tf_add(&parts[p], (uint64_t) (p * 100000 + i), START + (p + 1) * 1000 * i);
	}
	inputs[0] = parts[1].f;
	inputs[1] = parts[0].f;		/* empty */
	inputs[2] = parts[3].f;		/* the newest */
	inputs[3] = parts[2].f;
	inputs[4] = parts[1].f;		/* again */
	inputs[5] = parts[3].f;		/* again */
	out = malloc(tlbf_merge_bytes(inputs, 6));
	tlbf_merge(out, inputs, 6);
	if (!tlbf_validate(out, tlbf_size(out), &problem))
		fail_msg("invalid union: %s", problem.message);
	assert_int_equal(out->newest, parts[3].f->newest);
	assert_memory_equal(tlbf_slices(out), tlbf_slices(parts[3].f), sizeof(TlbfSlice));
	for (int p = 1; p < 4; p++)
		for (int i = 0; i < 3000 * p; i++)
		{
			TlbfTime	added = START + (p + 1) * 1000 * i;

			if (tf_has(&parts[p], (uint64_t) (p * 100000 + i), added + SPAN))
				assert_true(tlbf_query(out, key_hash((uint64_t) (p * 100000 + i)),
									   added + SPAN, SPAN));
		}
	free(out);
	for (int p = 0; p < 4; p++)
		tf_free(&parts[p]);
}

/*
 * The false-positive rate of the union of two filters built from the two
 * halves of one steady stream, against the target (1%), over 1M absent
 * keys at moments spread over a span: halves by key (as shards hold them)
 * and halves by time (yesterday's and today's filter).
 */
static void
test_union_false_positives(void **state)
{
	TestFilter	by_key[2],
				by_time[2],
				whole;
	TlbfTime	at = START;
	uint64_t	absent = ABSENT_BASE;
	double		sum_key = 0,
				sum_time = 0,
				sum_whole = 0;
	const long	per_span = 60000;
	int			moments = 0;

	for (int h = 0; h < 2; h++)
	{
		tf_create(&by_key[h], SPAN, 0.01, per_span / 2);
		tf_create(&by_time[h], SPAN, 0.01, per_span);
	}
	tf_create(&whole, SPAN, 0.01, per_span);
	for (long i = 0; i < 4 * per_span; i++)
	{
		at += SPAN / per_span;
		tf_add(&by_key[i % 2], (uint64_t) i, at);
		tf_add(&by_time[i < 7 * per_span / 2 ? 0 : 1], (uint64_t) i, at);
		tf_add(&whole, (uint64_t) i, at);
		if (i >= 7 * per_span / 2 && i % (per_span / 40) == 0)
		{
			const Tlbf *keys[] = {by_key[0].f, by_key[1].f};
			const Tlbf *times[] = {by_time[0].f, by_time[1].f};
			Tlbf	   *u_key = malloc(tlbf_merge_bytes(keys, 2));
			Tlbf	   *u_time = malloc(tlbf_merge_bytes(times, 2));
			long		hits_key = 0,
						hits_time = 0,
						hits_whole = 0;

			tlbf_merge(u_key, keys, 2);
			tlbf_merge(u_time, times, 2);
			assert_valid(u_key, "a union");
			assert_valid(u_time, "a union");
			for (int q = 0; q < 50000; q++)
			{
				TlbfHash	h = key_hash(absent++);

				hits_key += tlbf_query(u_key, h, at, SPAN);
				hits_time += tlbf_query(u_time, h, at, SPAN);
				hits_whole += tlbf_query(whole.f, h, at, SPAN);
			}
			sum_key += hits_key / 50000.0;
			sum_time += hits_time / 50000.0;
			sum_whole += hits_whole / 50000.0;
			moments++;
			free(u_key);
			free(u_time);
		}
	}
	print_message("union false-positive rate (target 1%%): halves by key %.4f (%.2fx), "
				  "halves by time %.4f (%.2fx), one filter %.4f (%.2fx)\n",
				  sum_key / moments, sum_key / moments / 0.01,
				  sum_time / moments, sum_time / moments / 0.01,
				  sum_whole / moments, sum_whole / moments / 0.01);
	/* about the sum of the halves' rates: twice the target, not more */
	assert_true(moments * 50000 >= 1000000);
	assert_true(sum_key / moments <= 2.5 * 0.01);
	assert_true(sum_time / moments <= 2.5 * 0.01);
	for (int h = 0; h < 2; h++)
	{
		tf_free(&by_key[h]);
		tf_free(&by_time[h]);
	}
	tf_free(&whole);
}

/*
 * Filters that hash differently or forget at different times cannot merge
 * (an empty filter's seed does not count).
 */
static void
test_union_mismatch(void **state)
{
	TestFilter	a,
				b;

	tf_create(&a, SPAN, 0.01, 1000);
	tf_create(&b, 2 * SPAN, 0.01, 1000);
	assert_string_equal(tlbf_merge_mismatch(a.f, b.f), "span");
	b.f->span = SPAN;
	b.f->seed = 99;
	/* a filter that never took a key hashed none: any seed merges */
	assert_null(tlbf_merge_mismatch(a.f, b.f));
	tf_add(&a, 1, START);
	assert_null(tlbf_merge_mismatch(a.f, b.f));
	tf_add(&b, 1, START);
	assert_string_equal(tlbf_merge_mismatch(a.f, b.f), "hash seed");
	tf_free(&a);
	tf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slices_stay_within_capacity),
		cmocka_unit_test(test_growth_and_return),
		cmocka_unit_test(test_burst_then_slow),
		cmocka_unit_test(test_repeats_do_not_grow_the_filter),
		cmocka_unit_test(test_older_times_are_clamped),
		cmocka_unit_test(test_retire_keeps_answers),
		cmocka_unit_test(test_size_cap),
		cmocka_unit_test(test_burst_under_cap),
		cmocka_unit_test(test_fast_start_under_cap),
		cmocka_unit_test(test_union_no_false_negatives),
		cmocka_unit_test(test_union_then_insert),
		cmocka_unit_test(test_union_of_many),
		cmocka_unit_test(test_union_false_positives),
		cmocka_unit_test(test_union_mismatch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
