/*-------------------------------------------------------------------------
 *
 * guarded_epoch.c
 *	  The guarded epoch Bloom filter of Alpay and Sarioglu (2026), plain and
 *	  blocked.
 *
 * r+1 segments of s = m/(r+1) bits; an epoch lasts l = ceil(W/r)
 * insertions.  Insertions go to the current segment; at each epoch
 * boundary the next segment (cyclically) is cleared and becomes current.
 * A query tests every segment and is positive if any has all k bits.  The
 * extra (guard) segment keeps the last W insertions at all times, and at
 * most one epoch more.
 *
 * k is the one that minimises the paper's approximation (Proposition 2),
 * 1 - (1 - (1 - e^{-k l/s})^k)^(r+1), for the given memory and window.
 *
 * The blocked variant chooses one 512-bit block per segment from the
 * key's first hash and places its k bits inside that block, so each
 * segment costs one cache line per probe.  Segments are the same size and
 * use the same hash, so a key has the same positions in every segment.
 *
 * Queries look at the newest segment first: live keys are found sooner.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashing.h"
#include "window_filter.h"

#define BLOCK_BITS	512
#define BLOCK_WORDS (BLOCK_BITS / 64)

typedef struct GuardedEpoch
{
	WindowFilter base;
	uint64_t   *words;			/* r+1 segments of seg_words each */
	uint64_t	seg_words;
	int			r;
	int			k;
	bool		blocked;
	uint64_t	epoch_len;		/* l, in insertions */
	uint64_t	inserted;
	int			current;
} GuardedEpoch;

static inline uint64_t *
segment(const GuardedEpoch *g, int i)
{
	return g->words + (uint64_t) i * g->seg_words;
}

static inline bool
segment_has(const GuardedEpoch *g, const uint64_t *seg, TlbfHash h)
{
	if (g->blocked)
	{
		const uint64_t *block = seg + eval_range(h.a, g->seg_words / BLOCK_WORDS) * BLOCK_WORDS;

		for (int j = 1; j <= g->k; j++)
		{
			uint64_t	bit = eval_probe(h, j, BLOCK_BITS);

			if (!((block[bit >> 6] >> (bit & 63)) & 1))
				return false;
		}
		return true;
	}
	for (int j = 0; j < g->k; j++)
	{
		uint64_t	bit = eval_probe(h, j, g->seg_words * 64);

		if (!((seg[bit >> 6] >> (bit & 63)) & 1))
			return false;
	}
	return true;
}

static void
ge_insert(WindowFilter *wf, TlbfHash h, int64_t at)
{
	GuardedEpoch *g = (GuardedEpoch *) wf;
	uint64_t   *seg;

	if (g->inserted > 0 && g->inserted % g->epoch_len == 0)
	{
		g->current = (g->current + 1) % (g->r + 1);
		memset(segment(g, g->current), 0, g->seg_words * sizeof(uint64_t));
	}
	seg = segment(g, g->current);
	if (g->blocked)
	{
		uint64_t   *block = seg + eval_range(h.a, g->seg_words / BLOCK_WORDS) * BLOCK_WORDS;

		for (int j = 1; j <= g->k; j++)
		{
			uint64_t	bit = eval_probe(h, j, BLOCK_BITS);

			block[bit >> 6] |= UINT64_C(1) << (bit & 63);
		}
	}
	else
	{
		for (int j = 0; j < g->k; j++)
		{
			uint64_t	bit = eval_probe(h, j, g->seg_words * 64);

			seg[bit >> 6] |= UINT64_C(1) << (bit & 63);
		}
	}
	g->inserted++;
}

static bool
ge_query(WindowFilter *wf, TlbfHash h, int64_t at)
{
	GuardedEpoch *g = (GuardedEpoch *) wf;

	for (int i = 0; i <= g->r; i++)
	{
		int			s = (g->current - i + g->r + 1) % (g->r + 1);

		if (segment_has(g, segment(g, s), h))
			return true;
	}
	return false;
}

static uint64_t
ge_bits(const WindowFilter *wf)
{
	const GuardedEpoch *g = (const GuardedEpoch *) wf;

	return (uint64_t) (g->r + 1) * g->seg_words * 64;
}

static uint64_t
ge_meta_bits(const WindowFilter *wf)
{
	return 0;
}

static void
ge_describe(const WindowFilter *wf, char *buf, size_t len)
{
	const GuardedEpoch *g = (const GuardedEpoch *) wf;

	snprintf(buf, len, "r=%d k=%d segment_bits=%llu epoch=%llu%s", g->r, g->k,
			 (unsigned long long) g->seg_words * 64,
			 (unsigned long long) g->epoch_len,
			 g->blocked ? " block_bits=512" : "");
}

static void
ge_destroy(WindowFilter *wf)
{
	GuardedEpoch *g = (GuardedEpoch *) wf;

	free(g->words);
	free(g);
}

static const WindowFilterOps ge_ops = {
	ge_insert, ge_query, ge_bits, ge_meta_bits, ge_describe, ge_destroy
};

/* The paper's Proposition 2. */
static double
predicted_fpr(int r, int k, double epoch_len, double seg_bits)
{
	double		one = pow(1.0 - exp(-k * epoch_len / seg_bits), k);

	return 1.0 - pow(1.0 - one, r + 1);
}

static WindowFilter *
guarded_epoch_create(const WindowConfig *config, int r, bool blocked)
{
	GuardedEpoch *g = eval_calloc(1, sizeof(GuardedEpoch));
	uint64_t	words = words_within(config->budget_bits);
	double		best = INFINITY;

	g->base.ops = &ge_ops;
	g->r = r;
	g->blocked = blocked;
	g->seg_words = words / (r + 1);
	if (blocked)
		g->seg_words -= g->seg_words % BLOCK_WORDS;
	if (g->seg_words < (blocked ? BLOCK_WORDS : 1))
		g->seg_words = blocked ? BLOCK_WORDS : 1;
	g->epoch_len = (config->window_count + r - 1) / r;
	for (int k = 1; k <= 32; k++)
	{
		double		p = predicted_fpr(r, k, (double) g->epoch_len, (double) g->seg_words * 64);

		if (p < best)
		{
			best = p;
			g->k = k;
		}
	}
	g->words = eval_calloc((size_t) (r + 1) * g->seg_words, sizeof(uint64_t));
	return &g->base;
}

WindowFilter *
guarded_epoch4_create(const WindowConfig *config)
{
	return guarded_epoch_create(config, 4, false);
}

WindowFilter *
guarded_epoch8_create(const WindowConfig *config)
{
	return guarded_epoch_create(config, 8, false);
}

WindowFilter *
blocked_epoch8_create(const WindowConfig *config)
{
	return guarded_epoch_create(config, 8, true);
}
