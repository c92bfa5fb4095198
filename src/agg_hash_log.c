/*-------------------------------------------------------------------------
 *
 * agg_hash_log.c
 *	  tlbf_agg_format3(item, at, span [, error_rate]): the aggregate that
 *	  builds a filter of format 3 without a declared capacity (issue 36).
 *
 * Without a capacity, a generation's size must come from the keys it
 * holds, known only at the end; and a filter cannot grow without its keys
 * (a band of n groups folds onto n / d, never onto more).  So the state
 * keeps the keys' hashes, per generation (16 bytes a row), and the filter
 * is built at the end (tb_build): each generation's keys counted, one band
 * sized for the largest count, every hash set with its line prefetched
 * ahead.  Nothing depends on the rows' order or on the plan: the counts
 * are a sketch's maxima, the bits an OR, the times minima and maxima; so
 * parallel workers send their hashes and the leader's filter has the
 * bytes of a serial plan's.  Generations that leave the span (the newest
 * time moved on) are forgotten as the rows come: the state holds the
 * span's rows, whatever the query's range.  Past its share of work_mem (a
 * hashed aggregation's groups share it) the state writes its full chunks
 * to a temporary file, read back at the end: a chunk there names its
 * generation, and one of a generation forgotten since is skipped.
 *
 * The state is internal, serialized for parallel plans as its hashes; on
 * Citus the rows are gathered (Citus cannot pass an item of type "any" to
 * its workers).  A declared capacity (tlbf_agg_format3's fifth argument)
 * lets each part send a filter instead.
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"
#include "agg_format3.h"
#include "filter_args.h"
#include "filter_params.h"
#include "times.h"
#include "union.h"

#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "storage/buffile.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(tlbf_agg_format3_log_trans);
PG_FUNCTION_INFO_V1(tlbf_agg_format3_log_final);
PG_FUNCTION_INFO_V1(tlbf_agg_format3_log_combine);
PG_FUNCTION_INFO_V1(tlbf_agg_format3_log_serialize);
PG_FUNCTION_INFO_V1(tlbf_agg_format3_log_deserialize);

/* A chunk's hashes: from a few (a group of a hashed plan) to 1 MB. */
#define FIRST_CHUNK_HASHES	64
#define MAX_CHUNK_HASHES	65536

#define chunk_bytes(allocated) (offsetof(HashChunk, hashes) + (Size) (allocated) * sizeof(TlbfHash))

typedef struct HashChunk
{
	struct HashChunk *next;		/* the older chunk */
	uint32		n;
	uint32		allocated;
	TlbfHash	hashes[FLEXIBLE_ARRAY_MEMBER];
} HashChunk;

/* One generation's rows: their hashes, in chunks, and its earliest time. */
typedef struct GenerationLog
{
	int64		generation;		/* TB_NO_GENERATION: none */
	TlbfTime	earliest;
	uint64		n;
	HashChunk  *chunks;			/* the newest first */
} GenerationLog;

typedef struct HashLogState
{
	MemoryContext context;		/* the state's own, a child of the
								 * aggregate's */
	AggState   *aggstate;		/* the aggregation (for its strategy), or
								 * NULL */
	Size		in_memory;		/* bytes of the chunks held in memory */
	BufFile    *file;			/* the chunks written out, or NULL */
	MemoryContextCallback close_file;	/* closes it with the state's memory */
	int			file_end;		/* where the next is written (BufFileTell) */
	off_t		file_end_offset;
	TbFilter   *header;			/* parameters, kind of key, newest time,
								 * rows added; no band (VARSIZE kept) */
	Format3Hasher hasher;
	int64		oldest;			/* the oldest generation kept */
	TlbfTime	oldest_until;	/* a newest time from which it is another */
	GenerationLog *last;		/* the log the last row went to */
	GenerationLog logs[TB_MAX_SLOTS];	/* generation g in logs[g mod slots] */
} HashLogState;

/* A chunk in the file: this, then its hashes (at most MAX_CHUNK_HASHES). */
typedef struct SpilledChunk
{
	int64		generation;
	uint32		n;
	uint32		zero;
} SpilledChunk;

/* What visit_hashes calls for the hashes of one chunk of a live generation. */
typedef void (*HashVisitor) (GenerationLog *log, const TlbfHash *hashes, size_t n, void *arg);

/* The serialized state: the header, then per generation this and its hashes. */
typedef struct SentLog
{
	int64		generation;
	TlbfTime	earliest;
	uint64		n;
} SentLog;

static HashLogState *
new_state(MemoryContext aggcontext, const TbFilter *header)
{
	MemoryContext memory = AllocSetContextCreate(aggcontext, "tlbf_agg_format3 hashes",
												 ALLOCSET_SMALL_SIZES);
	HashLogState *state = MemoryContextAllocZero(memory, sizeof(HashLogState));

	state->context = memory;
	state->header = MemoryContextAlloc(memory, tb_lines_offset(0));
	memcpy(state->header, header, tb_lines_offset(0));
	SET_VARSIZE(state->header, tb_lines_offset(0));
	for (int s = 0; s < TB_MAX_SLOTS; s++)
		state->logs[s].generation = TB_NO_GENERATION;
	return state;
}

/* The aggregation calling, or NULL. */
static AggState *
aggregation_of(FunctionCallInfo fcinfo)
{
	return fcinfo->context != NULL && IsA(fcinfo->context, AggState) ?
		(AggState *) fcinfo->context : NULL;
}

/* The first row's state: the parameters of arguments 3 and 4 (span, error_rate). */
static HashLogState *
first_state(FunctionCallInfo fcinfo, MemoryContext aggcontext)
{
	TbParams	params;
	TbFilter   *header;
	double		error_rate = TLBF_DEFAULT_ERROR_RATE;

	if (PG_ARGISNULL(3) || (PG_NARGS() > 4 && PG_ARGISNULL(4)))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("tlbf_agg_format3's span and error_rate must not be NULL")));
	if (PG_NARGS() > 4)
		error_rate = PG_GETARG_FLOAT8(4);
	tlbf_format3_params(&params, PG_GETARG_INTERVAL_P(3), error_rate,
						TLBF_DEFAULT_CAPACITY, false);
	header = palloc(tb_lines_offset(0));
	tb_init(header, &params);
	return new_state(aggcontext, header);
}

static void
forget(HashLogState *state, GenerationLog *log)
{
	HashChunk  *c = log->chunks;

	while (c != NULL)
	{
		HashChunk  *older = c->next;

		state->in_memory -= chunk_bytes(c->allocated);
		pfree(c);
		c = older;
	}
	log->generation = TB_NO_GENERATION;
	log->chunks = NULL;
	log->n = 0;
	log->earliest = 0;
}

/*
 * Forget the generations that left the span before the newest time, and
 * note until when the oldest kept stays (rows mostly come in time order:
 * each moves the newest time, few move the oldest generation).
 */
static void
forget_past(HashLogState *state)
{
	TbFilter   *h = state->header;

	state->oldest = tb_oldest_kept(h, h->newest);
	/* (the oldest moves on when newest - span reaches the next generation) */
	state->oldest_until = state->oldest < (TLBF_TIME_END - h->span) / h->length - 1 ?
		(state->oldest + 1) * h->length + h->span : TLBF_TIME_END;
	for (int s = 0; s < tb_slots(h); s++)
		if (state->logs[s].generation != TB_NO_GENERATION &&
			state->logs[s].generation < state->oldest)
			forget(state, &state->logs[s]);
	state->last = NULL;
}

/* The newest time is now 'at' if later. */
static void
move_newest(HashLogState *state, TlbfTime at)
{
	if (state->header->newest != TLBF_NEVER && at <= state->header->newest)
		return;
	state->header->newest = at;
	if (at >= state->oldest_until || state->oldest_until == 0)
		forget_past(state);
}

/*
 * The log of generation 'g' (within the span: two such generations never
 * share a slot), started if need be with its earliest time 'earliest'.
 */
static GenerationLog *
log_of(HashLogState *state, int64 g, TlbfTime earliest)
{
	GenerationLog *log = &state->logs[tb_slot_of(state->header, g)];

	Assert(log->generation == TB_NO_GENERATION || log->generation == g);
	if (log->generation != g)
	{
		log->generation = g;
		log->earliest = earliest;
	}
	else if (earliest < log->earliest)
		log->earliest = earliest;
	return log;
}

/*
 * The memory a state's chunks may take: work_mem, or in a hashed
 * aggregation, which keeps every group's state at once, a group's share of
 * it (at least 64kB).
 */
static Size
memory_budget(const HashLogState *state)
{
	int			kb = work_mem;

	if (state->aggstate != NULL && state->aggstate->aggstrategy != AGG_PLAIN &&
		state->aggstate->aggstrategy != AGG_SORTED)
		kb = Max(work_mem / Max(state->aggstate->hash_ngroups_current, 1), 64);
	return (Size) kb * 1024;
}

static void
close_file(void *arg)
{
	HashLogState *state = arg;

	if (state->file != NULL)
		BufFileClose(state->file);
	state->file = NULL;
}

/* Write 'n' hashes of generation 'g' to the file, in chunks of at most MAX_CHUNK_HASHES. */
static void
write_hashes(HashLogState *state, int64 g, const TlbfHash *hashes, size_t n)
{
	if (state->file == NULL)
	{
		MemoryContext caller = MemoryContextSwitchTo(state->context);

		/*
		 * Not the transaction's (interXact): closed when the state's memory
		 * goes, at the end of the query or of an aborted transaction, never
		 * twice (a file the transaction held would be closed first on
		 * abort); a backend's exit removes its temporary files.
		 */
		state->file = BufFileCreateTemp(true);
		state->close_file.func = close_file;
		state->close_file.arg = state;
		MemoryContextRegisterResetCallback(state->context, &state->close_file);
		MemoryContextSwitchTo(caller);
	}
	while (n > 0)
	{
		SpilledChunk header = {g, (uint32) Min(n, MAX_CHUNK_HASHES), 0};

		BufFileWrite(state->file, (void *) &header, sizeof(header));
		BufFileWrite(state->file, (void *) hashes, header.n * sizeof(TlbfHash));
		hashes += header.n;
		n -= header.n;
	}
	BufFileTell(state->file, &state->file_end, &state->file_end_offset);
}

/*
 * Past the budget: write every full chunk to the file (not a generation's
 * newest chunk while it has room: rows go on into it).
 */
static void
spill_if_over(HashLogState *state, Size more)
{
	if (state->in_memory + more <= memory_budget(state))
		return;
	for (int s = 0; s < tb_slots(state->header); s++)
	{
		GenerationLog *log = &state->logs[s];
		HashChunk **link = &log->chunks;

		if (log->generation == TB_NO_GENERATION)
			continue;
		if (*link != NULL && (*link)->n < (*link)->allocated)
			link = &(*link)->next;
		while (*link != NULL)
		{
			HashChunk  *c = *link;

			write_hashes(state, log->generation, c->hashes, c->n);
			*link = c->next;
			state->in_memory -= chunk_bytes(c->allocated);
			pfree(c);
		}
	}
}

/* A new chunk of 'allocated' hashes, in memory (the state spills first if need be). */
static HashChunk *
new_chunk(HashLogState *state, uint32 allocated)
{
	HashChunk  *c;

	spill_if_over(state, chunk_bytes(allocated));
	c = MemoryContextAllocHuge(state->context, chunk_bytes(allocated));
	c->next = NULL;
	c->n = 0;
	c->allocated = allocated;
	state->in_memory += chunk_bytes(allocated);
	return c;
}

/* Room for one more hash in the log's newest chunk. */
static HashChunk *
chunk_with_room(HashLogState *state, GenerationLog *log)
{
	HashChunk  *c = log->chunks;

	if (c == NULL || c->n == c->allocated)
	{
		c = new_chunk(state, c == NULL ? FIRST_CHUNK_HASHES :
					  Min(2 * c->allocated, MAX_CHUNK_HASHES));
		c->next = log->chunks;
		log->chunks = c;
	}
	return c;
}

/* Add a full chunk behind the log's newest (which keeps taking rows). */
static void
add_behind(GenerationLog *log, HashChunk *c)
{
	if (log->chunks == NULL)
	{
		c->next = NULL;
		log->chunks = c;
	}
	else
	{
		c->next = log->chunks->next;
		log->chunks->next = c;
	}
}

/*
 * Call 'visit' for the hashes of every live generation: those in memory
 * (if 'memory') and those in the file (if 'file').  The file is read from
 * its start, and left where the next chunk is written.
 */
static void
visit_hashes(HashLogState *state, bool memory, bool file, HashVisitor visit, void *arg)
{
	TlbfHash   *buffer;
	SpilledChunk header;

	for (int s = 0; memory && s < tb_slots(state->header); s++)
		if (state->logs[s].generation != TB_NO_GENERATION)
			for (HashChunk *c = state->logs[s].chunks; c != NULL; c = c->next)
				visit(&state->logs[s], c->hashes, c->n, arg);
	if (!file || state->file == NULL)
		return;
	if (BufFileSeek(state->file, 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not seek in a tlbf_agg_format3 temporary file")));
	buffer = palloc(MAX_CHUNK_HASHES * sizeof(TlbfHash));
	for (;;)
	{
		size_t		got = BufFileRead(state->file, &header, sizeof(header));
		GenerationLog *log;

		if (got == 0)
			break;
		if (got != sizeof(header) || header.n > MAX_CHUNK_HASHES ||
			BufFileRead(state->file, buffer, header.n * sizeof(TlbfHash)) != header.n * sizeof(TlbfHash))
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read a tlbf_agg_format3 temporary file")));
		/* (a generation forgotten since: its slot holds a newer one, or none) */
		log = &state->logs[tb_slot_of(state->header, header.generation)];
		if (log->generation == header.generation)
			visit(log, buffer, header.n, arg);
	}
	pfree(buffer);
	if (BufFileSeek(state->file, state->file_end, state->file_end_offset, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not seek in a tlbf_agg_format3 temporary file")));
}

/*
 * Add the row of argument 1 (item) and 2 (time): its hash to its
 * generation's log, unless the generation left the span (as tlbf_add,
 * which counts it all the same).
 */
static void
add_row(HashLogState *state, FunctionCallInfo fcinfo)
{
	TlbfTime	at = tlbf_insert_time_arg(fcinfo, 2);
	TlbfHash	hash = tlbf_format3_row_hash(&state->hasher, fcinfo, state->header,
											 state->header->inserted > 0, state->context);
	GenerationLog *log;
	HashChunk  *c;

	state->header->inserted = tlbf_add_saturating(state->header->inserted, 1);
	move_newest(state, at);
	/* most rows go where the one before went: no division (read after
	 * move_newest, which may forget that generation) */
	log = state->last;
	if (log == NULL || at < log->generation * state->header->length ||
		at - log->generation * state->header->length >= state->header->length)
	{
		int64		g = tb_generation_of(at, state->header->length);

		if (g < state->oldest)
			return;
		state->last = log = log_of(state, g, at);
	}
	else if (at < log->earliest)
		log->earliest = at;
	c = chunk_with_room(state, log);
	c->hashes[c->n++] = hash;
	log->n++;
}

/*
 * Add a row.  Rows with a NULL item or time are skipped, as tlbf_add skips
 * them; a group with no other row gives NULL.  The parameters of later
 * rows are not read.
 */
Datum
tlbf_agg_format3_log_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = tlbf_format3_aggregate_memory(fcinfo, "tlbf_agg_format3_log_trans");
	HashLogState *state;

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_POINTER(PG_GETARG_POINTER(0));
	}
	state = PG_ARGISNULL(0) ? first_state(fcinfo, aggcontext) :
		(HashLogState *) PG_GETARG_POINTER(0);
	state->aggstate = aggregation_of(fcinfo);
	add_row(state, fcinfo);
	PG_RETURN_POINTER(state);
}

/*
 * Each generation's count, in the slot of its log: its hashes gathered
 * and counted exactly while they are few (tb_count_distinct), else a
 * sketch (a group of a few rows costs a sort of them, not 16 kB of
 * registers).  Either way a function of the generation's hashes alone.
 */
typedef struct CountingState
{
	HashLogState *state;
	TbCounter  *counters[TB_MAX_SLOTS];
	TlbfHash   *few[TB_MAX_SLOTS];
	size_t		nfew[TB_MAX_SLOTS];
} CountingState;

static void
count_hashes(GenerationLog *log, const TlbfHash *hashes, size_t n, void *arg)
{
	CountingState *counting = arg;
	int			s = log - counting->state->logs;

	if (counting->counters[s] != NULL)
		tb_count_add(counting->counters[s], hashes, n);
	else
	{
		memcpy(counting->few[s] + counting->nfew[s], hashes, n * sizeof(TlbfHash));
		counting->nfew[s] += n;
	}
}

/* The largest count of distinct keys of a generation. */
static double
largest_count(HashLogState *state)
{
	CountingState counting;
	double		largest = 0;

	memset(&counting, 0, sizeof(counting));
	counting.state = state;
	for (int s = 0; s < tb_slots(state->header); s++)
	{
		GenerationLog *log = &state->logs[s];

		if (log->generation == TB_NO_GENERATION)
			continue;
		if (log->n <= TB_COUNT_EXACT)
			counting.few[s] = palloc(Max(log->n, 1) * sizeof(TlbfHash));
		else
		{
			counting.counters[s] = palloc(sizeof(TbCounter));
			tb_count_init(counting.counters[s]);
		}
	}
	visit_hashes(state, true, true, count_hashes, &counting);
	for (int s = 0; s < tb_slots(state->header); s++)
	{
		if (counting.counters[s] != NULL)
		{
			largest = Max(largest, tb_count_estimate(counting.counters[s]));
			pfree(counting.counters[s]);
		}
		else if (counting.few[s] != NULL)
		{
			Assert(counting.nfew[s] == state->logs[s].n);
			largest = Max(largest, tb_count_distinct(counting.few[s], counting.nfew[s]));
			pfree(counting.few[s]);
		}
	}
	return largest;
}

static void
set_hashes(GenerationLog *log, const TlbfHash *hashes, size_t n, void *arg)
{
	tb_build_add((TbFilter *) arg, log->generation, hashes, n);
}

/*
 * The filter (the state goes on: a window may add rows), under
 * tlbf.max_filter_bytes: each generation counted, one band for the
 * largest count, every hash set (tb_build.c).
 */
Datum
tlbf_agg_format3_log_final(PG_FUNCTION_ARGS)
{
	HashLogState *state;
	TbFilter   *f;
	TlbfMemory	memory;
	double		largest;
	TlbfStatus	status;

	(void) tlbf_format3_aggregate_memory(fcinfo, "tlbf_agg_format3_log_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = (HashLogState *) PG_GETARG_POINTER(0);
	largest = largest_count(state);

	f = palloc(tb_lines_offset(0));
	memcpy(f, state->header, tb_lines_offset(0));
	tlbf_memory_for(&memory, f, CurrentMemoryContext);
	memory.max_bytes = tlbf_filter_bytes_cap();
	status = tb_build_band(&f, &memory, largest);
	if (status == TLBF_OVER_LIMIT)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("tlbf_agg_format3's filter would exceed tlbf.max_filter_bytes (%zu bytes)",
						tlbf_filter_bytes_cap()),
				 errhint("Raise tlbf.max_filter_bytes, or use a shorter span or a larger error rate.")));
	tlbf_check_core_status(status, 0, 0);
	for (int s = 0; s < tb_slots(state->header); s++)
		if (state->logs[s].generation != TB_NO_GENERATION)
			tb_build_generation(f, state->logs[s].generation, state->logs[s].earliest);
	visit_hashes(state, true, true, set_hashes, f);
	SET_VARSIZE(f, tb_size(f));
	PG_RETURN_POINTER(f);
}

/* A chunk of the other state's file, copied into 'arg' (take_rows). */
static void
take_spilled(GenerationLog *log, const TlbfHash *hashes, size_t n, void *arg)
{
	HashLogState *into = arg;
	GenerationLog *dst;
	HashChunk  *c;

	if (log->generation < into->oldest)
		return;
	dst = log_of(into, log->generation, log->earliest);
	c = new_chunk(into, (uint32) n);
	memcpy(c->hashes, hashes, n * sizeof(TlbfHash));
	c->n = (uint32) n;
	add_behind(dst, c);
	dst->n += n;
}

/*
 * Move the rows of 'from' (a state no longer used) into 'into': its
 * chunks in memory join into's lists as they are (no copy: the leader of
 * a parallel plan takes every worker's hashes), those in its file are
 * copied.  Both states' memory is a child of the aggregate's, which lasts
 * as long as either state.
 */
static void
take_rows(HashLogState *into, HashLogState *from)
{
	TlbfMemory	memory;

	/* (the kind of key, the newest time, the rows: headers unite as filters) */
	tlbf_memory_for(&memory, into->header, into->context);
	into->header = tlbf_union_format3_into(into->header, from->header, &memory);
	forget_past(into);
	visit_hashes(from, false, true, take_spilled, into);
	for (int s = 0; s < tb_slots(from->header); s++)
	{
		GenerationLog *src = &from->logs[s];
		GenerationLog *dst;

		if (src->generation == TB_NO_GENERATION || src->generation < into->oldest)
			continue;
		dst = log_of(into, src->generation, src->earliest);
		while (src->chunks != NULL)
		{
			HashChunk  *c = src->chunks;

			src->chunks = c->next;
			add_behind(dst, c);
			dst->n += c->n;
			from->in_memory -= chunk_bytes(c->allocated);
			into->in_memory += chunk_bytes(c->allocated);
		}
	}
	/* (what is left of 'from' is no longer asked) */
	for (int s = 0; s < tb_slots(from->header); s++)
		forget(from, &from->logs[s]);
	from->last = NULL;
	if (from->file != NULL)
	{
		BufFileClose(from->file);
		from->file = NULL;
	}
	spill_if_over(into, 0);
}

/* Not STRICT (internal): either state may be missing. */
Datum
tlbf_agg_format3_log_combine(PG_FUNCTION_ARGS)
{
	HashLogState *into;

	(void) tlbf_format3_aggregate_memory(fcinfo, "tlbf_agg_format3_log_combine");
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	if (PG_ARGISNULL(0))
		PG_RETURN_POINTER(PG_GETARG_POINTER(1));
	into = (HashLogState *) PG_GETARG_POINTER(0);
	into->aggstate = aggregation_of(fcinfo);
	take_rows(into, (HashLogState *) PG_GETARG_POINTER(1));
	PG_RETURN_POINTER(into);
}

/* Where each generation's next hashes go in the bytes being sent. */
typedef struct SendingState
{
	HashLogState *state;
	char	   *next[TB_MAX_SLOTS];
	char	   *end[TB_MAX_SLOTS];
} SendingState;

static void
send_hashes(GenerationLog *log, const TlbfHash *hashes, size_t n, void *arg)
{
	SendingState *sending = arg;
	int			s = log - sending->state->logs;

	if (n * sizeof(TlbfHash) > (Size) (sending->end[s] - sending->next[s]))
		elog(ERROR, "tlbf_agg_format3: a generation holds more hashes than it counted");
	memcpy(sending->next[s], hashes, n * sizeof(TlbfHash));
	sending->next[s] += n * sizeof(TlbfHash);
}

/*
 * The state as bytes (STRICT): the header, then each generation's
 * SentLog and hashes.  At most 1 GB, as any value.
 */
Datum
tlbf_agg_format3_log_serialize(PG_FUNCTION_ARGS)
{
	HashLogState *state;
	Size		size = VARHDRSZ + tb_lines_offset(0) + sizeof(uint32);
	uint32		nlogs = 0;
	bytea	   *out;
	char	   *p;
	SendingState sending;

	(void) tlbf_format3_aggregate_memory(fcinfo, "tlbf_agg_format3_log_serialize");
	state = (HashLogState *) PG_GETARG_POINTER(0);
	sending.state = state;
	for (int s = 0; s < tb_slots(state->header); s++)
		if (state->logs[s].generation != TB_NO_GENERATION)
		{
			nlogs++;
			size += sizeof(SentLog) + state->logs[s].n * sizeof(TlbfHash);
		}
	if (size > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("tlbf_agg_format3 cannot pass more than 1GB of hashes between processes"),
				 errhint("Declare a capacity (tlbf_agg_format3's fifth argument): its parts pass filters.")));
	out = palloc(size);
	SET_VARSIZE(out, size);
	p = VARDATA(out);
	memcpy(p, state->header, tb_lines_offset(0));
	p += tb_lines_offset(0);
	memcpy(p, &nlogs, sizeof(uint32));
	p += sizeof(uint32);
	for (int s = 0; s < tb_slots(state->header); s++)
	{
		GenerationLog *log = &state->logs[s];
		SentLog		sent;

		if (log->generation == TB_NO_GENERATION)
			continue;
		sent.generation = log->generation;
		sent.earliest = log->earliest;
		sent.n = log->n;
		memcpy(p, &sent, sizeof(SentLog));
		p += sizeof(SentLog);
		sending.next[s] = p;
		p += log->n * sizeof(TlbfHash);
		sending.end[s] = p;
	}
	Assert(p == (char *) out + size);
	visit_hashes(state, true, true, send_hashes, &sending);
	for (int s = 0; s < tb_slots(state->header); s++)
		if (state->logs[s].generation != TB_NO_GENERATION && sending.next[s] != sending.end[s])
			elog(ERROR, "tlbf_agg_format3: a generation holds fewer hashes than it counted");
	PG_RETURN_BYTEA_P(out);
}

static void
damaged(const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
			 errmsg("invalid tlbf_agg_format3 state"),
			 errdetail("%s", why)));
}

/*
 * A state from those bytes (STRICT), every field checked: the header is
 * a valid filter with no band that has seen a row, and each generation
 * lies within the span before its newest time, in a slot of its own, its
 * earliest time within it.
 */
Datum
tlbf_agg_format3_log_deserialize(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = tlbf_format3_aggregate_memory(fcinfo, "tlbf_agg_format3_log_deserialize");
	bytea	   *bytes = PG_GETARG_BYTEA_PP(0);
	const char *p = VARDATA_ANY(bytes);
	const char *end = p + VARSIZE_ANY_EXHDR(bytes);
	TbFilter   *header;
	TlbfProblem problem;
	HashLogState *state;
	uint32		nlogs;

	if (end - p < (ptrdiff_t) (tb_lines_offset(0) + sizeof(uint32)))
		damaged("It is too short.");
	/* (aligned: the bytes may not be) */
	header = palloc(tb_lines_offset(0));
	memcpy(header, p, tb_lines_offset(0));
	if (header->version != TB_FORMAT_VERSION || header->nbands != 0 ||
		!tb_validate(header, tb_lines_offset(0), &problem))
		damaged("Its header is not a filter of format 3 without bands.");
	if (header->newest == TLBF_NEVER || header->inserted == 0)
		damaged("It holds no row.");
	p += tb_lines_offset(0);
	memcpy(&nlogs, p, sizeof(uint32));
	p += sizeof(uint32);
	if (nlogs > (uint32) tb_slots(header))
		damaged("It holds more generations than slots.");
	state = new_state(aggcontext, header);
	state->aggstate = aggregation_of(fcinfo);
	for (uint32 i = 0; i < nlogs; i++)
	{
		SentLog		sent;
		GenerationLog *log;
		HashChunk  *c;

		if (end - p < (ptrdiff_t) sizeof(SentLog))
			damaged("It is too short.");
		memcpy(&sent, p, sizeof(SentLog));
		p += sizeof(SentLog);
		if (sent.generation < tb_oldest_kept(header, header->newest) ||
			sent.generation > tb_generation_of(header->newest, header->length) ||
			tb_generation_of(sent.earliest, header->length) != sent.generation ||
			sent.earliest > header->newest)
			damaged("A generation lies outside the span before its newest time.");
		if (state->logs[tb_slot_of(header, sent.generation)].generation != TB_NO_GENERATION)
			damaged("Two generations share a slot.");
		if (sent.n == 0 || (uint64) (end - p) / sizeof(TlbfHash) < sent.n)
			damaged("A generation's hashes are missing.");
		log = log_of(state, sent.generation, sent.earliest);
		/* one chunk for all (it is full: the next row starts another) */
		c = new_chunk(state, (uint32) sent.n);
		memcpy(c->hashes, p, sent.n * sizeof(TlbfHash));
		c->n = (uint32) sent.n;
		p += sent.n * sizeof(TlbfHash);
		add_behind(log, c);
		log->n = sent.n;
	}
	if (p != end)
		damaged("It has bytes after its last generation.");
	forget_past(state);
	spill_if_over(state, 0);
	PG_RETURN_POINTER(state);
}
