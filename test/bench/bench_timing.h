/*
 * bench_timing.h
 *	  What the core's benchmark programs share: a clock, the stream's key
 *	  hash, and the median of the ROUNDS rounds each figure is taken over.
 *	  (A header of static functions: each program is one file.)
 */
#ifndef TLBF_BENCH_TIMING_H
#define TLBF_BENCH_TIMING_H

#include <stdlib.h>
#include <time.h>

#include "tlbf.h"

#ifndef ROUNDS
#define ROUNDS	5
#endif

static inline double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* the hash of key number 'key' of a stream */
static inline TlbfHash
key_hash(uint64_t key)
{
	return tlbf_hash_bytes(&key, sizeof(key), 0);
}

static inline int
compare_doubles(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

/* the median of ROUNDS figures (sorts them) */
static inline double
median(double *v)
{
	qsort(v, ROUNDS, sizeof(double), compare_doubles);
	return v[ROUNDS / 2];
}

#endif							/* TLBF_BENCH_TIMING_H */
