/*-------------------------------------------------------------------------
 *
 * continuous_bf.c
 *	  The continuous Bloom filter of Colin Surprenant's "Continuous Bloom
 *	  filter" (2012): 4-bit cells holding a timer.
 *
 * Time runs on a clock of 15 positions that ticks every span/2 (the
 * "resolution divisor" of 2); 0 marks an unset cell.  An insertion writes
 * the current position into the key's k cells.  A cell whose elapsed
 * time, (now - value) mod 15, is more than 2 ticks has expired and reads
 * as unset.  A key is present when none of its k cells is unset or
 * expired.  A key added at time t has its cells written at tick T (or
 * later, by other keys), and any time up to t + span falls at tick T + 2
 * at most: no live key is lost.  A key lives 2 to 3 ticks: up to 1.5
 * spans.
 *
 * The post resets an expired cell when a lookup meets it.  A cell no
 * lookup visits would keep its old value, and once the 15-position clock
 * wraps it would look fresh again.  So we reset every expired cell at each
 * tick (one pass over the cells per span/2), which also covers the cells
 * lookups meet; answers are the same as resetting on lookup.
 *
 * k minimises a Bloom filter's rate for the keys the cells hold on
 * average: 2.5 ticks' worth, 1.25 windows.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cells4.h"
#include "hashing.h"
#include "window_filter.h"

#define CLOCK_POSITIONS 15
#define LIVE_TICKS		2

typedef struct ContinuousBf
{
	WindowFilter base;
	uint64_t   *cells;
	uint64_t	ncells;
	int			k;
	int64_t		tick_len;		/* microseconds per tick: span / 2 */
	int64_t		origin;			/* time of the first insertion */
	bool		started;
	int64_t		tick;			/* ticks since origin */
} ContinuousBf;

static inline unsigned
clock_value(int64_t tick)
{
	return (unsigned) (tick % CLOCK_POSITIONS) + 1;
}

/* Move the clock to 'at', resetting the cells that expire on the way. */
static void
advance(ContinuousBf *c, int64_t at)
{
	int64_t		tick;
	unsigned	now;

	if (!c->started)
	{
		c->started = true;
		c->origin = at;
	}
	tick = at < c->origin ? 0 : (at - c->origin) / c->tick_len;
	if (tick <= c->tick)
		return;

	/*
	 * Every set cell was at most LIVE_TICKS old at the last tick, so after
	 * a jump of less than CLOCK_POSITIONS - LIVE_TICKS ticks the modular
	 * age is the true age; after a longer one, everything has expired.
	 */
	if (tick - c->tick >= CLOCK_POSITIONS - LIVE_TICKS)
		memset(c->cells, 0, (c->ncells / 16) * sizeof(uint64_t));
	else
	{
		now = clock_value(tick);
		for (uint64_t i = 0; i < c->ncells; i++)
		{
			unsigned	v = cell4_get(c->cells, i);

			if (v != 0 && (now + CLOCK_POSITIONS - v) % CLOCK_POSITIONS > LIVE_TICKS)
				cell4_set(c->cells, i, 0);
		}
	}
	c->tick = tick;
}

static void
cont_insert(WindowFilter *wf, TlbfHash h, int64_t at)
{
	ContinuousBf *c = (ContinuousBf *) wf;
	unsigned	now;

	advance(c, at);
	now = clock_value(c->tick);
	for (int j = 0; j < c->k; j++)
		cell4_set(c->cells, eval_probe(h, j, c->ncells), now);
}

/* After advance() no cell is expired, so a set cell is a live one. */
static bool
cont_query(WindowFilter *wf, TlbfHash h, int64_t at)
{
	ContinuousBf *c = (ContinuousBf *) wf;

	if (!c->started)
		return false;
	advance(c, at);
	for (int j = 0; j < c->k; j++)
		if (cell4_get(c->cells, eval_probe(h, j, c->ncells)) == 0)
			return false;
	return true;
}

static uint64_t
cont_bits(const WindowFilter *wf)
{
	return ((const ContinuousBf *) wf)->ncells * 4;
}

static uint64_t
cont_meta_bits(const WindowFilter *wf)
{
	return 0;
}

static void
cont_describe(const WindowFilter *wf, char *buf, size_t len)
{
	const ContinuousBf *c = (const ContinuousBf *) wf;

	snprintf(buf, len, "cells=%llu k=%d tick_us=%lld",
			 (unsigned long long) c->ncells, c->k, (long long) c->tick_len);
}

static void
cont_destroy(WindowFilter *wf)
{
	ContinuousBf *c = (ContinuousBf *) wf;

	free(c->cells);
	free(c);
}

static const WindowFilterOps cont_ops = {
	cont_insert, cont_query, cont_bits, cont_meta_bits, cont_describe, cont_destroy
};

WindowFilter *
continuous_bf_create(const WindowConfig *config)
{
	ContinuousBf *c = eval_calloc(1, sizeof(ContinuousBf));
	uint64_t	words = words_within(config->budget_bits);
	double		held = 1.25 * config->live_items;
	double		best = INFINITY;

	c->base.ops = &cont_ops;
	c->ncells = words * 16;
	c->cells = eval_calloc(words, sizeof(uint64_t));
	c->tick_len = (config->span + 1) / 2;
	if (c->tick_len < 1)
		c->tick_len = 1;
	for (int k = 1; k <= 32; k++)
	{
		double		p = pow(1.0 - exp(-k * held / (double) c->ncells), k);

		if (p < best)
		{
			best = p;
			c->k = k;
		}
	}
	return &c->base;
}
