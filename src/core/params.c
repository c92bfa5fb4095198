/*-------------------------------------------------------------------------
 *
 * params.c
 *	  Checking a filter's parameters and choosing (k, l) for an error rate.
 *
 * The false-positive rate of an age-partitioned filter with k+l slices at
 * its worst moment (just before a shift) follows the recursion of the APBF
 * paper (Shtul, Baquero, Almeida 2020):
 *
 *	  F(a, i) = 1							 if a = k
 *			  = 0							 if i > l + a
 *			  = r_i F(a+1, i+1) + (1-r_i) F(0, i+1)   otherwise
 *	  r_i = (i+1)/(2k) for i < k, else 1/2;  FPR = F(0, 0)
 *
 * where a counts consecutive hits so far and i is the slice examined.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "sizing.h"
#include "tlbf.h"

/*
 * The APBF paper's recommended configuration per error rate (the middle
 * column of its table): the reference implementation always uses these.
 */
static const struct
{
	double		error_rate;
	int			k;
	int			l;
}			default_configs[] =
{
	{1e-1, 7, 28},
	{1e-2, 10, 25},
	{1e-3, 13, 23},
	{1e-4, 17, 36},
	{1e-5, 20, 33},
};

#define NUM_DEFAULT_CONFIGS (sizeof(default_configs) / sizeof(default_configs[0]))

double
tlbf_fpr(int k, int l)
{
	double		next[TLBF_MAX_K + 1];	/* F(., i + 1) */
	double		cur[TLBF_MAX_K + 1];	/* F(., i) */
	int			n = k + l;

	/* Past the last slice no window can complete. */
	for (int a = 0; a < k; a++)
		next[a] = 0.0;
	next[k] = 1.0;

	for (int i = n; i >= 0; i--)
	{
		double		r = i < k ? (double) (i + 1) / (2.0 * k) : 0.5;

		for (int a = 0; a < k; a++)
			cur[a] = i > l + a ? 0.0 : r * next[a + 1] + (1.0 - r) * next[0];
		cur[k] = 1.0;
		for (int a = 0; a <= k; a++)
			next[a] = cur[a];
	}
	return next[0];
}

/* Bits per key held in the window: (k + l) slices of k/ln2 bits per k/l. */
static double
bits_per_item(int k, int l)
{
	return (double) (k + l) * k / (l * TLBF_LN2);
}

/*
 * The largest l <= max_l with tlbf_fpr(k, l) <= target, or 0.  The rate
 * grows with l (more windows of k slices), so a binary search finds it.
 */
static int
largest_l(int k, int max_l, double target)
{
	int			lo = 0;
	int			hi = max_l;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo + 1) / 2;

		if (tlbf_fpr(k, mid) <= target)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * Choose (k, l) for a target error rate.  The table's rates get the table's
 * default.  Between (or beyond) its rows, take the configuration with the
 * least memory per key whose rate meets the target, among those whose
 * number of k-slice blocks ((k+l)/k, which sets the slices an absent key
 * probes) is no more than the neighbouring defaults'.
 */
void
tlbf_choose_kl(double error_rate, int *k, int *l)
{
	static double memo_rate = -1.0;
	static int	memo_k,
				memo_l;
	double		max_blocks = 0.0;
	double		best_bits = INFINITY;

	if (error_rate == memo_rate)
	{
		*k = memo_k;
		*l = memo_l;
		return;
	}

	/* The table is ordered by falling rate. */
	for (size_t i = 0; i < NUM_DEFAULT_CONFIGS; i++)
	{
		double		rate = default_configs[i].error_rate;
		bool		neighbour;

		if (fabs(error_rate - rate) <= 1e-9 * rate)
		{
			memo_k = default_configs[i].k;
			memo_l = default_configs[i].l;
			goto done;
		}
		neighbour = rate > error_rate ?
			i + 1 == NUM_DEFAULT_CONFIGS || default_configs[i + 1].error_rate < error_rate :
			i == 0 || default_configs[i - 1].error_rate > error_rate;
		if (neighbour)
			max_blocks = fmax(max_blocks,
							  (double) (default_configs[i].k + default_configs[i].l) /
							  default_configs[i].k);
	}

	memo_k = TLBF_MAX_K;
	memo_l = 1;
	for (int kk = 1; kk <= TLBF_MAX_K; kk++)
	{
		int			max_l = (int) fmin(floor((max_blocks - 1.0) * kk), TLBF_MAX_L);
		int			ll = largest_l(kk, max_l, error_rate);

		if (ll > 0 && bits_per_item(kk, ll) < best_bits)
		{
			best_bits = bits_per_item(kk, ll);
			memo_k = kk;
			memo_l = ll;
		}
	}

done:
	memo_rate = error_rate;
	*k = memo_k;
	*l = memo_l;
}

static bool
reject(TlbfProblem *problem, const char *message, const char *hint)
{
	problem->message = message;
	problem->hint = hint;
	return false;
}

/*
 * Check what a caller asked for, choosing k and l when both are zero.
 * Returns false and describes the first problem found.
 */
bool
tlbf_check_params(TlbfParams *p, TlbfProblem *problem)
{
	if (p->span <= 0 || p->span > TLBF_MAX_SPAN)
		return reject(problem, "span must be positive and at most 100 years",
					  "Give the time a key must be remembered, for example '1 hour'.");
	if (!(p->error_rate > 0.0 && p->error_rate <= TLBF_MAX_ERROR_RATE))
		return reject(problem, "error_rate must be greater than 0 and at most 0.5",
					  "0.01 (one false positive in a hundred) is a common choice.");
	if (p->error_rate < TLBF_MIN_ERROR_RATE)
		return reject(problem, "error_rate must be at least 1e-9",
					  "Smaller rates would need more than 40 hash functions.");
	if (p->capacity < 1 || p->capacity > TLBF_MAX_CAPACITY)
		return reject(problem, "capacity must be between 1 and 2^40",
					  "capacity is a starting guess of the keys added per span; the filter adapts to the real rate.");
	if ((p->k == 0) != (p->l == 0))
		return reject(problem, "k and l must be given together",
					  "Leave both NULL to choose them from error_rate.");
	if (p->k == 0)
		tlbf_choose_kl(p->error_rate, &p->k, &p->l);
	else if (p->k < 1 || p->k > TLBF_MAX_K || p->l < 1 || p->l > TLBF_MAX_L)
		return reject(problem, "k must be between 1 and 40 and l between 1 and 1024",
					  "Leave k and l NULL to choose them from error_rate.");
	return true;
}
