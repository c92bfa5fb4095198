/*-------------------------------------------------------------------------
 *
 * paper_fpr.c
 *	  The Time-limited Bloom Filter paper, section 7.3: the false-positive
 *	  rate along the stream (Figures 4 and 5), for error rates 0.1, 0.01,
 *	  0.001 and 0.0001 (the core's default (k, l) for each), initial
 *	  capacity 1,000 (under-sized) and 10,000 (over-sized).
 *
 *	  paper_fpr [--smoke] --out DIR
 *
 * The paper queries a filter of error rate 10^-i with 10^i * 10,000
 * absent elements at every insertion.  That is 10^12 queries for 0.0001
 * alone, beyond our budget.  We sample instead: the rate is measured
 * after every 50th insertion (200 points along the 10,000 insertions),
 * and ten times the paper's number of absent elements per insertion,
 * 10^i * 10,000, is spread evenly over those points: 10^i * 500 fresh
 * absent elements per point (5,000 at 0.1, 5,000,000 at 0.0001; 10^i *
 * 100,000 per filter in all), never used twice, which puts the standard
 * error of each point near 4.5% of the rate.  --smoke uses a thousandth.
 *
 * At each point every element inserted within the span is also queried
 * (the no-false-negative check).
 *
 * Writes DIR/paper_fpr.csv (one line per point) and
 * DIR/paper_fpr_summary.csv.  Exits with 3 if a live element was missed.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "paper_stream.h"

#define POINT_EVERY 50
#define NPOINTS		(PAPER_ELEMENTS / POINT_EVERY)

static const double rates[] = {0.1, 0.01, 0.001, 0.0001};
static const uint64_t capacities[] = {1000, 10000};

int
main(int argc, char **argv)
{
	const char *dir = NULL;
	double		share = 10.0;
	FILE	   *points,
			   *summary;
	long		total_missed = 0;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--smoke") == 0)
			share = 0.01;	/* a thousandth of the full run */
		else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
			dir = argv[++i];
	}
	if (dir == NULL)
	{
		fprintf(stderr, "usage: paper_fpr [--smoke] --out DIR\n");
		return 1;
	}
	points = paper_open_out(dir, "paper_fpr.csv");
	fprintf(points,
			"# Figures 4-5: span 300 s, one distinct element every 0.1 s, 10,000 elements.\n"
			"# Sampled after every %d-th insertion (%d points); a filter of error rate 10^-i gets %.4g x 10^i x 10,000\n"
			"# absent elements in all, spread evenly over the points (fresh ones at each point).\n"
			"capacity,error_rate,k,l,insertion,time_s,slices,slice0_bits,absent_queried,false_positives,fpr\n",
			POINT_EVERY, NPOINTS, share);
	summary = paper_open_out(dir, "paper_fpr_summary.csv");
	fprintf(summary,
			"# Per filter: the rate over all points, over the steady state (points at or after 600 s), the highest\n"
			"# point, and the no-false-negative check at every point (live elements queried, missed).\n"
			"capacity,error_rate,k,l,absent_queried,false_positives,fpr_all,fpr_steady,max_point_fpr,"
			"max_steady_point_fpr,live_checks,live_missed\n");

	for (int c = 0; c < 2; c++)
	{
		for (int r = 0; r < 4; r++)
		{
			TlbfMemory	memory;
			Tlbf	   *f = paper_filter(rates[r], capacities[c], 0, 0, &memory);
			long		per_point = (long) llround(share * 10000.0 / rates[r] / NPOINTS);
			uint64_t	next_absent = EVAL_FRESH_BASE + ((uint64_t) (c * 4 + r) << 40);
			long		queried = 0,
						fps = 0,
						steady_queried = 0,
						steady_fps = 0,
						checks = 0,
						missed = 0;
			double		max_fpr = 0.0,
						max_steady = 0.0;

			for (long i = 0; i < PAPER_ELEMENTS; i++)
			{
				long		hits = 0;
				double		fpr;
				bool		steady;

				paper_insert(&f, &memory, i);
				if ((i + 1) % POINT_EVERY != 0)
					continue;
				for (long q = 0; q < per_point; q++)
					hits += tlbf_query(f, eval_hash(next_absent++), paper_time(i), f->span);
				fpr = (double) hits / per_point;
				steady = paper_time(i) - PAPER_START >= PAPER_STEADY;
				queried += per_point;
				fps += hits;
				max_fpr = fmax(max_fpr, fpr);
				if (steady)
				{
					steady_queried += per_point;
					steady_fps += hits;
					max_steady = fmax(max_steady, fpr);
				}
				missed += paper_missed(f, i);
				checks += i - paper_first_live(i) + 1;
				fprintf(points, "%llu,%g,%d,%d,%ld,%.1f,%u,%u,%ld,%ld,%.6g\n",
						(unsigned long long) capacities[c], rates[r], f->k, f->l, i + 1,
						(double) (paper_time(i) - PAPER_START) / EVAL_SECOND,
						f->nslices, tlbf_slices(f)[0].nwords * 64, per_point, hits, fpr);
			}
			fprintf(summary, "%llu,%g,%d,%d,%ld,%ld,%.6g,%.6g,%.6g,%.6g,%ld,%ld\n",
					(unsigned long long) capacities[c], rates[r], f->k, f->l,
					queried, fps, (double) fps / queried,
					(double) steady_fps / steady_queried, max_fpr, max_steady,
					checks, missed);
			fflush(summary);
			total_missed += missed;
			free(f);
		}
	}
	fclose(points);
	fclose(summary);
	fprintf(stderr, "paper_fpr: %ld live elements missed\n", total_missed);
	return total_missed > 0 ? 3 : 0;
}
