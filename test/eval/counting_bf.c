/*-------------------------------------------------------------------------
 *
 * counting_bf.c
 *	  A counting Bloom filter of 4-bit counters with exact window deletion:
 *	  a queue holds the window's keys, and a key leaving the window has its
 *	  counters decremented.
 *
 * As in the guarded-epoch paper, the budget pays for the counters only;
 * the queue (a hash per insertion in the window) is not charged.  A
 * counter that reaches 15 sticks there: decrementing it could undercount
 * keys that collided with it and so lose a live key.
 *
 * Given the window as a count it keeps exactly the last window_count
 * insertions; given it as time, the insertions at or after at - span.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cells4.h"
#include "hashing.h"
#include "window_filter.h"

#define COUNTER_MAX 15

typedef struct CountingBf
{
	WindowFilter base;
	uint64_t   *cells;
	uint64_t	ncells;
	int			k;
	bool		by_time;
	uint64_t	window_count;
	int64_t		span;
	/* the window's insertions, oldest first, in a growing ring buffer */
	TlbfHash   *queue;
	int64_t    *times;
	size_t		head;
	size_t		count;
	size_t		allocated;
} CountingBf;

static void
change_counters(CountingBf *c, TlbfHash h, int delta)
{
	for (int j = 0; j < c->k; j++)
	{
		uint64_t	i = eval_probe(h, j, c->ncells);
		unsigned	v = cell4_get(c->cells, i);

		if (v == COUNTER_MAX)
			continue;
		cell4_set(c->cells, i, delta > 0 ? v + 1 : v - 1);
	}
}

static void
queue_push(CountingBf *c, TlbfHash h, int64_t at)
{
	if (c->count == c->allocated)
	{
		size_t		grown = c->allocated ? 2 * c->allocated : 1024;
		TlbfHash   *q = eval_calloc(grown, sizeof(TlbfHash));
		int64_t    *t = eval_calloc(grown, sizeof(int64_t));

		for (size_t i = 0; i < c->count; i++)
		{
			q[i] = c->queue[(c->head + i) % c->allocated];
			t[i] = c->times[(c->head + i) % c->allocated];
		}
		free(c->queue);
		free(c->times);
		c->queue = q;
		c->times = t;
		c->head = 0;
		c->allocated = grown;
	}
	c->queue[(c->head + c->count) % c->allocated] = h;
	c->times[(c->head + c->count) % c->allocated] = at;
	c->count++;
}

static void
queue_pop(CountingBf *c)
{
	change_counters(c, c->queue[c->head], -1);
	c->head = (c->head + 1) % c->allocated;
	c->count--;
}

/* Delete what has left the window at time 'at' (time mode). */
static void
expire_by_time(CountingBf *c, int64_t at)
{
	while (c->count > 0 && c->times[c->head] < at - c->span)
		queue_pop(c);
}

static void
cbf_insert(WindowFilter *wf, TlbfHash h, int64_t at)
{
	CountingBf *c = (CountingBf *) wf;

	if (c->by_time)
		expire_by_time(c, at);
	else if (c->count == c->window_count)
		queue_pop(c);
	change_counters(c, h, +1);
	queue_push(c, h, at);
}

static bool
cbf_query(WindowFilter *wf, TlbfHash h, int64_t at)
{
	CountingBf *c = (CountingBf *) wf;

	if (c->by_time)
		expire_by_time(c, at);
	for (int j = 0; j < c->k; j++)
		if (cell4_get(c->cells, eval_probe(h, j, c->ncells)) == 0)
			return false;
	return true;
}

static uint64_t
cbf_bits(const WindowFilter *wf)
{
	return ((const CountingBf *) wf)->ncells * 4;
}

static uint64_t
cbf_meta_bits(const WindowFilter *wf)
{
	return 0;
}

static void
cbf_describe(const WindowFilter *wf, char *buf, size_t len)
{
	const CountingBf *c = (const CountingBf *) wf;

	snprintf(buf, len, "cells=%llu k=%d %s",
			 (unsigned long long) c->ncells, c->k,
			 c->by_time ? "expiry=time" : "expiry=count");
}

static void
cbf_destroy(WindowFilter *wf)
{
	CountingBf *c = (CountingBf *) wf;

	free(c->cells);
	free(c->queue);
	free(c->times);
	free(c);
}

static const WindowFilterOps cbf_ops = {
	cbf_insert, cbf_query, cbf_bits, cbf_meta_bits, cbf_describe, cbf_destroy
};

WindowFilter *
counting_bf_create(const WindowConfig *config)
{
	CountingBf *c = eval_calloc(1, sizeof(CountingBf));
	uint64_t	words = words_within(config->budget_bits);
	double		items = config->by_time ? config->live_items : (double) config->window_count;

	c->base.ops = &cbf_ops;
	c->ncells = words * 16;
	c->cells = eval_calloc(words, sizeof(uint64_t));
	/* the k that minimises a plain Bloom filter's rate at this load */
	c->k = (int) fmax(1.0, round(M_LN2 * (double) c->ncells / items));
	c->by_time = config->by_time;
	c->window_count = config->window_count;
	c->span = config->span;
	return &c->base;
}
