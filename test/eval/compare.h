/*-------------------------------------------------------------------------
 *
 * compare.h
 *	  Running every structure over one stream with one window and one
 *	  memory budget, and measuring them the same way.
 *
 *-------------------------------------------------------------------------
 */
#ifndef EVAL_COMPARE_H
#define EVAL_COMPARE_H

#include "streams.h"
#include "window_filter.h"

/* What to run: a stream and its window, and how to query it. */
typedef struct WindowRequest
{
	const Stream *stream;
	bool		by_time;		/* window is a time span (else a count) */
	uint64_t	window;			/* count mode: insertions in the window */
	int64_t		span;			/* time mode: the span, microseconds */
	int64_t		from;			/* time mode: checkpoints in (from, to] */
	int64_t		to;
	int			ncheckpoints;
	long		queries_per_kind;	/* live, fresh and expired, each */
	uint64_t	seed;			/* query sampling */
} WindowRequest;

/* The queries asked at one moment: live keys, then fresh, then expired. */
typedef struct Checkpoint
{
	size_t		inserted;		/* stream positions fed before asking */
	int64_t		at;				/* the time of the queries */
	size_t		window_start;	/* first position inside the window */
	long		nlive;
	long		nfresh;
	long		nexpired;
	uint64_t   *keys;
	TlbfHash   *hashes;
} Checkpoint;

#define MAX_CANDIDATES 80

/* A request made ready: times, window sizes, queries, tlbf calibration. */
typedef struct WindowSetup
{
	WindowRequest request;
	int64_t    *times;			/* the times structures are given */
	int64_t		span;			/* the span time-based structures get */
	uint64_t	window_count;	/* the count count-based structures get */
	double		live_items;		/* mean insertions inside the window */
	Checkpoint *checkpoints;
	int			ncheckpoints;
	int			ncandidates;
	double		candidate_rate[MAX_CANDIDATES];
	double		candidate_bits[MAX_CANDIDATES]; /* per live item */
} WindowSetup;

typedef struct KindResult
{
	char		params[160];
	double		bits;			/* mean over checkpoints */
	double		meta_bits;
	long		live;
	long		live_fn;
	long		fresh;
	long		fresh_fp;
	long		expired;
	long		expired_pos;
	double		query_ns;		/* per query, hashing included */
	double		probe_ns;		/* per query, key already hashed */
	double		insert_ns;		/* per insertion, hashing included */
} KindResult;

extern void window_setup(WindowSetup *w, const WindowRequest *request);
extern void window_setup_free(WindowSetup *w);
extern double tlbf_rate_for_budget(const WindowSetup *w, double bits_per_item);
extern void run_kind(const WindowSetup *w, const WindowKind *kind,
					 double bits_per_item, uint64_t seed, KindResult *out);

#endif							/* EVAL_COMPARE_H */
