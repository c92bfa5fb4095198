/*-------------------------------------------------------------------------
 *
 * tlbf_rows.h
 *	  Rows an aggregate has not added to a filter yet: a key's hash and its
 *	  time, kept in a compact byte stream, and the merge of several streams
 *	  by time.
 *
 * A filter built from rows depends on the order they are added in.  The
 * aggregate gives the result of adding them in time order whatever order
 * the plan delivers them in (see aggregates.c): rows that arrive out of
 * order are kept as streams, each made of ascending runs, and merged.
 *
 * A stream is a sequence of rows, each the difference between its time and
 * the previous row's (the first row's: against 0), zigzag-encoded as a
 * varint, then the 16 bytes of its hash.  Rows 100 microseconds apart take
 * 18 bytes.  A stream may come from outside (a parallel worker's state is a
 * bytea), so decoding checks every byte and every time.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_ROWS_H
#define TLBF_ROWS_H

#include "tlbf.h"

typedef struct TlbfRow
{
	TlbfTime	at;
	TlbfHash	hash;
} TlbfRow;

/* The most bytes one encoded row takes: a 10-byte varint and the hash. */
#define TLBF_ROW_MAX_BYTES 26

/* An ascending run inside a stream: where it starts, and its length. */
typedef struct TlbfRun
{
	size_t		offset;			/* of its first row */
	TlbfTime	prev;			/* the time its first row is encoded against */
	uint64_t	rows;
} TlbfRun;

/* A reader of one run (or a whole stream, with rows = all of them). */
typedef struct TlbfRowCursor
{
	const uint8_t *next;
	const uint8_t *end;
	TlbfTime	prev;
	uint64_t	left;
} TlbfRowCursor;

/* A source of rows in ascending time order, for the merge. */
typedef bool (*TlbfRowNext) (void *source, TlbfRow *row);

typedef struct TlbfRowMerge
{
	int			nsources;
	int			nheap;
	TlbfRowNext *next;			/* [nsources] */
	void	  **sources;		/* [nsources] */
	TlbfRow    *heads;			/* [nsources]: each source's next row */
	int		   *heap;			/* [nsources]: sources with a head, earliest
								 * first */
} TlbfRowMerge;

extern size_t tlbf_row_encode(uint8_t *out, TlbfTime prev, const TlbfRow *row);
extern bool tlbf_row_decode(const uint8_t **p, const uint8_t *end,
							TlbfTime *prev, TlbfRow *row);
extern bool tlbf_rows_split(const uint8_t *data, size_t len, uint64_t nrows,
							TlbfRun *runs, int max_runs, int *nruns);

extern void tlbf_cursor_open(TlbfRowCursor *cursor, const uint8_t *data,
							 size_t len, const TlbfRun *run);
extern bool tlbf_cursor_next(void *cursor, TlbfRow *row);

extern void tlbf_row_merge_start(TlbfRowMerge *merge, int nsources);
extern bool tlbf_row_merge_next(TlbfRowMerge *merge, TlbfRow *row);

#endif							/* TLBF_ROWS_H */
