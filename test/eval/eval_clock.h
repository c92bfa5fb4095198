/*-------------------------------------------------------------------------
 *
 * eval_clock.h
 *	  A monotonic clock in nanoseconds, for the throughput figures.
 *
 *-------------------------------------------------------------------------
 */
#ifndef EVAL_CLOCK_H
#define EVAL_CLOCK_H

#include <time.h>

static inline double
eval_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

#endif							/* EVAL_CLOCK_H */
