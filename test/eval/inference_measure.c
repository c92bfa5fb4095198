/*-------------------------------------------------------------------------
 *
 * inference_measure.c
 *	  One filter configuration over one stream: feed it up to each
 *	  checkpoint, ask every query of the checkpoint's mix the three
 *	  questions (tlbf_query, tlbf_posterior, tlbf_last_seen) and tally.
 *
 * The filter is the core itself, with the window as its span, the mean
 * number of live insertions as its capacity guess and the given error
 * rate (matched to a memory budget by compare.c, or a target as is); in
 * format 2 (the paper's layout, tlbf.h) or format 3 (tb.h: tb_query,
 * tb_posterior, tb_last_seen), built from the same three figures (format
 * 3: the capacity a guess, three generations a span, seed 0), so that the
 * two answer the same queries side by side.  Both are asked through
 * InferenceFilter, and one set of tallies counts both.
 *
 * Calibration (the seed's section 6.1.4): the positive answers (posterior
 * above 0; a 0 is always right, the filter has no false negatives) are
 * grouped into 20 bins of the posterior, [0, 0.05), ..., [0.95, 1]; each
 * bin's fraction of keys really in the window is compared with its
 * midpoint.  Posterior error (the seed's eq. 35) is the mean over positive
 * answers of |fraction - midpoint| of their bin.  Two more figures, free of
 * the bins' half-width floor: the same with the bin's mean posterior for
 * its midpoint (the expected calibration error), and the Brier score, the
 * mean of (posterior - truth)^2, which also rewards telling true from false
 * positives apart.
 *
 * Penalties (the seed's section 2.6 and 6.1.1): plain tlbf_query pays
 * fp_cost for each "yes" to a key not in the window and never fn_cost; the
 * posterior decision says "yes" iff p * fn_cost >= (1 - p) * fp_cost, i.e.
 * p >= fp_cost / (fp_cost + fn_cost), and pays fp_cost or fn_cost for its
 * errors.  The prior-only decision is the same rule with the prior for p
 * (the filter unread), for scale.
 *
 * Last seen: for each live key, whether [lower, upper] holds its true last
 * insertion time, and the range's width (infinite when there is no lower
 * bound); for expired and fresh keys, whether they get a range at all.
 *
 * Moments (inference_moments): one format 2 filter per stream and window
 * (format 3 is not run there: the moments measure the paper's layout's
 * model, and its goal is asserted on it), fed in time order; at each moment every distinct key of the stream is asked,
 * with the prior at the share of them last inserted within the window.
 * Live keys are those, expired ones were last inserted before the window,
 * fresh ones not yet.  Calibration as above over the answers above 0 (what
 * a user reads a probability for), and over every answer, a 0 counting in
 * the first bin.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashing.h"
#include "heap_memory.h"
#include "inference.h"
#include "last_seen.h"
#include "tb.h"

static int
compare_doubles(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

static double
median(double *v, long n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(double), compare_doubles);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The capacity guess both formats get: the mean live insertions. */
static uint64_t
capacity_guess(const WindowSetup *w)
{
	uint64_t	capacity = (uint64_t) (w->live_items + 0.5);

	return capacity < 1 ? 1 : capacity;
}

static Tlbf *
create_filter(const WindowSetup *w, double error_rate, TlbfMemory *memory)
{
	TlbfParams	p = {w->span, error_rate, capacity_guess(w), 0, 0, 0};
	TlbfProblem problem;

	if (!tlbf_check_params(&p, &problem))
	{
		fprintf(stderr, "tlbf parameters: %s\n", problem.message);
		exit(1);
	}
	return heap_filter(&p, memory);
}

/* The same filter in format 3: the capacity a guess, default generations. */
static TbFilter *
create_tb_filter(const WindowSetup *w, double error_rate, TlbfMemory *memory)
{
	TbParams	p = {w->span, error_rate, capacity_guess(w), false, 0, 0};
	TlbfProblem problem;
	TbFilter   *f;

	if (!tb_check_params(&p, &problem))
	{
		fprintf(stderr, "format 3 parameters: %s\n", problem.message);
		exit(1);
	}
	f = eval_calloc(1, tb_lines_offset(0));
	tb_init(f, &p);
	memory->resize = heap_resize;
	memory->context = NULL;
	memory->allocated = tb_lines_offset(0);
	memory->max_bytes = SIZE_MAX;
	memory->keep_live = false;
	return f;
}

/*
 * A filter of either format, behind the few operations the measure needs,
 * so that both are fed, asked and tallied by the same code.
 */
typedef struct InferenceFilter
{
	int			format;			/* 2 or 3 */
	TlbfMemory	memory;
	Tlbf	   *tlbf;			/* format 2 */
	bool	   *scratch;		/* format 2's per-slice scratch */
	uint32_t	scratch_slices;
	TbFilter   *tb;				/* format 3 */
} InferenceFilter;

/* What a filter answered to one query. */
typedef struct Answers
{
	bool		yes;			/* the query */
	bool		found;			/* last seen gave a range */
	TlbfTime	lower;
	TlbfTime	upper;
	double		posterior[NPRIORS];

	/*
	 * Must a "yes" come with a posterior above 0?  Format 3's query reads
	 * whole generations, so it may find a key when the filter's newest time
	 * is before the window: nothing can then have been added within it, and
	 * tb_posterior rightly says 0.
	 */
	bool		reachable;
} Answers;

static void
filter_open(InferenceFilter *ff, int format, const WindowSetup *w, double error_rate)
{
	memset(ff, 0, sizeof(*ff));
	ff->format = format;
	if (format == 3)
		ff->tb = create_tb_filter(w, error_rate, &ff->memory);
	else
		ff->tlbf = create_filter(w, error_rate, &ff->memory);
}

static void
filter_close(InferenceFilter *ff)
{
	free(ff->tlbf);
	free(ff->scratch);
	free(ff->tb);
}

static void
filter_insert(InferenceFilter *ff, TlbfHash hash, int64_t at)
{
	TlbfStatus	status = ff->format == 3 ?
		tb_insert(&ff->tb, &ff->memory, hash, at) :
		tlbf_insert(&ff->tlbf, &ff->memory, hash, at);

	if (status != TLBF_OK)
	{
		fprintf(stderr, "format %d insert failed\n", ff->format);
		exit(1);
	}
}

/* Ready to be asked after insertions: format 2's scratch grows with its slices. */
static void
filter_ready(InferenceFilter *ff)
{
	if (ff->format == 3 || ff->tlbf->nslices <= ff->scratch_slices)
		return;
	free(ff->scratch);
	ff->scratch_slices = ff->tlbf->nslices;
	ff->scratch = eval_calloc(2 * (size_t) ff->scratch_slices, sizeof(bool));
}

/*
 * The filter's bits: format 2's slices' words; format 3's bands' lines,
 * without its header and directory (as tb_window.c counts them).
 */
static double
filter_bits(const InferenceFilter *ff)
{
	if (ff->format == 3)
		return (double) (tb_size(ff->tb) - tb_lines_offset(ff->tb->nbands)) * 8;
	return (double) tlbf_total_words(ff->tlbf) * 64;
}

/*
 * The filter's shape for the report: k, and l = format 2's planned slices
 * per span or format 3's generations per span.
 */
static void
filter_shape(const InferenceFilter *ff, int *k, int *l)
{
	*k = ff->format == 3 ? ff->tb->k : ff->tlbf->k;
	*l = ff->format == 3 ? ff->tb->generations : ff->tlbf->l;
}

/* The three questions about one key, over the filter's span. */
static void
filter_answer(const InferenceFilter *ff, TlbfHash hash, int64_t at,
			  const double *priors, Answers *a)
{
	if (ff->format == 3)
	{
		const TbFilter *f = ff->tb;

		a->yes = tb_query(f, hash, at, f->span);
		a->found = tb_last_seen(f, hash, at, f->span, &a->lower, &a->upper);
		for (int p = 0; p < NPRIORS; p++)
			a->posterior[p] = tb_posterior(f, hash, at, f->span, priors[p]);
		a->reachable = f->newest != TLBF_NEVER && f->newest >= at - f->span;
	}
	else
	{
		const Tlbf *f = ff->tlbf;

		a->yes = tlbf_query(f, hash, at, f->span);
		a->found = tlbf_last_seen(f, hash, at, f->span, ff->scratch, &a->lower, &a->upper);
		for (int p = 0; p < NPRIORS; p++)
			a->posterior[p] = tlbf_posterior(f, hash, at, f->span, priors[p], ff->scratch);
		a->reachable = true;
	}
}

/*
 * Do the answers agree on whether the key is present: the query and last
 * seen always, and a posterior (with a prior inside (0, 1)) is above 0
 * exactly for a "yes", unless the filter could hold nothing within the
 * window (Answers.reachable).
 */
static bool
consistent(const Answers *a, double posterior)
{
	if (a->found != a->yes)
		return false;
	if (!a->yes)
		return posterior == 0.0;
	return posterior > 0.0 || !a->reachable;
}

/* One answer into its bin of the posterior. */
static void
tally_bin(Calibration *c, double posterior, QueryKind kind)
{
	int			bin = (int) (posterior * INF_BINS);
	bool		truth = kind == KIND_LIVE;

	if (bin >= INF_BINS)
		bin = INF_BINS - 1;
	c->count[bin]++;
	c->in_window[bin] += truth;
	c->by_kind[bin][kind]++;
	c->sum_posterior[bin] += posterior;
	c->sum_squared_error += (posterior - truth) * (posterior - truth);
}

static void
tally_calibration(Calibration *c, double posterior, double prior, const Query *q)
{
	c->sum_prior += prior;
	if (posterior > 0.0)
		tally_bin(c, posterior, q->kind);
}

/* What a decision costs for one query. */
static double
penalty(bool yes, const Query *q)
{
	bool		truly = q->kind == KIND_LIVE;

	return yes && !truly ? q->fp_cost : (!yes && truly ? q->fn_cost : 0.0);
}

/* Ask one query everything; 'widths' collects live keys' range widths. */
static void
ask(const InferenceFilter *ff, const QuerySet *set, const Query *q, int64_t at,
	InferenceResult *out, double *widths, long *nwidths)
{
	double		priors[NPRIORS] = {set->base_rate, 0.5};
	double		threshold = q->fp_cost / (q->fp_cost + q->fn_cost);
	Answers		a;

	filter_answer(ff, q->hash, at, priors, &a);
	out->queries[q->kind]++;
	out->contains_yes[q->kind] += a.yes;
	out->ranges[q->kind] += a.found;
	out->penalty_contains += penalty(a.yes, q);
	out->errors_contains += penalty(a.yes, q) > 0;
	out->penalty_prior_only += penalty(set->base_rate >= threshold, q);
	if (q->kind == KIND_LIVE && !a.yes)
		out->live_missed++;

	for (int p = 0; p < NPRIORS; p++)
	{
		double		posterior = a.posterior[p];
		bool		decision = posterior >= threshold;

		if (priors[p] > 0.0 && priors[p] < 1.0 && !consistent(&a, posterior))
			out->inconsistent++;
		tally_calibration(&out->calibration[p], posterior, priors[p], q);
		if (posterior > 0.0)
			out->posterior_sum[p][q->kind] += posterior;
		out->penalty_posterior[p] += penalty(decision, q);
		out->fp_posterior[p] += decision && q->kind != KIND_LIVE;
		out->fn_posterior[p] += !decision && q->kind == KIND_LIVE;
	}

	if (q->kind == KIND_LIVE && a.found)
	{
		bool		above = a.lower == TLBF_NEVER || a.lower <= q->last_time;

		out->live_held += above && q->last_time <= a.upper;
		out->live_too_new += !above;
		out->live_unbounded += a.lower == TLBF_NEVER;
		widths[(*nwidths)++] = a.lower == TLBF_NEVER ? INFINITY :
			(double) (a.upper - a.lower) / EVAL_SECOND;
	}
}

void
inference_measure(const WindowSetup *w, const QuerySet *sets, double error_rate,
				  int format, InferenceResult *out)
{
	const uint64_t *keys = w->request.stream->keys;
	InferenceFilter ff;
	long		live = 0,
				nwidths = 0,
				nbounded = 0;
	double	   *widths;
	size_t		pos = 0;
	double		bits = 0.0;

	filter_open(&ff, format, w, error_rate);
	for (int c = 0; c < w->ncheckpoints; c++)
		live += sets[c].count[KIND_LIVE];
	widths = eval_calloc(live, sizeof(double));

	for (int c = 0; c < w->ncheckpoints; c++)
	{
		const Checkpoint *cp = &w->checkpoints[c];
		const QuerySet *set = &sets[c];

		for (; pos < cp->inserted; pos++)
			filter_insert(&ff, eval_hash(keys[pos]), w->times[pos]);
		filter_ready(&ff);
		bits += filter_bits(&ff);
		for (long i = 0; i < set->n; i++)
			ask(&ff, set, &set->queries[i], cp->at, out, widths, &nwidths);
	}

	out->format = format;
	out->error_rate = error_rate;
	filter_shape(&ff, &out->k, &out->l);
	out->bits_per_item = bits / w->ncheckpoints / w->live_items;
	out->span_seconds = (double) w->span / EVAL_SECOND;
	out->median_width_seconds = median(widths, nwidths);
	/* sorted now: the finite widths come first */
	while (nbounded < nwidths && isfinite(widths[nbounded]))
		nbounded++;
	out->median_bounded_width_seconds = median(widths, nbounded);
	free(widths);
	filter_close(&ff);
}

/*
 * The truth about every key at a moment: its kind, by its last insertion
 * at or before 'at'.
 */
static QueryKind
moment_kind(const LastSeen *seen, const int64_t *times, uint64_t key,
			int64_t at, int64_t window)
{
	int64_t		last = last_seen_get(seen, key);

	if (last < 0)
		return KIND_FRESH;
	return times[last] >= at - window ? KIND_LIVE : KIND_EXPIRED;
}

/* Ask every key at one moment; the filter has been fed up to it. */
static void
ask_moment(const Tlbf *f, const LastSeen *seen, const int64_t *times,
		   const uint64_t *keys, long nkeys, bool *scratch, MomentResult *out)
{
	int64_t		at = out->at;
	int64_t		window = f->span;
	uint8_t    *kinds = eval_calloc(nkeys, 1);

	for (long i = 0; i < nkeys; i++)
	{
		kinds[i] = (uint8_t) moment_kind(seen, times, keys[i], at, window);
		out->live += kinds[i] == KIND_LIVE;
	}
	out->keys = nkeys;
	out->prior = nkeys > 0 ? (double) out->live / nkeys : 0.0;
	for (long i = 0; i < nkeys; i++)
	{
		TlbfHash	h = eval_hash(keys[i]);
		bool		yes = tlbf_query(f, h, at, window);
		TlbfTime	lower,
					upper;
		bool		found = tlbf_last_seen(f, h, at, window, scratch, &lower, &upper);
		double		p = tlbf_posterior(f, h, at, window, out->prior, scratch);

		out->found += yes;
		out->live_missed += kinds[i] == KIND_LIVE && !yes;
		if (out->prior > 0.0 && out->prior < 1.0 && ((p > 0.0) != yes || found != yes))
			out->inconsistent++;
		out->positive.sum_prior += out->prior;
		out->every.sum_prior += out->prior;
		if (p > 0.0)
			tally_bin(&out->positive, p, kinds[i]);
		tally_bin(&out->every, p, kinds[i]);
	}
	free(kinds);
}

/*
 * One filter with 'window' as its span over the whole stream, asked every
 * key at each moment (ascending).  Its capacity guess is the mean number of
 * insertions per window over the stream.  out[] gets one result per
 * moment; the caller labels them.
 */
void
inference_moments(const Stream *s, const uint64_t *keys, long nkeys,
				  int64_t window, double error_rate,
				  const int64_t *moments, int nmoments, MomentResult *out)
{
	double		duration = (double) (s->times[s->n - 1] - s->times[0]) + 1.0;
	TlbfParams	p = {window, error_rate,
	(uint64_t) fmax(1.0, s->n * fmin(1.0, window / duration)), 0, 0, 0};
	TlbfProblem problem;
	TlbfMemory	memory;
	Tlbf	   *f;
	LastSeen	seen;
	bool	   *scratch = NULL;
	uint32_t	scratch_slices = 0;
	size_t		pos = 0;

	if (!tlbf_check_params(&p, &problem))
	{
		fprintf(stderr, "tlbf parameters: %s\n", problem.message);
		exit(1);
	}
	f = heap_filter(&p, &memory);
	last_seen_init(&seen, s->n);
	for (int m = 0; m < nmoments; m++)
	{
		MomentResult *r = &out[m];

		memset(r, 0, sizeof(*r));
		r->at = moments[m];
		for (; pos < s->n && s->times[pos] <= r->at; pos++)
		{
			if (tlbf_insert(&f, &memory, eval_hash(s->keys[pos]), s->times[pos]) != TLBF_OK)
			{
				fprintf(stderr, "tlbf_insert failed\n");
				exit(1);
			}
			last_seen_put(&seen, s->keys[pos], (int64_t) pos);
		}
		if (f->nslices > scratch_slices)
		{
			free(scratch);
			scratch_slices = f->nslices;
			scratch = eval_calloc(2 * (size_t) scratch_slices, sizeof(bool));
		}
		r->window_seconds = (double) window / EVAL_SECOND;
		r->error_rate = error_rate;
		r->k = f->k;
		r->l = f->l;
		ask_moment(f, &seen, s->times, keys, nkeys, scratch, r);
	}
	last_seen_free(&seen);
	free(scratch);
	free(f);
}

/* Add one calibration's tallies to another (pooling settings). */
void
calibration_add(Calibration *sum, const Calibration *c)
{
	for (int b = 0; b < INF_BINS; b++)
	{
		sum->count[b] += c->count[b];
		sum->in_window[b] += c->in_window[b];
		for (int k = 0; k < NKINDS; k++)
			sum->by_kind[b][k] += c->by_kind[b][k];
		sum->sum_posterior[b] += c->sum_posterior[b];
	}
	sum->sum_squared_error += c->sum_squared_error;
	sum->sum_prior += c->sum_prior;
}

/*
 * The posterior error calibrated posteriors would show with these bins'
 * counts, from sampling alone: in each bin the fraction in the window is
 * then about normal around the bin's mean posterior p with variance
 * p (1 - p) / count, and E|fraction - midpoint| is that of a folded normal.
 */
double
calibration_noise_floor(const Calibration *c)
{
	long		n = calibration_positives(c);
	double		sum = 0.0;

	for (int b = 0; b < INF_BINS; b++)
	{
		double		p,
					mu,
					sigma;

		if (c->count[b] == 0)
			continue;
		p = c->sum_posterior[b] / c->count[b];
		mu = p - (b + 0.5) / INF_BINS;
		sigma = sqrt(fmax(p * (1.0 - p), 1e-12) / c->count[b]);
		sum += c->count[b] * (sigma * sqrt(2.0 / M_PI) * exp(-mu * mu / (2.0 * sigma * sigma)) +
							  mu * erf(mu / (sigma * sqrt(2.0))));
	}
	return n > 0 ? sum / n : NAN;
}

long
calibration_positives(const Calibration *c)
{
	long		n = 0;

	for (int b = 0; b < INF_BINS; b++)
		n += c->count[b];
	return n;
}

/* The Brier score of the positive answers: mean (posterior - truth)^2. */
double
calibration_brier(const Calibration *c)
{
	long		n = calibration_positives(c);

	return n > 0 ? c->sum_squared_error / n : NAN;
}

/*
 * The mean over positive answers of |fraction in the window - x| of their
 * bin, x being the bin's midpoint (the seed's eq. 35: posterior error) or
 * the bin's mean posterior (without the half-bin floor of midpoints).
 */
double
calibration_error(const Calibration *c, bool midpoints)
{
	long		n = calibration_positives(c);
	double		sum = 0.0;

	for (int b = 0; b < INF_BINS; b++)
	{
		double		x;

		if (c->count[b] == 0)
			continue;
		x = midpoints ? (b + 0.5) / INF_BINS : c->sum_posterior[b] / c->count[b];
		sum += fabs((double) c->in_window[b] / c->count[b] - x) * c->count[b];
	}
	return n > 0 ? sum / n : NAN;
}
