/*-------------------------------------------------------------------------
 *
 * inference.h
 *	  The inference experiment (issue 17): how well tlbf_posterior's
 *	  probabilities are calibrated, what deciding by them saves against
 *	  plain tlbf_query when errors have per-query penalties, and how often
 *	  tlbf_last_seen's range holds a key's last insertion; for format 3
 *	  (tb_posterior, tb_query, tb_last_seen) beside format 2.
 *
 *	  inference_queries.c	the query mix of every checkpoint
 *	  inference_measure.c	one filter configuration over one stream
 *	  inference_report.c	the CSV files and the Markdown summary
 *	  inference.c			the driver: streams, budgets, scales
 *
 *-------------------------------------------------------------------------
 */
#ifndef EVAL_INFERENCE_H
#define EVAL_INFERENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "compare.h"

#define INF_BINS		20		/* of the posterior, as in the seed's 6.1.4 */

/* The kinds of queried keys, by their true last insertion. */
typedef enum QueryKind
{
	KIND_LIVE,					/* within the window: at or after at - span */
	KIND_EXPIRED,				/* within the span before that */
	KIND_FRESH,					/* never inserted */
	NKINDS
} QueryKind;

/* The priors given to tlbf_posterior. */
typedef enum PriorChoice
{
	PRIOR_TRUE,					/* the checkpoint's true base rate */
	PRIOR_HALF,					/* 0.5: a prior set without looking */
	NPRIORS
} PriorChoice;

/* One query: its key, what is true about it, and what errors would cost. */
typedef struct Query
{
	TlbfHash	hash;
	uint8_t		kind;			/* QueryKind */
	int64_t		last_time;		/* true last insertion; fresh: unused */
	double		fp_cost;		/* penalty of a "yes" if not in the window */
	double		fn_cost;		/* penalty of a "no" if in the window */
} Query;

/* The queries of one checkpoint (of the WindowSetup with the same index). */
typedef struct QuerySet
{
	long		n;
	long		count[NKINDS];
	double		base_rate;		/* count[KIND_LIVE] / n */
	Query	   *queries;
} QuerySet;

/* Calibration: positive answers binned by the posterior returned. */
typedef struct Calibration
{
	long		count[INF_BINS];
	long		in_window[INF_BINS];
	long		by_kind[INF_BINS][NKINDS];
	double		sum_posterior[INF_BINS];
	double		sum_squared_error;	/* (posterior - truth)^2, positive answers */
	double		sum_prior;		/* over every query, for the mean prior */
} Calibration;

/* Everything measured for one stream and one filter configuration. */
typedef struct InferenceResult
{
	int			format;			/* 2: the paper's layout (tlbf.h); 3: tb.h */
	char		stream[32];
	char		budget_label[16];	/* "8", "12", ... or "1%" */
	double		budget;			/* bits per live item; 0 for a rate target */
	double		error_rate;
	int			k;
	int			l;				/* format 3: generations per span */
	double		bits_per_item;	/* mean over checkpoints */
	double		span_seconds;
	long		queries[NKINDS];
	long		contains_yes[NKINDS];	/* tlbf_query said yes */
	long		inconsistent;	/* query, posterior > 0, last_seen disagree */
	long		live_missed;	/* live keys tlbf_query did not find */
	Calibration calibration[NPRIORS];
	double		posterior_sum[NPRIORS][NKINDS]; /* over positive answers */
	double		penalty_contains;
	double		penalty_posterior[NPRIORS];
	double		penalty_prior_only;
	long		errors_contains;
	long		fp_posterior[NPRIORS];
	long		fn_posterior[NPRIORS];
	/* last seen, for live keys */
	long		live_held;		/* the range holds the true time */
	long		live_too_new;	/* the range lies after the true time */
	long		live_unbounded; /* no lower bound */
	double		median_width_seconds;	/* unbounded ranges count as infinite */
	double		median_bounded_width_seconds;
	long		ranges[NKINDS]; /* keys that got a range */
} InferenceResult;

/*
 * The moments experiment (the measure): at one moment, every key
 * the stream ever has (the web log: the day's clients) is asked, with the
 * prior set to the share of them really in the window.  Format 2 only: it
 * measures the paper's layout's model, whose goal it asserts.
 */
typedef struct MomentResult
{
	char		stream[32];
	char		window_label[16];	/* "10 min", ... */
	char		moment_label[16];	/* "17:34", ... */
	char		period[16];		/* the part of the day: settings pooled */
	bool		held_out;		/* not among the moments the model was
								 * examined on */
	int64_t		at;
	double		window_seconds;
	double		error_rate;
	int			k;
	int			l;
	double		prior;			/* live / keys */
	long		keys;
	long		live;
	long		found;			/* tlbf_query said yes */
	long		inconsistent;
	long		live_missed;
	Calibration positive;		/* answers with a posterior above 0 */
	Calibration every;			/* every answer (a 0 in the first bin) */
} MomentResult;

/* inference_queries.c */
extern uint64_t *stream_distinct_keys(const Stream *s, long *n);

extern QuerySet *inference_queries(const WindowSetup *w, long max_known,
								   uint64_t seed);
extern void inference_queries_free(QuerySet *sets, int n);

/* inference_measure.c */
extern void inference_measure(const WindowSetup *w, const QuerySet *sets,
							  double error_rate, int format, InferenceResult *out);
extern void inference_moments(const Stream *s, const uint64_t *keys, long nkeys,
							  int64_t window, double error_rate,
							  const int64_t *moments, int nmoments,
							  MomentResult *out);
extern void calibration_add(Calibration *sum, const Calibration *c);
extern double calibration_error(const Calibration *c, bool midpoints);
extern double calibration_noise_floor(const Calibration *c);
extern long calibration_positives(const Calibration *c);
extern double calibration_brier(const Calibration *c);

/* inference_report.c */
extern void inference_report(const char *dir, const InferenceResult *results,
							 int n, const char *setup_note);
extern bool moments_report(const char *dir, const MomentResult *results, int n,
						   const char *setup_note);

#endif							/* EVAL_INFERENCE_H */
