/*
 * harness.h
 *	  Helpers shared by the core's unit tests: a filter on malloc'd memory,
 *	  integer keys, a seeded random generator and a record of recent keys
 *	  for checking that none is ever lost.
 */
#ifndef TLBF_TEST_HARNESS_H
#define TLBF_TEST_HARNESS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "heap_memory.h"
#include "tlbf.h"

#define SECOND	INT64_C(1000000)
#define MINUTE	(60 * SECOND)
#define HOUR	(60 * MINUTE)

/* absent keys are drawn from a range no stream uses */
#define ABSENT_BASE (UINT64_C(1) << 62)

typedef struct TestFilter
{
	Tlbf	   *f;
	TlbfMemory	memory;
} TestFilter;

static inline TlbfHash
key_hash(uint64_t key)
{
	return tlbf_hash_bytes(&key, sizeof(key), 0);
}

static inline void
tf_create_kl(TestFilter *t, int64_t span, double error_rate, uint64_t capacity,
			 int k, int l)
{
	TlbfParams	p = {span, error_rate, capacity, k, l, 0};
	TlbfProblem problem;

	assert_true(tlbf_check_params(&p, &problem));
	t->f = heap_filter(&p, &t->memory);
}

static inline void
tf_create(TestFilter *t, int64_t span, double error_rate, uint64_t capacity)
{
	tf_create_kl(t, span, error_rate, capacity, 0, 0);
}

static inline void
tf_free(TestFilter *t)
{
	free(t->f);
	t->f = NULL;
}

/* Fails the test unless f is a valid value, naming what made it. */
static inline void
assert_valid(const Tlbf *f, const char *what)
{
	TlbfProblem problem;

	if (!tlbf_validate(f, tlbf_size(f), &problem))
		fail_msg("%s is not a valid value: %s", what, problem.message);
}

/* Every insertion's result must be valid: checked after each one. */
static inline void
tf_add(TestFilter *t, uint64_t key, TlbfTime at)
{
	assert_int_equal(tlbf_insert(&t->f, &t->memory, key_hash(key), at), TLBF_OK);
	assert_valid(t->f, "a filter after tlbf_insert");
}

static inline bool
tf_has(const TestFilter *t, uint64_t key, TlbfTime at)
{
	return tlbf_query(t->f, key_hash(key), at, t->f->span);
}

/* The fraction of 'n' absent keys (from *next_absent on) reported present. */
static inline double
tf_fpr(const TestFilter *t, TlbfTime at, long n, uint64_t *next_absent)
{
	long		hits = 0;

	for (long i = 0; i < n; i++)
		hits += tf_has(t, (*next_absent)++, at);
	return (double) hits / n;
}

/* splitmix64: a fixed-seed generator, so every run sees the same stream */
static inline uint64_t
rng_next(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static inline double
rng_uniform(uint64_t *state)
{
	return (double) (rng_next(state) >> 11) / (double) (UINT64_C(1) << 53);
}

/*
 * Keys added, with the time each was added at, kept while they are within
 * the span so that every one of them can be checked.
 */
typedef struct KeyLog
{
	uint64_t   *keys;
	TlbfTime   *times;
	size_t		first;			/* oldest entry still kept */
	size_t		count;
	size_t		allocated;
} KeyLog;

static inline void
keylog_add(KeyLog *log, uint64_t key, TlbfTime at)
{
	if (log->count == log->allocated)
	{
		log->allocated = log->allocated ? 2 * log->allocated : 1024;
		log->keys = realloc(log->keys, log->allocated * sizeof(uint64_t));
		log->times = realloc(log->times, log->allocated * sizeof(TlbfTime));
		assert_non_null(log->keys);
		assert_non_null(log->times);
	}
	log->keys[log->count] = key;
	log->times[log->count] = at;
	log->count++;
}

static inline void
keylog_free(KeyLog *log)
{
	free(log->keys);
	free(log->times);
	memset(log, 0, sizeof(*log));
}

/*
 * Check every logged key added at or after now - span: with the filter as
 * it is, it must be found at every query time from now up to its own time
 * plus the span.  The latest such time is the hardest (fewest slices count),
 * so checking it and 'now' covers the rest.  Returns the false negatives.
 * Keys may be logged out of time order, so all of them are scanned.
 */
static inline long
keylog_false_negatives(const KeyLog *log, const TestFilter *t, TlbfTime now)
{
	long		missed = 0;

	for (size_t i = log->first; i < log->count; i++)
	{
		TlbfTime	added = log->times[i];

		if (added < now - t->f->span)
			continue;
		if (!tf_has(t, log->keys[i], now) ||
			!tf_has(t, log->keys[i], added + t->f->span))
			missed++;
	}
	return missed;
}

/* Forget keys that can no longer be required (older than now - 2 spans). */
static inline void
keylog_trim(KeyLog *log, TlbfTime now, int64_t span)
{
	while (log->first < log->count && log->times[log->first] < now - 2 * span)
		log->first++;
}

#endif							/* TLBF_TEST_HARNESS_H */
