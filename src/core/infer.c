/*-------------------------------------------------------------------------
 *
 * infer.c
 *	  What a filter says about a key beyond yes and no: when the key was
 *	  last added (tlbf_last_seen), and how likely a "yes" is to be true
 *	  (tlbf_posterior).  The derivation is in docs/inference.md.
 *
 * Both read every live slice's bit for the key instead of stopping at the
 * first run of k set slices, and both use only what the format already
 * keeps: each slice's time of last insertion, hash function and fill.
 *
 * When was it added?  An insertion at time t sets a bit in the k slices
 * that were the k newest at t.  Those slices were all written at t, so t
 * is at most the last insertion time of the oldest of them; and the slice
 * just older than them had stopped receiving insertions when the newest of
 * them was created, so t is at least that older slice's last insertion
 * time.  The key's bits are found in a stretch of consecutive live slices
 * that may be longer than k: a neighbouring slice may hold the bit by
 * chance (with the probability of its fill).  The key's run is one of the
 * k-windows of the newest such stretch, so its last insertion lies between
 * the time the oldest window's bound gives from below and the time the
 * newest window's bound gives from above.  (After a union the slice just
 * older than the stretch may belong to another filter; it is used only if
 * its hash function is the one its neighbour's predecessor would have.)
 *
 * How sure is a "yes"?  If the key was not added recently, each of its
 * bits is set with the probability of the slice's fill ratio f_i,
 * independently.  If it was last added during a generation whose run is
 * live (the k slices written then), the bits of that run are set for
 * certain, and the others as before: the likelihood ratio against "not
 * recently" is 1 / (product of f_i in the run) if the run is fully set,
 * else 0.  Each generation is as likely a priori (each takes the same load
 * of keys).  Those whose runs lie in live slices make up the window, but
 * for the oldest of them, which began before the window (its oldest slice
 * is live because its last insertion is recent): only its share of time
 * within the window counts as "in the window".  Its earlier part, and the
 * k - 1 generations before it, whose runs still have their newest slices
 * live, are the slack: keys added then are not in the window, but they
 * have bits in it for certain, and a "yes" found only in the oldest run is
 * likely to be one of them.  The prior probability that the key was added
 * within the window sets the mass per generation; Bayes' rule gives the
 * posterior.  A key whose run lies in nearly empty slices is near certain;
 * one found only in slices near half full is not, and one found only in
 * the oldest run even less.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "bits.h"
#include "tlbf.h"

static bool
live(const TlbfSlice *s, TlbfTime oldest_live)
{
	return s->updated_at != TLBF_NEVER && s->updated_at >= oldest_live;
}

/*
 * Which slices are live (usable[]) and hold the key's bit (bit_set[]).  A
 * dead slice ends every run that would contain it.
 */
static void
read_bits(const Tlbf *f, TlbfHash hash, TlbfTime oldest_live, bool *usable, bool *bit_set)
{
	const TlbfSlice *s = tlbf_slices(f);
	const uint64_t *words = tlbf_words(f);

	for (uint32_t i = 0; i < f->nslices; i++)
	{
		usable[i] = live(&s[i], oldest_live);
		bit_set[i] = usable[i] && tlbf_test_bit(words, &s[i], hash);
	}
}

/* Does the run of k slices starting at j hold the key (all usable, set)? */
static bool
run_set(const bool *bit_set, uint32_t j, int k)
{
	for (int i = 0; i < k; i++)
		if (!bit_set[j + i])
			return false;
	return true;
}

/*
 * The interval in which the key was last added, from the newest stretch of
 * k or more consecutive live slices that hold it; false if there is none
 * (the key is absent).  *lower is TLBF_NEVER when no slice bounds it from
 * below.  'scratch' must hold 2 * nslices bools.
 */
bool
tlbf_last_seen(const Tlbf *f, TlbfHash hash, TlbfTime at, int64_t window,
			   bool *scratch, TlbfTime *lower, TlbfTime *upper)
{
	const TlbfSlice *s = tlbf_slices(f);
	bool	   *usable = scratch;
	bool	   *bit_set = scratch + f->nslices;
	uint32_t	k = f->k;
	uint32_t	start = 0;

	if (f->nslices < k)
		return false;
	read_bits(f, hash, at - window, usable, bit_set);
	while (start < f->nslices)
	{
		uint32_t	end = start;	/* one past the stretch */

		while (end < f->nslices && bit_set[end])
			end++;
		if (end - start >= k)
		{
			uint32_t	oldest = end - 1;

			*upper = s[start + k - 1].updated_at;
			*lower = TLBF_NEVER;
			if (end < f->nslices &&
				s[end].updated_at != TLBF_NEVER &&
				s[end].updated_at <= s[oldest].updated_at &&
				s[end].hash_index == (s[oldest].hash_index + 1) % k)
				*lower = s[end].updated_at;
			return true;
		}
		start = end + 1;
	}
	return false;
}

/* -log of the product of the fill ratios of slices j .. j + n - 1 */
static double
log_inverse_fill(const TlbfSlice *s, uint32_t j, int n)
{
	double		log_inverse = 0.0;

	/* a set bit means a fill of one bit at least, whatever bits_set says */
	for (int i = 0; i < n; i++)
		log_inverse -= log(fmax(tlbf_fill_ratio(&s[j + i]),
								1.0 / ((double) s[j + i].nwords * 64)));
	return log_inverse;
}

/*
 * The share of the generation that wrote the run ending at slice 'last'
 * (the oldest run of live slices) that lies within the window, by time.
 * The generation ended at the last insertion into 'last' and began after
 * the last insertion into the slice just older, if the filter still has
 * it (and it is that slice's neighbour: see tlbf_last_seen); without it,
 * it is taken to have lasted as long as the next generation (its end to
 * the end of slice last - 1).  1 when nothing tells.
 */
static double
share_in_window(const Tlbf *f, uint32_t last, TlbfTime oldest_live)
{
	const TlbfSlice *s = tlbf_slices(f);
	TlbfTime	end = s[last].updated_at;
	uint64_t	length;			/* of the generation, in microseconds */

	/* differences as unsigned: valid times may be more than 2^63 apart */
	if (last + 1 < f->nslices && s[last + 1].updated_at != TLBF_NEVER &&
		s[last + 1].updated_at <= end &&
		s[last + 1].hash_index == (s[last].hash_index + 1) % f->k)
		length = (uint64_t) end - (uint64_t) s[last + 1].updated_at;
	else if (last >= 1 && s[last - 1].updated_at >= end)
		length = (uint64_t) s[last - 1].updated_at - (uint64_t) end;
	else
		return 1.0;
	return fmin(1.0, ((double) ((uint64_t) end - (uint64_t) oldest_live) + 1.0) /
				((double) length + 1.0));
}

/* Sums of likelihood ratios scaled by exp(-max_log), split by window. */
typedef struct RatioSums
{
	double		max_log;
	double		in_window;
	double		before;
} RatioSums;

static void
add_ratio(RatioSums *sums, double log_ratio, double in_share, double before_weight)
{
	double		ratio;

	if (log_ratio > sums->max_log)
	{
		double		scale = exp(sums->max_log - log_ratio);

		sums->in_window *= scale;
		sums->before *= scale;
		sums->max_log = log_ratio;
	}
	ratio = exp(log_ratio - sums->max_log);
	sums->in_window += in_share * ratio;
	sums->before += before_weight * ratio;
}

/*
 * The probability that the key was added within 'window' before 'at',
 * given the bits read and a prior probability 'prior' (in [0, 1]).  0 if
 * no run of k live slices holds it: there are no false negatives.
 * 'scratch' as for tlbf_last_seen.
 *
 * The hypotheses are: the key was last added during one of the generations
 * whose runs lie in live slices (the window's), each as likely a priori;
 * or during the generation that wrote the oldest such run but before the
 * window began, or during one of the k - 1 generations before that, whose
 * runs are still partly live (the slack: a key that left the window
 * recently still has its bits there), at the same rate per generation; or
 * not recently at all, its bits then being set with the slices' fill
 * ratios.  The prior fixes the rate: 'prior' spread over the generations
 * within the window.
 */
double
tlbf_posterior(const Tlbf *f, TlbfHash hash, TlbfTime at, int64_t window,
			   double prior, bool *scratch)
{
	const TlbfSlice *s = tlbf_slices(f);
	bool	   *usable = scratch;
	bool	   *bit_set = scratch + f->nslices;
	int			k = f->k;
	uint32_t	candidates = 0;
	uint32_t	oldest = 0;
	int			partial;
	double		in_share;
	double		per_generation;
	double		slack;
	double		not_recent;
	double		before_weight = 1.0;
	RatioSums	sums = {-INFINITY, 0.0, 0.0};

	if (f->nslices < (uint32_t) k || prior <= 0.0)
		return 0.0;
	read_bits(f, hash, at - window, usable, bit_set);

	/* the runs the key could have been added to: k consecutive live slices */
	for (uint32_t j = 0; j + k <= f->nslices; j++)
		if (run_set(usable, j, k))
		{
			candidates++;
			oldest = j;
		}
	if (candidates == 0)
		return 0.0;

	/*
	 * Prior masses: per generation, the prior over the candidate runs
	 * (the oldest counting for its share within the window); the slack
	 * generations, if the oldest run's generation began before the window;
	 * and what is left, keys not added recently.  A prior so high that the
	 * slack would take more than 1 - prior leaves the slack 1 - prior.
	 */
	in_share = share_in_window(f, oldest + k - 1, at - window);
	partial = in_share < 1.0 ? k - 1 : 0;
	per_generation = prior / (candidates - 1 + in_share);
	slack = per_generation * ((1.0 - in_share) + partial);
	not_recent = 1.0 - prior - slack;
	if (not_recent < 0.0)
	{
		before_weight = (1.0 - prior) / slack;
		not_recent = 0.0;
	}

	/*
	 * The likelihood ratio of each hypothesis against "not recent": 1 /
	 * (the product of the fill ratios of the live slices it sets for
	 * certain) if they are all set, else 0.  In logarithms: k may be 40 and
	 * fill ratios tiny.
	 */
	for (uint32_t j = 0; j < oldest; j++)
		if (run_set(usable, j, k) && run_set(bit_set, j, k))
			add_ratio(&sums, log_inverse_fill(s, j, k), 1.0, 0.0);
	if (run_set(bit_set, oldest, k))
		add_ratio(&sums, log_inverse_fill(s, oldest, k), in_share,
				  (1.0 - in_share) * before_weight);
	for (int m = 1; m <= partial; m++)
		if (run_set(bit_set, oldest + m, k - m))
			add_ratio(&sums, log_inverse_fill(s, oldest + m, k - m), 0.0, before_weight);

	if (sums.in_window == 0.0)
		return 0.0;
	if (prior >= 1.0)
		return 1.0;

	/*
	 * in / (in + before + not_recent), all masses times ratios, with the
	 * ratios scaled by exp(-max_log)
	 */
	return 1.0 / (1.0 + sums.before / sums.in_window +
				  (not_recent > 0.0 ?
				   exp(log(not_recent) - log(per_generation) - log(sums.in_window) - sums.max_log) :
				   0.0));
}
