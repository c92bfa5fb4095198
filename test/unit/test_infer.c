/*
 * test_infer.c
 *	  When was a key last seen, and how sure is a "yes" (infer.c).
 */
#include <math.h>

#include "harness.h"

static bool *
scratch_for(const Tlbf *f)
{
	bool	   *scratch = malloc(2 * (size_t) f->nslices + 1);

	assert_non_null(scratch);
	return scratch;
}

static bool
last_seen(const TestFilter *t, uint64_t key, TlbfTime at, TlbfTime *lower, TlbfTime *upper)
{
	bool	   *scratch = scratch_for(t->f);
	bool		found = tlbf_last_seen(t->f, key_hash(key), at, t->f->span, scratch,
									   lower, upper);

	free(scratch);
	return found;
}

static double
posterior(const TestFilter *t, uint64_t key, TlbfTime at, double prior)
{
	bool	   *scratch = scratch_for(t->f);
	double		p = tlbf_posterior(t->f, key_hash(key), at, t->f->span, prior, scratch);

	free(scratch);
	return p;
}

/* An empty filter: nothing was seen, and "no" is certain. */
static void
test_empty_filter(void **unused)
{
	TestFilter	t;
	TlbfTime	lower,
				upper;

	tf_create(&t, HOUR, 0.01, 1000);
	assert_false(last_seen(&t, 1, 0, &lower, &upper));
	assert_true(posterior(&t, 1, 0, 0.5) == 0.0);
	tf_free(&t);
}

/*
 * One key in a fresh filter: its range holds the time it was added, and a
 * "yes" from nearly empty slices is near certain.
 */
static void
test_one_key(void **unused)
{
	TestFilter	t;
	TlbfTime	lower,
				upper;
	TlbfTime	added = 10 * MINUTE;

	tf_create(&t, HOUR, 0.01, 1000);
	tf_add(&t, 42, added);
	assert_true(last_seen(&t, 42, added + MINUTE, &lower, &upper));
	assert_true(upper >= added);
	assert_true(lower == TLBF_NEVER || lower <= added);
	assert_true(posterior(&t, 42, added + MINUTE, 0.5) > 0.999);
	assert_true(posterior(&t, 42, added + MINUTE, 0.0) == 0.0);
	assert_true(posterior(&t, 42, added + MINUTE, 1.0) == 1.0);
	/* an absent key stays certainly absent, whatever the prior */
	assert_true(posterior(&t, ABSENT_BASE, added + MINUTE, 1.0) == 0.0);
	/* past the span, the key's slices are no longer read */
	assert_false(last_seen(&t, 42, added + HOUR + MINUTE, &lower, &upper));
	tf_free(&t);
}

/*
 * A steady stream, 1,000 keys a minute over three spans, keys repeating:
 * for nearly every key added within the span, the range holds its last
 * insertion time (a false-positive run newer than its own can move it),
 * nearly every range is bounded below, and ranges are narrow.
 */
static void
test_last_seen_holds_the_time(void **unused)
{
	TestFilter	t;
	uint64_t	rng = 7;
	const long	per_minute = 1000;
	const int	minutes = 180;
	TlbfTime   *last_added = calloc(50000, sizeof(TlbfTime));
	TlbfTime	end = (TlbfTime) minutes * MINUTE;
	long		checked = 0,
				held = 0,
				bounded = 0;
	double		width = 0;

	tf_create(&t, HOUR, 0.01, 1000);
	for (long i = 0; i < per_minute * minutes; i++)
	{
		uint64_t	key = rng_next(&rng) % 50000;
		TlbfTime	at = i * (MINUTE / per_minute);

		tf_add(&t, key, at);
		last_added[key] = at;
	}
	for (uint64_t key = 0; key < 50000; key++)
	{
		TlbfTime	lower,
					upper;

		if (last_added[key] == 0 || last_added[key] < end - HOUR)
			continue;
		checked++;
		assert_true(last_seen(&t, key, end, &lower, &upper));
		if (last_added[key] <= upper && (lower == TLBF_NEVER || lower <= last_added[key]))
			held++;
		if (lower != TLBF_NEVER)
		{
			bounded++;
			width += (double) (upper - lower);
		}
	}
	assert_true(checked > 20000);
	assert_true((double) held / checked >= 0.98);
	assert_true((double) bounded / checked >= 0.9);
	/*
	 * A generation lasts about span / l (l = 25 at 1%: 2.4 minutes); a
	 * range spans the key's own generations and the neighbours that hold
	 * its bit by chance: a few generations, a small part of the span.
	 */
	assert_true(width / bounded < 0.25 * HOUR);
	free(last_added);
	tf_free(&t);
}

/*
 * The posterior is a probability, and with the prior the query mix really
 * has, it is calibrated: over a steady stream at the filter's planned rate
 * (1% target), queried for every key added within the span and for 20
 * times as many keys never added, the mean posterior of the "yes" answers
 * is within 0.05 of the fraction of them that are true, and false
 * positives get a lower posterior than real keys.
 */
static void
test_posterior_is_calibrated(void **unused)
{
	TestFilter	t;
	uint64_t	rng = 11;
	const long	per_minute = 2000;
	const int	minutes = 120;
	TlbfTime   *last_added = calloc(200000, sizeof(TlbfTime));
	TlbfTime	end = (TlbfTime) minutes * MINUTE;
	long		in_window = 0;
	long		yes = 0,
				true_yes = 0;
	double		sum_yes = 0,
				sum_true = 0,
				sum_false = 0;
	double		prior;
	uint64_t	absent;

	tf_create(&t, HOUR, 0.01, 1000);
	for (long i = 0; i < per_minute * minutes; i++)
	{
		uint64_t	key = rng_next(&rng) % 200000;
		TlbfTime	at = i * (MINUTE / per_minute);

		tf_add(&t, key, at);
		last_added[key] = at + 1;	/* 0: never */
	}
	for (uint64_t key = 0; key < 200000; key++)
		in_window += last_added[key] != 0 && last_added[key] - 1 >= end - HOUR;
	prior = (double) in_window / (21.0 * in_window);
	for (uint64_t key = 0; key < 200000; key++)
	{
		bool		truly = last_added[key] != 0 && last_added[key] - 1 >= end - HOUR;
		double		p;

		if (!truly)
			continue;
		p = posterior(&t, key, end, prior);
		assert_true(p > 0.0 && p <= 1.0);
		yes++;
		true_yes++;
		sum_yes += p;
		sum_true += p;
	}
	absent = ABSENT_BASE;
	for (long n = 0; n < 20 * in_window; n++)
	{
		double		p = posterior(&t, absent++, end, prior);

		assert_true(p >= 0.0 && p <= 1.0);
		if (p > 0)
		{
			yes++;
			sum_yes += p;
			sum_false += p;
		}
	}
	assert_true(yes > true_yes);	/* some false positives to judge */
	assert_true(fabs(sum_yes / yes - (double) true_yes / yes) <= 0.05);
	assert_true(sum_false / (yes - true_yes) < sum_true / true_yes);
	free(last_added);
	tf_free(&t);
}

/*
 * The same false-positive key is less sure as the slices it is found in
 * fill up: the posterior of a "yes" falls as keys are added.
 */
static void
test_posterior_falls_as_slices_fill(void **unused)
{
	TestFilter	t;
	double		first;
	int			found = 0;

	tf_create(&t, HOUR, 0.01, 100000);
	for (uint64_t key = 0; key < 300; key++)
		tf_add(&t, key, MINUTE);
	first = posterior(&t, 7, MINUTE, 0.01);
	for (uint64_t key = 300; key < 2100; key += 300)
	{
		double		next;

		for (uint64_t more = key; more < key + 300; more++)
			tf_add(&t, more, MINUTE);
		next = posterior(&t, 7, MINUTE, 0.01);
		assert_true(next <= first);
		first = next;
		found++;
	}
	assert_true(found == 6);
	assert_true(first < 1.0);
	tf_free(&t);
}

/*
 * Keys that left the window shortly before still have bits in live slices
 * (the oldest live run was written by a generation that began before the
 * window, and the generations before it have their newest bits there): the
 * posterior must not take them for keys in the window.  Distinct keys, 1,000
 * a minute for three spans at the 1% target, queried for every key added
 * within the span, every key added within the span before it and as many
 * never-added keys as both, at the mix's base rate: the mean posterior of
 * the "yes" answers is within 0.02 of the fraction of them that are true,
 * and the expired keys' "yes" answers average well below the live keys'.
 */
static void
test_posterior_counts_the_slack(void **unused)
{
	TestFilter	t;
	const long	per_minute = 1000;
	const long	minutes = 180;
	TlbfTime	end = (TlbfTime) minutes * MINUTE;
	long		n = per_minute * minutes;
	long		live = 0,
				yes = 0,
				true_yes = 0,
				expired_yes = 0;
	double		sum_yes = 0,
				sum_live = 0,
				sum_expired = 0,
				prior;
	uint64_t	absent = ABSENT_BASE;

	tf_create(&t, HOUR, 0.01, 60000);
	for (long i = 0; i < n; i++)
		tf_add(&t, (uint64_t) i, (i + 1) * (MINUTE / per_minute));
	/* key i was added at (i + 1) * 60 ms: live from end - HOUR on */
	live = n - (end - HOUR) / (MINUTE / per_minute) + 1;
	prior = 1.0 / 4.0;
	for (long i = n - 2 * live; i < n; i++)
	{
		bool		truly = i >= n - live;
		double		p = posterior(&t, (uint64_t) i, end, prior);

		if (truly)
			assert_true(p > 0.0);
		if (p <= 0.0)
			continue;
		yes++;
		sum_yes += p;
		if (truly)
		{
			true_yes++;
			sum_live += p;
		}
		else
		{
			expired_yes++;
			sum_expired += p;
		}
	}
	for (long i = 0; i < 2 * live; i++)
	{
		double		p = posterior(&t, absent++, end, prior);

		if (p > 0.0)
		{
			yes++;
			sum_yes += p;
		}
	}
	assert_true(expired_yes > 100);
	assert_true(fabs(sum_yes / yes - (double) true_yes / yes) <= 0.02);
	assert_true(sum_expired / expired_yes < 0.75 * (sum_live / true_yes));
	tf_free(&t);
}

/* A lower prior gives a lower posterior for the same bits. */
static void
test_prior_orders_posteriors(void **unused)
{
	TestFilter	t;

	tf_create(&t, HOUR, 0.1, 1000);
	for (uint64_t key = 0; key < 5000; key++)
		tf_add(&t, key, MINUTE);
	for (uint64_t key = 0; key < 100; key++)
	{
		double		low = posterior(&t, key, MINUTE, 0.01);
		double		mid = posterior(&t, key, MINUTE, 0.5);
		double		high = posterior(&t, key, MINUTE, 0.99);

		assert_true(low <= mid && mid <= high);
		assert_true(low > 0);
	}
	tf_free(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_filter),
		cmocka_unit_test(test_one_key),
		cmocka_unit_test(test_last_seen_holds_the_time),
		cmocka_unit_test(test_posterior_is_calibrated),
		cmocka_unit_test(test_posterior_counts_the_slack),
		cmocka_unit_test(test_posterior_falls_as_slices_fill),
		cmocka_unit_test(test_prior_orders_posteriors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
