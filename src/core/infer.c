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
 * How sure is a "yes"?  If the key was not added within the window, each
 * of its bits is set with the probability of the slice's fill ratio f_i,
 * independently.  If it was, the bits of one run (the k slices written
 * when it was added) are set for certain, and the others as before.  The
 * likelihood ratio of the bits read is therefore the average, over the
 * runs the key could have been added to, of 1 / (product of f_i in the
 * run) for the runs that are fully set, and 0 for the others.  With a
 * prior probability that the key was added within the window, Bayes' rule
 * gives the posterior.  A key whose run lies in nearly empty slices is
 * near certain; one found only in slices near half full is not.
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

/*
 * The probability that the key was added within 'window' before 'at',
 * given the bits read and a prior probability 'prior' (in [0, 1]).  0 if
 * no run of k live slices holds it: there are no false negatives.
 * 'scratch' as for tlbf_last_seen.
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
	double		max_log = -INFINITY;
	double		sum = 0.0;
	double		log_ratio;

	if (f->nslices < (uint32_t) k || prior <= 0.0)
		return 0.0;
	read_bits(f, hash, at - window, usable, bit_set);

	/*
	 * The runs the key could have been added to: every k consecutive live
	 * slices, each as likely a priori.  For those fully set, sum 1 / (the
	 * product of their fill ratios), in logarithms (k may be 40 and fill
	 * ratios tiny).
	 */
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t j = 0; j + k <= f->nslices; j++)
		{
			double		log_inverse = 0.0;

			if (!run_set(usable, j, k))
				continue;
			if (pass == 0)
				candidates++;
			if (!run_set(bit_set, j, k))
				continue;
			/* a set bit means a fill of one bit at least, whatever bits_set says */
			for (int i = 0; i < k; i++)
				log_inverse -= log(fmax(tlbf_fill_ratio(&s[j + i]),
										1.0 / ((double) s[j + i].nwords * 64)));
			if (pass == 0)
				max_log = fmax(max_log, log_inverse);
			else
				sum += exp(log_inverse - max_log);
		}
	if (sum == 0.0)
		return 0.0;
	if (prior >= 1.0)
		return 1.0;

	/* posterior odds = prior odds * likelihood ratio */
	log_ratio = max_log + log(sum) - log((double) candidates);
	return 1.0 / (1.0 + exp(-(log(prior) - log1p(-prior) + log_ratio)));
}
