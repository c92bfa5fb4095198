/*-------------------------------------------------------------------------
 *
 * aggregates.c
 *	  The state of tlbf_union_agg(tlbf) (agg_state.h), kept in a type of
 *	  its own which Citus can split (agg_state_type.c), and the row log
 *	  that tlbf_agg kept until 1.5.
 *
 * Since 1.5 tlbf_agg keeps its rows' hashes (agg_format3_log.c).  The
 * courses below are what it did before, for formats 1 and 2, and go with
 * the rest of the row log (agg_rows.c, agg_build.c; issue 36): only
 * tlbf_union_agg's filters, tlbf_union_agg_trans (1.3's transition
 * function) and a flat state of rows from outside still reach them.
 *
 * tlbf_agg's result is the filter that adding its rows one by one in time
 * order gives, whatever order the plan delivers them in: a filter's slices
 * follow the order of insertion, so a row added late cannot be put back
 * where it belonged.  And that filter starts sized for the rows
 * (tlbf_agg_capacity: the keys of one span at their average rate), not
 * from a guess: slices sized while a filter learns the rate would leave its
 * first span above its error rate.  Every plan knows how many rows it
 * builds from and when they start and end, so every plan builds the same
 * filter.  The state therefore takes one of three courses:
 *
 * DIRECT: rows are logged as they come (in work_mem, then in a temporary
 *	  file) and the filter is built from the log at the end (it waits).  A
 *	  row older than the newest one by more than the slack (one planned
 *	  generation, span / l; less late rows are added as they come, at the
 *	  newest time, as a filter does) is a descent.  The first keeps the
 *	  log so far whole, as one run, and starts a log for the next: at the
 *	  end the two are merged, which is exactly the time order when the
 *	  input is two ascending runs, as a heap scan that starts in the middle
 *	  of the table (a synchronized scan) gives.  In a hashed aggregation,
 *	  which keeps every group's state at once, the groups share work_mem
 *	  (memory_kb).  A window function, which has no end to wait for, adds
 *	  its rows as they come.
 * SORTING: after a second descent, the logged rows and all later ones go
 *	  to a tuplesort (work_mem or the group's share, then disk), and are
 *	  added in time order at the end.
 * SENDING: a partial aggregation (parallel workers, partitionwise plans)
 *	  keeps its rows compactly as they come and sends them, not a filter,
 *	  with how many there are and their oldest and newest times; the final
 *	  aggregation merges every participant's ascending runs and adds the
 *	  rows in time order.  A participant sorts its rows first if they come
 *	  in more than a few runs, and sends a filter built from them if they
 *	  pass TLBF_MAX_SENT_BYTES.
 *
 * With ORDER BY at in the call, PostgreSQL sorts the rows first: they are
 * logged and added at the end, with no descent to watch for.  As a window
 * function tlbf_agg adds rows as they come, a late one at the newest time
 * so far, to a filter sized from the capacity guess, and the final
 * function leaves the state as it was.  Elsewhere the final function
 * settles the state into one filter and keeps that, so that it can run
 * again on the same state.
 *
 * tlbf_union_agg keeps a list of filters to merge once, at the end; filters
 * of format 3 (core/tb.h) merge exactly by OR as they come, into one.
 *
 *-------------------------------------------------------------------------
 */
#include "agg_build.h"
#include "datum_hash.h"
#include "filter_args.h"
#include "filter_params.h"
#include "key_match.h"
#include "settings.h"
#include "times.h"
#include "union.h"
#include "value_carry.h"
#include "agg_rows.h"
#include "agg_state.h"

#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/parsenodes.h"
#include "utils/memutils.h"
#include "utils/typcache.h"

#include "core/tb.h"

PG_FUNCTION_INFO_V1(tlbf_union_agg_trans);

/*
 * The most a participant of a partial aggregation sends as rows
 * (tlbf.agg_send_limit); with more it sends a filter, and the result is a
 * union.
 */
#define TLBF_MAX_SENT_BYTES ((Size) tlbf_agg_send_limit * 1024)

typedef enum AggCourse
{
	AGG_DIRECT,
	AGG_SORTING,
	AGG_SENDING
} AggCourse;

typedef struct TlbfAggState
{
	AggCourse	course;
	bool		reorders;		/* puts rows in time order (see choose_course) */
	AggState   *aggstate;		/* for the number of groups */
	TlbfParams	params;			/* from the first row (span 0 before) */
	ItemHasher *hasher;			/* for the item's type, from the first row */
	TlbfKeys	keys;			/* its kind of key, which its filters record */
	TlbfRowKind row_kind;		/* how keys travel in rows */
	bool		has_rows;
	uint64		rows_seen;		/* the rows it adds, and their times */
	TlbfTime	oldest_seen;
	TlbfTime	newest_seen;
	TlbfTime	slack;			/* how late a row may come and be added as
								 * it comes: one planned generation */
	TlbfTime	newest_arrived; /* the newest row since the last descent */

	/* AGG_DIRECT */
	bool		waiting;		/* rows are logged, the filter built at the end */
	Tlbf	   *growing;		/* the filter, once built */
	TlbfMemory	memory;			/* how it may grow */
	HeldRows	pending;		/* rows hashed but not yet added */
	RowLog	   *log;			/* waiting: the rows since the first descent */
	RowLog	   *first_run;		/* waiting: the rows before it */
	Size		log_budget;		/* the memory the log may take */
	uint64		logged;
	int			descents;		/* rows late by more than the slack */
	bool		cleanup_registered;

	/* AGG_SORTING */
	RowSorter  *sorter;
	uint64		sorted_rows;

	/* AGG_SENDING */
	RowStream  *sending;

	/* from other participants, and tlbf_union_agg's inputs */
	ReceivedRows **received;
	int			nreceived;
	int			received_allocated;
	const Tlbf **parts;			/* filters to merge with the result */
	int			nparts;
	int			parts_allocated;
	MemoryContext owned_in;		/* set if only this state points to its
								 * parts and received rows, which live in
								 * this context */

	/* tlbf_union_agg's inputs of format 3, merged as they come */
	TbFilter   *union3;
	TlbfMemory	union3_memory;	/* how it may grow */
} TlbfAggState;

/* The memory of the aggregate 'function' runs in; ERROR outside one. */
MemoryContext
tlbf_aggregate_context(FunctionCallInfo fcinfo, const char *function)
{
	MemoryContext context;

	if (!AggCheckCallContext(fcinfo, &context))
		elog(ERROR, "%s called in a non-aggregate context", function);
	return context;
}

static TlbfAggState *
new_state(MemoryContext context)
{
	return MemoryContextAllocZero(context, sizeof(TlbfAggState));
}

static void
add_part(TlbfAggState *state, const Tlbf *part, MemoryContext context)
{
	if (state->nparts == state->parts_allocated)
	{
		state->parts_allocated = Max(4, 2 * state->parts_allocated);
		state->parts = state->parts == NULL ?
			MemoryContextAlloc(context, state->parts_allocated * sizeof(Tlbf *)) :
			repalloc(state->parts, state->parts_allocated * sizeof(Tlbf *));
	}
	state->parts[state->nparts++] = part;
}

static void
add_received(TlbfAggState *state, ReceivedRows *received, MemoryContext context)
{
	if (state->nreceived == state->received_allocated)
	{
		state->received_allocated = Max(4, 2 * state->received_allocated);
		state->received = state->received == NULL ?
			MemoryContextAlloc(context, state->received_allocated * sizeof(ReceivedRows *)) :
			repalloc(state->received, state->received_allocated * sizeof(ReceivedRows *));
	}
	state->received[state->nreceived++] = received;
}

static Tlbf *
copy_in(const Tlbf *f, MemoryContext context)
{
	Tlbf	   *copy = MemoryContextAlloc(context, VARSIZE(f));

	memcpy(copy, f, VARSIZE(f));
	return copy;
}

/* The first row's parameters make the filter; later rows' are not read. */
static void
first_row_params(FunctionCallInfo fcinfo, TlbfParams *params, TlbfTime *slack)
{
	/* (state, item, at, span [, error_rate]) */
	if (!tlbf_params_from_args(fcinfo, 3, PG_NARGS() > 4 ? 2 : 1, params))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("tlbf_agg's span and error_rate must not be NULL")));
	tlbf_params_check_value(params);	/* sets k and l */
	*slack = params->span / params->l;
}

/* Is the call tlbf_agg(item, at, ... ORDER BY at): its rows come sorted? */
static bool
ordered_by_time(Aggref *aggref)
{
	SortGroupClause *first;
	TargetEntry *at;

	if (aggref->aggorder == NIL || list_length(aggref->args) < 2)
		return false;
	first = linitial_node(SortGroupClause, aggref->aggorder);
	at = list_nth_node(TargetEntry, aggref->args, 1);
	return at->ressortgroupref != 0 &&
		first->tleSortGroupRef == at->ressortgroupref &&
		first->sortop == lookup_type_cache(TIMESTAMPTZOID, TYPECACHE_LT_OPR)->lt_opr;
}

/*
 * Which course a new state takes: SENDING in a partial aggregation (its
 * state is serialized for a final aggregation); DIRECT reordering in a
 * plain or sorted aggregation whose rows are not sorted by time in the
 * call; DIRECT adding rows as they come otherwise (window functions,
 * hashed aggregation, ORDER BY at).
 */
static void
choose_course(TlbfAggState *state, FunctionCallInfo fcinfo)
{
	Aggref	   *aggref = AggGetAggref(fcinfo);
	state->course = AGG_DIRECT;
	state->reorders = false;
	if (fcinfo->context == NULL || !IsA(fcinfo->context, AggState) || aggref == NULL)
		return;
	state->aggstate = (AggState *) fcinfo->context;
	if (DO_AGGSPLIT_SERIALIZE(aggref->aggsplit))
		state->course = AGG_SENDING;
	else if (!ordered_by_time(aggref))
		state->reorders = true;
}

/*
 * The memory a state's log or sort may take, in kB: work_mem, or in a
 * hashed aggregation, which keeps every group's state at once, a group's
 * share of it (at least 64kB, the least a sort takes).  Past it, they
 * spill to temporary files.  (Also tlbf_agg_format3's hashes' budget.)
 */
int
tlbf_aggregate_memory_kb(const AggState *aggstate)
{
	if (aggstate == NULL || aggstate->aggstrategy == AGG_PLAIN ||
		aggstate->aggstrategy == AGG_SORTED)
		return work_mem;
	return Max(work_mem / Max(aggstate->hash_ngroups_current, 1), 64);
}

static int
memory_kb(const TlbfAggState *state)
{
	return tlbf_aggregate_memory_kb(state->aggstate);
}

/* The log's memory: its share (memory_kb), less what the first run holds. */
static Size
log_budget(const TlbfAggState *state)
{
	Size		budget = (Size) memory_kb(state) * 1024;

	if (state->first_run != NULL)
		budget -= Min(budget, tlbf_row_log_memory(state->first_run));
	return budget;
}

static void
forget_log(RowLog **log)
{
	if (*log != NULL)
		tlbf_row_log_free(*log);
	*log = NULL;
}

/*
 * A log keeps integer and short byte keys as such (a few bytes a row when
 * integers count up).
 */
static void
start_log(TlbfAggState *state, MemoryContext context)
{
	state->log = tlbf_row_log_create(context, true, state->row_kind, state->params.seed);
	state->log_budget = log_budget(state);
	state->logged = 0;
}

/* Add the rows the filter holds back, if any. */
static void
add_pending(TlbfAggState *state)
{
	tlbf_held_rows_add_all(&state->pending, &state->growing, &state->memory);
}

/*
 * The filter's next row, added a few rows later (HeldRows).  Every reader
 * of the filter calls add_pending first.
 */
static void
add_in_order(TlbfAggState *state, const TlbfRow *row)
{
	tlbf_held_rows_push(&state->pending, &state->growing, &state->memory, row);
}

/*
 * Close the state's temporary files (the sort's, the logs') when the
 * aggregate's memory is reset.  On an error, the resource owner closes them.
 */
static void
end_state_files(Datum arg)
{
	TlbfAggState *state = (TlbfAggState *) DatumGetPointer(arg);

	if (state->sorter != NULL)
		tlbf_row_sorter_end(state->sorter);
	state->sorter = NULL;
	forget_log(&state->log);
	forget_log(&state->first_run);
}

static void
register_cleanup(TlbfAggState *state, FunctionCallInfo fcinfo)
{
	if (state->cleanup_registered)
		return;
	AggRegisterCallback(fcinfo, end_state_files, PointerGetDatum(state));
	state->cleanup_registered = true;
}

/* 'fcinfo' is NULL when the state is serialized (its log, which it
 * sorts, registered the cleanup). */
static void
start_sorting(TlbfAggState *state, FunctionCallInfo fcinfo, MemoryContext context)
{
	if (fcinfo != NULL)
		register_cleanup(state, fcinfo);
	state->sorter = tlbf_row_sorter_begin(context, memory_kb(state));
	state->sorted_rows = 0;
	state->course = AGG_SORTING;
}

static void
sort_row(TlbfAggState *state, const TlbfRow *row)
{
	tlbf_row_sorter_put(state->sorter, row);
	state->sorted_rows++;
}

static void
sort_stream(TlbfAggState *state, RowStream *stream)
{
	TlbfRowCursor cursor;

	tlbf_row_stream_cursor(stream, &cursor);
	tlbf_row_sorter_put_all(state->sorter, &cursor);
	state->sorted_rows += stream->data->nrows;
}

/* Every row of a log into the sort; the log is freed. */
static void
sort_log(TlbfAggState *state, RowLog **log)
{
	TlbfRow		row;

	if (*log == NULL)
		return;
	tlbf_row_log_start_reading(*log);
	while (tlbf_row_log_next(*log, &row))
		sort_row(state, &row);
	forget_log(log);
}

static Tlbf *build_from_rows(TlbfAggState *state, TlbfMemory *memory, MemoryContext context,
							 bool all_rows);

/*
 * A DIRECT state of an aggregation (not a window function) waits for its
 * last row before it builds its filter.
 */
static void
start_waiting(TlbfAggState *state, FunctionCallInfo fcinfo, MemoryContext context)
{
	register_cleanup(state, fcinfo);
	start_log(state, context);
	state->waiting = true;
}

/*
 * Build the filter from the logs now: at the end ('all_rows'), or in a
 * hashed aggregation that cannot wait any longer, whose later rows are
 * added as they come.
 */
static void
stop_waiting(TlbfAggState *state, MemoryContext context, bool all_rows)
{
	state->growing = build_from_rows(state, &state->memory, context, all_rows);
	state->pending.n = 0;
	forget_log(&state->first_run);
	forget_log(&state->log);
	state->waiting = false;
	state->reorders = false;
}

/*
 * A row older than the newest one by more than the slack, in a waiting
 * state that reorders (a descent).  The first time, the log so far becomes
 * the first run, to be merged with the log of the rows after it.  The
 * second time, every row goes to a sort.
 */
static void
arrived_late(TlbfAggState *state, FunctionCallInfo fcinfo, MemoryContext context)
{
	state->descents++;
	if (state->descents == 1)
	{
		state->first_run = state->log;
		start_log(state, context);
		return;
	}
	start_sorting(state, fcinfo, context);
	sort_log(state, &state->first_run);
	sort_log(state, &state->log);
	state->waiting = false;
}

static void
add_direct(TlbfAggState *state, FunctionCallInfo fcinfo, MemoryContext context,
		   const TlbfRow *row, const TlbfRowKey *key)
{
	if (state->reorders && state->has_rows &&
		row->at < state->newest_arrived - state->slack)
	{
		arrived_late(state, fcinfo, context);
		if (state->course == AGG_SORTING)
		{
			sort_row(state, row);
			return;
		}
		state->newest_arrived = row->at;
	}
	if (!state->has_rows || row->at > state->newest_arrived)
		state->newest_arrived = row->at;
	if (!state->has_rows && state->aggstate != NULL)
		start_waiting(state, fcinfo, context);
	if (state->waiting)
	{
		if ((++state->logged & 1023) == 0)
			state->log_budget = log_budget(state);
		/* past the file's limit: the row is in the log still */
		if (!tlbf_row_log_append(state->log, row, key, state->log_budget))
			stop_waiting(state, context, false);
		return;
	}
	if (state->growing == NULL)
		state->growing = tlbf_agg_new_filter(&state->params, state->keys, &state->memory,
											 context);
	add_in_order(state, row);
}

/* Make each run of 'rows' a source of the merge. */
static void
merge_runs(TlbfRowMerge *merge, TlbfRowCursor *cursors, int *nsources,
		   const ReceivedRows *rows)
{
	const TlbfSentRows *sent = &rows->sent;

	for (int r = 0; r < sent->nruns; r++)
	{
		int			n = (*nsources)++;

		tlbf_cursor_open_run(&cursors[n], sent->rows, sent->len, sent->nrows,
							 sent->runs, sent->nruns, r);
		merge->next[n] = tlbf_cursor_next;
		merge->sources[n] = &cursors[n];
	}
}

/*
 * A filter built from every row a state's logs, sort and streams hold,
 * added in time order, sized for them (tlbf_agg_capacity); 'all_rows': no
 * more will come, else the filter is sized for at least the default
 * capacity, as when it starts from the first row.
 */
static Tlbf *
build_from_rows(TlbfAggState *state, TlbfMemory *memory, MemoryContext context,
				bool all_rows)
{
	int			nsources = 0;
	int			max_sources = 3 + (1 + state->nreceived) * TLBF_MAX_SENT_RUNS;
	TlbfRowCursor *cursors = palloc(max_sources * sizeof(TlbfRowCursor));
	TlbfRowMerge merge;
	TlbfParams	params = state->params;
	uint64		rows = state->rows_seen;
	TlbfTime	oldest = state->oldest_seen;
	TlbfTime	newest = state->newest_seen;
	Tlbf	   *f;

	merge.next = palloc(max_sources * sizeof(TlbfRowNext));
	merge.sources = palloc(max_sources * sizeof(void *));
	merge.heads = palloc(max_sources * sizeof(TlbfRow));
	merge.heap = palloc(max_sources * sizeof(int));

	/* the first run before the log: it comes first among equal times */
	if (state->waiting)
		for (int i = 0; i < 2; i++)
		{
			RowLog	   *log = i == 0 ? state->first_run : state->log;

			if (log == NULL)
				continue;
			tlbf_row_log_start_reading(log);
			merge.next[nsources] = tlbf_row_log_next;
			merge.sources[nsources++] = log;
		}
	if (state->sorter != NULL)
	{
		tlbf_row_sorter_sort(state->sorter);
		merge.next[nsources] = tlbf_row_sorter_next;
		merge.sources[nsources++] = state->sorter;
	}
	if (state->sending != NULL)
	{
		ReceivedRows *own = palloc(sizeof(ReceivedRows));

		tlbf_row_stream_runs(state->sending, own);
		merge_runs(&merge, cursors, &nsources, own);
	}
	for (int i = 0; i < state->nreceived; i++)
	{
		const TlbfSentRows *sent = &state->received[i]->sent;

		merge_runs(&merge, cursors, &nsources, state->received[i]);
		if (sent->nrows == 0)
			continue;
		if (rows == 0 || sent->oldest < oldest)
			oldest = sent->oldest;
		if (rows == 0 || sent->newest > newest)
			newest = sent->newest;
		rows += sent->nrows;
	}

	if (rows > 0)
		params.capacity = Max(tlbf_agg_capacity(rows, oldest, newest, params.span),
							  all_rows ? 1 : params.capacity);
	f = tlbf_agg_new_filter(&params, state->keys, memory, context);
	tlbf_row_merge_start(&merge, nsources);
	tlbf_agg_insert_merged(&f, memory, &merge);
	for (int i = 0; i < nsources; i++)
		if (merge.next[i] == tlbf_cursor_next && cursors[i].failed)
			tlbf_agg_bad_state("The rows do not decode, or do not match their runs.");
	return f;
}

/*
 * Filters kept apart (built before rows came out of order, or sent by a
 * participant instead of its rows) lose the slices that are expired at the
 * newest row's time, as the slices of one filter built in time order would
 * have been dropped by then.
 */
static void
drop_expired_parts(TlbfAggState *state)
{
	TlbfTime	newest = state->growing->newest;

	for (int i = 0; i < state->nparts; i++)
		newest = Max(newest, state->parts[i]->newest);
	for (int i = 0; i < state->nparts; i++)
	{
		Tlbf	   *part = (Tlbf *) state->parts[i];

		tlbf_drop_expired(part, newest);
		tlbf_set_length(part);
	}
}

/*
 * Turn the state into DIRECT with one filter holding every row it has (and
 * its parts, still apart), without reordering any more.
 */
static void
settle(TlbfAggState *state, MemoryContext context)
{
	if (state->course == AGG_DIRECT)
	{
		if (state->waiting)
			stop_waiting(state, context, true);
		state->reorders = false;
		if (state->nreceived == 0)
			return;
		if (state->growing != NULL)
		{
			add_pending(state);
			tlbf_set_length(state->growing);
			add_part(state, state->growing, context);
			state->growing = NULL;
		}
	}
	state->growing = build_from_rows(state, &state->memory, context, true);
	state->pending.n = 0;
	if (state->sorter != NULL)
		tlbf_row_sorter_end(state->sorter);
	state->sorter = NULL;
	if (state->sending != NULL)
		tlbf_row_stream_free(state->sending);
	state->sending = NULL;
	for (int i = 0; i < state->nreceived; i++)
	{
		pfree((void *) state->received[i]->sent.rows);
		pfree(state->received[i]);
	}
	state->nreceived = 0;
	state->course = AGG_DIRECT;
	state->reorders = false;
	drop_expired_parts(state);
}

static void
add_sending(TlbfAggState *state, FunctionCallInfo fcinfo, MemoryContext context,
			const TlbfRow *row, const TlbfRowKey *key)
{
	if (state->sending == NULL)
		state->sending = tlbf_row_stream_create(context, state->row_kind, state->params.seed);
	tlbf_row_stream_append(state->sending, row, key);
	if (state->sending->nruns > TLBF_MAX_SENT_RUNS)
	{
		start_sorting(state, fcinfo, context);
		sort_stream(state, state->sending);
		tlbf_row_stream_free(state->sending);
		state->sending = NULL;
	}
	else if (state->sending->used > TLBF_MAX_SENT_BYTES)
	{
		/*
		 * More rows than it may send: it sends a filter built from them
		 * instead, and adds its further rows to that.
		 */
		settle(state, context);
	}
}

/* How the state's keys travel in rows (its item type never changes). */
static TlbfRowKind
key_kind(const ItemHasher *hasher, Datum item)
{
	int64		value;
	const uint8 *bytes;
	uint32		len;

	if (tlbf_int64_item(hasher, item, &value))
		return TLBF_ROWS_INT64;
	if (tlbf_bytes_item(hasher, item, &bytes, &len))
		return TLBF_ROWS_BYTES;
	return TLBF_ROWS_HASHES;
}

/*
 * A row's key, and its hash where it is needed: not for a key a partial
 * aggregate sends as such (the final aggregation hashes it).  The hash is
 * the one tlbf_add gives a filter of the item's own kind.
 */
static void
read_key(TlbfAggState *state, Datum item, TlbfRow *row, TlbfRowKey *key)
{
	bool		sending = state->course == AGG_SENDING;
	uint64		seed = state->params.seed;

	switch (state->row_kind)
	{
		case TLBF_ROWS_INT64:
			(void) tlbf_int64_item(state->hasher, item, &key->value);
			if (!sending)
				row->hash = tlbf_hash_int64(key->value, seed);
			break;
		case TLBF_ROWS_BYTES:
			(void) tlbf_bytes_item(state->hasher, item, &key->bytes, &key->len);
			if (!sending || key->len > TLBF_ROW_MAX_KEY_BYTES)
				row->hash = tlbf_hash_bytes(key->bytes, key->len, seed);
			break;
		case TLBF_ROWS_HASHES:
			row->hash = tlbf_hash_item(state->hasher, item, seed);
			break;
	}
}

/*
 * Add the row of a call tlbf_agg(item, at, span [, error_rate]) (its
 * arguments from 1 on) to a state; the first row sets its parameters and
 * course.  Rows with a NULL item or time are skipped, as for a strict
 * aggregate.
 */
void
tlbf_agg_state_add_row(TlbfAggState *state, FunctionCallInfo fcinfo, MemoryContext context)
{
	TlbfRow		row = {0};
	TlbfRowKey	key = {0};

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		return;
	/* (a state made of format 3 filters, from outside, takes no rows) */
	if (state->union3 != NULL)
		tlbf_refuse_mixed_formats();
	if (state->hasher == NULL)
	{
		KeyFields	first_key;
		Oid			type = tlbf_arg_type(fcinfo, 1);
		KeyMatcher *matcher = tlbf_key_matcher(CurrentMemoryContext);

		first_row_params(fcinfo, &state->params, &state->slack);
		choose_course(state, fcinfo);
		state->hasher = tlbf_item_hasher(type, PG_GET_COLLATION(), context);
		tlbf_key_from_value(matcher, &first_key, type, PG_GET_COLLATION(), PG_GETARG_DATUM(1));
		state->keys = tlbf_key_own_kinds(matcher, &first_key);
		state->params.seed = state->keys.tag;	/* a filter hashes with its tag */
		pfree(matcher);
		state->row_kind = key_kind(state->hasher, PG_GETARG_DATUM(1));
	}
	row.at = tlbf_insert_time_arg(fcinfo, 2);
	read_key(state, PG_GETARG_DATUM(1), &row, &key);
	if (state->rows_seen == 0 || row.at < state->oldest_seen)
		state->oldest_seen = row.at;
	if (state->rows_seen == 0 || row.at > state->newest_seen)
		state->newest_seen = row.at;
	state->rows_seen++;
	switch (state->course)
	{
		case AGG_DIRECT:
			add_direct(state, fcinfo, context, &row, &key);
			break;
		case AGG_SORTING:
			sort_row(state, &row);
			break;
		case AGG_SENDING:
			add_sending(state, fcinfo, context, &row, &key);
			break;
	}
	state->has_rows = true;
}

/* Does the state hold tlbf_agg's rows (not tlbf_union_agg's filters)? */
static bool
holds_rows(const TlbfAggState *state)
{
	return state->growing != NULL || state->waiting || state->nreceived > 0 ||
		state->sorter != NULL || state->sending != NULL;
}

/* Does the state hold rows or filters of formats 1 and 2? */
static bool
holds_paper_layout(const TlbfAggState *state)
{
	return holds_rows(state) || state->nparts > 0;
}

/*
 * A filter of format 3 joins the state's union of them: the first is
 * copied (or taken, if 'take' and it lives in 'context'), later ones OR'ed
 * in.  Filters of formats 1 and 2, and those a filter of format 3 carries
 * (value_carry.c), are kept apart, merged at the end and carried by the
 * result (as tlbf_union does).
 */
static void
add_format3(TlbfAggState *state, TbFilter *f, bool take, MemoryContext context)
{
	Tlbf	   *carried = tlbf_carried(f);

	if (holds_rows(state))
		tlbf_refuse_mixed_formats();
	if (carried != NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(context);

		add_part(state, copy_in(carried, context), context);
		f = tlbf_bands_copy(f);
		take = true;
		MemoryContextSwitchTo(old);
	}
	if (state->union3 == NULL)
	{
		if (!take)
		{
			TbFilter   *copy = MemoryContextAlloc(context, VARSIZE(f));

			memcpy(copy, f, VARSIZE(f));
			f = copy;
		}
		state->union3 = f;
		tlbf_memory_for(&state->union3_memory, f, context);
		return;
	}
	state->union3 = tlbf_union_format3_into(state->union3, f, &state->union3_memory);
}

/*
 * tlbf_union_agg(f): keep a copy of each filter of formats 1 and 2 to merge
 * at the end; merge one of format 3 now.
 */
void
tlbf_agg_state_add_filter(TlbfAggState *state, TlbfValue f, MemoryContext context)
{
	if (f.v3 != NULL)
	{
		add_format3(state, f.v3, false, context);
		return;
	}
	add_part(state, copy_in(f.v2, context), context);
}

TlbfAggState *
tlbf_agg_state_create(MemoryContext context)
{
	return new_state(context);
}

/*
 * tlbf_union_agg's transition function up to 1.3 (1.4 keeps its state in
 * tlbf_agg_state); a database not yet updated still calls it.
 */
Datum
tlbf_union_agg_trans(PG_FUNCTION_ARGS)
{
	MemoryContext context = tlbf_aggregate_context(fcinfo, "tlbf_union_agg_trans");
	TlbfAggState *state = PG_ARGISNULL(0) ? NULL : (TlbfAggState *) PG_GETARG_POINTER(0);

	if (PG_ARGISNULL(1))
	{
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state);
	}
	if (state == NULL)
		state = new_state(context);
	tlbf_agg_state_add_filter(state, tlbf_arg_value(fcinfo, 1), context);
	PG_RETURN_POINTER(state);
}

static bool
state_is_empty(const TlbfAggState *state)
{
	return !holds_paper_layout(state) && state->union3 == NULL;
}

/* The state's filters as one new value (the state holds the same rows). */
static Tlbf *
state_value(TlbfAggState *state, MemoryContext context)
{
	const Tlbf **inputs;
	int			n = 0;

	if (state->reorders || state->waiting ||
		state->course != AGG_DIRECT || state->nreceived > 0)
		settle(state, context);
	inputs = palloc((state->nparts + 1) * sizeof(Tlbf *));
	if (state->growing != NULL)
	{
		add_pending(state);
		tlbf_set_length(state->growing);
		inputs[n++] = state->growing;
	}
	for (int i = 0; i < state->nparts; i++)
		inputs[n++] = state->parts[i];
	if (n == 1)
		return copy_in(inputs[0], CurrentMemoryContext);
	return tlbf_merge_values(inputs, n);
}

/*
 * The aggregate's result: a new value in the current memory context, or
 * NULL when the state holds no row and no filter.  The state settles into
 * one filter (see the file's header) and may be asked again.
 */
struct varlena *
tlbf_agg_state_result(TlbfAggState *state, MemoryContext context)
{
	if (state->union3 != NULL && state->nparts == 0)
	{
		struct varlena *copy = palloc(VARSIZE(state->union3));

		memcpy(copy, state->union3, VARSIZE(state->union3));
		return copy;
	}
	if (state->union3 != NULL)
	{
		/* filters of format 3 carrying the others merged (tlbf_union's way) */
		Tlbf	   *carried = state_value(state, context);

		tlbf_check_carry(state->union3, carried);
		return (struct varlena *) tlbf_carry(state->union3, carried->nslices > 0 ? carried : NULL);
	}
	if (state_is_empty(state))
		return NULL;
	return (struct varlena *) state_value(state, context);
}

static ReceivedRows *
copy_received(const ReceivedRows *received, MemoryContext context)
{
	ReceivedRows *copy = MemoryContextAlloc(context, sizeof(ReceivedRows));
	uint8	   *rows = MemoryContextAlloc(context, Max(received->sent.len, 1));

	*copy = *received;
	memcpy(rows, received->sent.rows, received->sent.len);
	copy->sent.rows = rows;
	return copy;
}

static bool
same_params(const TlbfParams *a, const TlbfParams *b)
{
	return a->span == b->span && a->error_rate == b->error_rate;
}

/*
 * The kind of key of a state that takes another's rows: theirs must join
 * its own (tlbf_keys_join), or a row of one kind would be built into a
 * filter of the other, and asked as that kind.
 */
static void
join_keys(TlbfAggState *into, TlbfKeys keys)
{
	if (keys.fields == 0)
		return;
	if (into->keys.fields == 0)
		into->keys = keys;
	else if (!tlbf_keys_join(into->keys, keys, &into->keys))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("cannot combine tlbf aggregate states that hold different kinds of key"),
				 errdetail("One holds %s keys, another %s keys.",
						   tlbf_keys_description(into->keys), tlbf_keys_description(keys)),
				 errhint("Aggregate keys of the same type.")));
}

/*
 * Combine a partial state into another: the second's rows and filters join
 * the first's, to be built and merged by the final function.  Whatever of
 * 'from' lives in 'context' and was made by tlbf_agg_state_deserialize
 * moves instead of being copied.
 */
void
tlbf_agg_state_combine(TlbfAggState *into, TlbfAggState *from, MemoryContext context)
{
	bool		owned = from->owned_in == context;

	if (from->union3 != NULL)
	{
		add_format3(into, from->union3, owned, context);
		if (owned)
			from->union3 = NULL;
	}
	if (into->union3 != NULL && holds_rows(from))
		tlbf_refuse_mixed_formats();
	if (into->params.span == 0)
		into->params = from->params;
	join_keys(into, from->keys);
	for (int i = 0; i < from->nreceived; i++)
		join_keys(into, from->received[i]->sent.keys);

	/*
	 * Rows another participant sent join the rows to merge, unless they are
	 * for a filter of other parameters (the first row's span and error rate
	 * differed): those are built apart and merged as a union.
	 */
	if (from->nreceived > 0 && !same_params(&into->params, &from->params))
		settle(from, context);
	for (int i = 0; i < from->nreceived; i++)
		add_received(into, owned ? from->received[i] :
					 copy_received(from->received[i], context), context);
	if (owned)
		from->nreceived = 0;

	/* A state that was not sent (never, in PostgreSQL's plans) settles. */
	if (from->course != AGG_DIRECT || from->waiting)
		settle(from, context);
	if (from->growing != NULL)
	{
		add_pending(from);
		tlbf_set_length(from->growing);
		add_part(into, copy_in(from->growing, context), context);
	}

	/*
	 * A state made by tlbf_agg_state_deserialize in this context (the
	 * partial states of a parallel, partitionwise or distributed plan)
	 * gives its filters away instead of having them copied: they are
	 * megabytes each, and nothing else points to them.
	 */
	for (int i = 0; i < from->nparts; i++)
		add_part(into, owned ? from->parts[i] : copy_in(from->parts[i], context), context);
	if (owned)
		from->nparts = 0;
}

/*
 * Combine two partial states.  Either may be NULL (a worker that saw no
 * rows).
 */
/*
 * A state that logged its rows in one stream of few runs, all in memory,
 * sends that stream as it is: in a distributed plan, where the shard's
 * rows are one partial aggregation, keys that count up take a few bytes a
 * row.
 */
static bool
log_is_sendable(const TlbfAggState *state)
{
	return state->course == AGG_DIRECT && state->waiting && state->first_run == NULL &&
		state->log != NULL && state->log->file == NULL &&
		state->log->stream->nruns <= TLBF_MAX_SENT_RUNS;
}

/*
 * A partial state travels as its rows (a SENDING state: in place, without a
 * copy; the executor only reads the result to form the tuple it sends, and
 * the state stays valid), sorted if they were being sorted or logged out
 * of order, or else as its filters merged into one value (a tlbf value is
 * a bytea).
 */
bytea *
tlbf_agg_state_serialize(TlbfAggState *state, MemoryContext context)
{
	bool		only_rows = state->nparts == 0 && state->nreceived == 0;

	if (state->union3 != NULL)
		return (bytea *) tlbf_agg_state_result(state, context);

	if (only_rows && state->course == AGG_SENDING)
		return tlbf_row_stream_bytes(state->sending, &state->params, state->keys);
	if (only_rows && log_is_sendable(state))
		return tlbf_row_stream_bytes(state->log->stream, &state->params, state->keys);
	if (only_rows && state->course == AGG_DIRECT && state->waiting &&
		state->rows_seen <= TLBF_MAX_SENT_BYTES / TLBF_ROW_MAX_BYTES)
	{
		start_sorting(state, NULL, context);
		sort_log(state, &state->first_run);
		sort_log(state, &state->log);
		state->waiting = false;
	}
	if (only_rows && state->course == AGG_SORTING &&
		state->sorted_rows <= TLBF_MAX_SENT_BYTES / TLBF_ROW_MAX_BYTES)
	{
		RowStream  *sorted = tlbf_row_stream_create(context, TLBF_ROWS_HASHES, state->params.seed);
		TlbfRow		row;

		tlbf_row_sorter_sort(state->sorter);
		while (tlbf_row_sorter_next(state->sorter, &row))
			tlbf_row_stream_append(sorted, &row, NULL);
		tlbf_row_sorter_end(state->sorter);
		state->sorter = NULL;
		state->sending = sorted;
		state->course = AGG_SENDING;
		return tlbf_row_stream_bytes(state->sending, &state->params, state->keys);
	}
	if (state->growing != NULL && state->nparts == 0 && state->course == AGG_DIRECT &&
		!state->reorders && !state->waiting && state->nreceived == 0)
	{
		add_pending(state);
		tlbf_set_length(state->growing);
		return (bytea *) state->growing;
	}
	return (bytea *) state_value(state, context);
}

/*
 * A state from what tlbf_agg_state_serialize made, in 'context', every byte
 * checked: rows (their runs now, their rows now if 'check_rows', else as
 * they are read) or a filter.
 */
TlbfAggState *
tlbf_agg_state_deserialize(const bytea *bytes, MemoryContext context, bool check_rows)
{
	TlbfAggState *state = new_state(context);

	if (tlbf_row_bytes_are_stream(bytes))
	{
		ReceivedRows *received = tlbf_row_stream_receive(bytes, context);

		if (check_rows)
			tlbf_row_stream_check_rows(received);
		state->params = received->params;
		state->keys = received->sent.keys;
		add_received(state, received, context);
	}
	else
	{
		MemoryContext old = MemoryContextSwitchTo(context);
		TlbfValue	f = tlbf_value_of(tlbf_validated_copy_any(VARDATA_ANY(bytes),
															   VARSIZE_ANY_EXHDR(bytes),
															   ERRCODE_INVALID_BINARY_REPRESENTATION,
															   TLBF_VALUE_AGG_STATE, NULL));

		MemoryContextSwitchTo(old);
		if (f.v3 != NULL)
			add_format3(state, f.v3, true, context);
		else
			add_part(state, f.v2, context);
	}
	state->owned_in = context;
	return state;
}

