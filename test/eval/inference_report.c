/*-------------------------------------------------------------------------
 *
 * inference_report.c
 *	  The inference experiment's files: one CSV per question (calibration,
 *	  penalties, last seen) and a Markdown summary with the goals.
 *
 * Both formats go in the same files: format 2's lines first, as they were
 * before format 3 was measured (its CSV lines gain only a last column,
 * 'format', so that readers by column index still work; its part of the
 * summary is unchanged), then format 3's, and in the summary the two side
 * by side.
 *
 * Goals (issue 17):
 *	  calibration	posterior error (eq. 35) at most 0.05 at 8, 12 and 14
 *					bits per item and at the 1% target, with the prior set
 *					to the mix's base rate;
 *	  penalties		the posterior decision's total penalty below plain
 *					tlbf_query's at every memory budget;
 *	  last seen		the fraction of live keys whose range holds their last
 *					insertion time at least 1 - the false-positive rate
 *					(fresh keys that get a range).
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inference.h"

#define POSTERIOR_ERROR_GOAL 0.05

static const char *const prior_names[NPRIORS] = {"base_rate", "0.5"};

static FILE *
open_out(const char *dir, const char *name)
{
	char		path[4096];
	FILE	   *out;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	out = fopen(path, "w");
	if (out == NULL)
	{
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return out;
}

static double
ratio(double part, double whole)
{
	return whole > 0 ? part / whole : NAN;
}

static long
total_queries(const InferenceResult *r)
{
	return r->queries[KIND_LIVE] + r->queries[KIND_EXPIRED] + r->queries[KIND_FRESH];
}

/* The budgets the calibration goal is about: 8, 12, 14 bits and 1%. */
static bool
calibration_goal_applies(const InferenceResult *r)
{
	return r->budget == 0 || r->budget == 8 || r->budget == 12 || r->budget == 14;
}

static double
mean_prior(const InferenceResult *r, int p)
{
	return r->calibration[p].sum_prior / total_queries(r);
}

static double
held_fraction(const InferenceResult *r)
{
	return ratio(r->live_held, r->queries[KIND_LIVE]);
}

static double
fpr(const InferenceResult *r)
{
	return ratio(r->ranges[KIND_FRESH], r->queries[KIND_FRESH]);
}

static double
penalty_ratio(const InferenceResult *r, int p)
{
	return ratio(r->penalty_posterior[p], r->penalty_contains);
}

/* The columns that say which filter a line is about. */
static void
config_columns(FILE *out, const InferenceResult *r)
{
	fprintf(out, "%s,%s,%.4g,%d,%d,%.3f,", r->stream, r->budget_label, r->error_rate,
			r->k, r->l, r->bits_per_item);
}

/* The last column, added with format 3: the filter's format. */
static void
end_line(FILE *out, const InferenceResult *r)
{
	fprintf(out, ",%d\n", r->format);
}

/* What every CSV file's comment says about the format column. */
static void
format_comment(FILE *out)
{
	fprintf(out,
			"# format: 2 = the paper's layout (tlbf.h), 3 = tb.h with the same span, error rate and capacity guess\n"
			"# (l: its generations per span; bits_per_item: its bands' lines); format 2's lines come first.\n");
}

static void
write_calibration(const char *dir, const InferenceResult *results, int n)
{
	FILE	   *out = open_out(dir, "inference_calibration.csv");

	fprintf(out,
			"# Calibration of tlbf_posterior (the seed's 6.1.4): the positive answers (posterior > 0) in 20 bins of the\n"
			"# posterior; observed_fraction = the share of the bin's keys really in the window (last insertion >= at - span).\n"
			"# prior: base_rate = each checkpoint's true share of live keys in the query mix; 0.5 = a prior set without looking.\n"
			"# live/expired/fresh: the bin's keys by kind. posterior_error (eq. 35) = mean over positive answers of\n"
			"# |observed_fraction - midpoint|; ece: the same with the bin's mean posterior instead of its midpoint;\n"
			"# brier: mean (posterior - truth)^2 over positive answers (truth 1 if in the window, else 0).\n"
			"# budget: bits per live item the error rate was matched to (1%%: the error-rate target as is).\n");
	format_comment(out);
	fprintf(out,
			"stream,budget,error_rate,k,l,bits_per_item,prior,mean_prior,positives,posterior_error,ece,brier,"
			"bin,bin_low,bin_high,midpoint,count,in_window,observed_fraction,mean_posterior,live,expired,fresh,"
			"format\n");
	for (int i = 0; i < n; i++)
	{
		const InferenceResult *r = &results[i];

		for (int p = 0; p < NPRIORS; p++)
		{
			const Calibration *c = &r->calibration[p];

			for (int b = 0; b < INF_BINS; b++)
			{
				config_columns(out, r);
				fprintf(out, "%s,%.4f,%ld,%.4f,%.4f,%.4f,%d,%.2f,%.2f,%.3f,%ld,%ld,%.4f,%.4f,%ld,%ld,%ld",
						prior_names[p], mean_prior(r, p), calibration_positives(c),
						calibration_error(c, true), calibration_error(c, false), calibration_brier(c),
						b, (double) b / INF_BINS, (double) (b + 1) / INF_BINS,
						(b + 0.5) / INF_BINS, c->count[b], c->in_window[b],
						ratio(c->in_window[b], c->count[b]),
						ratio(c->sum_posterior[b], c->count[b]),
						c->by_kind[b][KIND_LIVE], c->by_kind[b][KIND_EXPIRED],
						c->by_kind[b][KIND_FRESH]);
				end_line(out, r);
			}
		}
	}
	fclose(out);
}

static void
write_penalties(const char *dir, const InferenceResult *results, int n)
{
	FILE	   *out = open_out(dir, "inference_penalties.csv");

	fprintf(out,
			"# Penalties (the seed's 6.1.1): per query fp_cost and fn_cost uniform in [1, 10), fixed seed, the same for every\n"
			"# filter of a stream. contains: tlbf_query's yes/no. posterior: yes iff posterior >= fp_cost / (fp_cost + fn_cost),\n"
			"# with the prior = the checkpoint's base rate (_prior05: 0.5). prior_only: the same rule on the prior alone.\n"
			"# ratio = penalty_posterior / penalty_contains (below 1: the posterior decision pays less).\n");
	format_comment(out);
	fprintf(out,
			"stream,budget,error_rate,k,l,bits_per_item,queries,base_rate,contains_yes,contains_errors,penalty_contains,"
			"penalty_posterior,ratio,fp_posterior,fn_posterior,penalty_posterior_prior05,ratio_prior05,"
			"fp_posterior_prior05,fn_posterior_prior05,penalty_prior_only,ratio_prior_only,format\n");
	for (int i = 0; i < n; i++)
	{
		const InferenceResult *r = &results[i];

		config_columns(out, r);
		fprintf(out, "%ld,%.4f,%ld,%ld,%.1f,%.1f,%.4f,%ld,%ld,%.1f,%.4f,%ld,%ld,%.1f,%.4f",
				total_queries(r), mean_prior(r, PRIOR_TRUE),
				r->contains_yes[KIND_LIVE] + r->contains_yes[KIND_EXPIRED] + r->contains_yes[KIND_FRESH],
				r->errors_contains, r->penalty_contains,
				r->penalty_posterior[PRIOR_TRUE], penalty_ratio(r, PRIOR_TRUE),
				r->fp_posterior[PRIOR_TRUE], r->fn_posterior[PRIOR_TRUE],
				r->penalty_posterior[PRIOR_HALF], penalty_ratio(r, PRIOR_HALF),
				r->fp_posterior[PRIOR_HALF], r->fn_posterior[PRIOR_HALF],
				r->penalty_prior_only, ratio(r->penalty_prior_only, r->penalty_contains));
		end_line(out, r);
	}
	fclose(out);
}

static void
write_last_seen(const char *dir, const InferenceResult *results, int n)
{
	FILE	   *out = open_out(dir, "inference_last_seen.csv");

	fprintf(out,
			"# tlbf_last_seen: held_fraction = live keys (last insertion >= at - span) whose [lower, upper] holds their true\n"
			"# last insertion time; too_new: ranges entirely after it (a chance run newer than the key's own). fpr = fresh\n"
			"# (never inserted) keys that get a range; goal_held = 1 - fpr. expired_range_rate: keys last inserted within the\n"
			"# span before the window that get a range. Widths: upper - lower of live keys' ranges, an unbounded one (no\n"
			"# lower bound) counted as infinite in median_width and left out of median_bounded_width.\n");
	format_comment(out);
	fprintf(out,
			"stream,budget,error_rate,k,l,bits_per_item,span_s,live_queries,live_ranges,live_held,held_fraction,"
			"live_too_new,unbounded_fraction,fresh_queries,fresh_ranges,fpr,goal_held,expired_queries,expired_ranges,"
			"expired_range_rate,median_width_s,median_width_over_span,median_bounded_width_s,median_bounded_width_over_span,"
			"format\n");
	for (int i = 0; i < n; i++)
	{
		const InferenceResult *r = &results[i];

		config_columns(out, r);
		fprintf(out, "%.3f,%ld,%ld,%ld,%.5f,%ld,%.5f,%ld,%ld,%.5f,%.5f,%ld,%ld,%.5f,%.3f,%.5f,%.3f,%.5f",
				r->span_seconds, r->queries[KIND_LIVE], r->ranges[KIND_LIVE], r->live_held,
				held_fraction(r), r->live_too_new,
				ratio(r->live_unbounded, r->ranges[KIND_LIVE]),
				r->queries[KIND_FRESH], r->ranges[KIND_FRESH], fpr(r), 1.0 - fpr(r),
				r->queries[KIND_EXPIRED], r->ranges[KIND_EXPIRED],
				ratio(r->ranges[KIND_EXPIRED], r->queries[KIND_EXPIRED]),
				r->median_width_seconds, r->median_width_seconds / r->span_seconds,
				r->median_bounded_width_seconds, r->median_bounded_width_seconds / r->span_seconds);
		end_line(out, r);
	}
	fclose(out);
}

static const char *
met(bool ok)
{
	return ok ? "met" : "**missed**";
}

/* Mean posterior of the positive answers to keys of one kind. */
static double
mean_positive(const InferenceResult *r, int p, QueryKind kind)
{
	return ratio(r->posterior_sum[p][kind], r->contains_yes[kind]);
}

/* The goals, over one format's results. */
static void
summary_goals(FILE *md, const InferenceResult *results, int n)
{
	int			cal_total = 0,
				cal_met = 0,
				pen_total = 0,
				pen_met = 0,
				ls_total = 0,
				ls_met = 0;
	double		worst_error = 0.0,
				worst_ratio = 0.0,
				best_ratio = INFINITY;

	for (int i = 0; i < n; i++)
	{
		const InferenceResult *r = &results[i];
		double		e = calibration_error(&r->calibration[PRIOR_TRUE], true);

		if (calibration_goal_applies(r))
		{
			cal_total++;
			cal_met += e <= POSTERIOR_ERROR_GOAL;
			worst_error = fmax(worst_error, e);
		}
		pen_total++;
		pen_met += penalty_ratio(r, PRIOR_TRUE) < 1.0;
		worst_ratio = fmax(worst_ratio, penalty_ratio(r, PRIOR_TRUE));
		best_ratio = fmin(best_ratio, penalty_ratio(r, PRIOR_TRUE));
		ls_total++;
		ls_met += held_fraction(r) >= 1.0 - fpr(r);
	}

	fprintf(md, "| goal | result |\n|---|---|\n");
	fprintf(md, "| posterior error <= 0.05 at 8, 12, 14 bits and 1%% (prior = base rate) | %s: %d of %d; worst %.4f |\n",
			met(cal_met == cal_total), cal_met, cal_total, worst_error);
	fprintf(md, "| posterior decision below plain contains at every budget | %s: %d of %d; ratio %.3f to %.3f |\n",
			met(pen_met == pen_total), pen_met, pen_total, best_ratio, worst_ratio);
	fprintf(md, "| last seen: held >= 1 - FPR | %s: %d of %d |\n", met(ls_met == ls_total), ls_met, ls_total);
}

static void
summary_calibration(FILE *md, const InferenceResult *results, int n, const char *prefix)
{
	fprintf(md, "\n### %sCalibration\n\n", prefix);
	fprintf(md, "| stream | budget | bits/item | (k, l) | positive answers | posterior error | ECE | Brier | "
			"mean posterior: live / expired / fresh | prior 0.5: posterior error | goal |\n");
	fprintf(md, "|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < n; i++)
	{
		const InferenceResult *r = &results[i];
		const Calibration *c = &r->calibration[PRIOR_TRUE];
		double		e = calibration_error(c, true);

		fprintf(md, "| %s | %s | %.2f | (%d, %d) | %ld | %.4f | %.4f | %.4f | %.3f / %.3f / %.3f | %.4f | %s |\n",
				r->stream, r->budget_label, r->bits_per_item, r->k, r->l,
				calibration_positives(c), e, calibration_error(c, false), calibration_brier(c),
				mean_positive(r, PRIOR_TRUE, KIND_LIVE), mean_positive(r, PRIOR_TRUE, KIND_EXPIRED),
				mean_positive(r, PRIOR_TRUE, KIND_FRESH),
				calibration_error(&r->calibration[PRIOR_HALF], true),
				calibration_goal_applies(r) ? met(e <= POSTERIOR_ERROR_GOAL) : "-");
	}
}

static void
summary_penalties(FILE *md, const InferenceResult *results, int n, const char *prefix)
{
	fprintf(md, "\n### %sPenalties\n\n", prefix);
	fprintf(md, "| stream | budget | bits/item | base rate | contains | posterior | ratio | prior 0.5: ratio | "
			"prior only: ratio | goal |\n");
	fprintf(md, "|---|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < n; i++)
	{
		const InferenceResult *r = &results[i];

		fprintf(md, "| %s | %s | %.2f | %.3f | %.0f | %.0f | %.3f | %.3f | %.3f | %s |\n",
				r->stream, r->budget_label, r->bits_per_item, mean_prior(r, PRIOR_TRUE),
				r->penalty_contains, r->penalty_posterior[PRIOR_TRUE], penalty_ratio(r, PRIOR_TRUE),
				penalty_ratio(r, PRIOR_HALF), ratio(r->penalty_prior_only, r->penalty_contains),
				met(penalty_ratio(r, PRIOR_TRUE) < 1.0));
	}
}

static void
summary_last_seen(FILE *md, const InferenceResult *results, int n, const char *prefix)
{
	fprintf(md, "\n### %sLast seen\n\n", prefix);
	fprintf(md, "| stream | budget | bits/item | held | 1 - FPR | too new | expired with a range | "
			"median width / span | bounded: median width / span | unbounded | goal |\n");
	fprintf(md, "|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < n; i++)
	{
		const InferenceResult *r = &results[i];

		fprintf(md, "| %s | %s | %.2f | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %s |\n",
				r->stream, r->budget_label, r->bits_per_item, held_fraction(r), 1.0 - fpr(r),
				ratio(r->live_too_new, r->queries[KIND_LIVE]),
				ratio(r->ranges[KIND_EXPIRED], r->queries[KIND_EXPIRED]),
				r->median_width_seconds / r->span_seconds,
				r->median_bounded_width_seconds / r->span_seconds,
				ratio(r->live_unbounded, r->ranges[KIND_LIVE]),
				met(held_fraction(r) >= 1.0 - fpr(r)));
	}
}

/* One format's goals and tables; 'prefix' heads its tables' titles. */
static void
summary_format(FILE *md, const InferenceResult *results, int n, const char *prefix)
{
	summary_goals(md, results, n);
	summary_calibration(md, results, n, prefix);
	summary_penalties(md, results, n, prefix);
	summary_last_seen(md, results, n, prefix);
}

/* Format 2's result for the configuration of 'r', or NULL. */
static const InferenceResult *
format2_of(const InferenceResult *results, int n, const InferenceResult *r)
{
	for (int i = 0; i < n; i++)
		if (results[i].format == 2 && strcmp(results[i].stream, r->stream) == 0 &&
			strcmp(results[i].budget_label, r->budget_label) == 0)
			return &results[i];
	return NULL;
}

/* The headline figures of each configuration, format 2 / format 3. */
static void
summary_side_by_side(FILE *md, const InferenceResult *results, int n)
{
	fprintf(md, "\n### Format 2 and format 3\n\n");
	fprintf(md, "Each cell: format 2 / format 3, prior = base rate.\n\n");
	fprintf(md, "| stream | budget | error rate | bits/item | posterior error | Brier | penalty ratio | "
			"held | median width / span |\n");
	fprintf(md, "|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < n; i++)
	{
		const InferenceResult *t = &results[i];
		const InferenceResult *r = format2_of(results, n, t);
		const Calibration *c2,
				   *c3 = &t->calibration[PRIOR_TRUE];

		if (t->format != 3 || r == NULL)
			continue;
		c2 = &r->calibration[PRIOR_TRUE];
		fprintf(md, "| %s | %s | %.4g | %.2f / %.2f | %.4f / %.4f | %.4f / %.4f | %.3f / %.3f | "
				"%.4f / %.4f | %.4f / %.4f |\n",
				t->stream, t->budget_label, t->error_rate, r->bits_per_item, t->bits_per_item,
				calibration_error(c2, true), calibration_error(c3, true),
				calibration_brier(c2), calibration_brier(c3),
				penalty_ratio(r, PRIOR_TRUE), penalty_ratio(t, PRIOR_TRUE),
				held_fraction(r), held_fraction(t),
				r->median_width_seconds / r->span_seconds,
				t->median_width_seconds / t->span_seconds);
	}
}

/*
 * Format 2's part as it was before format 3 was measured, then format
 * 3's, then the two side by side.  'results' holds format 2's first (see
 * inference_report).
 */
static void
write_summary(const char *dir, const InferenceResult *results, int n, const char *note)
{
	FILE	   *md = open_out(dir, "inference_summary.md");
	int			n2 = 0;

	while (n2 < n && results[n2].format == 2)
		n2++;
	fprintf(md, "<!-- written by test/eval/inference.c -->\n");
	fprintf(md, "%s\n\n", note);
	fprintf(md, "Query mix per checkpoint: every key last inserted within the window (live), every key last inserted "
			"within the span before it (expired), and as many never-inserted keys (fresh) as the two together. "
			"The prior is the checkpoint's base rate (live / all) unless marked 0.5.\n\n");
	summary_format(md, results, n2, "");
	if (n2 < n)
	{
		fprintf(md, "\n## Format 3\n\n");
		fprintf(md, "The same streams, queries and priors asked of format 3 (tb_query, tb_posterior, tb_last_seen) "
				"with format 2's span, error rate and capacity guess (default generations; (k, l) = bits a key "
				"sets, generations per span; bits/item: its bands' lines). The CSV files' lines with format = 3.\n\n");
		summary_format(md, results + n2, n - n2, "Format 3: ");
		summary_side_by_side(md, results, n);
	}
	fclose(md);
}

/*
 * The results in report order: format 2's, then format 3's, each in the
 * order they were run.
 */
static InferenceResult *
by_format(const InferenceResult *results, int n)
{
	InferenceResult *sorted = eval_calloc(n > 0 ? n : 1, sizeof(InferenceResult));
	int			m = 0;

	for (int format = 2; format <= 3; format++)
		for (int i = 0; i < n; i++)
			if (results[i].format == format)
				sorted[m++] = results[i];
	return sorted;
}

void
inference_report(const char *dir, const InferenceResult *results, int n, const char *note)
{
	InferenceResult *sorted = by_format(results, n);

	write_calibration(dir, sorted, n);
	write_penalties(dir, sorted, n);
	write_last_seen(dir, sorted, n);
	write_summary(dir, sorted, n, note);
	free(sorted);
}

/*
 * The moments experiment: one line per setting (stream, window, moment),
 * then the pooled lines (per stream and window, per stream, everything),
 * into inference_moments.csv; the pooled bins into
 * inference_moments_bins.csv; the tables into inference_moments.md.  The
 * goal: posterior error (eq. 35) over the answers above 0 at most 0.05 in
 * every setting and pooled.
 */
typedef struct MomentPool
{
	char		stream[32];
	char		window_label[16];	/* "" for every window */
	char		period[16];		/* "" for the whole stream */
	bool		held_out_only;
	int			settings;
	long		keys;
	long		live;
	long		found;
	Calibration positive;
	Calibration every;
} MomentPool;

#define MAX_POOLS 128

static void
pool_add(MomentPool *pool, const MomentResult *r)
{
	pool->settings++;
	pool->keys += r->keys;
	pool->live += r->live;
	pool->found += r->found;
	calibration_add(&pool->positive, &r->positive);
	calibration_add(&pool->every, &r->every);
}

static MomentPool *
pool_for(MomentPool *pools, int *npools, const char *stream, const char *window,
		 const char *period, bool held_out_only)
{
	for (int i = 0; i < *npools; i++)
		if (strcmp(pools[i].stream, stream) == 0 &&
			strcmp(pools[i].window_label, window) == 0 &&
			strcmp(pools[i].period, period) == 0 &&
			pools[i].held_out_only == held_out_only)
			return &pools[i];
	if (*npools == MAX_POOLS)
	{
		fprintf(stderr, "moments_report: too many pools\n");
		exit(1);
	}
	memset(&pools[*npools], 0, sizeof(MomentPool));
	snprintf(pools[*npools].stream, sizeof(pools[*npools].stream), "%s", stream);
	snprintf(pools[*npools].window_label, sizeof(pools[*npools].window_label), "%s", window);
	snprintf(pools[*npools].period, sizeof(pools[*npools].period), "%s", period);
	pools[*npools].held_out_only = held_out_only;
	return &pools[(*npools)++];
}

/*
 * Pools: per stream, window and part of the day; per stream and window; per
 * stream; all; each also of the held-out moments only.
 */
static int
build_pools(const MomentResult *results, int n, MomentPool *pools)
{
	int			npools = 0;

	for (int i = 0; i < n; i++)
	{
		const MomentResult *r = &results[i];

		for (int h = 0; h <= (r->held_out ? 1 : 0); h++)
		{
			pool_add(pool_for(pools, &npools, r->stream, r->window_label, r->period, h), r);
			pool_add(pool_for(pools, &npools, r->stream, r->window_label, "", h), r);
			pool_add(pool_for(pools, &npools, r->stream, "", "", h), r);
			pool_add(pool_for(pools, &npools, "all", "", "", h), r);
		}
	}
	return npools;
}

static void
write_moment_bins(FILE *out, const char *stream, const char *window, const char *moment,
				  const Calibration *c)
{
	for (int b = 0; b < INF_BINS; b++)
		fprintf(out, "%s,%s,%s,%d,%.3f,%ld,%ld,%.4f,%.4f,%ld,%ld,%ld\n",
				stream, window, moment, b, (b + 0.5) / INF_BINS, c->count[b], c->in_window[b],
				ratio(c->in_window[b], c->count[b]), ratio(c->sum_posterior[b], c->count[b]),
				c->by_kind[b][KIND_LIVE], c->by_kind[b][KIND_EXPIRED], c->by_kind[b][KIND_FRESH]);
}

static const char *
pool_label(const MomentPool *p)
{
	static char label[64];

	snprintf(label, sizeof(label), "%s%s%s", p->period[0] ? p->period : "",
			 p->period[0] ? " " : "", p->held_out_only ? "pooled (held out)" : "pooled");
	return label;
}

/* How many of a kind of setting meet the goal, and the worst. */
typedef struct GoalCount
{
	int			total;
	int			missed;
	double		worst;
} GoalCount;

static void
goal_count(GoalCount *g, double error)
{
	g->total++;
	g->missed += !(error <= POSTERIOR_ERROR_GOAL);
	g->worst = fmax(g->worst, error);
}

static void
goal_line(FILE *md, const char *what, const GoalCount *g)
{
	fprintf(md, "| %s | %s: %d of %d; worst %.4f |\n", what, met(g->missed == 0),
			g->total - g->missed, g->total, g->worst);
}

/*
 * True if every stream-and-window pool, every stream pool and the overall
 * one meet the goal (what the smoke run asserts); single moments and
 * quarters of the day are reported.
 */
bool
moments_report(const char *dir, const MomentResult *results, int n, const char *note)
{
	FILE	   *csv = open_out(dir, "inference_moments.csv");
	FILE	   *bins = open_out(dir, "inference_moments_bins.csv");
	FILE	   *md = open_out(dir, "inference_moments.md");
	MomentPool	pools[MAX_POOLS];
	int			npools = build_pools(results, n, pools);
	GoalCount	single = {0},
				by_period = {0},
				by_window = {0},
				overall = {0},
				held_out = {0};

	fprintf(csv,
			"# Moments: at each moment every distinct key of the stream is asked (web log: the day's clients), with the prior\n"
			"# set to the share of them last inserted within the window. Error rate 0.1. posterior_error (eq. 35, 20 bins)\n"
			"# over the answers with a posterior above 0 (positive_*), and over every answer, a 0 in the first bin (all_*).\n"
			"# held_out: a moment not among those the model was examined on. Pooled lines sum the bins of their settings.\n"
			"# noise_floor: the positive posterior error calibrated posteriors would show with these bins' counts (sampling alone).\n"
			"stream,window,moment,held_out,k,l,keys,live,prior,found,positive_posterior_error,positive_ece,"
			"positive_brier,all_posterior_error,all_ece,all_brier,noise_floor\n");
	fprintf(bins,
			"# Bins of the moments experiment's answers above 0, per setting and pooled (see inference_moments.csv).\n"
			"stream,window,moment,bin,midpoint,count,in_window,observed_fraction,mean_posterior,live,expired,fresh\n");
	for (int i = 0; i < n; i++)
	{
		const MomentResult *r = &results[i];
		double		e = calibration_error(&r->positive, true);

		fprintf(csv, "%s,%s,%s,%d,%d,%d,%ld,%ld,%.4f,%ld,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n",
				r->stream, r->window_label, r->moment_label, r->held_out, r->k, r->l, r->keys,
				r->live, r->prior, r->found, e, calibration_error(&r->positive, false),
				calibration_brier(&r->positive), calibration_error(&r->every, true),
				calibration_error(&r->every, false), calibration_brier(&r->every),
				calibration_noise_floor(&r->positive));
		write_moment_bins(bins, r->stream, r->window_label, r->moment_label, &r->positive);
		goal_count(&single, e);
	}
	for (int i = 0; i < npools; i++)
	{
		const MomentPool *p = &pools[i];
		double		e = calibration_error(&p->positive, true);

		fprintf(csv, "%s,%s,%s,%d,,,%ld,%ld,%.4f,%ld,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n",
				p->stream, p->window_label[0] ? p->window_label : "all", pool_label(p),
				p->held_out_only, p->keys, p->live, ratio(p->live, p->keys), p->found, e,
				calibration_error(&p->positive, false), calibration_brier(&p->positive),
				calibration_error(&p->every, true), calibration_error(&p->every, false),
				calibration_brier(&p->every), calibration_noise_floor(&p->positive));
		write_moment_bins(bins, p->stream, p->window_label[0] ? p->window_label : "all",
						  pool_label(p), &p->positive);
		if (p->held_out_only && !p->period[0])
			goal_count(&held_out, e);
		else
			goal_count(p->period[0] ? &by_period : p->window_label[0] ? &by_window : &overall, e);
	}
	fclose(csv);
	fclose(bins);

	fprintf(md, "<!-- written by test/eval/inference.c -->\n%s\n\n", note);
	fprintf(md, "| goal: posterior error <= 0.05 over the answers above 0 | result |\n|---|---|\n");
	goal_line(md, "each stream and window, its moments pooled", &by_window);
	goal_line(md, "each stream, and everything, pooled", &overall);
	goal_line(md, "the same, held-out moments only", &held_out);
	goal_line(md, "each stream, window and quarter of the day, pooled", &by_period);
	goal_line(md, "each single moment (noise-limited: see noise floor)", &single);
	fprintf(md, "\n");
	fprintf(md, "| stream | window | moment | held out | (k, l) | keys | prior | found | posterior error, answers > 0 | "
			"ECE | posterior error, all answers | noise floor | goal |\n");
	fprintf(md, "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < n; i++)
	{
		const MomentResult *r = &results[i];
		double		e = calibration_error(&r->positive, true);

		fprintf(md, "| %s | %s | %s | %s | (%d, %d) | %ld | %.4f | %ld | %.4f | %.4f | %.4f | %.4f | %s |\n",
				r->stream, r->window_label, r->moment_label, r->held_out ? "yes" : "no", r->k, r->l,
				r->keys, r->prior, r->found, e, calibration_error(&r->positive, false),
				calibration_error(&r->every, true), calibration_noise_floor(&r->positive),
				met(e <= POSTERIOR_ERROR_GOAL));
	}
	for (int i = 0; i < npools; i++)
	{
		const MomentPool *p = &pools[i];
		double		e = calibration_error(&p->positive, true);

		fprintf(md, "| %s | %s | %s (%d) | %s | | %ld | %.4f | %ld | %.4f | %.4f | %.4f | %.4f | %s |\n",
				p->stream, p->window_label[0] ? p->window_label : "all", pool_label(p), p->settings,
				p->held_out_only ? "yes" : "all", p->keys, ratio(p->live, p->keys), p->found, e,
				calibration_error(&p->positive, false), calibration_error(&p->every, true),
				calibration_noise_floor(&p->positive), met(e <= POSTERIOR_ERROR_GOAL));
	}
	fclose(md);
	return by_window.missed == 0 && overall.missed == 0;
}
