/*-------------------------------------------------------------------------
 *
 * agg_rows.h
 *	  Where tlbf_agg keeps rows it cannot add to its filter yet (agg_rows.c):
 *	  a stream of rows, a log that spills to a file, a sort.  agg_build.c adds
 *	  them to a filter; the state machine that uses both is aggregates.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_AGG_ROWS_H
#define TLBF_AGG_ROWS_H

#include "tlbf_pg.h"

#include "core/tlbf_rows.h"

/*
 * A stream of rows in memory, behind the header that makes it a bytea
 * (TlbfRowsHeader, tlbf_rows.h): a parallel worker sends it as its partial
 * state as it is, with its runs after the rows.
 */
typedef struct RowStream
{
	MemoryContext context;		/* its own: deleting it frees the rows */
	TlbfRowsHeader *data;		/* header, then the encoded rows */
	Size		used;			/* bytes, header included */
	Size		allocated;
	TlbfRowCoding coding;		/* after the last row */
	int			nruns;			/* ascending runs so far, */
	TlbfRun		runs[TLBF_MAX_SENT_RUNS];	/* the first of them */
} RowStream;

/*
 * A stream another process sent (or one's own), with its runs checked, and
 * the parameters of the filter its rows are for.
 */
typedef struct ReceivedRows
{
	TlbfSentRows sent;			/* its rows: in the state's context */
	TlbfParams	params;
} ReceivedRows;

typedef struct RowSorter RowSorter;

/*
 * A log of rows in arrival order: a RowStream while it fits its memory
 * budget; past it, if it may spill, a temporary file of chunks of encoded
 * rows (written once they pass ROW_LOG_CHUNK_BYTES), else dropped.
 */
#define ROW_LOG_CHUNK_BYTES 65536

typedef struct RowLog
{
	MemoryContext context;		/* its own */
	RowStream  *stream;			/* the rows not in the file */
	struct BufFile *file;		/* NULL until the log spills */
	uint64		file_bytes;
	bool		may_spill;
	TlbfRowCoding first;		/* what the first row is encoded against */
	TlbfRowCursor cursor;		/* reading: the stream, or the current chunk */
	uint8	   *chunk;			/* reading: the chunk read from the file */
	Size		chunk_allocated;
} RowLog;

/* The capacity of an aggregate's filter (its parameters: filter_params.c). */

extern RowStream *tlbf_row_stream_create(MemoryContext parent, TlbfRowKind kind,
									uint64 seed);
extern void tlbf_row_stream_grow(RowStream *stream);
extern void tlbf_row_stream_free(RowStream *stream);
extern bytea *tlbf_row_stream_bytes(RowStream *stream, const TlbfParams *params, TlbfKeys keys);
extern void tlbf_row_stream_cursor(RowStream *stream, TlbfRowCursor *cursor);

extern void tlbf_row_stream_runs(RowStream *stream, ReceivedRows *runs);
extern bool tlbf_row_bytes_are_stream(const bytea *bytes);
extern void tlbf_agg_bad_state(const char *detail);
extern ReceivedRows *tlbf_row_stream_receive(const bytea *bytes, MemoryContext context);
extern void tlbf_row_stream_check_rows(const ReceivedRows *received);

extern RowLog *tlbf_row_log_create(MemoryContext parent, bool may_spill,
							  TlbfRowKind kind, uint64 seed);
extern bool tlbf_row_log_overflow(RowLog *log, Size memory_budget);
extern Size tlbf_row_log_memory(const RowLog *log);
extern void tlbf_row_log_start_reading(RowLog *log);
extern bool tlbf_row_log_next(void *log, TlbfRow *row);
extern void tlbf_row_log_free(RowLog *log);

extern RowSorter *tlbf_row_sorter_begin(MemoryContext context, int memory_kb);
extern void tlbf_row_sorter_put(RowSorter *sorter, const TlbfRow *row);
extern void tlbf_row_sorter_put_all(RowSorter *sorter, TlbfRowCursor *cursor);
extern void tlbf_row_sorter_sort(RowSorter *sorter);
extern bool tlbf_row_sorter_next(void *sorter, TlbfRow *row);
extern void tlbf_row_sorter_end(RowSorter *sorter);

/*
 * Add a row; 'key' is its key if the stream's rows carry keys (else NULL).
 * Inline, with the growth apart: a serial tlbf_agg logs every row.
 */
static inline void
tlbf_row_stream_append(RowStream *stream, const TlbfRow *row, const TlbfRowKey *key)
{
	if (stream->used + TLBF_ROW_MAX_BYTES > stream->allocated)
		tlbf_row_stream_grow(stream);
	tlbf_note_run(stream->runs, &stream->nruns, TLBF_MAX_SENT_RUNS,
				  stream->used - sizeof(TlbfRowsHeader), stream->data->nrows,
				  &stream->coding, row->at);
	stream->used += tlbf_row_encode((uint8 *) stream->data + stream->used,
									&stream->coding, row, key);
	if (stream->data->nrows == 0 || row->at < stream->data->oldest)
		stream->data->oldest = row->at;
	if (stream->data->nrows == 0 || row->at > stream->data->newest)
		stream->data->newest = row->at;
	stream->data->nrows++;
}

/*
 * Add a row to a log.  False if the log cannot hold it (past its memory
 * budget and not allowed to spill, or past its file's limit): the caller
 * drops the log.
 */
static inline bool
tlbf_row_log_append(RowLog *log, const TlbfRow *row, const TlbfRowKey *key,
			   Size memory_budget)
{
	tlbf_row_stream_append(log->stream, row, key);
	if (log->stream->used <= (log->file == NULL ? memory_budget : ROW_LOG_CHUNK_BYTES))
		return true;
	return tlbf_row_log_overflow(log, memory_budget);
}

#endif							/* TLBF_AGG_ROWS_H */
