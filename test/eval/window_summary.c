/*-------------------------------------------------------------------------
 *
 * window_summary.c
 *	  Medians of the comparison's results per corpus, pattern, budget and
 *	  structure (as the guarded-epoch paper's Table 1 reports them), tlbf
 *	  against the goals, and the same as Markdown tables.
 *
 * Groups: all synthetic count-window lines (uniform, zipf and bursty,
 * every seed) and each pattern alone; the bursty streams on a time
 * window; the web log with each window (every query seed).
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "window_filter.h"
#include "window_summary.h"

const double window_budgets[NBUDGETS] = {8, 12, 14};

static int
compare_doubles(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

/* Is a line part of a group ("all" patterns, or one)? */
static bool
in_group(const Row *r, const char *corpus, const char *pattern, double budget, int kind)
{
	return strcmp(r->corpus, corpus) == 0 && r->budget == budget && r->kind == kind &&
		(strcmp(pattern, "all") == 0 || strcmp(r->pattern, pattern) == 0);
}

/* Median of one field (a double at 'field' in Row) over a group. */
static double
median_of(const Row *rows, int nrows, const char *corpus, const char *pattern,
		  double budget, int kind, size_t field)
{
	double		v[MAX_ROWS];
	int			n = 0;

	for (int i = 0; i < nrows; i++)
		if (in_group(&rows[i], corpus, pattern, budget, kind))
			v[n++] = *(const double *) ((const char *) &rows[i] + field);
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(double), compare_doubles);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static long
live_fn_total(const Row *rows, int nrows, const char *corpus, const char *pattern,
			  double budget, int kind)
{
	long		total = 0;

	for (int i = 0; i < nrows; i++)
		if (in_group(&rows[i], corpus, pattern, budget, kind))
			total += rows[i].live_fn;
	return total;
}

static int
kind_index(const char *name)
{
	for (int k = 0; k < num_window_kinds; k++)
		if (strcmp(window_kinds[k].name, name) == 0)
			return k;
	return -1;
}

static const struct
{
	const char *corpus;
	const char *pattern;
	const char *title;
}			groups[] =
{
	{"synthetic", "all", "Synthetic streams (uniform, zipf, bursty; count window)"},
	{"synthetic", "uniform", "Synthetic: uniform"},
	{"synthetic", "zipf", "Synthetic: zipf"},
	{"synthetic", "bursty", "Synthetic: bursty"},
	{"synthetic-time", "bursty", "Synthetic: bursty, time window on real times"},
	{"weblog-count", "weblog", "Web log, window of 20,000 requests"},
	{"weblog-time", "weblog", "Web log, window of 5 minutes"},
};

#define NGROUPS (int) (sizeof(groups) / sizeof(groups[0]))

void
write_summaries(const char *dir, const Row *rows, int nrows, long queries)
{
	char		path[4096];
	FILE	   *csv,
			   *goals,
			   *md;
	int			ge4 = kind_index("guarded_epoch_r4"),
				ge8 = kind_index("guarded_epoch_r8"),
				bge8 = kind_index("blocked_epoch_r8"),
				cbf = kind_index("counting_bf4"),
				sbf = kind_index("stable_bf"),
				tl = kind_index("tlbf");

	snprintf(path, sizeof(path), "%s/window_summary.csv", dir);
	csv = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/window_goals.csv", dir);
	goals = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/window_summary.md", dir);
	md = fopen(path, "w");
	if (!csv || !goals || !md)
	{
		fprintf(stderr, "cannot write the summaries in %s: %s\n", dir, strerror(errno));
		exit(1);
	}
	fprintf(csv, "# Medians over the lines of window_rows.csv of each group (patterns and seeds; seeds for the web log).\n"
			"# live_fn_total: live false negatives summed over the group. meta_bits_per_live_item: tlbf's header and\n"
			"# slice directory (112 + 32 bytes per slice), not part of bits_per_live_item; 0 for the others.\n"
			"corpus,pattern,budget_bits_per_item,structure,bits_per_live_item,meta_bits_per_live_item,fpr,live_fnr,expired_pos_rate,query_mqps,live_fn_total\n");
	fprintf(goals, "# tlbf against the goals, per group and budget (medians as in window_summary.csv).\n"
			"# fpr_vs_best_epoch: tlbf FPR / the lowest FPR of the three guarded-epoch variants (goal <= 1.5).\n"
			"# below_counting, below_stable: tlbf FPR < that structure's FPR (goal: both 1).\n"
			"# qps_vs_epoch_r8: tlbf query throughput / guarded epoch r=8's (goal >= 3).\n"
			"corpus,pattern,budget_bits_per_item,tlbf_bits_per_live_item,tlbf_fpr,best_epoch_fpr,fpr_vs_best_epoch,"
			"counting_fpr,below_counting,stable_fpr,below_stable,tlbf_mqps,epoch_r8_mqps,qps_vs_epoch_r8,tlbf_live_fn\n");
	fprintf(md, "<!-- written by test/eval/window_compare.c; medians over patterns and seeds -->\n");
	fprintf(md, "Queries per line: %ld live, %ld fresh, up to %ld expired.\n", queries, queries, queries);

	for (int g = 0; g < NGROUPS; g++)
	{
		const char *c = groups[g].corpus,
				   *p = groups[g].pattern;
		bool		any = false;

		for (int i = 0; i < nrows && !any; i++)
			any = strcmp(rows[i].corpus, c) == 0;
		if (!any)
			continue;
		fprintf(md, "\n### %s\n\n", groups[g].title);
		fprintf(md, "| bits/item | structure | actual bits/item | + header/directory | FPR | live FNR | expired pos. | Mq/s |\n");
		fprintf(md, "|---|---|---|---|---|---|---|---|\n");
		/* the CSV by structure, so that each one's budgets are adjacent */
		for (int k = 0; k < num_window_kinds; k++)
			for (int b = 0; b < NBUDGETS; b++)
				fprintf(csv, "%s,%s,%g,%s,%.3f,%.3f,%.6f,%.6f,%.6f,%.3f,%ld\n", c, p, window_budgets[b],
						window_kinds[k].name,
						median_of(rows, nrows, c, p, window_budgets[b], k, offsetof(Row, bits_per_item)),
						median_of(rows, nrows, c, p, window_budgets[b], k, offsetof(Row, meta_per_item)),
						median_of(rows, nrows, c, p, window_budgets[b], k, offsetof(Row, fpr)),
						median_of(rows, nrows, c, p, window_budgets[b], k, offsetof(Row, fnr)),
						median_of(rows, nrows, c, p, window_budgets[b], k, offsetof(Row, expired_rate)),
						median_of(rows, nrows, c, p, window_budgets[b], k, offsetof(Row, mqps)),
						live_fn_total(rows, nrows, c, p, window_budgets[b], k));

		/* the tables and the goals by budget */
		for (int b = 0; b < NBUDGETS; b++)
		{
			double		fpr[16],
						mqps[16],
						best;

			for (int k = 0; k < num_window_kinds; k++)
			{
				fpr[k] = median_of(rows, nrows, c, p, window_budgets[b], k, offsetof(Row, fpr));
				mqps[k] = median_of(rows, nrows, c, p, window_budgets[b], k, offsetof(Row, mqps));
				fprintf(md, "| %g | %s | %.2f | %.2f | %.4f | %.4f | %.4f | %.1f |\n", window_budgets[b],
						window_kinds[k].name,
						median_of(rows, nrows, c, p, window_budgets[b], k, offsetof(Row, bits_per_item)),
						median_of(rows, nrows, c, p, window_budgets[b], k, offsetof(Row, meta_per_item)),
						fpr[k],
						median_of(rows, nrows, c, p, window_budgets[b], k, offsetof(Row, fnr)),
						median_of(rows, nrows, c, p, window_budgets[b], k, offsetof(Row, expired_rate)),
						mqps[k]);
			}
			best = fmin(fpr[ge4], fmin(fpr[ge8], fpr[bge8]));
			fprintf(goals, "%s,%s,%g,%.3f,%.6f,%.6f,%.3f,%.6f,%d,%.6f,%d,%.3f,%.3f,%.3f,%ld\n",
					c, p, window_budgets[b],
					median_of(rows, nrows, c, p, window_budgets[b], tl, offsetof(Row, bits_per_item)),
					fpr[tl], best, best > 0 ? fpr[tl] / best : (fpr[tl] > 0 ? INFINITY : 1.0),
					fpr[cbf], fpr[tl] < fpr[cbf], fpr[sbf], fpr[tl] < fpr[sbf],
					mqps[tl], mqps[ge8], mqps[tl] / mqps[ge8],
					live_fn_total(rows, nrows, c, p, window_budgets[b], tl));
		}
	}
	fclose(csv);
	fclose(goals);
	fclose(md);
}

