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
 * span's rows, whatever the query's range.
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

#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(tlbf_agg_format3_log_trans);
PG_FUNCTION_INFO_V1(tlbf_agg_format3_log_final);
PG_FUNCTION_INFO_V1(tlbf_agg_format3_log_combine);
PG_FUNCTION_INFO_V1(tlbf_agg_format3_log_serialize);
PG_FUNCTION_INFO_V1(tlbf_agg_format3_log_deserialize);

/* A chunk's hashes: from a few (a group of a hashed plan) to 1 MB. */
#define FIRST_CHUNK_HASHES	64
#define MAX_CHUNK_HASHES	65536

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
	TbFilter   *header;			/* parameters, kind of key, newest time,
								 * rows added; no band (VARSIZE kept) */
	Format3Hasher hasher;
	int64		oldest;			/* the oldest generation kept */
	TlbfTime	oldest_until;	/* a newest time from which it is another */
	GenerationLog *last;		/* the log the last row went to */
	GenerationLog logs[TB_MAX_SLOTS];	/* generation g in logs[g mod slots] */
} HashLogState;

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

/* Room for one more hash in the log's newest chunk. */
static HashChunk *
chunk_with_room(HashLogState *state, GenerationLog *log)
{
	HashChunk  *c = log->chunks;

	if (c == NULL || c->n == c->allocated)
	{
		uint32		allocated = c == NULL ? FIRST_CHUNK_HASHES :
			Min(2 * c->allocated, MAX_CHUNK_HASHES);

		c = MemoryContextAlloc(state->context,
							   offsetof(HashChunk, hashes) + allocated * sizeof(TlbfHash));
		c->next = log->chunks;
		c->n = 0;
		c->allocated = allocated;
		log->chunks = c;
	}
	return c;
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
	GenerationLog *log = state->last;
	HashChunk  *c;

	state->header->inserted = tlbf_add_saturating(state->header->inserted, 1);
	move_newest(state, at);
	/* most rows go where the one before went: no division */
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
	add_row(state, fcinfo);
	PG_RETURN_POINTER(state);
}

/*
 * The filter (the state goes on: a window may add rows): one part per
 * chunk, built by tb_build under tlbf.max_filter_bytes.
 */
Datum
tlbf_agg_format3_log_final(PG_FUNCTION_ARGS)
{
	HashLogState *state;
	TbBuildPart *parts;
	int			nparts = 0;
	TbFilter   *f;
	TlbfMemory	memory;
	TbCounter  *counter;
	TlbfStatus	status;

	(void) tlbf_format3_aggregate_memory(fcinfo, "tlbf_agg_format3_log_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = (HashLogState *) PG_GETARG_POINTER(0);
	for (int s = 0; s < tb_slots(state->header); s++)
		for (HashChunk *c = state->logs[s].chunks; c != NULL; c = c->next)
			nparts++;
	parts = palloc(Max(nparts, 1) * sizeof(TbBuildPart));
	nparts = 0;
	for (int s = 0; s < tb_slots(state->header); s++)
		for (HashChunk *c = state->logs[s].chunks; c != NULL; c = c->next)
		{
			parts[nparts].generation = state->logs[s].generation;
			parts[nparts].earliest = state->logs[s].earliest;
			parts[nparts].hashes = c->hashes;
			parts[nparts++].n = c->n;
		}
	f = palloc(tb_lines_offset(0));
	memcpy(f, state->header, tb_lines_offset(0));
	tlbf_memory_for(&memory, f, CurrentMemoryContext);
	memory.max_bytes = tlbf_filter_bytes_cap();
	counter = palloc(sizeof(TbCounter));
	status = tb_build(&f, &memory, parts, nparts, counter);
	if (status == TLBF_OVER_LIMIT)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("tlbf_agg_format3's filter would exceed tlbf.max_filter_bytes (%zu bytes)",
						tlbf_filter_bytes_cap()),
				 errhint("Raise tlbf.max_filter_bytes, or use a shorter span or a larger error rate.")));
	tlbf_check_core_status(status, 0, 0);
	SET_VARSIZE(f, tb_size(f));
	pfree(counter);
	pfree(parts);
	PG_RETURN_POINTER(f);
}

/*
 * Move the rows of 'from' (a state no longer used) into 'into': its
 * chunks join into's lists as they are (no copy: the leader of a parallel
 * plan takes every worker's hashes).  Both states' memory is a child of
 * the aggregate's, which lasts as long as either state.
 */
static void
take_rows(HashLogState *into, HashLogState *from)
{
	TlbfMemory	memory;

	/* (the kind of key, the newest time, the rows: headers unite as filters) */
	tlbf_memory_for(&memory, into->header, into->context);
	into->header = tlbf_union_format3_into(into->header, from->header, &memory);
	forget_past(into);
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
			/* (behind the newest, which keeps taking rows) */
			if (dst->chunks == NULL)
			{
				c->next = NULL;
				dst->chunks = c;
			}
			else
			{
				c->next = dst->chunks->next;
				dst->chunks->next = c;
			}
			dst->n += c->n;
		}
		src->n = 0;
		src->generation = TB_NO_GENERATION;
	}
	from->last = NULL;
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
	take_rows(into, (HashLogState *) PG_GETARG_POINTER(1));
	PG_RETURN_POINTER(into);
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

	(void) tlbf_format3_aggregate_memory(fcinfo, "tlbf_agg_format3_log_serialize");
	state = (HashLogState *) PG_GETARG_POINTER(0);
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
		for (HashChunk *c = log->chunks; c != NULL; c = c->next)
		{
			memcpy(p, c->hashes, c->n * sizeof(TlbfHash));
			p += c->n * sizeof(TlbfHash);
		}
	}
	Assert(p == (char *) out + size);
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
		c = MemoryContextAllocHuge(state->context,
								   offsetof(HashChunk, hashes) + sent.n * sizeof(TlbfHash));
		c->next = NULL;
		c->n = c->allocated = (uint32) sent.n;
		memcpy(c->hashes, p, sent.n * sizeof(TlbfHash));
		p += sent.n * sizeof(TlbfHash);
		log->chunks = c;
		log->n = sent.n;
	}
	if (p != end)
		damaged("It has bytes after its last generation.");
	forget_past(state);
	PG_RETURN_POINTER(state);
}
