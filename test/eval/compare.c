/*-------------------------------------------------------------------------
 *
 * compare.c
 *	  One stream, one window, one budget, every structure.
 *
 * The window.  Given as a count W, every structure sees one insertion per
 * millisecond: the time-based ones get a span of (W-1) ms, which holds
 * exactly the last W insertions, the count-based ones get W.  Given as a
 * time span S, the time-based structures get the stream's real times and
 * S; the count-based ones (stable, guarded epoch) get the largest number
 * of insertions any span of length S holds in this stream, so that they
 * too keep every key of the time window (at the price of keeping more in
 * quiet times).  The counting filter with its deletion queue expires by
 * time.
 *
 * The budget.  b bits per live item means b * L bits, L being W or, for a
 * time window, the mean number of insertions within S at the checkpoints.
 * tlbf sizes itself, so its error rate is chosen instead: among rates
 * 0.5 * 10^(-i/8) (down to about 1e-9, each giving the core's own (k, l)),
 * the one whose bit arrays, averaged over the checkpoints of this very
 * stream, come closest to b * L.  Only memory is used for that choice.
 *
 * The queries.  Checkpoints are spread evenly over the last two windows
 * of a count-window stream, or over a given stretch of time.  At each, the
 * structures have been fed the stream up to that point and are asked
 * about three kinds of keys, the same for every structure: live keys
 * (drawn from the insertions inside the window), fresh keys (never
 * inserted) and expired keys (drawn from the insertions of the window
 * before, keeping only keys that do not occur inside the current window).
 *
 * Timing.  Insertions and queries are timed per checkpoint, with the key's
 * hashing included; each query batch is run five times and the fastest
 * run counts (answers come from the first).  Structures run one after the
 * other in one process on the same data.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "eval_clock.h"
#include "hashing.h"
#include "last_seen.h"
#include "rng.h"

#define TIMING_ROUNDS 5

/* The most insertions any closed span of length 'span' holds. */
static uint64_t
busiest_span(const int64_t *times, size_t n, int64_t span)
{
	uint64_t	most = 0;
	size_t		lo = 0;

	for (size_t i = 0; i < n; i++)
	{
		while (times[lo] < times[i] - span)
			lo++;
		if (i - lo + 1 > most)
			most = i - lo + 1;
	}
	return most;
}

/* Where the checkpoints fall: stream positions and query times. */
static void
place_checkpoints(WindowSetup *w)
{
	const WindowRequest *r = &w->request;
	const Stream *s = r->stream;
	int			nc = r->ncheckpoints;

	w->ncheckpoints = nc;
	w->checkpoints = eval_calloc(nc, sizeof(Checkpoint));
	for (int c = 0; c < nc; c++)
	{
		Checkpoint *cp = &w->checkpoints[c];

		if (!r->by_time)
		{
			cp->inserted = s->n - 2 * r->window + (size_t) (c + 1) * (2 * r->window) / nc;
			cp->at = w->times[cp->inserted - 1];
			cp->window_start = cp->inserted - r->window;
		}
		else
		{
			cp->at = r->from + (int64_t) ((double) (r->to - r->from) * (c + 1) / nc);
			cp->inserted = stream_first_at_or_after(s->times, s->n, cp->at + 1);
			cp->window_start = stream_first_at_or_after(s->times, s->n, cp->at - r->span);
		}
	}
}

/* Draw each checkpoint's queries, walking the stream once. */
static void
draw_queries(WindowSetup *w)
{
	const WindowRequest *r = &w->request;
	const Stream *s = r->stream;
	LastSeen	seen;
	Rng			rng = rng_seeded(r->seed ^ UINT64_C(0xfeed));
	uint64_t	next_fresh = EVAL_FRESH_BASE + (r->seed << 36);
	long		per_kind = r->queries_per_kind / w->ncheckpoints;
	size_t		pos = 0;

	last_seen_init(&seen, s->n);
	for (int c = 0; c < w->ncheckpoints; c++)
	{
		Checkpoint *cp = &w->checkpoints[c];
		size_t		start = cp->window_start;
		size_t		prev_start;
		long		n = 0;

		for (; pos < cp->inserted; pos++)
			last_seen_put(&seen, s->keys[pos], (int64_t) pos);
		prev_start = r->by_time ?
			stream_first_at_or_after(s->times, s->n, cp->at - 2 * r->span) :
			start - r->window;

		cp->keys = eval_calloc(3 * per_kind, sizeof(uint64_t));
		cp->hashes = eval_calloc(3 * per_kind, sizeof(TlbfHash));
		if (cp->inserted > start)
			for (long i = 0; i < per_kind; i++)
				cp->keys[n++] = s->keys[start + rng_below(&rng, cp->inserted - start)];
		cp->nlive = n;
		for (long i = 0; i < per_kind; i++)
			cp->keys[n++] = next_fresh++;
		cp->nfresh = per_kind;

		/* expired: from the previous window, absent from this one */
		cp->nexpired = 0;
		for (long tries = 0; start > prev_start && cp->nexpired < per_kind &&
			 tries < 64 * per_kind; tries++)
		{
			uint64_t	key = s->keys[prev_start + rng_below(&rng, start - prev_start)];

			if (last_seen_get(&seen, key) < (int64_t) start)
			{
				cp->keys[n++] = key;
				cp->nexpired++;
			}
		}
		for (long i = 0; i < n; i++)
			cp->hashes[i] = eval_hash(cp->keys[i]);
	}
	last_seen_free(&seen);
}

/* Feed a structure the stream up to 'to'; nanoseconds spent. */
static double
feed(WindowFilter *wf, const WindowSetup *w, size_t from, size_t to)
{
	const uint64_t *keys = w->request.stream->keys;
	double		t0 = eval_now_ns();

	for (size_t i = from; i < to; i++)
		wf->ops->insert(wf, eval_hash(keys[i]), w->times[i]);
	return eval_now_ns() - t0;
}

/* The memory tlbf uses at a given rate, per live item, at the checkpoints. */
static double
tlbf_bits_at_rate(const WindowSetup *w, double rate)
{
	WindowConfig config = {0};
	WindowFilter *wf;
	size_t		pos = 0;
	double		bits = 0.0;

	config.span = w->span;
	config.live_items = w->live_items;
	config.tlbf_error_rate = rate;
	wf = tlbf_window_create(&config);
	for (int c = 0; c < w->ncheckpoints; c++)
	{
		feed(wf, w, pos, w->checkpoints[c].inserted);
		pos = w->checkpoints[c].inserted;
		bits += (double) wf->ops->bits(wf);
	}
	wf->ops->destroy(wf);
	return bits / w->ncheckpoints / w->live_items;
}

static void
calibrate_tlbf(WindowSetup *w)
{
	int			seen_k[MAX_CANDIDATES],
				seen_l[MAX_CANDIDATES];

	w->ncandidates = 0;
	for (int i = 0; i < MAX_CANDIDATES; i++)
	{
		double		rate = 0.5 * pow(10.0, -i / 8.0);
		int			k,
					l;
		bool		known = false;

		if (rate < 1e-9)
			break;
		tlbf_choose_kl(rate, &k, &l);
		for (int j = 0; j < w->ncandidates; j++)
			known |= seen_k[j] == k && seen_l[j] == l;
		if (known)
			continue;
		seen_k[w->ncandidates] = k;
		seen_l[w->ncandidates] = l;
		w->candidate_rate[w->ncandidates] = rate;
		w->candidate_bits[w->ncandidates] = tlbf_bits_at_rate(w, rate);
		w->ncandidates++;
	}
}

void
window_setup(WindowSetup *w, const WindowRequest *request)
{
	const Stream *s = request->stream;
	double		live = 0.0;

	memset(w, 0, sizeof(*w));
	w->request = *request;
	w->times = eval_calloc(s->n, sizeof(int64_t));
	if (request->by_time)
	{
		memcpy(w->times, s->times, s->n * sizeof(int64_t));
		w->span = request->span;
		w->window_count = busiest_span(s->times, s->n, request->span);
	}
	else
	{
		for (size_t i = 0; i < s->n; i++)
			w->times[i] = EVAL_START + (int64_t) i * EVAL_MS;
		w->span = (int64_t) (request->window - 1) * EVAL_MS;
		w->window_count = request->window;
	}
	place_checkpoints(w);
	for (int c = 0; c < w->ncheckpoints; c++)
		live += (double) (w->checkpoints[c].inserted - w->checkpoints[c].window_start);
	w->live_items = request->by_time ? live / w->ncheckpoints : (double) request->window;
	draw_queries(w);
	calibrate_tlbf(w);
}

void
window_setup_free(WindowSetup *w)
{
	for (int c = 0; c < w->ncheckpoints; c++)
	{
		free(w->checkpoints[c].keys);
		free(w->checkpoints[c].hashes);
	}
	free(w->checkpoints);
	free(w->times);
}

/* The calibrated rate whose memory is closest to the budget. */
double
tlbf_rate_for_budget(const WindowSetup *w, double bits_per_item)
{
	int			best = 0;

	for (int i = 1; i < w->ncandidates; i++)
		if (fabs(w->candidate_bits[i] - bits_per_item) <
			fabs(w->candidate_bits[best] - bits_per_item))
			best = i;
	return w->candidate_rate[best];
}

/* Ask a checkpoint's queries; nanoseconds spent. */
static double
ask(WindowFilter *wf, const Checkpoint *cp, bool prehashed, bool *answers)
{
	long		n = cp->nlive + cp->nfresh + cp->nexpired;
	double		t0 = eval_now_ns();

	if (prehashed)
		for (long i = 0; i < n; i++)
			answers[i] = wf->ops->query(wf, cp->hashes[i], cp->at);
	else
		for (long i = 0; i < n; i++)
			answers[i] = wf->ops->query(wf, eval_hash(cp->keys[i]), cp->at);
	return eval_now_ns() - t0;
}

void
run_kind(const WindowSetup *w, const WindowKind *kind, double bits_per_item,
		 uint64_t seed, KindResult *out)
{
	WindowConfig config;
	WindowFilter *wf;
	size_t		pos = 0;
	long		queries = 0;
	double		query_ns = 0.0,
				probe_ns = 0.0,
				insert_ns = 0.0;
	bool	   *answers = eval_calloc(3 * w->request.queries_per_kind, sizeof(bool));

	memset(out, 0, sizeof(*out));
	config.budget_bits = (uint64_t) llround(bits_per_item * w->live_items);
	config.window_count = w->window_count;
	config.span = w->span;
	config.live_items = w->live_items;
	config.by_time = w->request.by_time;
	config.seed = seed;
	config.tlbf_error_rate = tlbf_rate_for_budget(w, bits_per_item);
	wf = kind->create(&config);

	for (int c = 0; c < w->ncheckpoints; c++)
	{
		const Checkpoint *cp = &w->checkpoints[c];
		long		n = cp->nlive + cp->nfresh + cp->nexpired;
		double		best = INFINITY,
					best_pre = INFINITY;

		insert_ns += feed(wf, w, pos, cp->inserted);
		pos = cp->inserted;

		/* the first round gives the answers; every round gives a time */
		for (int round = 0; round < TIMING_ROUNDS; round++)
		{
			if (round == 0)
			{
				best = ask(wf, cp, false, answers);
				for (long i = 0; i < cp->nlive; i++)
					out->live_fn += !answers[i];
				for (long i = cp->nlive; i < cp->nlive + cp->nfresh; i++)
					out->fresh_fp += answers[i];
				for (long i = cp->nlive + cp->nfresh; i < n; i++)
					out->expired_pos += answers[i];
			}
			else
				best = fmin(best, ask(wf, cp, false, answers));
			best_pre = fmin(best_pre, ask(wf, cp, true, answers));
		}
		query_ns += best;
		probe_ns += best_pre;
		queries += n;
		out->live += cp->nlive;
		out->fresh += cp->nfresh;
		out->expired += cp->nexpired;
		out->bits += (double) wf->ops->bits(wf) / w->ncheckpoints;
		out->meta_bits += (double) wf->ops->meta_bits(wf) / w->ncheckpoints;
	}
	out->query_ns = query_ns / queries;
	out->probe_ns = probe_ns / queries;
	out->insert_ns = insert_ns / pos;
	wf->ops->describe(wf, out->params, sizeof(out->params));
	wf->ops->destroy(wf);
	free(answers);
}
