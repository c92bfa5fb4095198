/*-------------------------------------------------------------------------
 *
 * agg_rows.c
 *	  What tlbf_agg keeps of rows it cannot add to its filter yet:
 *
 *	  - a RowStream, the rows in arrival order, compactly encoded (18 bytes
 *		a row with a hash, a few with an integer or short text key), in
 *		memory: a parallel
 *		worker's rows, which it sends as its partial state, and the start of
 *		a log;
 *	  - a RowLog, the log of a filter's rows: a RowStream while it fits in
 *		its share of work_mem, then a temporary file;
 *	  - a RowSorter, a tuplesort of (time, hash), which keeps to work_mem
 *		and spills to disk, for rows in no useful order;
 *
 *	  from which agg_build.c adds them to a filter in time order.
 *
 *-------------------------------------------------------------------------
 */
#include "agg_rows.h"
#include "filter_params.h"

#include "access/tupdesc.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type_d.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "storage/buffile.h"
#include "utils/memutils.h"
#include "utils/tuplesort.h"

#define ROW_STREAM_FIRST_BYTES 8192

/* An empty stream of rows of 'kind', in a memory context of its own. */
RowStream *
tlbf_row_stream_create(MemoryContext parent, TlbfRowKind kind, uint64 seed)
{
	MemoryContext context = AllocSetContextCreate(parent, "tlbf_agg rows",
												  ALLOCSET_DEFAULT_SIZES);
	RowStream  *stream = MemoryContextAllocZero(context, sizeof(RowStream));

	stream->context = context;
	stream->allocated = ROW_STREAM_FIRST_BYTES;
	stream->data = MemoryContextAllocZero(context, stream->allocated);
	stream->used = sizeof(TlbfRowsHeader);
	tlbf_row_coding_init(&stream->coding, kind, seed);
	return stream;
}

/* Make room for one more row. */
void
tlbf_row_stream_grow(RowStream *stream)
{
	Size		grown = Min(2 * stream->allocated, MaxAllocSize);

	if (stream->used + TLBF_ROW_MAX_BYTES > grown)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("tlbf_agg cannot hold more rows out of time order")));
	stream->data = repalloc(stream->data, grown);
	stream->allocated = grown;
}

void
tlbf_row_stream_free(RowStream *stream)
{
	MemoryContextDelete(stream->context);
}

/*
 * The stream as a bytea, in place, its runs after the rows: valid until the
 * stream changes.  Only a stream of at most TLBF_MAX_SENT_RUNS runs is sent.
 */
bytea *
tlbf_row_stream_bytes(RowStream *stream, const TlbfParams *params, TlbfKeys keys)
{
	TlbfRowsHeader *header;
	Size		runs_bytes = stream->nruns * sizeof(TlbfSentRun);

	if (stream->nruns > TLBF_MAX_SENT_RUNS)
		elog(ERROR, "tlbf_agg's rows come in too many runs to send");
	if (stream->used + runs_bytes > stream->allocated)
	{
		stream->data = repalloc(stream->data, stream->used + runs_bytes);
		stream->allocated = stream->used + runs_bytes;
	}
	tlbf_rows_put_runs((uint8 *) stream->data + stream->used, stream->runs, stream->nruns);
	header = stream->data;
	header->magic = TLBF_ROWS_MAGIC;
	header->version = TLBF_ROWS_VERSION;
	header->row_kind = (uint16) stream->coding.kind;
	header->nruns = (uint32) stream->nruns;
	header->span = params->span;
	header->error_rate = params->error_rate;
	header->key_fields = keys.fields;
	header->key_kinds = keys.kinds;
	header->key_tag = keys.tag;
	header->reserved = 0;
	SET_VARSIZE(header, stream->used + runs_bytes);
	return (bytea *) header;
}

/* A cursor over the whole stream, in arrival order. */
void
tlbf_row_stream_cursor(RowStream *stream, TlbfRowCursor *cursor)
{
	TlbfRowCoding start;

	tlbf_row_coding_init(&start, stream->coding.kind, stream->coding.seed);
	tlbf_cursor_open_all(cursor, (const uint8 *) stream->data + sizeof(TlbfRowsHeader),
						 stream->used - sizeof(TlbfRowsHeader),
						 stream->data->nrows, &start);
}

/* One's own stream, with its runs, as a received one is. */
void
tlbf_row_stream_runs(RowStream *stream, ReceivedRows *runs)
{
	TlbfSentRows *sent = &runs->sent;

	if (stream->nruns > TLBF_MAX_SENT_RUNS)
		elog(ERROR, "tlbf_agg's rows come in too many runs to merge");
	sent->rows = (const uint8 *) stream->data + sizeof(TlbfRowsHeader);
	sent->len = stream->used - sizeof(TlbfRowsHeader);
	sent->nrows = stream->data->nrows;
	sent->nruns = stream->nruns;
	memcpy(sent->runs, stream->runs, stream->nruns * sizeof(TlbfRun));
}

/* Is this partial state a stream of rows (else it is a filter)? */
bool
tlbf_row_bytes_are_stream(const bytea *bytes)
{
	uint32		magic;

	if (VARSIZE_ANY_EXHDR(bytes) < sizeof(magic))
		return false;
	memcpy(&magic, VARDATA_ANY(bytes), sizeof(magic));
	return magic == TLBF_ROWS_MAGIC;
}

void
tlbf_agg_bad_state(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
			 errmsg("invalid tlbf_agg state"),
			 errdetail("%s", detail)));
}

/*
 * Check a stream another process sent (every byte, as for any value from
 * outside: its header and its runs here, its rows as they are read) and
 * copy it into 'context'.
 */
ReceivedRows *
tlbf_row_stream_receive(const bytea *bytes, MemoryContext context)
{
	ReceivedRows *received = MemoryContextAllocZero(context, sizeof(ReceivedRows));
	TlbfSentRows *sent = &received->sent;
	TlbfProblem problem;
	const char *wrong;
	uint8	   *rows;

	wrong = tlbf_rows_take((const uint8 *) VARDATA_ANY(bytes), VARSIZE_ANY_EXHDR(bytes),
						   TLBF_DEFAULT_SEED, sent);
	if (wrong != NULL)
		tlbf_agg_bad_state(wrong);
	tlbf_agg_params(&received->params, sent->span, sent->error_rate);
	received->params.seed = sent->keys.tag;	/* the filter hashes with it */
	if (!tlbf_check_params(&received->params, &problem))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid tlbf_agg state"),
				 errdetail("Its parameters are invalid: %s.", problem.message)));

	rows = MemoryContextAlloc(context, Max(sent->len, 1));
	memcpy(rows, sent->rows, sent->len);
	sent->rows = rows;
	return received;
}

/*
 * Read every row of a received stream once (its runs were checked): the
 * bytes decode, and each run ascends.
 */
void
tlbf_row_stream_check_rows(const ReceivedRows *received)
{
	const TlbfSentRows *sent = &received->sent;

	for (int r = 0; r < sent->nruns; r++)
	{
		TlbfRowCursor cursor;
		TlbfRow		row;

		tlbf_cursor_open_run(&cursor, sent->rows, sent->len, sent->nrows,
							 sent->runs, sent->nruns, r);
		while (tlbf_cursor_next(&cursor, &row))
			;
		if (cursor.failed)
			tlbf_agg_bad_state("The rows do not decode, or do not match their runs.");
	}
}

/*
 * The most a log writes to its temporary file; a longer log is dropped, and
 * rows that come out of order after it are merged as a union (see
 * aggregates.c).
 */
#define ROW_LOG_MAX_FILE_BYTES ((uint64) 1 << 30)

/* A chunk of the file: this header, then rows encoded as in a stream,
 * continuing the coding of the chunk before. */
typedef struct ChunkHeader
{
	uint32		bytes;
	uint32		rows;
} ChunkHeader;

RowLog *
tlbf_row_log_create(MemoryContext parent, bool may_spill, TlbfRowKind kind, uint64 seed)
{
	MemoryContext context = AllocSetContextCreate(parent, "tlbf_agg log",
												  ALLOCSET_SMALL_SIZES);
	RowLog	   *log = MemoryContextAllocZero(context, sizeof(RowLog));

	log->context = context;
	log->stream = tlbf_row_stream_create(context, kind, seed);
	log->may_spill = may_spill;
	tlbf_row_coding_init(&log->first, kind, seed);
	return log;
}

/*
 * Write the stream's rows to the file as a chunk, and empty the stream for
 * the next chunk, which continues their coding.  The first chunk may be as
 * large as the memory budget; the stream then gives back all but room for
 * one chunk.
 */
static void
write_chunk(RowLog *log)
{
	RowStream  *stream = log->stream;
	ChunkHeader header;
	Size		keep = 2 * ROW_LOG_CHUNK_BYTES;

	if (stream->data->nrows == 0)
		return;
	if (log->file == NULL)
	{
		MemoryContext caller = MemoryContextSwitchTo(log->context);

		log->file = BufFileCreateTemp(false);
		MemoryContextSwitchTo(caller);
	}
	header.bytes = (uint32) (stream->used - sizeof(TlbfRowsHeader));
	header.rows = (uint32) stream->data->nrows;
	BufFileWrite(log->file, (void *) &header, sizeof(header));
	BufFileWrite(log->file, (char *) stream->data + sizeof(TlbfRowsHeader), header.bytes);
	log->file_bytes += sizeof(header) + header.bytes;

	stream->used = sizeof(TlbfRowsHeader);
	stream->data->nrows = 0;
	stream->nruns = 0;
	if (stream->allocated > keep)
	{
		stream->data = repalloc(stream->data, keep);
		stream->allocated = keep;
	}
}

/*
 * The log passed its memory budget (before it spills) or its chunk size:
 * write the rows to the file, or say that the log cannot hold them.
 */
bool
tlbf_row_log_overflow(RowLog *log, Size memory_budget)
{
	if (log->file == NULL && !log->may_spill)
		return false;
	if (log->file_bytes > ROW_LOG_MAX_FILE_BYTES)
		return false;
	write_chunk(log);
	return true;
}

/* The memory the log's rows take, before it spills. */
Size
tlbf_row_log_memory(const RowLog *log)
{
	return log->file == NULL ? log->stream->used : 0;
}

void
tlbf_row_log_start_reading(RowLog *log)
{
	if (log->file == NULL)
	{
		tlbf_row_stream_cursor(log->stream, &log->cursor);
		return;
	}
	write_chunk(log);
	if (BufFileSeek(log->file, 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not rewind tlbf_agg's temporary file")));
	memset(&log->cursor, 0, sizeof(log->cursor));
	log->cursor.coding = log->first;
}

static void
read_exactly(BufFile *file, void *into, size_t bytes)
{
	if (BufFileRead(file, into, bytes) != bytes)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read tlbf_agg's temporary file")));
}

/* A TlbfRowNext over a log, in arrival order. */
bool
tlbf_row_log_next(void *source, TlbfRow *row)
{
	RowLog	   *log = source;

	while (log->file != NULL && log->cursor.left == 0)
	{
		ChunkHeader header;
		size_t		got = BufFileRead(log->file, &header, sizeof(header));

		if (got == 0)
			return false;
		if (got != sizeof(header))
			read_exactly(log->file, (char *) &header + got, sizeof(header) - got);
		if (header.bytes > log->chunk_allocated)
		{
			log->chunk = log->chunk == NULL ?
				MemoryContextAlloc(log->context, header.bytes) :
				repalloc(log->chunk, header.bytes);
			log->chunk_allocated = header.bytes;
		}
		read_exactly(log->file, log->chunk, header.bytes);
		log->cursor.next = log->chunk;
		log->cursor.end = log->chunk + header.bytes;
		log->cursor.left = header.rows;
	}
	if (!tlbf_cursor_next(&log->cursor, row))
	{
		if (log->cursor.failed)
			elog(ERROR, "tlbf_agg's temporary file does not decode");
		return false;
	}
	return true;
}

void
tlbf_row_log_free(RowLog *log)
{
	if (log->file != NULL)
		BufFileClose(log->file);
	MemoryContextDelete(log->context);
}

struct RowSorter
{
	Tuplesortstate *sort;
	TupleTableSlot *in;
	TupleTableSlot *out;
};

/*
 * A sort of rows by time in 'context' (the sort's own memory goes below
 * it), keeping to 'memory_kb' (at least 64kB, tuplesort's least).  Rows
 * of equal time come out in no set order.
 */
RowSorter *
tlbf_row_sorter_begin(MemoryContext context, int memory_kb)
{
	MemoryContext old = MemoryContextSwitchTo(context);
	RowSorter  *sorter = palloc0(sizeof(RowSorter));
	TupleDesc	desc = CreateTemplateTupleDesc(3);
	AttrNumber	time_column = 1;
	Oid			less_than = Int8LessOperator;
	Oid			collation = InvalidOid;
	bool		nulls_first = false;

	TupleDescInitEntry(desc, 1, "at", INT8OID, -1, 0);
	TupleDescInitEntry(desc, 2, "hash_a", INT8OID, -1, 0);
	TupleDescInitEntry(desc, 3, "hash_b", INT8OID, -1, 0);
	tlbf_finish_tupdesc(desc);
	sorter->sort = tuplesort_begin_heap(desc, 1, &time_column, &less_than,
										&collation, &nulls_first, Max(memory_kb, 64),
										NULL, TUPLESORT_NONE);
	sorter->in = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);
	sorter->out = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	MemoryContextSwitchTo(old);
	return sorter;
}

void
tlbf_row_sorter_put(RowSorter *sorter, const TlbfRow *row)
{
	TupleTableSlot *slot = sorter->in;

	ExecClearTuple(slot);
	slot->tts_values[0] = Int64GetDatum(row->at);
	slot->tts_values[1] = Int64GetDatum((int64) row->hash.a);
	slot->tts_values[2] = Int64GetDatum((int64) row->hash.b);
	memset(slot->tts_isnull, 0, 3 * sizeof(bool));
	ExecStoreVirtualTuple(slot);
	tuplesort_puttupleslot(sorter->sort, slot);
}

void
tlbf_row_sorter_put_all(RowSorter *sorter, TlbfRowCursor *cursor)
{
	TlbfRow		row;

	while (tlbf_cursor_next(cursor, &row))
		tlbf_row_sorter_put(sorter, &row);
}

void
tlbf_row_sorter_sort(RowSorter *sorter)
{
	tuplesort_performsort(sorter->sort);
}

/* A TlbfRowNext over a sorted RowSorter. */
bool
tlbf_row_sorter_next(void *source, TlbfRow *row)
{
	RowSorter  *sorter = source;
	TupleTableSlot *slot = sorter->out;

	if (!tuplesort_gettupleslot(sorter->sort, true, false, slot, NULL))
		return false;
	slot_getallattrs(slot);
	row->at = DatumGetInt64(slot->tts_values[0]);
	row->hash.a = (uint64) DatumGetInt64(slot->tts_values[1]);
	row->hash.b = (uint64) DatumGetInt64(slot->tts_values[2]);
	return true;
}

/* Release the sort's memory and temporary files. */
void
tlbf_row_sorter_end(RowSorter *sorter)
{
	tuplesort_end(sorter->sort);
	ExecDropSingleTupleTableSlot(sorter->in);
	ExecDropSingleTupleTableSlot(sorter->out);
	pfree(sorter);
}
