/*-------------------------------------------------------------------------
 *
 * inference_queries.c
 *	  The query mix of the inference experiment, at every checkpoint.
 *
 * At a checkpoint at time t, with the window's span S, the queries are
 *
 *	  live		every distinct key whose last insertion lies in [t - S, t]
 *				(the filter's own rule: tlbf_query must find them all);
 *	  expired	every distinct key whose last insertion lies in
 *				[t - 2S, t - S): keys the stream had and lost within the
 *				last span, the ones a time-decaying filter is most likely
 *				to confuse with live ones;
 *	  fresh		as many never-inserted keys as the other two together.
 *
 * So half the queries are for keys never seen, a quarter to a third for
 * keys in the window (more where keys recur, which leaves fewer expired
 * ones), and the rest for keys recently lost; "really in the window" is the
 * live kind, and the checkpoint's base rate, live / all, is the prior the
 * experiment gives tlbf_posterior.  When live and expired keys together
 * exceed max_known, both are sampled with the same probability, so the
 * base rate stays that of the whole mix.
 *
 * Each query also gets its penalties, drawn once (fixed seed) so that every
 * filter configuration is charged the same: fp_cost and fn_cost uniform in
 * [1, 10), independently, as in the seed's section 6.1.1.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>

#include "hashing.h"
#include "inference.h"
#include "last_seen.h"
#include "rng.h"

static void
add(QuerySet *set, QueryKind kind, uint64_t key, int64_t last_time, Rng *costs)
{
	Query	   *q = &set->queries[set->n++];

	q->hash = eval_hash(key);
	q->kind = (uint8_t) kind;
	q->last_time = last_time;
	q->fp_cost = 1.0 + 9.0 * rng_uniform(costs);
	q->fn_cost = 1.0 + 9.0 * rng_uniform(costs);
	set->count[kind]++;
}

QuerySet *
inference_queries(const WindowSetup *w, long max_known, uint64_t seed)
{
	const Stream *s = w->request.stream;
	const int64_t *times = w->times;
	QuerySet   *sets = eval_calloc(w->ncheckpoints, sizeof(QuerySet));
	LastSeen	seen;
	Rng			sample = rng_seeded(seed ^ UINT64_C(0x5a5a));
	Rng			costs = rng_seeded(seed ^ UINT64_C(0xc0575));
	uint64_t	next_fresh = EVAL_FRESH_BASE + (seed << 40);
	size_t		pos = 0;

	last_seen_init(&seen, s->n);
	for (int c = 0; c < w->ncheckpoints; c++)
	{
		const Checkpoint *cp = &w->checkpoints[c];
		QuerySet   *set = &sets[c];
		size_t		from = stream_first_at_or_after(times, s->n, cp->at - 2 * w->span);
		size_t		start = stream_first_at_or_after(times, s->n, cp->at - w->span);
		long		known = 0;
		double		keep;

		for (; pos < cp->inserted; pos++)
			last_seen_put(&seen, s->keys[pos], (int64_t) pos);

		/* live and expired keys: the positions that are a key's latest */
		for (size_t i = from; i < cp->inserted; i++)
			known += last_seen_get(&seen, s->keys[i]) == (int64_t) i;
		keep = known > max_known ? (double) max_known / known : 1.0;
		set->queries = eval_calloc(2 * known, sizeof(Query));
		for (size_t i = from; i < cp->inserted; i++)
		{
			if (last_seen_get(&seen, s->keys[i]) != (int64_t) i)
				continue;
			if (keep < 1.0 && rng_uniform(&sample) >= keep)
				continue;
			add(set, i >= start ? KIND_LIVE : KIND_EXPIRED, s->keys[i], times[i], &costs);
		}
		for (long i = set->count[KIND_LIVE] + set->count[KIND_EXPIRED]; i > 0; i--)
			add(set, KIND_FRESH, next_fresh++, 0, &costs);
		set->base_rate = set->n > 0 ? (double) set->count[KIND_LIVE] / set->n : 0.0;
	}
	last_seen_free(&seen);
	return sets;
}

void
inference_queries_free(QuerySet *sets, int n)
{
	for (int c = 0; c < n; c++)
		free(sets[c].queries);
	free(sets);
}

/*
 * Every distinct key of a stream, in the order of first insertion: the
 * moments experiment asks them all (the web log: the day's clients).
 */
uint64_t *
stream_distinct_keys(const Stream *s, long *n)
{
	LastSeen	seen;
	uint64_t   *keys = eval_calloc(s->n > 0 ? s->n : 1, sizeof(uint64_t));

	*n = 0;
	last_seen_init(&seen, s->n);
	for (size_t i = 0; i < s->n; i++)
		if (last_seen_get(&seen, s->keys[i]) < 0)
		{
			last_seen_put(&seen, s->keys[i], (int64_t) i);
			keys[(*n)++] = s->keys[i];
		}
	last_seen_free(&seen);
	return keys;
}
