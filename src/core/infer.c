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
 * Bursty traffic breaks two of these assumptions, and both are corrected
 * from what the filter holds (issue: posteriors on real data).
 *
 * Chance bits are not independent.  Slices i and i + k use the same hash
 * function, so a key's bit lies at the same position in both when they
 * have the same size; clients that come back again and again set the same
 * positions in both, and on the World Cup log two such slices share a
 * third more set bits than independence gives (0.27 against 0.19 of the
 * bits).  A never-added key that collides with a returning client in one
 * slice collides with it in the other too: its chance run is far more
 * likely, given the rest of its bits, than the product of the fill ratios
 * says, and the posterior was overconfident in the middle (keys given
 * 0.33-0.52 present 0.23-0.42 of the time).  So the chance probability of
 * a bit is taken given the bit read in its older linked slice, as measured
 * between the two bit arrays (a fixed sample of words, the cost bounded);
 * and where a hypothesis sets a slice for certain, the newer linked slice
 * loses that conditioning (its older bit is the key's own, not a chance
 * one).
 *
 * Keys come back over consecutive generations.  A client added in the
 * generation before its last one has the slice just older than its run set
 * too; counting one insertion per key took those longer stretches for
 * chance and rated single runs too high.  The share rho of a generation's
 * keys that were in the generation before is read off the loads of the
 * k + 1 newest slices (continuation_share), and a key's run may extend by
 * g - 1 slices with probability (1 - rho) rho^(g - 1).  With no repeats
 * (rho = 0, independent slices) the model is the one above.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "bits.h"
#include "tlbf.h"

/*
 * rho is capped: an estimate from a few slices near 1 would make a key found
 * in one run alone all but impossible (see continuation_share()).
 */
#define MAX_CONTINUATION 0.9

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

/* The words of two slices compared to measure how their bits go together */
#define PAIR_SAMPLE_WORDS 64

/* How slice i's bits go with those of slice i + k (linked). */
typedef struct PairChance
{
	double		fill;			/* P(bit set) */
	double		given_set;		/* P(bit set | the older one's bit set) */
	double		given_clear;	/* P(bit set | the older one's bit clear) */
} PairChance;

/*
 * The pairs one query measured: a run and the spells after it read the
 * same slices again, and measuring a pair reads up to 2 * 64 words.
 * Direct-mapped by slice number; the slices a query reads are a few dozen.
 */
#define PAIR_CACHE_SIZE 128

typedef struct PairCacheEntry
{
	uint32_t	slice;			/* UINT32_MAX: empty */
	PairChance	chance;
} PairCacheEntry;

/* What one query read: the filter, its live slices and the key's bits. */
typedef struct Reading
{
	const Tlbf *f;
	const bool *usable;
	const bool *bit_set;
	PairCacheEntry pairs[PAIR_CACHE_SIZE];
} Reading;

/*
 * Is slice i's chance bit tied to that of slice i + k?  Both live, the
 * same hash function and the same size: then a key has its bit at the
 * same position in both, and keys added again and again set that position
 * in both.
 */
static bool
linked(const Reading *r, uint32_t i)
{
	const TlbfSlice *s = tlbf_slices(r->f);
	uint32_t	older = i + r->f->k;

	return older < r->f->nslices && r->usable[i] && r->usable[older] &&
		s[i].hash_index == s[older].hash_index && s[i].nwords == s[older].nwords;
}

/*
 * Measured on the first PAIR_SAMPLE_WORDS words of both (bits are spread
 * evenly by the hash, so these are a fair sample and the cost is bounded),
 * with one pseudo-count at the slice's fill in each case, and never below
 * one bit's worth.
 */
static PairChance
measure_pair(const Reading *r, uint32_t i)
{
	const TlbfSlice *s = tlbf_slices(r->f);
	const uint64_t *words = tlbf_words(r->f);
	const TlbfSlice *newer = &s[i];
	const TlbfSlice *older = &s[i + r->f->k];
	uint32_t	n = newer->nwords < PAIR_SAMPLE_WORDS ? newer->nwords : PAIR_SAMPLE_WORDS;
	double		bits = (double) n * 64;
	double		both = 0.0,
				in_newer = 0.0,
				in_older = 0.0;
	double		floor = 1.0 / bits;
	PairChance	c;

	for (uint32_t w = 0; w < n; w++)
	{
		uint64_t	x = words[newer->offset + w];
		uint64_t	y = words[older->offset + w];

		both += __builtin_popcountll(x & y);
		in_newer += __builtin_popcountll(x);
		in_older += __builtin_popcountll(y);
	}
	c.fill = fmin(fmax(in_newer / bits, floor), 1.0 - floor);
	c.given_set = fmin(fmax((both + c.fill) / (in_older + 1.0), floor), 1.0 - floor);
	c.given_clear = fmin(fmax((in_newer - both + c.fill) / (bits - in_older + 1.0), floor),
						 1.0 - floor);
	return c;
}

/* measure_pair(r, i), measured once per query. */
static PairChance
pair_chance(Reading *r, uint32_t i)
{
	PairCacheEntry *entry = &r->pairs[i % PAIR_CACHE_SIZE];

	if (entry->slice != i)
	{
		entry->chance = measure_pair(r, i);
		entry->slice = i;
	}
	return entry->chance;
}

/*
 * log P(slice i's bit is set by chance | the bit read in slice i + k): the
 * fill ratio, or for a linked slice the measured share given the older
 * bit.  (A set bit means a fill of one bit at least, whatever bits_set
 * says.)
 */
static double
log_chance_set(Reading *r, uint32_t i)
{
	const TlbfSlice *s = tlbf_slices(r->f);

	if (linked(r, i))
	{
		PairChance	c = pair_chance(r, i);

		return log(r->bit_set[i + r->f->k] ? c.given_set : c.given_clear);
	}
	return log(fmax(tlbf_fill_ratio(&s[i]), 1.0 / ((double) s[i].nwords * 64)));
}

/*
 * The log likelihood ratio, against "not recent", of a hypothesis that
 * sets slices from .. from + n - 1 for certain (all set).  Against chance
 * alone, each of them gains 1 / P(set by chance | its older linked bit).
 * And a slice newer by k than one of them, outside them, linked to it,
 * loses what that bit told about it: under the hypothesis the older bit
 * is the key's own, its chance state is unknown, and the newer bit is set
 * by chance with its plain fill.
 */
static double
log_forced_ratio(Reading *r, uint32_t from, uint32_t n)
{
	uint32_t	k = r->f->k;
	double		log_ratio = 0.0;

	for (uint32_t i = from; i < from + n; i++)
	{
		log_ratio -= log_chance_set(r, i);
		if (i >= from + k || i < k || !linked(r, i - k))
			continue;
		{
			PairChance	c = pair_chance(r, i - k);

			log_ratio += r->bit_set[i - k] ?
				log(c.fill) - log(c.given_set) :
				log1p(-c.fill) - log1p(-c.given_set);
		}
	}
	return log_ratio;
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
 * rho, the share of a generation's keys that were also added during the
 * generation before it, from the loads of the k + 1 newest slices
 * (tlbf_slice_load: the distinct keys their bits stand for).  Slice i < k
 * holds the keys of the current generation and of the i before it, so
 * between slices 1 and k - 1 each older generation adds the keys it has
 * that no newer one has: (1 - rho) D for D keys per generation.  Slice k,
 * written by k whole generations, holds D + (k - 1)(1 - rho) D.  Together:
 *
 *	  1 - rho = slope / (load_k - (k - 1) slope),
 *	  slope = (load_{k-1} - load_1) / (k - 2)
 *
 * 0 where there is no estimate (k < 3, too few slices, a young filter).
 */
static double
continuation_share(const Tlbf *f)
{
	const TlbfSlice *s = tlbf_slices(f);
	int			k = f->k;
	double		slope;
	double		rest;
	double		rho;

	if (k < 3 || f->nslices <= (uint32_t) k || s[k].updated_at == TLBF_NEVER)
		return 0.0;
	slope = (tlbf_slice_load(&s[k - 1]) - tlbf_slice_load(&s[1])) / (k - 2);
	rest = tlbf_slice_load(&s[k]) - (k - 1) * slope;
	if (!(slope > 0.0) || !(rest > slope))
		return 0.0;
	rho = 1.0 - slope / rest;
	return fmin(rho, MAX_CONTINUATION);
}

/* log(exp(a) + exp(b)), either may be -infinity */
static double
log_add(double a, double b)
{
	double		hi = fmax(a, b);

	if (hi == -INFINITY)
		return hi;
	return hi + log(exp(a - hi) + exp(b - hi));
}

/*
 * The spells that may follow a run, read from the oldest slice to the
 * newest: E(i), the log of what the spells starting at slice i add to a
 * run's likelihood ratio, is
 *
 *	  0 (the whole rest of the mass) past the last live slice, else
 *	  log((1 - rho) + [bit i set] rho / P(bit i set by chance) exp(E(i + 1)))
 *
 * so one pass downwards gives every run its E(j + k), in O(nslices) per
 * query however many runs are set (a key added over and over has most).
 */
typedef struct Spells
{
	double		rho;
	uint32_t	next;			/* E(next) is known */
	double		log_e;
} Spells;

static double
spells_from(Reading *r, Spells *spells, uint32_t i)
{
	while (spells->next > i)
	{
		uint32_t	x = --spells->next;

		if (!r->usable[x])
			spells->log_e = 0.0;
		else if (!r->bit_set[x])
			spells->log_e = log1p(-spells->rho);
		else
			spells->log_e = log_add(log1p(-spells->rho),
									log(spells->rho) - log_chance_set(r, x) + spells->log_e);
	}
	return spells->log_e;
}

/*
 * The log likelihood ratio, against "not recent", of "last added during the
 * generation that wrote the run at j", the run being set: the key may also
 * have been added during the g - 1 generations before, with probability
 * (1 - rho) rho^(g - 1), which sets the g - 1 slices just older than the
 * run for certain too.  Those slices are read as far as they are set; past
 * the last live slice nothing more is seen, and the longer spells share
 * the likelihood of the spell that reaches it.  (A slice added to the
 * spell has its newer linked slice inside the spell already.)  Runs must
 * be asked from the oldest to the newest (spells_from).
 */
static double
log_run_ratio(Reading *r, uint32_t j, Spells *spells)
{
	uint32_t	k = r->f->k;
	double		log_ratio = log_forced_ratio(r, j, k);

	if (spells->rho <= 0.0)
		return log_ratio;
	return log_ratio + spells_from(r, spells, j + k);
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
	double		rho;
	RatioSums	sums = {-INFINITY, 0.0, 0.0};
	Reading		reading;
	Spells		spells;

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
	reading.f = f;
	reading.usable = usable;
	reading.bit_set = bit_set;
	for (int i = 0; i < PAIR_CACHE_SIZE; i++)
		reading.pairs[i].slice = UINT32_MAX;
	rho = continuation_share(f);
	spells.rho = rho;
	spells.next = f->nslices;
	spells.log_e = 0.0;
	if (run_set(bit_set, oldest, k))
		add_ratio(&sums, log_run_ratio(&reading, oldest, &spells),
				  in_share, (1.0 - in_share) * before_weight);
	for (uint32_t j = oldest; j-- > 0;)
		if (run_set(usable, j, k) && run_set(bit_set, j, k))
			add_ratio(&sums, log_run_ratio(&reading, j, &spells), 1.0, 0.0);
	for (int m = 1; m <= partial; m++)
		if (run_set(bit_set, oldest + m, k - m))
			add_ratio(&sums, log_forced_ratio(&reading, oldest + m, k - m), 0.0, before_weight);

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
