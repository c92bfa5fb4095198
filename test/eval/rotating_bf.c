/*-------------------------------------------------------------------------
 *
 * rotating_bf.c
 *	  A ring of N+1 rotating Bloom filters, from the "Rotating Filters"
 *	  section of Surprenant's "Continuous Bloom filter" post: each filter
 *	  holds the keys of one period of span/N, insertions go to the current
 *	  one, and at each new period the oldest filter is reset and becomes
 *	  current.  Lookups test all N+1 filters.  The extra filter is the
 *	  overlap that keeps a key for at least the span.
 *
 * Rotation follows time, as in the post (in the count-window experiments
 * time advances one millisecond per insertion, so it follows the count).
 * All filters have the same size and the same seed, hence the same
 * positions for a key.  With periods numbered from the first insertion, a
 * key added in period P is kept while the current period is at most P+N,
 * and any time up to its own plus the span falls in such a period.
 *
 * The post leaves N open.  We take the N in 1..16 and the k that minimise
 * the same approximation as the guarded-epoch paper's Proposition 2
 * (each filter holds span/N worth of keys in m/(N+1) bits).
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashing.h"
#include "window_filter.h"

#define MAX_RING 17

typedef struct RotatingBf
{
	WindowFilter base;
	uint64_t   *words;			/* N+1 filters of filter_words each */
	uint64_t	filter_words;
	int			n;				/* N: periods per span */
	int			k;
	int64_t		period;			/* microseconds */
	int64_t		origin;
	bool		started;
	int64_t		holds[MAX_RING];	/* period each filter holds, -1 none */
} RotatingBf;

static inline int64_t
period_of(const RotatingBf *r, int64_t at)
{
	return at <= r->origin ? 0 : (at - r->origin) / r->period;
}

static void
rot_insert(WindowFilter *wf, TlbfHash h, int64_t at)
{
	RotatingBf *r = (RotatingBf *) wf;
	int64_t		p;
	int			slot;
	uint64_t   *bits;

	if (!r->started)
	{
		r->started = true;
		r->origin = at;
	}
	p = period_of(r, at);
	slot = (int) (p % (r->n + 1));
	bits = r->words + slot * r->filter_words;
	if (r->holds[slot] != p)
	{
		memset(bits, 0, r->filter_words * sizeof(uint64_t));
		r->holds[slot] = p;
	}
	for (int j = 0; j < r->k; j++)
	{
		uint64_t	bit = eval_probe(h, j, r->filter_words * 64);

		bits[bit >> 6] |= UINT64_C(1) << (bit & 63);
	}
}

static bool
rot_query(WindowFilter *wf, TlbfHash h, int64_t at)
{
	RotatingBf *r = (RotatingBf *) wf;
	int64_t		p;

	if (!r->started)
		return false;
	p = period_of(r, at);

	/* newest first; a filter counts only if it holds one of the N+1 periods */
	for (int i = 0; i <= r->n && p - i >= 0; i++)
	{
		int			slot = (int) ((p - i) % (r->n + 1));
		const uint64_t *bits = r->words + slot * r->filter_words;
		int			j;

		if (r->holds[slot] != p - i)
			continue;
		for (j = 0; j < r->k; j++)
		{
			uint64_t	bit = eval_probe(h, j, r->filter_words * 64);

			if (!((bits[bit >> 6] >> (bit & 63)) & 1))
				break;
		}
		if (j == r->k)
			return true;
	}
	return false;
}

static uint64_t
rot_bits(const WindowFilter *wf)
{
	const RotatingBf *r = (const RotatingBf *) wf;

	return (uint64_t) (r->n + 1) * r->filter_words * 64;
}

static uint64_t
rot_meta_bits(const WindowFilter *wf)
{
	return 0;
}

static void
rot_describe(const WindowFilter *wf, char *buf, size_t len)
{
	const RotatingBf *r = (const RotatingBf *) wf;

	snprintf(buf, len, "N=%d k=%d filter_bits=%llu period_us=%lld", r->n, r->k,
			 (unsigned long long) r->filter_words * 64, (long long) r->period);
}

static void
rot_destroy(WindowFilter *wf)
{
	RotatingBf *r = (RotatingBf *) wf;

	free(r->words);
	free(r);
}

static const WindowFilterOps rot_ops = {
	rot_insert, rot_query, rot_bits, rot_meta_bits, rot_describe, rot_destroy
};

WindowFilter *
rotating_bf_create(const WindowConfig *config)
{
	RotatingBf *r = eval_calloc(1, sizeof(RotatingBf));
	uint64_t	words = words_within(config->budget_bits);
	double		best = INFINITY;

	for (int n = 1; n < MAX_RING; n++)
	{
		double		filter_bits = (double) (words / (n + 1)) * 64;
		double		keys = config->live_items / n;

		for (int k = 1; k <= 32 && filter_bits > 0; k++)
		{
			double		one = pow(1.0 - exp(-k * keys / filter_bits), k);
			double		p = 1.0 - pow(1.0 - one, n + 1);

			if (p < best)
			{
				best = p;
				r->n = n;
				r->k = k;
			}
		}
	}
	r->base.ops = &rot_ops;
	r->filter_words = words / (r->n + 1);
	if (r->filter_words < 1)
		r->filter_words = 1;
	r->words = eval_calloc((size_t) (r->n + 1) * r->filter_words, sizeof(uint64_t));
	r->period = (config->span + r->n - 1) / r->n;
	if (r->period < 1)
		r->period = 1;
	for (int i = 0; i < MAX_RING; i++)
		r->holds[i] = -1;
	return &r->base;
}
