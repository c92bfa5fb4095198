/*-------------------------------------------------------------------------
 *
 * stable_bf.c
 *	  The stable Bloom filter of Deng and Rafiei (SIGMOD 2006): cells of d
 *	  bits holding 0..Max (Max = 2^d - 1).  Each insertion first decrements
 *	  P randomly chosen cells (those above 0), then sets the key's K cells
 *	  to Max.  A key is present when all its K cells are non-zero.  Keys are
 *	  forgotten at random, so live keys can be lost.
 *
 * Choosing P for the window.  A cell set to Max is decremented with
 * probability P/m at each later insertion, so unless another key sets it
 * again it reaches 0 after Max*m/P insertions on average.  We make that
 * expected lifetime the window: P = Max*m/W.
 *
 * Choosing d and K.  With P so fixed, the paper's stable point gives the
 * false-positive rate (1 - (1/(1 + 1/(P(1/K - 1/m))))^Max)^K, and the
 * chance that a key of age a (in insertions) has lost one of its cells is
 * 1 - S(a)^K with S(a) = Pr[Poisson(Max*a/W) < Max] (refreshes by other
 * keys ignored).  We take the (d, K), d in {1, 2, 4} and K in 1..16, that
 * minimises the predicted false-positive rate plus the predicted mean
 * live false-negative rate over ages 0..W: both errors weigh the same.
 * This is computed from formulas only, never from measured results.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "hashing.h"
#include "rng.h"
#include "window_filter.h"

typedef struct StableBf
{
	WindowFilter base;
	uint64_t   *words;
	uint64_t	ncells;
	int			d;				/* bits per cell: 1, 2 or 4 */
	unsigned	max;
	int			k;
	uint64_t	p;				/* cells decremented per insertion */
	Rng			rng;
} StableBf;

static inline unsigned
cell_get(const StableBf *s, uint64_t i)
{
	uint64_t	bit = i * s->d;

	return (unsigned) (s->words[bit >> 6] >> (bit & 63)) & s->max;
}

static inline void
cell_set(StableBf *s, uint64_t i, unsigned v)
{
	uint64_t	bit = i * s->d;
	uint64_t	mask = (uint64_t) s->max << (bit & 63);

	s->words[bit >> 6] = (s->words[bit >> 6] & ~mask) | ((uint64_t) v << (bit & 63));
}

static void
sbf_insert(WindowFilter *wf, TlbfHash h, int64_t at)
{
	StableBf   *s = (StableBf *) wf;

	for (uint64_t i = 0; i < s->p; i++)
	{
		uint64_t	c = rng_below(&s->rng, s->ncells);
		unsigned	v = cell_get(s, c);

		if (v > 0)
			cell_set(s, c, v - 1);
	}
	for (int j = 0; j < s->k; j++)
		cell_set(s, eval_probe(h, j, s->ncells), s->max);
}

static bool
sbf_query(WindowFilter *wf, TlbfHash h, int64_t at)
{
	StableBf   *s = (StableBf *) wf;

	for (int j = 0; j < s->k; j++)
		if (cell_get(s, eval_probe(h, j, s->ncells)) == 0)
			return false;
	return true;
}

static uint64_t
sbf_bits(const WindowFilter *wf)
{
	const StableBf *s = (const StableBf *) wf;

	return s->ncells * s->d;
}

static uint64_t
sbf_meta_bits(const WindowFilter *wf)
{
	return 0;
}

static void
sbf_describe(const WindowFilter *wf, char *buf, size_t len)
{
	const StableBf *s = (const StableBf *) wf;

	snprintf(buf, len, "cells=%llu d=%d K=%d P=%llu",
			 (unsigned long long) s->ncells, s->d, s->k,
			 (unsigned long long) s->p);
}

static void
sbf_destroy(WindowFilter *wf)
{
	StableBf   *s = (StableBf *) wf;

	free(s->words);
	free(s);
}

static const WindowFilterOps sbf_ops = {
	sbf_insert, sbf_query, sbf_bits, sbf_meta_bits, sbf_describe, sbf_destroy
};

/* Pr[Poisson(lambda) < n] */
static double
poisson_below(double lambda, unsigned n)
{
	double		term = exp(-lambda);
	double		sum = 0.0;

	for (unsigned i = 0; i < n; i++)
	{
		sum += term;
		term *= lambda / (i + 1);
	}
	return sum;
}

/* Predicted mean live false-negative rate over ages 0..W (see above). */
static double
predicted_fnr(unsigned max, int k)
{
	const int	steps = 400;
	double		lost = 0.0;

	for (int i = 0; i < steps; i++)
	{
		double		age = (i + 0.5) / steps;	/* in windows */

		lost += 1.0 - pow(poisson_below(max * age, max), k);
	}
	return lost / steps;
}

/* The paper's false-positive rate at the stable point. */
static double
predicted_fpr(unsigned max, int k, double p, double m)
{
	double		zero = pow(1.0 / (1.0 + 1.0 / (p * (1.0 / k - 1.0 / m))), max);

	return pow(1.0 - zero, k);
}

WindowFilter *
stable_bf_create(const WindowConfig *config)
{
	StableBf   *s = eval_calloc(1, sizeof(StableBf));
	uint64_t	words = words_within(config->budget_bits);
	double		best = INFINITY;
	static const int widths[] = {1, 2, 4};

	for (int w = 0; w < 3; w++)
	{
		unsigned	max = (1u << widths[w]) - 1;
		uint64_t	ncells = words * 64 / widths[w];
		uint64_t	p = (uint64_t) fmax(1.0, round((double) max * ncells / config->window_count));

		for (int k = 1; k <= 16; k++)
		{
			double		cost = predicted_fpr(max, k, (double) p, (double) ncells) +
				predicted_fnr(max, k);

			if (cost < best)
			{
				best = cost;
				s->d = widths[w];
				s->max = max;
				s->k = k;
				s->p = p;
				s->ncells = ncells;
			}
		}
	}
	s->base.ops = &sbf_ops;
	s->words = eval_calloc(words, sizeof(uint64_t));
	s->rng = rng_seeded(config->seed ^ UINT64_C(0x5bf));
	return &s->base;
}
