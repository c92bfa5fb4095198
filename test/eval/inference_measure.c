/*-------------------------------------------------------------------------
 *
 * inference_measure.c
 *	  One filter configuration over one stream: feed it up to each
 *	  checkpoint, ask every query of the checkpoint's mix the three
 *	  questions (tlbf_query, tlbf_posterior, tlbf_last_seen) and tally.
 *
 * The filter is the core itself, with the window as its span, the mean
 * number of live insertions as its capacity guess and the given error
 * rate (matched to a memory budget by compare.c, or a target as is).
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
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashing.h"
#include "heap_memory.h"
#include "inference.h"

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

static Tlbf *
create_filter(const WindowSetup *w, double error_rate, TlbfMemory *memory)
{
	TlbfParams	p = {w->span, error_rate, (uint64_t) (w->live_items + 0.5), 0, 0, 0};
	TlbfProblem problem;

	if (p.capacity < 1)
		p.capacity = 1;
	if (!tlbf_check_params(&p, &problem))
	{
		fprintf(stderr, "tlbf parameters: %s\n", problem.message);
		exit(1);
	}
	return heap_filter(&p, memory);
}

static void
tally_calibration(Calibration *c, double posterior, double prior, const Query *q)
{
	int			bin = (int) (posterior * INF_BINS);

	c->sum_prior += prior;
	if (posterior <= 0.0)
		return;
	if (bin >= INF_BINS)
		bin = INF_BINS - 1;
	c->count[bin]++;
	c->in_window[bin] += q->kind == KIND_LIVE;
	c->by_kind[bin][q->kind]++;
	c->sum_posterior[bin] += posterior;
	c->sum_squared_error += (posterior - (q->kind == KIND_LIVE)) * (posterior - (q->kind == KIND_LIVE));
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
ask(const Tlbf *f, const QuerySet *set, const Query *q, int64_t at, bool *scratch,
	InferenceResult *out, double *widths, long *nwidths)
{
	double		priors[NPRIORS] = {set->base_rate, 0.5};
	double		threshold = q->fp_cost / (q->fp_cost + q->fn_cost);
	bool		yes = tlbf_query(f, q->hash, at, f->span);
	TlbfTime	lower,
				upper;
	bool		found = tlbf_last_seen(f, q->hash, at, f->span, scratch, &lower, &upper);

	out->queries[q->kind]++;
	out->contains_yes[q->kind] += yes;
	out->ranges[q->kind] += found;
	out->penalty_contains += penalty(yes, q);
	out->errors_contains += penalty(yes, q) > 0;
	out->penalty_prior_only += penalty(set->base_rate >= threshold, q);
	if (q->kind == KIND_LIVE && !yes)
		out->live_missed++;

	for (int p = 0; p < NPRIORS; p++)
	{
		double		posterior = tlbf_posterior(f, q->hash, at, f->span, priors[p], scratch);
		bool		decision = posterior >= threshold;

		/* with a prior inside (0, 1), a posterior above 0 is a "yes" */
		if (priors[p] > 0.0 && priors[p] < 1.0 &&
			((posterior > 0.0) != yes || found != yes))
			out->inconsistent++;
		tally_calibration(&out->calibration[p], posterior, priors[p], q);
		if (posterior > 0.0)
			out->posterior_sum[p][q->kind] += posterior;
		out->penalty_posterior[p] += penalty(decision, q);
		out->fp_posterior[p] += decision && q->kind != KIND_LIVE;
		out->fn_posterior[p] += !decision && q->kind == KIND_LIVE;
	}

	if (q->kind == KIND_LIVE && found)
	{
		bool		above = lower == TLBF_NEVER || lower <= q->last_time;

		out->live_held += above && q->last_time <= upper;
		out->live_too_new += !above;
		out->live_unbounded += lower == TLBF_NEVER;
		widths[(*nwidths)++] = lower == TLBF_NEVER ? INFINITY :
			(double) (upper - lower) / EVAL_SECOND;
	}
}

void
inference_measure(const WindowSetup *w, const QuerySet *sets, double error_rate,
				  InferenceResult *out)
{
	const uint64_t *keys = w->request.stream->keys;
	TlbfMemory	memory;
	Tlbf	   *f = create_filter(w, error_rate, &memory);
	bool	   *scratch = NULL;
	uint32_t	scratch_slices = 0;
	long		live = 0,
				nwidths = 0,
				nbounded = 0;
	double	   *widths;
	size_t		pos = 0;
	double		bits = 0.0;

	for (int c = 0; c < w->ncheckpoints; c++)
		live += sets[c].count[KIND_LIVE];
	widths = eval_calloc(live, sizeof(double));

	for (int c = 0; c < w->ncheckpoints; c++)
	{
		const Checkpoint *cp = &w->checkpoints[c];
		const QuerySet *set = &sets[c];

		for (; pos < cp->inserted; pos++)
			if (tlbf_insert(&f, &memory, eval_hash(keys[pos]), w->times[pos]) != TLBF_OK)
			{
				fprintf(stderr, "tlbf_insert failed\n");
				exit(1);
			}
		if (f->nslices > scratch_slices)
		{
			free(scratch);
			scratch_slices = f->nslices;
			scratch = eval_calloc(2 * (size_t) scratch_slices, sizeof(bool));
		}
		bits += (double) tlbf_total_words(f) * 64;
		for (long i = 0; i < set->n; i++)
			ask(f, set, &set->queries[i], cp->at, scratch, out, widths, &nwidths);
	}

	out->error_rate = error_rate;
	out->k = f->k;
	out->l = f->l;
	out->bits_per_item = bits / w->ncheckpoints / w->live_items;
	out->span_seconds = (double) w->span / EVAL_SECOND;
	out->median_width_seconds = median(widths, nwidths);
	/* sorted now: the finite widths come first */
	while (nbounded < nwidths && isfinite(widths[nbounded]))
		nbounded++;
	out->median_bounded_width_seconds = median(widths, nbounded);
	free(widths);
	free(scratch);
	free(f);
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
