/*-------------------------------------------------------------------------
 *
 * paper_stream.h
 *	  The stream of the Time-limited Bloom Filter paper's section 7: 10,000
 *	  distinct elements, one every 0.1 s, into filters with a span of 300 s.
 *	  Shared by its two harnesses (structure, false-positive rate).
 *
 *-------------------------------------------------------------------------
 */
#ifndef EVAL_PAPER_STREAM_H
#define EVAL_PAPER_STREAM_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashing.h"
#include "heap_memory.h"
#include "streams.h"

#define PAPER_ELEMENTS	10000
#define PAPER_GAP		(EVAL_SECOND / 10)
#define PAPER_SPAN		(300 * EVAL_SECOND)
#define PAPER_START		INT64_C(757382400000000)	/* 2024-01-01 UTC */
#define PAPER_STEADY	(2 * PAPER_SPAN)	/* see paper_structure.c */

/* Element i and the time it is inserted at. */
static inline uint64_t
paper_key(long i)
{
	return (uint64_t) i;
}

static inline int64_t
paper_time(long i)
{
	return PAPER_START + (int64_t) i * PAPER_GAP;
}

/*
 * The first element still live when element i is inserted: the live
 * window is every element inserted at or after now - span (the filter's
 * own rule), 3,001 elements once the stream has run for a span.
 */
static inline long
paper_first_live(long i)
{
	long		first = i - PAPER_SPAN / PAPER_GAP;

	return first < 0 ? 0 : first;
}

static inline Tlbf *
paper_filter(double error_rate, uint64_t capacity, int k, int l, TlbfMemory *memory)
{
	TlbfParams	p = {PAPER_SPAN, error_rate, capacity, k, l, 0};
	TlbfProblem problem;

	if (!tlbf_check_params(&p, &problem))
	{
		fprintf(stderr, "bad parameters: %s\n", problem.message);
		exit(1);
	}
	return heap_filter(&p, memory);
}

static inline void
paper_insert(Tlbf **f, TlbfMemory *memory, long i)
{
	if (tlbf_insert(f, memory, eval_hash(paper_key(i)), paper_time(i)) != TLBF_OK)
	{
		fprintf(stderr, "tlbf_insert failed\n");
		exit(1);
	}
}

/* Live elements (at element i's insertion) the filter does not find. */
static inline long
paper_missed(const Tlbf *f, long i)
{
	long		missed = 0;

	for (long j = paper_first_live(i); j <= i; j++)
		missed += !tlbf_query(f, eval_hash(paper_key(j)), paper_time(i), f->span);
	return missed;
}

/* A CSV file of the output directory, opened for writing (or exit). */
static inline FILE *
paper_open_out(const char *dir, const char *name)
{
	char		path[4096];
	FILE	   *out;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	out = fopen(path, "w");
	if (out == NULL)
	{
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return out;
}

#endif							/* EVAL_PAPER_STREAM_H */
