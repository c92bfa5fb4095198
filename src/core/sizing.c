/*-------------------------------------------------------------------------
 *
 * sizing.c
 *	  How big slices are and how long a generation lasts (the Time-limited
 *	  Bloom Filter paper, equations 4 to 8).
 *
 * A slice of m bits is full at fill ratio 1/2, after m*ln2 distinct keys.
 * Each insertion writes to the k newest slices, so slice i (0 is the
 * newest) will be written during k-i more generations.
 *
 * The paper counts insertions.  Here a slice's load is the number of
 * distinct keys its set bits stand for, -m*ln(1 - b/m) for b bits set, so
 * that a repeated key, which sets no new bit where it already is, uses no
 * capacity there.  The generation's clock advances by the load each new bit
 * adds, m/(m - b) keys for a bit set at fill b/m, kept per slice in 16.16
 * fixed point (load_weight) and refreshed at every shift.  For distinct
 * keys this is the paper's count, on average; for a key repeated from the
 * previous generation, which only sets a bit in the newest slice, it is a
 * k-th of an insertion.  Every slice passes through all k positions, so over
 * its life it receives k generations' load however repeats spread it.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "sizing.h"

#define WEIGHT_ONE	((double) TLBF_LOAD_ONE)

double
tlbf_clamp_target_gen(double target_gen)
{
	return fmin(fmax(target_gen, TLBF_MIN_TARGET_GEN), TLBF_MAX_TARGET_GEN);
}

/* Keys a slice takes before its fill ratio reaches 1/2. */
double
tlbf_slice_capacity(const TlbfSlice *s)
{
	return (double) s->nwords * 64 * TLBF_LN2;
}

/* Distinct keys the slice's set bits stand for. */
double
tlbf_slice_load(const TlbfSlice *s)
{
	double		bits = (double) s->nwords * 64;

	if (s->bits_set >= s->nwords * UINT64_C(64))
		return bits * 64;		/* saturated: far past any capacity */
	return -bits * log1p(-(double) s->bits_set / bits);
}

/*
 * The load one more new bit adds, m/(m - b) keys at b bits set, in 16.16
 * fixed point, for a generation that brings the slice 'keys' more keys: the
 * weight is taken at the fill expected halfway through the generation, so
 * that the clock neither runs fast at its start nor slow at its end.
 */
uint32_t
tlbf_load_weight(const TlbfSlice *s, double keys)
{
	double		bits = (double) s->nwords * 64;
	double		clear = (bits - (double) s->bits_set) * exp(-keys / 2 / bits);
	double		weight = bits / clear;

	if (!(weight <= TLBF_MAX_LOAD_WEIGHT / WEIGHT_ONE))
		return TLBF_MAX_LOAD_WEIGHT;
	return (uint32_t) lround(weight * WEIGHT_ONE);
}

/* Words of a slice that holds 'capacity' keys at fill 1/2 (eq. 8). */
uint32_t
tlbf_words_for_capacity(double capacity)
{
	double		words = ceil(capacity / TLBF_LN2 / 64.0);

	if (!(words >= TLBF_MIN_SLICE_WORDS))
		return TLBF_MIN_SLICE_WORDS;
	if (words > TLBF_MAX_SLICE_WORDS)
		return TLBF_MAX_SLICE_WORDS;
	return (uint32_t) words;
}

/*
 * The load until the next shift, in the clock's unit (keys per slice, times
 * k, times 2^16) (eq. 4-5): each of the k newest slices spreads what it can
 * still take over the generations it has left, and the tightest one
 * decides.  At least one key, so that the filter always moves on.
 */
uint64_t
tlbf_generation_size(const Tlbf *f)
{
	const TlbfSlice *s = tlbf_slices(f);
	double		g = INFINITY;

	for (int i = 0; i < f->k; i++)
	{
		double		left = tlbf_slice_capacity(&s[i]) - tlbf_slice_load(&s[i]);

		g = fmin(g, floor(fmax(left, 0.0) / (f->k - i)));
	}
	return (uint64_t) (fmax(g, 1.0) * f->k * WEIGHT_ONE);
}

/*
 * The generation size, in keys, that would make a generation last span/l
 * at the rate of the one that just ended (eq. 6), from the load it actually
 * took (all of its plan, unless it ended because it was overdue).  A
 * generation that took no time (a burst within one instant) or a much
 * faster one grows the target by at most TLBF_MAX_GROWTH.
 */
double
tlbf_target_generation(const Tlbf *f, TlbfTime now)
{
	double		g = (double) (f->gen_size - f->gen_left) / (f->k * WEIGHT_ONE);
	double		elapsed = (double) now - (double) f->gen_started;
	double		most = g * TLBF_MAX_GROWTH;
	double		target;

	/* elapsed is computed in double: valid times may be 2^63 us apart */
	if (elapsed <= 0.0)
		return tlbf_clamp_target_gen(most);
	target = g * (double) f->span / (elapsed * f->l);
	return tlbf_clamp_target_gen(fmin(target, most));
}

/*
 * Capacity, in keys, for the slice a shift is about to add (eq. 7).  The
 * new slice will be written during the next k generations.  Slices 0..k-2,
 * which the shift moves to positions 1..k-1, are still written during the
 * first of those and may not take target_gen keys each time: a generation
 * is as large as the tightest of them allows (as in tlbf_generation_size).
 * The new slice needs room for exactly what those generations will bring.
 */
double
tlbf_next_slice_capacity(const Tlbf *f, double target_gen)
{
	const TlbfSlice *s = tlbf_slices(f);
	double		left[TLBF_MAX_K];
	int			k = f->k;
	int			existing = (int) f->nslices < k - 1 ? (int) f->nslices : k - 1;
	double		total = 0.0;

	/* left[j]: room in the slice that will sit at position j + 1 */
	for (int j = 0; j < existing; j++)
		left[j] = fmax(tlbf_slice_capacity(&s[j]) - tlbf_slice_load(&s[j]), 0.0);

	for (int q = 0; q < k; q++)
	{
		double		g = target_gen;

		/* during generation q, slice j sits at position j + 1 + q */
		for (int j = 0; j < existing && j + 1 + q < k; j++)
			g = fmin(g, left[j] / (k - (j + 1 + q)));
		for (int j = 0; j < existing && j + 1 + q < k; j++)
			left[j] -= g;
		total += g;
	}
	return total;
}
