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
 * varint, then the 16 bytes of its hash; or, for integer keys, the
 * difference between its key and the previous row's, encoded the same way;
 * or, for keys hashed as byte strings, a length byte and the key when it
 * is short.  Rows 100 microseconds apart take 18 bytes with hashes, 3 with
 * integer keys that count up, and 2 plus its length with a short text key.  A stream may come from outside (a parallel worker's state is a
 * bytea), so decoding checks every byte and every time.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_ROWS_H
#define TLBF_ROWS_H

#include <string.h>

#include "tlbf.h"

typedef struct TlbfRow
{
	TlbfTime	at;
	TlbfHash	hash;
} TlbfRow;

/* What the rows of a stream carry for their keys. */
typedef enum TlbfRowKind
{
	TLBF_ROWS_HASHES = 0,		/* the key's hash: 16 bytes */
	TLBF_ROWS_INT64 = 1,		/* an integer key (PostgreSQL's integer and
								 * timestamp types), as the difference from
								 * the row before; its hash is
								 * tlbf_hash_int64's */
	TLBF_ROWS_BYTES = 2			/* a key hashed as a byte string (text,
								 * bytea, ...): a length byte, then the key
								 * if it is short, else its hash */
} TlbfRowKind;

/* TLBF_ROWS_BYTES: keys up to this long travel as such, longer ones as
 * their hash. */
#define TLBF_ROW_MAX_KEY_BYTES 15

/* A row's key as it travels, for TLBF_ROWS_INT64 and TLBF_ROWS_BYTES. */
typedef struct TlbfRowKey
{
	int64_t		value;			/* TLBF_ROWS_INT64 */
	const uint8_t *bytes;		/* TLBF_ROWS_BYTES: what the hash hashes */
	uint32_t	len;
} TlbfRowKey;

/* Where encoding or decoding a stream stands: what the next row is
 * encoded against. */
typedef struct TlbfRowCoding
{
	TlbfRowKind kind;
	uint64_t	seed;			/* TLBF_ROWS_INT64: the hash seed */
	TlbfTime	prev_at;
	int64_t		prev_item;
} TlbfRowCoding;

/* The most bytes one encoded row takes: a 10-byte varint, a length byte
 * and the hash. */
#define TLBF_ROW_MAX_BYTES 27

/*
 * An ascending run inside a stream: where its first row is, which row that
 * is, and what it is encoded against.  A run ends where the next one
 * starts (the last at the stream's end).  The writer of a stream notes its
 * runs as it writes (tlbf_note_run) and sends them with it, so that a
 * reader does not have to decode every row twice to find them.
 */
typedef struct TlbfRun
{
	size_t		offset;			/* of its first row */
	uint64_t	first_row;
	TlbfRowCoding start;
} TlbfRun;

/* A reader of one run, or of a whole stream in arrival order. */
typedef struct TlbfRowCursor
{
	const uint8_t *next;
	const uint8_t *end;
	TlbfRowCoding coding;
	uint64_t	left;
	bool		ascending;		/* a run: each row no older than the last */
	TlbfTime	last;
	bool		failed;			/* the bytes were not what the run said */
} TlbfRowCursor;

/*
 * A stream as it travels between processes (a parallel worker's partial
 * state): this header, the encoded rows, then a TlbfSentRun for each run.
 * The first four bytes are reserved for PostgreSQL's varlena length word,
 * as in a filter.  A sender sorts its rows before it would send more than
 * TLBF_MAX_SENT_RUNS runs, and a receiver refuses a stream with more.
 */
#define TLBF_ROWS_MAGIC		0x52424C54u /* "TLBR" read as little-endian */
#define TLBF_ROWS_VERSION	3	/* 2: with the kind of key; 3: its tag */
#define TLBF_MAX_SENT_RUNS	16

typedef struct TlbfRowsHeader
{
	uint32_t	length_word;	/* the varlena length; never read here */
	uint32_t	magic;			/* TLBF_ROWS_MAGIC */
	uint16_t	version;		/* TLBF_ROWS_VERSION */
	uint16_t	row_kind;		/* TlbfRowKind */
	uint32_t	nruns;			/* TlbfSentRuns after the rows */
	int64_t		span;			/* the filter's, in microseconds */
	double		error_rate;		/* the filter's */
	uint64_t	nrows;
	TlbfTime	oldest;			/* the rows' times: the receiver sizes the */
	TlbfTime	newest;			/* filter from them (0 when nrows is 0) */
	uint32_t	key_kinds;		/* the kind of key, as in a filter's header */
	uint16_t	key_fields;
	uint16_t	reserved;		/* zero */
	uint64_t	key_tag;		/* the key's tag (TlbfKeys), the rows' seed */
} TlbfRowsHeader;

/* A TlbfRun as it is sent; the offset counts from the first row. */
typedef struct TlbfSentRun
{
	uint64_t	offset;
	uint64_t	first_row;
	int64_t		prev_at;
	int64_t		prev_item;
} TlbfSentRun;

/* A stream received and checked: its rows stay where they came. */
typedef struct TlbfSentRows
{
	const uint8_t *rows;
	size_t		len;
	uint64_t	nrows;
	TlbfRowKind kind;
	int64_t		span;
	double		error_rate;
	TlbfTime	oldest;
	TlbfTime	newest;
	TlbfKeys	keys;
	TlbfRun		runs[TLBF_MAX_SENT_RUNS];
	int			nruns;
} TlbfSentRows;

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

extern void tlbf_row_coding_init(TlbfRowCoding *coding, TlbfRowKind kind,
								 uint64_t seed);
extern bool tlbf_row_decode(const uint8_t **p, const uint8_t *end,
							TlbfRowCoding *coding, TlbfRow *row);
extern bool tlbf_runs_check(const TlbfRun *runs, int nruns, size_t len,
							uint64_t nrows);
extern void tlbf_rows_put_runs(uint8_t *out, const TlbfRun *runs, int nruns);
extern const char *tlbf_rows_take(const uint8_t *data, size_t len, uint64_t seed,
								  TlbfSentRows *sent);

extern void tlbf_cursor_open_run(TlbfRowCursor *cursor, const uint8_t *data,
								 size_t len, uint64_t nrows,
								 const TlbfRun *runs, int nruns, int run);
extern void tlbf_cursor_open_all(TlbfRowCursor *cursor, const uint8_t *data,
								 size_t len, uint64_t nrows,
								 const TlbfRowCoding *start);
extern bool tlbf_cursor_next(void *cursor, TlbfRow *row);

extern void tlbf_row_merge_start(TlbfRowMerge *merge, int nsources);
extern size_t tlbf_row_merge_fill(TlbfRowMerge *merge, TlbfRow *rows, size_t max);

/*
 * insert.c: adding the rows of a merge to a filter, a batch at a time.  A
 * row is prefetched TLBF_PREFETCH_ROWS rows before it is added (more rows
 * of k misses each outrun the CPU's buffers for misses in flight,
 * measured), so the last rows of a batch wait for the next one.
 */
#define TLBF_PREFETCH_ROWS 8

typedef struct TlbfMergedBatch
{
	TlbfRowMerge *merge;
	TlbfRow    *rows;			/* room for 'capacity' rows */
	size_t		capacity;		/* more than TLBF_PREFETCH_ROWS */
	size_t		held;			/* rows at its start, taken from the merge
								 * but not added yet */
	bool		done;			/* every row of the merge added */
} TlbfMergedBatch;

extern TlbfStatus tlbf_insert_merged_batch(Tlbf **f, TlbfMemory *memory,
										   TlbfMergedBatch *batch);

/* Inline: tlbf_agg encodes every row it logs. */

/*
 * Before a row at time 'at' is encoded at 'offset' of a stream that has
 * 'nrows' rows, encoded up to 'coding': if it starts a run (it is the
 * first, or older than the row before; equal times stay in a run), note
 * the run in runs[] while there is room, and count it in *nruns.
 */
static inline void
tlbf_note_run(TlbfRun *runs, int *nruns, int max_runs, size_t offset,
			  uint64_t nrows, const TlbfRowCoding *coding, TlbfTime at)
{
	if (nrows > 0 && at >= coding->prev_at)
		return;
	if (*nruns < max_runs)
	{
		runs[*nruns].offset = offset;
		runs[*nruns].first_row = nrows;
		runs[*nruns].start = *coding;
	}
	(*nruns)++;
}

/*
 * The difference of two int64s, taken modulo 2^64 and zigzag-encoded as a
 * varint: small steps either way give few bytes.  Any two values
 * round-trip.
 */
static inline size_t
tlbf_put_difference(uint8_t *out, int64_t value, int64_t prev)
{
	int64_t		delta = (int64_t) ((uint64_t) value - (uint64_t) prev);
	uint64_t	zigzag = ((uint64_t) delta << 1) ^ (uint64_t) (delta >> 63);
	size_t		n = 0;

	while (zigzag >= 0x80)
	{
		out[n++] = (uint8_t) (zigzag | 0x80);
		zigzag >>= 7;
	}
	out[n++] = (uint8_t) zigzag;
	return n;
}

/*
 * Encode a row after the ones 'coding' has seen: its time, then its hash,
 * or its key (TLBF_ROWS_INT64, TLBF_ROWS_BYTES: 'key', whose hash must be
 * row->hash where the key travels as its hash).  Returns the bytes
 * written.
 */
static inline size_t
tlbf_row_encode(uint8_t *out, TlbfRowCoding *coding, const TlbfRow *row,
				const TlbfRowKey *key)
{
	size_t		n = tlbf_put_difference(out, row->at, coding->prev_at);

	coding->prev_at = row->at;
	if (coding->kind == TLBF_ROWS_INT64)
	{
		n += tlbf_put_difference(out + n, key->value, coding->prev_item);
		coding->prev_item = key->value;
		return n;
	}
	if (coding->kind == TLBF_ROWS_BYTES)
	{
		if (key->len <= TLBF_ROW_MAX_KEY_BYTES)
		{
			out[n++] = (uint8_t) (key->len + 1);
			memcpy(out + n, key->bytes, key->len);
			return n + key->len;
		}
		out[n++] = 0;
	}
	memcpy(out + n, &row->hash.a, sizeof(uint64_t));
	memcpy(out + n + 8, &row->hash.b, sizeof(uint64_t));
	return n + 16;
}

#endif							/* TLBF_ROWS_H */
