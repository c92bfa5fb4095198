/*-------------------------------------------------------------------------
 *
 * rng.h
 *	  A small seeded random generator (splitmix64), so that every stream,
 *	  every query sample and every random decrement of the evaluation is
 *	  the same from run to run.
 *
 *-------------------------------------------------------------------------
 */
#ifndef EVAL_RNG_H
#define EVAL_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct Rng
{
	uint64_t	state;
} Rng;

static inline Rng
rng_seeded(uint64_t seed)
{
	Rng			r = {seed * UINT64_C(0x9E3779B97F4A7C15) + UINT64_C(0x632BE59BD9B4E019)};

	return r;
}

static inline uint64_t
rng_next(Rng *r)
{
	uint64_t	z;

	r->state += UINT64_C(0x9E3779B97F4A7C15);
	z = r->state;
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double
rng_uniform(Rng *r)
{
	return (double) (rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [0, n). */
static inline uint64_t
rng_below(Rng *r, uint64_t n)
{
	return (uint64_t) (((unsigned __int128) rng_next(r) * n) >> 64);
}

/* Exponentially distributed with the given mean. */
static inline double
rng_exponential(Rng *r, double mean)
{
	return -mean * log1p(-rng_uniform(r));
}

#endif							/* EVAL_RNG_H */
