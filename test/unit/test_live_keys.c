/*
 * test_live_keys.c
 *	  How many distinct keys does a filter hold?  tlbf_stats' live_keys,
 *	  and the range [live_keys_low, live_keys_high] it gives with it,
 *	  against the truth: the distinct keys the filter still finds, known
 *	  from the generation each key was last added in.  Fixed seeds,
 *	  explicit times, one filter per stream, checked every few minutes:
 *	  - the stream: 5,000 users, each seen every 6 to 10 minutes,
 *		in a one-hour filter (tlbf_summary said ~23,489 live items): the
 *		estimate within 5% of 5,000 (the old figure is over 4 times that);
 *	  - keys that never come back: within 5%;
 *	  - a mix of both: within 6%;
 *	  - one key, over and over: 1, within a tenth;
 *	  - a union of two such audiences: the keys they share are not seen,
 *		the estimate is the two filters' summed;
 *	  and always low <= estimate <= high, with the truth in [low, high]
 *	  give or take 5% (each bound is itself an estimate).
 *	  The worst errors, over the checks of each stream, are printed; with
 *	  other seeds they stay within 4% for the 5,000-user streams.
 */
#include <math.h>

#include "harness.h"

#define START	INT64_C(757382400000000)	/* 2024-01-01 00:00 UTC */

/* One insertion of a stream. */
typedef struct Event
{
	TlbfTime	at;
	uint64_t	key;
} Event;

typedef struct Stream
{
	Event	   *events;
	size_t		count;
	size_t		allocated;
	uint64_t	keys;			/* keys are 0 .. keys-1 */
} Stream;

static void
stream_add(Stream *s, uint64_t key, TlbfTime at)
{
	if (s->count == s->allocated)
	{
		s->allocated = s->allocated ? 2 * s->allocated : 4096;
		s->events = realloc(s->events, s->allocated * sizeof(Event));
		assert_non_null(s->events);
	}
	s->events[s->count].at = at;
	s->events[s->count].key = key;
	s->count++;
	if (key >= s->keys)
		s->keys = key + 1;
}

/*
 * 'users' keys (from 'first_key' on), each first seen at a random moment
 * of its first period, then again every 0.75 to 1.25 periods, until 'end'.
 */
static void
stream_returning(Stream *s, uint64_t first_key, uint64_t users,
				 int64_t period, TlbfTime end, uint64_t *seed)
{
	for (uint64_t u = 0; u < users; u++)
	{
		TlbfTime	at = START + (TlbfTime) (rng_uniform(seed) * period);

		while (at < end)
		{
			stream_add(s, first_key + u, at);
			at += (TlbfTime) (period * (0.75 + 0.5 * rng_uniform(seed)));
		}
	}
}

/* New keys (from 'first_key' on), one every 'gap', until 'end'. */
static void
stream_distinct(Stream *s, uint64_t first_key, int64_t gap, TlbfTime end)
{
	uint64_t	key = first_key;

	for (TlbfTime at = START; at < end; at += gap)
		stream_add(s, key++, at);
}

static int
event_order(const void *a, const void *b)
{
	const Event *x = a;
	const Event *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/*
 * The truth: which keys the filter holds, known from the generation each
 * key was last added in.  A generation ends when slice 0 changes (a new
 * slice 0 never takes the hash function of the one it replaces), and a
 * key added in generation g (counted back from the current one, 0) is
 * found while slices g .. g+k-1 are all live.  Unlike asking the filter,
 * this counts no false positive.
 */
typedef struct Truth
{
	int64_t    *last_generation;	/* per key, -1: never added */
	int64_t		generation;		/* the current one, counted from 0 */
	uint32_t	slice0_hash;
} Truth;

static void
truth_init(Truth *truth, uint64_t keys)
{
	truth->last_generation = malloc(keys * sizeof(int64_t));
	assert_non_null(truth->last_generation);
	for (uint64_t key = 0; key < keys; key++)
		truth->last_generation[key] = -1;
	truth->generation = 0;
	truth->slice0_hash = UINT32_MAX;
}

/* After adding 'key' to f. */
static void
truth_add(Truth *truth, const Tlbf *f, uint64_t key)
{
	uint32_t	hash = tlbf_slices(f)[0].hash_index;

	if (truth->slice0_hash != UINT32_MAX && hash != truth->slice0_hash)
		truth->generation++;
	truth->slice0_hash = hash;
	truth->last_generation[key] = truth->generation;
}

/* Distinct keys the filter holds at 'at'. */
static double
truth_keys(const Truth *truth, const Tlbf *f, uint64_t keys, TlbfTime at)
{
	const TlbfSlice *s = tlbf_slices(f);
	uint32_t	live = 0;
	long		found = 0;

	while (live < f->nslices && !tlbf_is_expired(&s[live], at, f->span))
		live++;
	if (live < f->k)
		return 0.0;
	for (uint64_t key = 0; key < keys; key++)
		found += truth->last_generation[key] >= 0 &&
			truth->last_generation[key] >= truth->generation - (live - f->k);
	return (double) found;
}

typedef struct Accuracy
{
	double		worst;			/* largest |estimate / truth - 1| */
	double		worst_range;	/* truth outside [low, high]: by how much */
	double		old_ratio;		/* the old figure / truth, at the end */
	double		truth;			/* at the end */
	double		estimate;		/* at the end */
	double		low;
	double		high;
	int			checks;
} Accuracy;

/*
 * Feed the stream (sorted here) to a filter of the given span, and compare
 * the estimate with the truth every 'every' from 'first' to 'end'.
 */
static void
measure(Stream *s, int64_t span, TlbfTime first, int64_t every, TlbfTime end,
		const char *name, Accuracy *acc)
{
	TestFilter	t;
	Truth		truth;
	TlbfTime	check = first;
	size_t		i = 0;

	qsort(s->events, s->count, sizeof(Event), event_order);
	tf_create(&t, span, 0.01, 1000);
	truth_init(&truth, s->keys);
	memset(acc, 0, sizeof(*acc));
	for (; check <= end; check += every)
	{
		TlbfStats	stats;
		double		keys;

		for (; i < s->count && s->events[i].at <= check; i++)
		{
			assert_int_equal(tlbf_insert(&t.f, &t.memory,
										 key_hash(s->events[i].key),
										 s->events[i].at), TLBF_OK);
			truth_add(&truth, t.f, s->events[i].key);
		}
		keys = truth_keys(&truth, t.f, s->keys, check);
		tlbf_stats(t.f, check, &stats);
		assert_true(keys > 0);
		assert_true(stats.live_keys_low <= stats.live_keys);
		assert_true(stats.live_keys <= stats.live_keys_high);
		acc->worst = fmax(acc->worst, fabs(stats.live_keys / keys - 1.0));
		acc->worst_range = fmax(acc->worst_range,
								fmax(stats.live_keys_low / keys - 1.0,
									 1.0 - stats.live_keys_high / keys));
		acc->truth = keys;
		acc->estimate = stats.live_keys;
		acc->low = stats.live_keys_low;
		acc->high = stats.live_keys_high;
		acc->old_ratio = stats.live_items / keys;
		acc->checks++;
	}
	print_message("%s: %d checks, worst error %.1f%%, truth outside the range by "
				  "<= %.1f%%; at the end %.0f keys, estimate %.0f in [%.0f, %.0f], "
				  "old figure %.2fx\n",
				  name, acc->checks, 100 * acc->worst, 100 * fmax(acc->worst_range, 0.0),
				  acc->truth, acc->estimate, acc->low, acc->high, acc->old_ratio);
	free(truth.last_generation);
	tf_free(&t);
	free(s->events);
	memset(s, 0, sizeof(*s));
}

/*
 * The issue: one hour of 5,000 users, each seen about every 8 minutes,
 * summed to ~23,489 "live items".  Over three hours, checked every 5
 * minutes after the first hour.
 */
static void
test_returning_audience(void **state)
{
	Stream		s = {0};
	uint64_t	seed = 8;
	Accuracy	acc;

	stream_returning(&s, 0, 5000, 8 * MINUTE, START + 3 * HOUR, &seed);
	measure(&s, HOUR, START + HOUR, 5 * MINUTE, START + 3 * HOUR,
			"5,000 users every ~8 minutes, 1 hour", &acc);
	assert_true(acc.checks >= 20);
	assert_true(acc.worst <= 0.05);
	assert_true(acc.worst_range <= 0.05);
	assert_true(acc.old_ratio > 4.0);	/* what the issue saw */
}

/* The first hour only, the very filter. */
static void
test_returning_audience_first_hour(void **state)
{
	Stream		s = {0};
	uint64_t	seed = 1;
	Accuracy	acc;

	stream_returning(&s, 0, 5000, 8 * MINUTE, START + HOUR, &seed);
	measure(&s, HOUR, START + 10 * MINUTE, 5 * MINUTE, START + HOUR,
			"5,000 users every ~8 minutes, first hour", &acc);
	assert_true(acc.checks >= 11);
	assert_true(acc.worst <= 0.05);
	assert_true(acc.worst_range <= 0.05);
	assert_true(acc.old_ratio > 4.0);
}

/* 20 new keys a second, none ever again, in a 10-minute filter. */
static void
test_distinct_keys(void **state)
{
	Stream		s = {0};
	Accuracy	acc;

	stream_distinct(&s, 0, SECOND / 20, START + 40 * MINUTE);
	measure(&s, 10 * MINUTE, START + 10 * MINUTE, MINUTE, START + 40 * MINUTE,
			"20 new keys a second, 10 minutes", &acc);
	assert_true(acc.checks >= 25);
	assert_true(acc.worst <= 0.05);
	assert_true(acc.worst_range <= 0.05);
}

/* 2,000 users every ~5 minutes and 5 new keys a second, 30 minutes. */
static void
test_mixed(void **state)
{
	Stream		s = {0};
	uint64_t	seed = 5;
	Accuracy	acc;

	stream_returning(&s, 0, 2000, 5 * MINUTE, START + 2 * HOUR, &seed);
	stream_distinct(&s, 2000, SECOND / 5, START + 2 * HOUR);
	measure(&s, 30 * MINUTE, START + 30 * MINUTE, 5 * MINUTE, START + 2 * HOUR,
			"2,000 users every ~5 minutes and 5 new keys a second, 30 minutes", &acc);
	assert_true(acc.checks >= 15);
	assert_true(acc.worst <= 0.06);
	assert_true(acc.worst_range <= 0.05);
}

/* One key, every second, in a 10-minute filter. */
static void
test_one_hot_key(void **state)
{
	Stream		s = {0};
	Accuracy	acc;

	for (TlbfTime at = START; at < START + 40 * MINUTE; at += SECOND)
		stream_add(&s, 0, at);
	measure(&s, 10 * MINUTE, START + 10 * MINUTE, MINUTE, START + 40 * MINUTE,
			"one key every second, 10 minutes", &acc);
	assert_true(acc.checks >= 25);
	assert_true(acc.worst <= 0.1);
	assert_true(acc.worst_range <= 0.05);
}

/* A filter of the stream's events, in time order. */
static void
feed_stream(TestFilter *t, Stream *s)
{
	qsort(s->events, s->count, sizeof(Event), event_order);
	for (size_t i = 0; i < s->count; i++)
		tf_add(t, s->events[i].key, s->events[i].at);
	free(s->events);
	memset(s, 0, sizeof(*s));
}

/*
 * The union of two filters of 2,000 users each, 1,000 of them in both: a
 * union lists both filters' slices one after the other.  Its chain of
 * blocks runs through both, but meets the second filter's slices at ones
 * of another hash function than its own, so what the two share goes
 * unseen: the estimate is each filter's, summed, and the range still holds
 * the truth.
 */
static void
test_union(void **state)
{
	TestFilter	a;
	TestFilter	b;
	Stream		s = {0};
	uint64_t	seed = 2;
	const Tlbf *inputs[2];
	Tlbf	   *u;
	TlbfStats	stats;
	double		sum;
	TlbfTime	end = START + 2 * HOUR;

	tf_create(&a, HOUR, 0.01, 1000);
	tf_create(&b, HOUR, 0.01, 1000);
	stream_returning(&s, 0, 2000, 8 * MINUTE, end, &seed);
	feed_stream(&a, &s);
	stream_returning(&s, 1000, 2000, 8 * MINUTE, end, &seed);
	feed_stream(&b, &s);
	inputs[0] = a.f;
	inputs[1] = b.f;
	u = malloc(tlbf_merge_bytes(inputs, 2));
	assert_non_null(u);
	tlbf_merge(u, inputs, 2);
	assert_valid(u, "a union");

	tlbf_stats(a.f, end, &stats);
	assert_true(fabs(stats.live_keys / 2000 - 1.0) <= 0.08);
	sum = stats.live_keys;
	tlbf_stats(b.f, end, &stats);
	assert_true(fabs(stats.live_keys / 2000 - 1.0) <= 0.08);
	sum += stats.live_keys;
	tlbf_stats(u, end, &stats);
	print_message("union of 3,000 keys: estimate %.0f in [%.0f, %.0f], the inputs' sum %.0f\n",
				  stats.live_keys, stats.live_keys_low, stats.live_keys_high, sum);
	assert_true(stats.live_keys >= 3000 * 0.95 && stats.live_keys <= sum * 1.05);
	assert_true(stats.live_keys_low <= 3000 * 1.05 && stats.live_keys_high >= 3000 * 0.95);
	free(u);
	tf_free(&a);
	tf_free(&b);
}

/* Nothing added, or everything expired: no live keys. */
static void
test_empty(void **state)
{
	TestFilter	t;
	TlbfStats	stats;

	tf_create(&t, MINUTE, 0.01, 1000);
	tlbf_stats(t.f, START, &stats);
	assert_true(stats.live_keys == 0.0 && stats.live_keys_low == 0.0 &&
				stats.live_keys_high == 0.0);
	for (int i = 0; i < 1000; i++)
		tf_add(&t, (uint64_t) i, START + i * (SECOND / 100));
	tlbf_stats(t.f, START + 10 * SECOND, &stats);
	assert_true(fabs(stats.live_keys / 1000 - 1.0) <= 0.05);
	tlbf_stats(t.f, START + 2 * MINUTE, &stats);
	assert_true(stats.live_keys == 0.0 && stats.live_keys_high == 0.0);
	tf_free(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_returning_audience),
		cmocka_unit_test(test_returning_audience_first_hour),
		cmocka_unit_test(test_distinct_keys),
		cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_one_hot_key),
		cmocka_unit_test(test_union),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
