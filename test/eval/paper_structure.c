/*-------------------------------------------------------------------------
 *
 * paper_structure.c
 *	  The Time-limited Bloom Filter paper, section 7.1 and 7.2: number of
 *	  slices, size of slice 0 and bits per element at every insertion
 *	  (Figures 1, 2 and 3), the range of bits per element at steady state
 *	  per error rate (Table 2), and the check that every element inserted
 *	  within the span is found.
 *
 *	  paper_structure [--smoke] --out DIR
 *
 * Figures: error rate 0.1, initial capacity 1,000 (under-sized: the real
 * rate is 3,000 per span) and 10,000 (over-sized), (k, l) in (4,3), (5,7),
 * (6,14), (7,28), (8,56).  Table 2: the core's default (k, l) for 0.1 to
 * 0.00001, both capacities.
 *
 * Bits per element = the bits of all slices the filter holds (expired ones
 * not yet dropped included) / the elements inserted within the last 300 s
 * (at or after now - span: 3,001 once the stream has run for a span).
 *
 * Steady state = every insertion at or after 600 s (two spans, insertions
 * 6,000 to 9,999).  For the Table 2 filters (the default (k, l), both
 * capacities) the first slices, sized from the capacity guess, are all
 * dropped by 508 s at the latest, so from 600 s on the filter holds only
 * slices sized from the observed rate.  (Of the figures' over-sized
 * filters, (5,7) keeps its first slices until 561 s and (4,3) until
 * 905 s: Figure 3b.)
 *
 * The no-false-negative check queries, after every insertion, every
 * element inserted within the span (3,001 once full), including the one
 * inserted exactly 300 s before, at the time of the insertion; --smoke
 * does it after every 25th insertion.
 *
 * The series is recorded at every insertion but written only when a value
 * changed (the values hold until the next line), which keeps it small.
 *
 * Writes DIR/paper_series.csv, DIR/paper_table2.csv and
 * DIR/paper_fn_check.csv.  Exits with 3 if any element was missed.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "paper_stream.h"

static const int figure_kl[][2] = {{4, 3}, {5, 7}, {6, 14}, {7, 28}, {8, 56}};
static const uint64_t capacities[] = {1000, 10000};
static const double table2_rates[] = {0.1, 0.01, 0.001, 0.0001, 0.00001};
static const int paper_min[] = {10, 19, 26, 32, 41};
static const int paper_max[] = {13, 24, 35, 45, 56};

typedef struct Range
{
	double		min;
	double		max;
	double		sum;
	long		n;
} Range;

static long total_checks;
static long total_missed;

/*
 * Run one filter over the stream.  Writes one line per insertion to
 * 'series' (if not NULL), records the steady-state range of bits per
 * element and the no-false-negative check.
 */
static void
run_filter(double rate, uint64_t capacity, int k, int l, FILE *series,
		   FILE *fn_check, int check_every, Range *steady)
{
	TlbfMemory	memory;
	Tlbf	   *f = paper_filter(rate, capacity, k, l, &memory);
	long		checks = 0,
				missed = 0;
	uint64_t	last_bits = 0;
	long		last_live = 0;
	uint32_t	last_slices = 0;

	steady->min = INFINITY;
	steady->max = -INFINITY;
	steady->sum = 0.0;
	steady->n = 0;
	for (long i = 0; i < PAPER_ELEMENTS; i++)
	{
		long		live = i - paper_first_live(i) + 1;
		uint64_t	bits;
		double		per_element;

		paper_insert(&f, &memory, i);
		bits = tlbf_total_words(f) * 64;
		per_element = (double) bits / live;
		/* a line when anything changed: the values hold until the next */
		if (series && (bits != last_bits || live != last_live ||
					   f->nslices != last_slices || i == PAPER_ELEMENTS - 1))
			fprintf(series, "%llu,%d,%d,%ld,%.1f,%u,%u,%llu,%ld,%.3f\n",
					(unsigned long long) capacity, f->k, f->l, i + 1,
					(double) (paper_time(i) - PAPER_START) / EVAL_SECOND,
					f->nslices, tlbf_slices(f)[0].nwords * 64,
					(unsigned long long) bits, live, per_element);
		last_bits = bits;
		last_live = live;
		last_slices = f->nslices;
		if (paper_time(i) - PAPER_START >= PAPER_STEADY)
		{
			steady->min = fmin(steady->min, per_element);
			steady->max = fmax(steady->max, per_element);
			steady->sum += per_element;
			steady->n++;
		}
		if (i % check_every == check_every - 1 || i == PAPER_ELEMENTS - 1)
		{
			missed += paper_missed(f, i);
			checks += live;
		}
	}
	fprintf(fn_check, "%g,%llu,%d,%d,%ld,%ld\n", rate, (unsigned long long) capacity,
			f->k, f->l, checks, missed);
	total_checks += checks;
	total_missed += missed;
	free(f);
}

int
main(int argc, char **argv)
{
	const char *dir = NULL;
	int			check_every = 1;
	FILE	   *series,
			   *table2,
			   *fn_check;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--smoke") == 0)
			check_every = 25;
		else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
			dir = argv[++i];
	}
	if (dir == NULL)
	{
		fprintf(stderr, "usage: paper_structure [--smoke] --out DIR\n");
		return 1;
	}

	series = paper_open_out(dir, "paper_series.csv");
	fprintf(series,
			"# Figures 1-3: error rate 0.1, span 300 s, one distinct element every 0.1 s, 10,000 elements.\n"
			"# Recorded at every insertion; a line is written when a value changed (and for the last insertion):\n"
			"# each line's values hold until the next line's insertion. slice0_bits: size of the newest slice; bits: all slices' bits;\n"
			"# live: elements inserted at or after now - 300 s; bits_per_element = bits / live.\n"
			"capacity,k,l,insertion,time_s,slices,slice0_bits,bits,live,bits_per_element\n");
	fn_check = paper_open_out(dir, "paper_fn_check.csv");
	fprintf(fn_check,
			"# Every element inserted within the span, queried at %s insertion: checks and misses (false negatives).\n"
			"error_rate,capacity,k,l,checks,missed\n",
			check_every == 1 ? "every" : "every 25th");

	for (int c = 0; c < 2; c++)
		for (int j = 0; j < 5; j++)
		{
			Range		steady;

			run_filter(0.1, capacities[c], figure_kl[j][0], figure_kl[j][1],
					   series, fn_check, check_every, &steady);
		}
	fclose(series);

	table2 = paper_open_out(dir, "paper_table2.csv");
	fprintf(table2,
			"# Table 2: bits per element at steady state (insertions at or after 600 s = two spans: insertions 6,000 to 9,999),\n"
			"# same stream as Figures 1-3, the core's default (k, l) per error rate. theory_bits = (k+l)k/(l ln 2).\n"
			"# min_all and max_all: over both capacities; paper_min and paper_max: the paper's Table 2.\n"
			"error_rate,k,l,theory_bits,min_cap1000,max_cap1000,mean_cap1000,min_cap10000,max_cap10000,mean_cap10000,"
			"min_all,max_all,paper_min,paper_max\n");
	for (int r = 0; r < 5; r++)
	{
		Range		range[2];
		int			k,
					l;

		tlbf_choose_kl(table2_rates[r], &k, &l);
		for (int c = 0; c < 2; c++)
			run_filter(table2_rates[r], capacities[c], 0, 0, NULL, fn_check,
					   check_every, &range[c]);
		fprintf(table2, "%g,%d,%d,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%d,%d\n",
				table2_rates[r], k, l, (double) (k + l) * k / (l * M_LN2),
				range[0].min, range[0].max, range[0].sum / range[0].n,
				range[1].min, range[1].max, range[1].sum / range[1].n,
				fmin(range[0].min, range[1].min), fmax(range[0].max, range[1].max),
				paper_min[r], paper_max[r]);
	}
	fclose(table2);
	fprintf(fn_check, "# total,,,,%ld,%ld\n", total_checks, total_missed);
	fclose(fn_check);
	fprintf(stderr, "paper_structure: %ld live elements checked, %ld missed\n",
			total_checks, total_missed);
	return total_missed > 0 ? 3 : 0;
}
