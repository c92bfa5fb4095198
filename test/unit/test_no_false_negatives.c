/*
 * test_no_false_negatives.c
 *	  The product's promise: every key added within the span is found, at
 *	  every query time up to its time plus the span, whatever the stream
 *	  looks like.  Each stream below is checked every few hundred
 *	  insertions, for every key still within the span.  Every state the
 *	  core produces must be valid: tf_add validates after each insertion,
 *	  and the checkpoints after each retirement.
 */
#include <math.h>

#include "harness.h"

#define START	INT64_C(757382400000000)	/* 2024-01-01 00:00 UTC */

typedef struct Stream
{
	const char *name;
	double		error_rate;
	int			k;				/* 0: from error_rate */
	int			l;
	uint64_t	capacity;
	int64_t		span;
	long		insertions;
	/* the time of insertion i, given the previous one */
	TlbfTime	(*next_time) (long i, TlbfTime previous, uint64_t *rng);
	bool		retire;			/* also drop expired slices at checkpoints */
	/* the key of insertion i; NULL: i itself, every key once */
	uint64_t	(*key) (long i);
} Stream;

static uint64_t
key_of(const Stream *s, long i)
{
	return s->key ? s->key(i) : (uint64_t) i;
}

static void
check_filter(const TestFilter *t, const KeyLog *log, TlbfTime now)
{
	TlbfProblem problem;

	if (!tlbf_validate(t->f, tlbf_size(t->f), &problem))
		fail_msg("the core produced an invalid filter: %s", problem.message);
	assert_int_equal(keylog_false_negatives(log, t, now), 0);
}

static void
run_stream(const Stream *s)
{
	TestFilter	t;
	KeyLog		log = {0};
	uint64_t	rng = 42;
	TlbfTime	at = START;
	TlbfTime	now = START;
	long		checkpoints = 0;

	tf_create_kl(&t, s->span, s->error_rate, s->capacity, s->k, s->l);
	for (long i = 0; i < s->insertions; i++)
	{
		TlbfTime	previous = at;

		at = s->next_time(i, at, &rng);
		tf_add(&t, key_of(s, i), at);
		keylog_add(&log, key_of(s, i), at);
		if (at > now)
			now = at;
		/* check regularly, and right after every pause */
		if (i % 397 == 0 || i == s->insertions - 1 || at - previous > s->span / 10)
		{
			check_filter(&t, &log, now);
			if (s->retire)
			{
				tlbf_drop_expired(t.f, now);
				check_filter(&t, &log, now);
			}
			keylog_trim(&log, now, s->span);
			checkpoints++;
		}
	}
	assert_true(checkpoints > 10);
	assert_int_equal(t.f->truncated, 0);
	keylog_free(&log);
	tf_free(&t);
}

/* --- time patterns ------------------------------------------------------ */

static TlbfTime
every_10ms(long i, TlbfTime previous, uint64_t *rng)
{
	return previous + 10 * 1000;
}

/* 10 ms apart, but 100 times faster for 2 s every 3 minutes */
static TlbfTime
bursts(long i, TlbfTime previous, uint64_t *rng)
{
	int64_t		phase = (previous - START) % (3 * MINUTE);

	return previous + (phase < 2 * SECOND ? 100 : 10 * 1000);
}

/* 2000 keys at 10 ms, then silence for twice the span (60 s) */
static TlbfTime
idle_gaps(long i, TlbfTime previous, uint64_t *rng)
{
	return previous + (i % 2000 == 1999 ? 2 * MINUTE : 10 * 1000);
}

/* silences around the span: longer, shorter, exactly it, 1 us either side */
static TlbfTime
gaps_near_span(long i, TlbfTime previous, uint64_t *rng)
{
	static const int64_t gaps[] = {61 * SECOND, 59 * SECOND, 60 * SECOND,
	60 * SECOND - 1, 60 * SECOND + 1, 59900 * 1000};

	if (i % 3000 == 2999)
		return previous + gaps[(i / 3000) % 6];
	return previous + 10 * 1000;
}

/* 30,000 keys within 30 ms, then one every 10 ms: 1000 times slower */
static TlbfTime
burst_then_slow(long i, TlbfTime previous, uint64_t *rng)
{
	return previous + (i < 30000 ? 1 : 10 * 1000);
}

/* 500 keys at 10 ms, then 10 s of silence: shorter than the span, longer
 * than a generation */
static TlbfTime
stop_and_go(long i, TlbfTime previous, uint64_t *rng)
{
	return previous + (i % 500 == 499 ? 10 * SECOND : 10 * 1000);
}

/* the rate rises 20-fold over 10 spans, then falls back */
static TlbfTime
slow_ramp(long i, TlbfTime previous, uint64_t *rng)
{
	double		x = (double) (previous - START) / (10 * MINUTE);
	double		rate = x < 1 ? 20 + 380 * x : x < 2 ? 400 - 380 * (x - 1) : 20;

	return previous + (int64_t) (SECOND / rate);
}

/* times jump back by up to half the span, now and then by more than it */
static TlbfTime
out_of_order(long i, TlbfTime previous, uint64_t *rng)
{
	static TlbfTime clock;
	uint64_t	r = rng_next(rng);

	if (i == 0)
		clock = START;
	clock += 10 * 1000;
	if (r % 4 == 0)
		return clock - (int64_t) (rng_uniform(rng) * 30 * SECOND);
	if (r % 97 == 0)
		return clock - 2 * MINUTE;
	return clock;
}

/* every key at the same instant (a transaction's now()) */
static TlbfTime
same_instant(long i, TlbfTime previous, uint64_t *rng)
{
	return START;
}

/* random gaps, exponentially distributed around 20 ms */
static TlbfTime
poisson(long i, TlbfTime previous, uint64_t *rng)
{
	return previous + (int64_t) (-20000.0 * log(1.0 - rng_uniform(rng)));
}

/* --- key patterns ------------------------------------------------------- */

static uint64_t
seven_times_in_a_row(long i)
{
	return (uint64_t) (i / 7);
}

static uint64_t
three_times_in_a_row(long i)
{
	return (uint64_t) (i / 3);
}

/* every key comes back three times, 1000, 2000 and 3000 insertions later */
static uint64_t
returning(long i)
{
	long		first = i / 4 - (i % 4) * 250;

	return first < 0 ? (uint64_t) (i / 4) : (uint64_t) first;
}

/* --- the streams -------------------------------------------------------- */

#define ONE_MINUTE_SPAN 60 * SECOND

static const Stream streams[] = {
	{"constant rate", 0.01, 0, 0, 6000, ONE_MINUTE_SPAN, 60000, every_10ms, false, NULL},
	{"capacity 10x too small", 0.01, 0, 0, 600, ONE_MINUTE_SPAN, 60000, every_10ms, false, NULL},
	{"capacity 10x too large", 0.01, 0, 0, 60000, ONE_MINUTE_SPAN, 60000, every_10ms, true, NULL},
	{"100x bursts", 0.01, 0, 0, 6000, ONE_MINUTE_SPAN, 120000, bursts, false, NULL},
	{"idle gaps longer than the span", 0.01, 0, 0, 6000, ONE_MINUTE_SPAN, 30000, idle_gaps, true, NULL},
	{"idle gaps near the span", 0.001, 0, 0, 6000, ONE_MINUTE_SPAN, 36000, gaps_near_span, false, NULL},
	{"a burst, then 1000x slower", 0.01, 0, 0, 6000, ONE_MINUTE_SPAN, 80000, burst_then_slow, false, NULL},
	{"stop and go", 0.01, 0, 0, 6000, ONE_MINUTE_SPAN, 40000, stop_and_go, true, NULL},
	{"slow ramp up and down", 0.01, 0, 0, 1200, ONE_MINUTE_SPAN, 150000, slow_ramp, true, NULL},
	{"out-of-order times", 0.01, 0, 0, 6000, ONE_MINUTE_SPAN, 60000, out_of_order, false, NULL},
	{"one instant", 0.01, 0, 0, 1000, ONE_MINUTE_SPAN, 50000, same_instant, false, NULL},
	{"poisson, error 0.1", 0.1, 0, 0, 3000, ONE_MINUTE_SPAN, 40000, poisson, true, NULL},
	{"poisson, error 1e-5", 1e-5, 0, 0, 3000, ONE_MINUTE_SPAN, 40000, poisson, false, NULL},
	{"poisson, k=4 l=3", 0.1, 4, 3, 3000, ONE_MINUTE_SPAN, 40000, poisson, false, NULL},
	{"poisson, k=1 l=1", 0.5, 1, 1, 3000, ONE_MINUTE_SPAN, 40000, poisson, true, NULL},
	{"bursts, k=40 l=1024", 1e-9, 40, 1024, 3000, ONE_MINUTE_SPAN, 30000, bursts, false, NULL},
	{"every key 7 times", 0.01, 0, 0, 6000, ONE_MINUTE_SPAN, 70000, poisson, true, seven_times_in_a_row},
	{"repeats out of order", 0.01, 0, 0, 6000, ONE_MINUTE_SPAN, 70000, out_of_order, false, three_times_in_a_row},
	{"returning keys", 0.01, 0, 0, 6000, ONE_MINUTE_SPAN, 100000, every_10ms, false, returning},
	{"returning keys in bursts", 0.001, 0, 0, 6000, ONE_MINUTE_SPAN, 100000, bursts, true, returning},
};

static void
test_stream(void **state)
{
	run_stream((const Stream *) *state);
}

int
main(void)
{
	struct CMUnitTest tests[sizeof(streams) / sizeof(streams[0])];

	for (size_t i = 0; i < sizeof(streams) / sizeof(streams[0]); i++)
	{
		tests[i].name = streams[i].name;
		tests[i].test_func = test_stream;
		tests[i].setup_func = NULL;
		tests[i].teardown_func = NULL;
		tests[i].initial_state = (void *) &streams[i];
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
