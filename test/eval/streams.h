/*-------------------------------------------------------------------------
 *
 * streams.h
 *	  The key streams of the comparison: three synthetic patterns and the
 *	  1998 World Cup web log.
 *
 *-------------------------------------------------------------------------
 */
#ifndef EVAL_STREAMS_H
#define EVAL_STREAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 1994-01-01 00:00 UTC in PostgreSQL microseconds: any origin would do. */
#define EVAL_START			INT64_C(-189302400000000)
#define EVAL_MS				INT64_C(1000)
#define EVAL_SECOND			INT64_C(1000000)

/* Stream keys stay below 2^56; absent ("fresh") keys are drawn above. */
#define EVAL_FRESH_BASE		(UINT64_C(1) << 62)

typedef struct Stream
{
	size_t		n;
	uint64_t   *keys;
	int64_t    *times;			/* microseconds, never decreasing */
} Stream;

typedef enum Pattern
{
	PATTERN_UNIFORM,
	PATTERN_ZIPF,
	PATTERN_BURSTY
} Pattern;

extern const char *pattern_name(Pattern p);
extern void stream_synthetic(Stream *s, Pattern p, size_t n, uint64_t seed);
extern void stream_sessions(Stream *s, size_t n, double day_seconds, uint64_t seed);
extern bool stream_weblog(Stream *s, const char *path, size_t max_lines);
extern void stream_free(Stream *s);
extern size_t stream_first_at_or_after(const int64_t *times, size_t n, int64_t t);

#endif							/* EVAL_STREAMS_H */
