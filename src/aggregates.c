/*-------------------------------------------------------------------------
 *
 * aggregates.c
 *	  tlbf_agg(item, at, span [, error_rate]) and tlbf_union_agg(tlbf),
 *	  with the combine, serialize and deserialize functions parallel and
 *	  distributed aggregation need.
 *
 * The state, in the aggregate's memory context, is one filter that rows
 * are added to in place (growing by doubling, so at most twice its size;
 * each row one call late, see tlbf_agg_trans), and a list of filters
 * waiting to be merged with it: other workers' partial states, or
 * tlbf_union_agg's inputs.  Merging waits for the final function, so that
 * n inputs are copied once instead of n times.  The final function builds a
 * new value and leaves the state as it was, so the aggregates also work as
 * window functions.
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"

#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(tlbf_agg_trans);
PG_FUNCTION_INFO_V1(tlbf_union_agg_trans);
PG_FUNCTION_INFO_V1(tlbf_agg_final);
PG_FUNCTION_INFO_V1(tlbf_agg_combine);
PG_FUNCTION_INFO_V1(tlbf_agg_serialize);
PG_FUNCTION_INFO_V1(tlbf_agg_deserialize);

typedef struct TlbfAggState
{
	Tlbf	   *growing;		/* tlbf_agg's filter, NULL until a row comes */
	TlbfMemory	memory;			/* how it may grow */
	bool		pending;		/* a row hashed but not yet added */
	TlbfHash	pending_hash;
	TlbfTime	pending_at;
	const Tlbf **parts;			/* filters to merge with it at the end */
	int			nparts;
	int			parts_allocated;
	MemoryContext parts_owned_in;	/* set if only this state points to
									 * its parts, which live in this context */
} TlbfAggState;

static MemoryContext
aggregate_context(FunctionCallInfo fcinfo, const char *function)
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

static Tlbf *
copy_in(const Tlbf *f, MemoryContext context)
{
	Tlbf	   *copy = MemoryContextAlloc(context, VARSIZE(f));

	memcpy(copy, f, VARSIZE(f));
	return copy;
}

/* The first row's parameters make the filter; later rows' are not read. */
static Tlbf *
first_filter(FunctionCallInfo fcinfo, MemoryContext context)
{
	TlbfParams	params;
	Tlbf	   *f;

	if (PG_ARGISNULL(3) || (PG_NARGS() > 4 && PG_ARGISNULL(4)))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("tlbf_agg's span and error_rate must not be NULL")));
	params.span = tlbf_interval_usecs(PG_GETARG_INTERVAL_P(3), "span");
	params.error_rate = PG_NARGS() > 4 ? PG_GETARG_FLOAT8(4) : TLBF_DEFAULT_ERROR_RATE;
	params.capacity = TLBF_DEFAULT_CAPACITY;
	params.k = 0;
	params.l = 0;
	params.seed = TLBF_DEFAULT_SEED;
	tlbf_check_create_params(&params);

	f = MemoryContextAlloc(context, sizeof(Tlbf));
	tlbf_init(f, &params);
	tlbf_set_length(f);
	return f;
}

/*
 * The buffer grows by doubling (filter_args.c); when the filter shrinks to
 * less than half of it (expired slices dropped), it gives the room back.
 * So the state never holds more than twice the filter's size, plus the
 * slice a shift is about to add.
 */
static void
fit_buffer(TlbfAggState *state)
{
	Size		size = tlbf_size(state->growing);

	if (2 * size < state->memory.allocated)
	{
		state->growing = repalloc(state->growing, 2 * size);
		state->memory.allocated = 2 * size;
	}
}

/*
 * Add the row the state holds back, if any.  Every reader of the state's
 * filter calls this first.
 */
static void
add_pending(TlbfAggState *state)
{
	TlbfStatus	status;
	uint64		truncated;

	if (!state->pending)
		return;
	state->pending = false;
	truncated = state->growing->truncated;
	status = tlbf_insert(&state->growing, &state->memory,
						 state->pending_hash, state->pending_at);
	tlbf_check_status(status, truncated, state->growing);
	fit_buffer(state);
}

/*
 * tlbf_agg(item, at, span [, error_rate]): add one row.  Rows with a NULL
 * item or time are skipped, as for a strict aggregate.
 */
Datum
tlbf_agg_trans(PG_FUNCTION_ARGS)
{
	MemoryContext context = aggregate_context(fcinfo, "tlbf_agg_trans");
	TlbfAggState *state = PG_ARGISNULL(0) ? NULL : (TlbfAggState *) PG_GETARG_POINTER(0);
	TlbfHash	hash;
	TlbfTime	at;

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
	{
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state);
	}
	if (state == NULL)
		state = new_state(context);
	if (state->growing == NULL)
	{
		state->growing = first_filter(fcinfo, context);
		tlbf_memory_for(&state->memory, state->growing, context);
	}

	/*
	 * Each row is added one call later: its bits are prefetched now and
	 * written while the next row is fetched, instead of the insertion
	 * waiting on k cache misses.  Rows are still added in their order.
	 */
	at = tlbf_time_arg(fcinfo, 2);
	hash = tlbf_hash_arg(fcinfo, 1, state->growing->seed);
	add_pending(state);
	tlbf_prefetch_insert(state->growing, hash);
	state->pending = true;
	state->pending_hash = hash;
	state->pending_at = at;
	PG_RETURN_POINTER(state);
}

/* tlbf_union_agg(f): keep a copy of each filter to merge at the end. */
Datum
tlbf_union_agg_trans(PG_FUNCTION_ARGS)
{
	MemoryContext context = aggregate_context(fcinfo, "tlbf_union_agg_trans");
	TlbfAggState *state = PG_ARGISNULL(0) ? NULL : (TlbfAggState *) PG_GETARG_POINTER(0);

	if (PG_ARGISNULL(1))
	{
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state);
	}
	if (state == NULL)
		state = new_state(context);
	add_part(state, copy_in(tlbf_arg_readonly(fcinfo, 1), context), context);
	PG_RETURN_POINTER(state);
}

/* The state's filters as one new value (the state is left as it was). */
static Tlbf *
state_value(TlbfAggState *state)
{
	const Tlbf **inputs = palloc((state->nparts + 1) * sizeof(Tlbf *));
	int			n = 0;

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

Datum
tlbf_agg_final(PG_FUNCTION_ARGS)
{
	TlbfAggState *state = PG_ARGISNULL(0) ? NULL : (TlbfAggState *) PG_GETARG_POINTER(0);

	aggregate_context(fcinfo, "tlbf_agg_final");
	if (state == NULL || (state->growing == NULL && state->nparts == 0))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(state_value(state));
}

/*
 * Combine two partial states: the second's filters join the first's list.
 * Either may be NULL (a worker that saw no rows).
 */
Datum
tlbf_agg_combine(PG_FUNCTION_ARGS)
{
	MemoryContext context = aggregate_context(fcinfo, "tlbf_agg_combine");
	TlbfAggState *into = PG_ARGISNULL(0) ? NULL : (TlbfAggState *) PG_GETARG_POINTER(0);
	TlbfAggState *from = PG_ARGISNULL(1) ? NULL : (TlbfAggState *) PG_GETARG_POINTER(1);

	if (from == NULL)
	{
		if (into == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(into);
	}
	if (into == NULL)
		into = new_state(context);
	if (from->growing != NULL)
	{
		add_pending(from);
		tlbf_set_length(from->growing);
		add_part(into, copy_in(from->growing, context), context);
	}

	/*
	 * A state made by tlbf_agg_deserialize in this aggregate's context (the
	 * partial states of a parallel or partitionwise plan) gives its filters
	 * away instead of having them copied: they are megabytes each, and
	 * nothing else points to them.
	 */
	if (from->parts_owned_in == context)
	{
		for (int i = 0; i < from->nparts; i++)
			add_part(into, from->parts[i], context);
		from->nparts = 0;
	}
	else
	{
		for (int i = 0; i < from->nparts; i++)
			add_part(into, copy_in(from->parts[i], context), context);
	}
	PG_RETURN_POINTER(into);
}

/*
 * A state travels as its merged filter's bytes (a tlbf value is a bytea).
 * A state that is one growing filter (a parallel worker's) is sent as it
 * is, without a copy: the executor only reads the result, to form the
 * tuple it sends, and the state stays valid.
 */
Datum
tlbf_agg_serialize(PG_FUNCTION_ARGS)
{
	TlbfAggState *state = (TlbfAggState *) PG_GETARG_POINTER(0);

	aggregate_context(fcinfo, "tlbf_agg_serialize");
	if (state->growing != NULL && state->nparts == 0)
	{
		add_pending(state);
		tlbf_set_length(state->growing);
		PG_RETURN_BYTEA_P((bytea *) state->growing);
	}
	PG_RETURN_BYTEA_P((bytea *) state_value(state));
}

Datum
tlbf_agg_deserialize(PG_FUNCTION_ARGS)
{
	MemoryContext context = aggregate_context(fcinfo, "tlbf_agg_deserialize");
	bytea	   *bytes = PG_GETARG_BYTEA_PP(0);
	TlbfAggState *state = new_state(context);
	MemoryContext old = MemoryContextSwitchTo(context);

	add_part(state, tlbf_validated_copy(VARDATA_ANY(bytes), VARSIZE_ANY_EXHDR(bytes),
										ERRCODE_INVALID_BINARY_REPRESENTATION,
										"aggregate state"),
			 context);
	state->parts_owned_in = context;
	MemoryContextSwitchTo(old);
	PG_RETURN_POINTER(state);
}
