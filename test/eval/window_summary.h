/*-------------------------------------------------------------------------
 *
 * window_summary.h
 *	  The comparison's results, one per line of window_rows.csv, and the
 *	  summaries drawn from them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef EVAL_WINDOW_SUMMARY_H
#define EVAL_WINDOW_SUMMARY_H

#define NBUDGETS	3
#define MAX_ROWS	4096

typedef struct Row
{
	char		corpus[32];
	char		pattern[16];
	double		budget;
	int			kind;			/* index into window_kinds */
	double		bits_per_item;
	double		meta_per_item;
	double		fpr;
	double		fnr;
	double		expired_rate;
	double		mqps;
	long		live_fn;
} Row;

/* memory budgets, in bits per live item */
extern const double window_budgets[NBUDGETS];

extern void write_summaries(const char *dir, const Row *rows, int nrows,
							long queries);

#endif							/* EVAL_WINDOW_SUMMARY_H */
