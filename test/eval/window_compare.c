/*-------------------------------------------------------------------------
 *
 * window_compare.c
 *	  The guarded-epoch paper's comparison (its Table 1), with tlbf, the
 *	  continuous filter and a ring of rotating filters added: every
 *	  structure at the same memory, on synthetic streams and on the 1998
 *	  World Cup web log.
 *
 *	  window_compare [--smoke] --out DIR --log PATH
 *
 * Writes DIR/window_rows.csv (one line per stream, seed, budget and
 * structure) and, through window_summary.c, DIR/window_summary.csv
 * (medians over patterns and seeds), DIR/window_goals.csv and
 * DIR/window_summary.md.  Exits with 3 if a structure that promises no
 * live false negatives had one.  An empty PATH skips the web log (the
 * smoke test does so when the data is missing).
 *
 * Full run: synthetic streams of 120,000 insertions (uniform, zipf,
 * bursty; seeds 1-3) with a window of the last 20,000 insertions; the
 * bursty streams again with a time window on their real times; the web
 * log (200,000 requests, key = client id) with a window of 20,000
 * requests and with a window of 5 minutes.  Budgets of 8, 12 and 14 bits
 * per live item; 20,000 live, 20,000 fresh and 20,000 expired queries per
 * line.  --smoke runs a much smaller version of the same.
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "window_summary.h"

/* How big a run is: the full one, or the smoke test's. */
typedef struct Scale
{
	size_t		synthetic_n;
	uint64_t	window;
	int			nseeds;
	int			checkpoints;
	long		queries;
	size_t		weblog_lines;
	uint64_t	weblog_window;
	int			weblog_time_checkpoints;
} Scale;

static const Scale full_scale = {120000, 20000, 3, 20, 20000, 200000, 20000, 200};
static const Scale smoke_scale = {30000, 5000, 1, 10, 3000, 40000, 5000, 20};

static Row rows[MAX_ROWS];
static int nrows;
static int violations;
static FILE *rows_csv;

static double
ratio(long part, long whole)
{
	return whole > 0 ? (double) part / whole : NAN;
}

static void
write_rows_header(FILE *out, const Scale *scale)
{
	fprintf(out,
			"# Every structure at the same memory: one line per corpus, pattern, seed, budget and structure.\n"
			"# window: count = the last W insertions (structures see one insertion per ms); time = a span of real time.\n"
			"# Queries at %d checkpoints spread over the last two windows (web log, 5 min: %d checkpoints over the day);\n"
			"# at each, equal shares of %ld live keys (drawn from the window's insertions), %ld fresh keys (never inserted)\n"
			"# and up to %ld expired keys (from the previous window, absent from the current one).\n"
			"# Budget: budget_bits_per_item x live_items (W, or for a time window the mean insertions within it at the checkpoints).\n"
			"# Time windows: count-based structures get window_count = the most insertions any span-long stretch holds.\n"
			"# bits: the structure's cells or bit arrays, mean over checkpoints; meta_bits: tlbf's header and slice directory.\n"
			"# query_ns: per query with hashing, best of 5 runs per checkpoint; probe_ns: the same with keys hashed beforehand.\n"
			"corpus,pattern,window_kind,window,seed,budget_bits_per_item,structure,params,"
			"live_items,window_count,bits,bits_per_live_item,meta_bits_per_live_item,"
			"live_queries,live_fn,fresh_queries,fresh_fp,expired_queries,expired_pos,"
			"fpr,live_fnr,expired_pos_rate,query_mqps,query_ns,probe_ns,insert_ns\n",
			scale->checkpoints, scale->weblog_time_checkpoints,
			scale->queries, scale->queries, scale->queries);
}

/* Run every structure at every budget on one prepared stream. */
static void
run_all(const WindowSetup *w, const char *corpus, const char *pattern,
		const char *window_label, uint64_t seed)
{
	for (int b = 0; b < NBUDGETS; b++)
	{
		for (int k = 0; k < num_window_kinds; k++)
		{
			const WindowKind *kind = &window_kinds[k];
			KindResult r;
			Row		   *row;

			run_kind(w, kind, window_budgets[b], seed, &r);
			if (nrows == MAX_ROWS)
			{
				fprintf(stderr, "too many rows\n");
				exit(1);
			}
			row = &rows[nrows++];
			snprintf(row->corpus, sizeof(row->corpus), "%s", corpus);
			snprintf(row->pattern, sizeof(row->pattern), "%s", pattern);
			row->budget = window_budgets[b];
			row->kind = k;
			row->bits_per_item = r.bits / w->live_items;
			row->meta_per_item = r.meta_bits / w->live_items;
			row->fpr = ratio(r.fresh_fp, r.fresh);
			row->fnr = ratio(r.live_fn, r.live);
			row->expired_rate = ratio(r.expired_pos, r.expired);
			row->mqps = 1e3 / r.query_ns;
			row->live_fn = r.live_fn;
			if (kind->no_live_false_negatives && r.live_fn > 0)
			{
				fprintf(stderr, "LIVE FALSE NEGATIVES: %s %s seed %llu budget %g: %s missed %ld of %ld live keys\n",
						corpus, pattern, (unsigned long long) seed, window_budgets[b],
						kind->name, r.live_fn, r.live);
				violations++;
			}
			fprintf(rows_csv,
					"%s,%s,%s,%s,%llu,%g,%s,%s,%.1f,%llu,%.0f,%.3f,%.3f,"
					"%ld,%ld,%ld,%ld,%ld,%ld,%.6f,%.6f,%.6f,%.3f,%.2f,%.2f,%.2f\n",
					corpus, pattern, w->request.by_time ? "time" : "count", window_label,
					(unsigned long long) seed, window_budgets[b], kind->name, r.params,
					w->live_items, (unsigned long long) w->window_count,
					r.bits, row->bits_per_item, r.meta_bits / w->live_items,
					r.live, r.live_fn, r.fresh, r.fresh_fp, r.expired, r.expired_pos,
					row->fpr, row->fnr, row->expired_rate, row->mqps,
					r.query_ns, r.probe_ns, r.insert_ns);
		}
	}
	fflush(rows_csv);
}

static void
synthetic(const Scale *scale)
{
	for (int p = PATTERN_UNIFORM; p <= PATTERN_BURSTY; p++)
	{
		for (int seed = 1; seed <= scale->nseeds; seed++)
		{
			Stream		s;
			WindowSetup w;
			WindowRequest req = {0};
			char		label[32];

			stream_synthetic(&s, (Pattern) p, scale->synthetic_n, seed);
			req.stream = &s;
			req.window = scale->window;
			req.ncheckpoints = scale->checkpoints;
			req.queries_per_kind = scale->queries;
			req.seed = seed;
			window_setup(&w, &req);
			snprintf(label, sizeof(label), "%llu", (unsigned long long) scale->window);
			fprintf(stderr, "synthetic %s seed %d, count window %s\n", pattern_name(p), seed, label);
			run_all(&w, "synthetic", pattern_name(p), label, seed);
			window_setup_free(&w);

			/*
			 * The bursty stream has real times: again with a time window as
			 * long as W insertions take on average.
			 */
			if (p == PATTERN_BURSTY)
			{
				int64_t		last = s.times[s.n - 1];

				req.by_time = true;
				req.span = (int64_t) ((double) (last - s.times[0]) * scale->window / s.n);
				req.from = last - 2 * req.span;
				req.to = last;
				window_setup(&w, &req);
				snprintf(label, sizeof(label), "%.3fs", req.span / 1e6);
				fprintf(stderr, "synthetic %s seed %d, time window %s\n", pattern_name(p), seed, label);
				run_all(&w, "synthetic-time", pattern_name(p), label, seed);
				window_setup_free(&w);
			}
			stream_free(&s);
		}
	}
}

static bool
weblog(const Scale *scale, const char *path)
{
	Stream		s;

	if (!stream_weblog(&s, path, scale->weblog_lines))
	{
		fprintf(stderr, "cannot read the web log %s\n", path);
		return false;
	}
	for (int seed = 1; seed <= scale->nseeds; seed++)
	{
		WindowSetup w;
		WindowRequest req = {0};
		char		label[32];

		req.stream = &s;
		req.window = scale->weblog_window;
		req.ncheckpoints = scale->checkpoints;
		req.queries_per_kind = scale->queries;
		req.seed = seed;
		window_setup(&w, &req);
		snprintf(label, sizeof(label), "%llu", (unsigned long long) req.window);
		fprintf(stderr, "web log seed %d, count window %s\n", seed, label);
		run_all(&w, "weblog-count", "weblog", label, seed);
		window_setup_free(&w);

		req.by_time = true;
		req.span = 300 * EVAL_SECOND;
		req.from = s.times[0] + 2 * req.span;
		req.to = s.times[s.n - 1];
		req.ncheckpoints = scale->weblog_time_checkpoints;
		window_setup(&w, &req);
		fprintf(stderr, "web log seed %d, time window 300s\n", seed);
		run_all(&w, "weblog-time", "weblog", "300s", seed);
		window_setup_free(&w);
	}
	stream_free(&s);
	return true;
}

int
main(int argc, char **argv)
{
	const Scale *scale = &full_scale;
	const char *dir = NULL;
	const char *log = NULL;
	char		path[4096];

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--smoke") == 0)
			scale = &smoke_scale;
		else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
			dir = argv[++i];
		else if (strcmp(argv[i], "--log") == 0 && i + 1 < argc)
			log = argv[++i];
		else
		{
			dir = NULL;
			break;
		}
	}
	if (dir == NULL || log == NULL)
	{
		fprintf(stderr, "usage: window_compare [--smoke] --out DIR --log PATH\n");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/window_rows.csv", dir);
	rows_csv = fopen(path, "w");
	if (rows_csv == NULL)
	{
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	write_rows_header(rows_csv, scale);
	synthetic(scale);
	if (log[0] == '\0')
		fprintf(stderr, "no web log given: web-log lines skipped\n");
	else if (!weblog(scale, log))
		return 1;
	fclose(rows_csv);
	write_summaries(dir, rows, nrows, scale->queries);
	if (violations > 0)
	{
		fprintf(stderr, "%d lines with live false negatives from structures that promise none\n", violations);
		return 3;
	}
	return 0;
}
