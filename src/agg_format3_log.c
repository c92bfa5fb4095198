/*-------------------------------------------------------------------------
 *
 * agg_format3_log.c
 *	  tlbf_agg(item, at, span [, error_rate]): the aggregate that builds a
 *	  filter of format 3 from its rows (issue 36).
 *
 * Without a capacity, a generation's size must come from the keys it
 * holds, known only at the end; and a filter cannot grow without its keys
 * (a band of n groups folds onto n / d, never onto more).  So the state
 * keeps the keys' hashes per generation (16 bytes a row, agg_hash_log.c),
 * and the filter is built at the end (core/tb_build.c): each generation's
 * keys counted, one band sized for the largest count, every hash set with
 * its line prefetched ahead.  Nothing depends on the rows' order or on the
 * plan: the counts are exact or a sketch's maxima, the bits an OR, the
 * times minima and maxima; so parallel workers send their hashes and the
 * leader's filter has the bytes of a serial plan's.  In a window, whose
 * final function runs after every row, rows go into a filter as they come
 * instead (as tlbf_add puts them).
 *
 * The state of the "any" form is internal, serialized for parallel plans
 * as its hashes; on Citus the rows are gathered (Citus cannot pass an item
 * of type "any" to its workers).  The typed forms keep the same state in a
 * tlbf_agg_state (agg_state_type.c), which Citus splits.  A declared
 * capacity (tlbf_agg_format3's fifth argument) lets each part send a
 * filter instead.
 *
 *-------------------------------------------------------------------------
 */
#include "agg_format3_log.h"
#include "filter_args.h"
#include "filter_params.h"
#include "settings.h"
#include "times.h"

#include "miscadmin.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(tlbf_agg_trans);
PG_FUNCTION_INFO_V1(tlbf_agg_final);
PG_FUNCTION_INFO_V1(tlbf_agg_combine);
PG_FUNCTION_INFO_V1(tlbf_agg_serialize);
PG_FUNCTION_INFO_V1(tlbf_agg_deserialize);

/* The serialized state: the header, then per generation this and its hashes. */
typedef struct SentLog
{
	int64		generation;
	TlbfTime	earliest;
	uint64		n;
} SentLog;

/* The aggregation calling (for a hashed one's share of work_mem), or NULL (a window). */
AggState *
tlbf_aggregation_of(FunctionCallInfo fcinfo)
{
	return fcinfo->context != NULL && IsA(fcinfo->context, AggState) ?
		(AggState *) fcinfo->context : NULL;
}

/* The first row's state: the parameters of arguments 3 and 4 (span, error_rate). */
HashLog *
tlbf_format3_log_first(FunctionCallInfo fcinfo, MemoryContext aggcontext)
{
	TbParams	params;
	TbFilter   *header;
	HashLog    *state;
	double		error_rate = TLBF_DEFAULT_ERROR_RATE;

	if (PG_ARGISNULL(3) || (PG_NARGS() > 4 && PG_ARGISNULL(4)))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("tlbf_agg's span and error_rate must not be NULL")));
	if (PG_NARGS() > 4)
		error_rate = PG_GETARG_FLOAT8(4);
	tlbf_format3_params(&params, PG_GETARG_INTERVAL_P(3), error_rate,
						TLBF_DEFAULT_CAPACITY, false);
	header = palloc(tb_lines_offset(0));
	tb_init(header, &params);
	state = tlbf_hash_log_create(aggcontext, header);

	/*
	 * A window calls the final function after every row: building from
	 * every hash each time would cost a build per row.  There the rows go
	 * into a filter as they come, as tlbf_add puts them (from a first guess
	 * of a capacity, following the rate).
	 */
	if (AggCheckCallContext(fcinfo, NULL) == AGG_CONTEXT_WINDOW)
	{
		state->window = MemoryContextAlloc(state->context, tb_lines_offset(0));
		memcpy(state->window, state->header, tb_lines_offset(0));
		SET_VARSIZE(state->window, tb_lines_offset(0));
		tlbf_memory_for(&state->window_memory, state->window, state->context);
	}
	return state;
}

/*
 * Add the row of argument 1 (item) and 2 (time): its hash to its
 * generation's log, unless the generation left the span (as tlbf_add,
 * which counts it all the same).
 */
void
tlbf_format3_log_add_row(HashLog *state, FunctionCallInfo fcinfo)
{
	TlbfTime	at = tlbf_insert_time_arg(fcinfo, 2);
	TlbfHash	hash;
	GenerationLog *log;

	if (state->window != NULL)
	{
		uint64		truncated = state->window->truncated;
		TlbfStatus	status;

		hash = tlbf_format3_row_hash(&state->hasher, fcinfo, state->window,
									 state->window->inserted > 0, state->context);
		status = tb_insert(&state->window, &state->window_memory, hash, at);
		tlbf_check_core_status(status, truncated, state->window->truncated);
		SET_VARSIZE(state->window, tb_size(state->window));
		return;
	}
	hash = tlbf_format3_row_hash(&state->hasher, fcinfo, state->header,
								 state->header->inserted > 0, state->context);

	state->header->inserted = tlbf_add_saturating(state->header->inserted, 1);
	tlbf_hash_log_move_newest(state, at);
	/* most rows go where the one before went: no division (read after
	 * tlbf_hash_log_move_newest, which may forget that generation) */
	log = state->last;
	if (log == NULL || at < log->generation * state->header->length ||
		at - log->generation * state->header->length >= state->header->length)
	{
		int64		g = tb_generation_of(at, state->header->length);

		if (g < state->oldest)
			return;
		state->last = log = tlbf_hash_log_generation(state, g, at);
	}
	else if (at < log->earliest)
		log->earliest = at;
	tlbf_hash_log_append(state, log, hash);
}

/*
 * Add a row.  Rows with a NULL item or time are skipped, as tlbf_add skips
 * them; a group with no other row gives NULL.  The parameters of later
 * rows are not read.  (tlbf_agg("any", ...)'s C functions keep their
 * names since 1.0.)
 */
Datum
tlbf_agg_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	HashLog    *state;

	/* every row but the first, in an aggregation, without calls but the row's */
	if (likely(!PG_ARGISNULL(0) && !PG_ARGISNULL(1) && !PG_ARGISNULL(2) &&
			   fcinfo->context != NULL && IsA(fcinfo->context, AggState)))
	{
		state = (HashLog *) PG_GETARG_POINTER(0);
		state->aggstate = (AggState *) fcinfo->context;
		tlbf_format3_log_add_row(state, fcinfo);
		PG_RETURN_POINTER(state);
	}

	aggcontext = tlbf_format3_aggregate_memory(fcinfo, "tlbf_agg_trans");

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_POINTER(PG_GETARG_POINTER(0));
	}
	state = PG_ARGISNULL(0) ? tlbf_format3_log_first(fcinfo, aggcontext) :
		(HashLog *) PG_GETARG_POINTER(0);
	state->aggstate = tlbf_aggregation_of(fcinfo);
	tlbf_format3_log_add_row(state, fcinfo);
	PG_RETURN_POINTER(state);
}

/*
 * Each generation's count: exact while it holds at most TB_COUNT_EXACT
 * hashes (tb_count_distinct; a group of a few rows costs a sort of them,
 * not 16 kB of registers), else a sketch's.  Either way a function of the
 * generation's hashes alone.  The sketches were mostly kept as the hashes
 * came (GenerationLog); the hashes are read here only for those that were
 * not, and for the few of the generations counted exactly, in the slot of
 * their log.
 */
typedef struct CountingState
{
	HashLog    *state;
	TbCounter  *counters[TB_MAX_SLOTS];
	TlbfHash   *few[TB_MAX_SLOTS];
	size_t		nfew[TB_MAX_SLOTS];
	size_t		room[TB_MAX_SLOTS];
} CountingState;

static void
count_hashes(GenerationLog *log, const TlbfHash *hashes, size_t n, void *arg)
{
	CountingState *counting = arg;
	int			s = log - counting->state->logs;

	if (counting->counters[s] != NULL)
		tb_count_add(counting->counters[s], hashes, n);
	else if (counting->few[s] != NULL)
	{
		if (n > counting->room[s] - counting->nfew[s])
			elog(ERROR, "tlbf_agg: a generation holds more hashes than it counted");
		memcpy(counting->few[s] + counting->nfew[s], hashes, n * sizeof(TlbfHash));
		counting->nfew[s] += n;
	}
}

/*
 * The largest count of distinct keys of a generation.  A generation
 * counted exactly has at most as many keys as hashes: one whose hashes
 * are no more than the largest sketch's count cannot be the largest, and
 * is not counted (nor read).
 */
static double
largest_count(HashLog *state)
{
	CountingState counting;
	double		largest = 0;
	bool		read = false;
	bool		file = false;

	memset(&counting, 0, sizeof(counting));
	counting.state = state;
	for (int s = 0; s < tb_slots(state->header); s++)
		if (tlbf_generation_count(&state->logs[s]) == GENERATION_SKETCHED)
			largest = Max(largest, tb_count_estimate(state->logs[s].counter));
	for (int s = 0; s < tb_slots(state->header); s++)
	{
		GenerationLog *log = &state->logs[s];

		switch (tlbf_generation_count(log))
		{
			case GENERATION_NONE:
			case GENERATION_SKETCHED:
				continue;
			case GENERATION_FEW:
				if ((double) log->n <= largest)
					continue;
				counting.few[s] = palloc(Max(log->n, 1) * sizeof(TlbfHash));
				counting.room[s] = log->n;
				break;
			case GENERATION_UNSKETCHED:
				counting.counters[s] = palloc(sizeof(TbCounter));
				tb_count_init(counting.counters[s]);
				break;
		}
		read = true;
		file |= log->in_file > 0;
	}
	if (read)
		tlbf_hash_log_visit(state, true, file, count_hashes, &counting);
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

/*
 * Set a batch's hashes: each run sorted by bucket, then bucket by bucket
 * over every run, so that the lines set stay in the cache, for a band
 * larger than the last-level cache (tlbf.agg_bucketed_band; at 30M keys
 * 78 MB).  The runs' order within them changes, nothing else.
 */
static void
set_batch(HashRun *runs, int nruns, void *arg)
{
	TbFilter   *f = arg;
	size_t		longest = 0;
	size_t	   (*offsets)[TB_BUILD_BUCKETS + 1];
	TlbfHash   *scratch;

	for (int r = 0; r < nruns; r++)
		longest = Max(longest, runs[r].n);
	offsets = palloc_extended(nruns * sizeof(*offsets), MCXT_ALLOC_HUGE);
	scratch = palloc_extended(longest * sizeof(TlbfHash), MCXT_ALLOC_HUGE);
	for (int r = 0; r < nruns; r++)
		tb_build_bucket(runs[r].hashes, runs[r].n, scratch, offsets[r]);
	pfree(scratch);
	for (int b = 0; b < TB_BUILD_BUCKETS; b++)
	{
		CHECK_FOR_INTERRUPTS();
		for (int r = 0; r < nruns; r++)
			tb_build_add(f, runs[r].log->generation, runs[r].hashes + offsets[r][b],
						 offsets[r][b + 1] - offsets[r][b]);
	}
	pfree(offsets);
}

/* The same, run after run, for a band that stays in the cache. */
static void
set_runs(HashRun *runs, int nruns, void *arg)
{
	for (int r = 0; r < nruns; r++)
		tb_build_add((TbFilter *) arg, runs[r].log->generation, runs[r].hashes, runs[r].n);
}

/*
 * The filter (the state goes on: a window may add rows), under
 * tlbf.max_filter_bytes: each generation counted, one band for the
 * largest count, every hash set (tb_build.c).
 */
TbFilter *
tlbf_format3_log_build(HashLog *state)
{
	TbFilter   *f;
	TlbfMemory	memory;
	double		largest;
	TlbfStatus	status;
	Size		band_bytes;

	if (state->window != NULL)
	{
		f = palloc(VARSIZE(state->window));
		memcpy(f, state->window, VARSIZE(state->window));
		return f;
	}
	largest = largest_count(state);

	f = palloc(tb_lines_offset(0));
	memcpy(f, state->header, tb_lines_offset(0));
	tlbf_memory_for(&memory, f, CurrentMemoryContext);
	memory.max_bytes = tlbf_filter_bytes_cap();
	status = tb_build_band(&f, &memory, largest);
	if (status == TLBF_OVER_LIMIT)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("tlbf_agg's filter would exceed tlbf.max_filter_bytes (%zu bytes)",
						tlbf_filter_bytes_cap()),
				 errhint("Raise tlbf.max_filter_bytes, or use a shorter span or a larger error rate.")));
	tlbf_check_core_status(status, 0, 0);
	for (int s = 0; s < tb_slots(state->header); s++)
		if (state->logs[s].generation != TB_NO_GENERATION)
			tb_build_generation(f, state->logs[s].generation, state->logs[s].earliest);
	band_bytes = tb_size(f) - tb_lines_offset(f->nbands);
	if (band_bytes > (Size) tlbf_agg_bucketed_band * 1024)
		tlbf_hash_log_visit_batches(state, true, true, band_bytes, set_batch, f);
	else
		tlbf_hash_log_visit_batches(state, true, true, 0, set_runs, f);
	tb_build_finish(f);
	SET_VARSIZE(f, tb_size(f));
	return f;
}

Datum
tlbf_agg_final(PG_FUNCTION_ARGS)
{
	(void) tlbf_format3_aggregate_memory(fcinfo, "tlbf_agg_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(tlbf_format3_log_build((HashLog *) PG_GETARG_POINTER(0)));
}

/* Not STRICT (internal): either state may be missing. */
Datum
tlbf_agg_combine(PG_FUNCTION_ARGS)
{
	HashLog    *into;

	(void) tlbf_format3_aggregate_memory(fcinfo, "tlbf_agg_combine");
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	if (PG_ARGISNULL(0))
	{
		/* the first state kept: now it keeps to its budget */
		into = (HashLog *) PG_GETARG_POINTER(1);
		into->aggstate = tlbf_aggregation_of(fcinfo);
		tlbf_hash_log_spill_if_over(into, 0);
		PG_RETURN_POINTER(into);
	}
	into = (HashLog *) PG_GETARG_POINTER(0);
	into->aggstate = tlbf_aggregation_of(fcinfo);
	tlbf_hash_log_take(into, (HashLog *) PG_GETARG_POINTER(1));
	PG_RETURN_POINTER(into);
}

/* Where each generation's next hashes go in the bytes being sent. */
typedef struct SendingState
{
	HashLog    *state;
	char	   *next[TB_MAX_SLOTS];
	char	   *end[TB_MAX_SLOTS];
} SendingState;

static void
send_hashes(GenerationLog *log, const TlbfHash *hashes, size_t n, void *arg)
{
	SendingState *sending = arg;
	int			s = log - sending->state->logs;

	if (n * sizeof(TlbfHash) > (Size) (sending->end[s] - sending->next[s]))
		elog(ERROR, "tlbf_agg: a generation holds more hashes than it counted");
	memcpy(sending->next[s], hashes, n * sizeof(TlbfHash));
	sending->next[s] += n * sizeof(TlbfHash);
}

/*
 * The state as bytes: TLBF_HASHES_MAGIC, the header, then each
 * generation's SentLog and hashes.  At most 1 GB, as any value.
 */
bytea *
tlbf_format3_log_bytes(HashLog *state)
{
	uint32		magic = TLBF_HASHES_MAGIC;
	Size		size = VARHDRSZ + sizeof(magic) + tb_lines_offset(0) + sizeof(uint32);
	uint32		nlogs = 0;
	bytea	   *out;
	char	   *p;
	SendingState sending;

	sending.state = state;
	for (int s = 0; s < tb_slots(state->header); s++)
		if (state->logs[s].generation != TB_NO_GENERATION)
		{
			nlogs++;
			size += sizeof(SentLog) + state->logs[s].n * sizeof(TlbfHash);
		}
	if (size > Min(MaxAllocSize, (Size) tlbf_agg_pass_limit * 1024))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("tlbf_agg cannot pass more than %zu bytes of hashes from a partial step",
						Min(MaxAllocSize, (Size) tlbf_agg_pass_limit * 1024)),
				 errdetail("A parallel worker or a Citus shard passes its rows' hashes, 16 bytes a row within the span, as one value."),
				 errhint("Declare a capacity, whose parts pass filters (tlbf_agg_format3(item, at, span, error_rate, capacity)), or run the query serially (SET max_parallel_workers_per_gather = 0).")));
	out = palloc(size);
	SET_VARSIZE(out, size);
	p = VARDATA(out);
	memcpy(p, &magic, sizeof(magic));
	p += sizeof(magic);
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
	tlbf_hash_log_visit(state, true, true, send_hashes, &sending);
	for (int s = 0; s < tb_slots(state->header); s++)
		if (state->logs[s].generation != TB_NO_GENERATION && sending.next[s] != sending.end[s])
			elog(ERROR, "tlbf_agg: a generation holds fewer hashes than it counted");
	return out;
}

/* Whether bytes are what tlbf_format3_log_bytes makes (by their magic). */
bool
tlbf_format3_log_bytes_are(const bytea *bytes)
{
	uint32		magic;

	if (VARSIZE_ANY_EXHDR(bytes) < sizeof(magic))
		return false;
	memcpy(&magic, VARDATA_ANY(bytes), sizeof(magic));
	return magic == TLBF_HASHES_MAGIC;
}

/* STRICT */
Datum
tlbf_agg_serialize(PG_FUNCTION_ARGS)
{
	(void) tlbf_format3_aggregate_memory(fcinfo, "tlbf_agg_serialize");
	PG_RETURN_BYTEA_P(tlbf_format3_log_bytes((HashLog *) PG_GETARG_POINTER(0)));
}

static void
damaged(const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
			 errmsg("invalid tlbf_agg state"),
			 errdetail("%s", why)));
}

/*
 * A state from those bytes, in a context of its own under 'parent', every
 * field checked: the magic; the header is a valid filter with no band
 * that has seen a row; each generation lies within the span before its
 * newest time, in a slot of its own, its earliest time within it.
 * 'aggstate' is the aggregation that combines it, or NULL.  It holds its
 * hashes in memory, whatever its budget: one that another takes gives
 * them up without a copy (tlbf_hash_log_take), and one kept must spill
 * (tlbf_hash_log_spill_if_over) before it takes more.  (Writing them out
 * here wrote them twice: once here, once more as the state taking them
 * copied them back into memory and spilled.)
 */
HashLog *
tlbf_format3_log_from_bytes(const bytea *bytes, MemoryContext parent, AggState *aggstate)
{
	const char *p = VARDATA_ANY(bytes);
	const char *end = p + VARSIZE_ANY_EXHDR(bytes);
	TbFilter   *header;
	TlbfProblem problem;
	HashLog    *state;
	uint32		nlogs;

	if (!tlbf_format3_log_bytes_are(bytes))
		damaged("It does not begin with the magic number of a state's hashes.");
	p += sizeof(uint32);
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
	state = tlbf_hash_log_create(parent, header);
	state->aggstate = aggstate;
	state->deserialized = true;
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
		log = tlbf_hash_log_generation(state, sent.generation, sent.earliest);
		/* one chunk for all (it is full: the next row starts another) */
		c = tlbf_hash_log_new_chunk(state, (uint32) sent.n);
		memcpy(c->hashes, p, sent.n * sizeof(TlbfHash));
		c->n = (uint32) sent.n;
		p += sent.n * sizeof(TlbfHash);
		tlbf_hash_log_add_behind(log, c);
		log->n = sent.n;
		tlbf_hash_log_counted(state, log, c->hashes, c->n);
	}
	if (p != end)
		damaged("It has bytes after its last generation.");
	tlbf_hash_log_forget_past(state);
	return state;
}

/* STRICT */
Datum
tlbf_agg_deserialize(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = tlbf_format3_aggregate_memory(fcinfo, "tlbf_agg_deserialize");

	PG_RETURN_POINTER(tlbf_format3_log_from_bytes(PG_GETARG_BYTEA_PP(0), aggcontext,
												  tlbf_aggregation_of(fcinfo)));
}
