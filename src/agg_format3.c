/*-------------------------------------------------------------------------
 *
 * agg_format3.c
 *	  tlbf_agg_format3(item, at, span, error_rate, capacity): the aggregate
 *	  that builds a filter of format 3 (in development, issue 36) with a
 *	  declared capacity, and its combine function.
 *
 * A key's bits in format 3 depend on its hash and its time only, and a
 * declared capacity sizes every generation before the first row: so rows
 * are added as they come, in any order, and states built apart (parallel
 * workers, partitions, Citus shards) merge by OR into the bytes one state
 * fed every row would hold.  There is no row log, no sort and no final
 * function: the state is a tlbf value, which parallel workers and Citus
 * pass as they pass any value (the result's bytes, however many rows).
 *
 * The state is held as an expanded object (utils/expandeddatum.h): the
 * filter, and the last rows' keys, held back and set together
 * (tb_insert_many: each line prefetched while another is set), so that a
 * large filter's cache misses overlap instead of queueing.  A filter of a
 * few lines holds a few keys back; one past the cache up to HELD_MOST.
 * tb_insert_many gives the bytes the keys one by one give, so holding
 * keys back changes no bit.  Whatever reads the state as a value (the
 * result, a partial state sent to the leader or to a Citus coordinator, a
 * copy) flattens it, and flattening adds the held keys first: a held key
 * is never missing from a value.  nodeAgg keeps a read-write expanded state
 * in place (no copy per row) when it lives in a child of its memory.
 *
 * Two faces share that state.  The typed forms (an item of smallint,
 * integer, bigint, text, uuid or bytea) keep it as a tlbf value, which
 * Citus can split: its workers send the coordinator each shard's filter.
 * The form of any other item type keeps it as internal, with serialize and
 * deserialize functions for parallel plans: Citus splits an aggregate whose
 * state is a type of its own whatever its arguments, and cannot pass an
 * item of type "any" to its workers' partial aggregate, so it gathers the
 * rows of this one instead.
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"
#include "agg_format3.h"
#include "datum_hash.h"
#include "filter_args.h"
#include "filter_params.h"
#include "key_match.h"
#include "times.h"
#include "union.h"

#include "utils/expandeddatum.h"
#include "utils/memutils.h"

#include "core/tb.h"

PG_FUNCTION_INFO_V1(tlbf_agg_format3_trans);
PG_FUNCTION_INFO_V1(tlbf_agg_format3_combine);
PG_FUNCTION_INFO_V1(tlbf_agg_format3_any_trans);
PG_FUNCTION_INFO_V1(tlbf_agg_format3_any_final);
PG_FUNCTION_INFO_V1(tlbf_agg_format3_any_combine);
PG_FUNCTION_INFO_V1(tlbf_agg_format3_any_serialize);
PG_FUNCTION_INFO_V1(tlbf_agg_format3_any_deserialize);

/*
 * Keys held back: at first HELD_FIRST (a hashed aggregation may hold many
 * small states), twice as many after each time they are set while the
 * filter is past HELD_LARGE bytes, up to HELD_MOST (24 kB).
 */
#define HELD_FIRST	16
#define HELD_MOST	1024
#define HELD_LARGE	(1024 * 1024)

typedef struct Format3State
{
	ExpandedObjectHeader header;
	TbFilter   *filter;			/* in the header's context; VARSIZE kept */
	TlbfMemory	memory;
	Format3Hasher hasher;		/* hashes the rows' items */
	int			nheld;			/* keys held back, in the order they came */
	int			room;			/* held has room for this many */
	TbKey	   *held;			/* in the header's context */
} Format3State;

static Size state_flat_size(ExpandedObjectHeader *eohptr);
static void state_flatten(ExpandedObjectHeader *eohptr, void *result, Size allocated_size);

static const ExpandedObjectMethods state_methods = {
	state_flat_size,
	state_flatten
};

/* ERROR unless called by an aggregate; its memory. */
MemoryContext
tlbf_format3_aggregate_memory(FunctionCallInfo fcinfo, const char *function)
{
	MemoryContext aggcontext;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s can only be called by an aggregate", function)));
	return aggcontext;
}

/* Insert the keys held back, in the order they came. */
static void
insert_held(Format3State *state)
{
	uint64		truncated = state->filter->truncated;
	TlbfStatus	status;

	if (state->nheld == 0)
		return;
	status = tb_insert_many(&state->filter, &state->memory, state->held, state->nheld);
	state->nheld = 0;
	tlbf_check_core_status(status, truncated, state->filter->truncated);
	SET_VARSIZE(state->filter, tb_size(state->filter));
}

static Size
state_flat_size(ExpandedObjectHeader *eohptr)
{
	Format3State *state = (Format3State *) eohptr;

	Assert(state->header.eoh_methods == &state_methods);
	insert_held(state);
	return VARSIZE(state->filter);
}

static void
state_flatten(ExpandedObjectHeader *eohptr, void *result, Size allocated_size)
{
	Format3State *state = (Format3State *) eohptr;

	/* (state_flat_size ran first and gave this size) */
	Assert(state->nheld == 0 && allocated_size == VARSIZE(state->filter));
	memcpy(result, state->filter, allocated_size);
}

/* A new state in a child of 'aggcontext', holding a copy of 'filter'. */
static Format3State *
new_state(MemoryContext aggcontext, const TbFilter *filter)
{
	/* (small blocks: a hashed aggregation may hold many small states) */
	MemoryContext memory = AllocSetContextCreate(aggcontext, "tlbf_agg_format3 state",
												 ALLOCSET_SMALL_SIZES);
	Format3State *state = MemoryContextAllocZero(memory, sizeof(Format3State));

	EOH_init_header(&state->header, &state_methods, memory);
	state->room = HELD_FIRST;
	state->held = MemoryContextAlloc(memory, HELD_FIRST * sizeof(TbKey));
	state->filter = MemoryContextAlloc(memory, VARSIZE(filter));
	memcpy(state->filter, filter, VARSIZE(filter));
	tlbf_memory_for(&state->memory, state->filter, memory);
	return state;
}

/* The first row's state: an empty filter with the declared capacity. */
static Format3State *
first_state(FunctionCallInfo fcinfo, MemoryContext aggcontext)
{
	TbParams	params;
	TbFilter   *empty;

	/* (state, item, at, span, error_rate, capacity) */
	if (PG_ARGISNULL(3) || PG_ARGISNULL(4) || PG_ARGISNULL(5))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("tlbf_agg_format3's span, error_rate and capacity must not be NULL")));
	tlbf_format3_params(&params, PG_GETARG_INTERVAL_P(3), PG_GETARG_FLOAT8(4),
						PG_GETARG_INT64(5), true);
	empty = palloc(tb_lines_offset(0));
	tb_init(empty, &params);
	SET_VARSIZE(empty, tb_size(empty));
	return new_state(aggcontext, empty);
}

/* A state that is not a filter of format 3 carrying nothing (a user's aggregate may pass one). */
static void
refuse_state(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("tlbf_agg_format3's states are filters of format 3 that carry no other")));
}

/*
 * Argument 'argno' as a state to change: nodeAgg's own (an expanded
 * object of ours), or a new one holding a checked copy of a flat value
 * (a partial state that came as a value).
 */
static Format3State *
state_arg(FunctionCallInfo fcinfo, int argno, MemoryContext aggcontext)
{
	Datum		d = PG_GETARG_DATUM(argno);
	TlbfValue	v;

	if (VARATT_IS_EXTERNAL_EXPANDED_RW(DatumGetPointer(d)) &&
		DatumGetEOHP(d)->eoh_methods == &state_methods)
		return (Format3State *) DatumGetEOHP(d);
	v = tlbf_arg_value(fcinfo, argno);
	if (v.v3 == NULL || v.carried != NULL)
		refuse_state();
	return new_state(aggcontext, v.v3);
}

/*
 * After a filter's first key: hash the next ones with their type's hasher
 * directly if the general path would (tlbf_key_arg_plain_hasher), checked
 * once more on this key.  The general path costs more than the rest of a
 * row (the key's kind found, compared and recorded each time).
 */
static void
take_plain_path(Format3Hasher *hasher, FunctionCallInfo fcinfo, const TbFilter *filter,
				TlbfHash hash, MemoryContext memory)
{
	ItemHasher *plain = tlbf_key_arg_plain_hasher(fcinfo, 1, tb_keys_of(filter), memory);

	hasher->checked = true;
	if (plain != NULL)
	{
		TlbfHash	again = tlbf_hash_item(plain, PG_GETARG_DATUM(1), filter->seed);

		if (again.a == hash.a && again.b == hash.b)
		{
			hasher->plain = plain;
			hasher->int_bytes = tlbf_int_item_bytes(plain);
		}
	}
}

/*
 * tlbf_format3_row_hash (agg_format3.h) before the plain path is taken:
 * the general path, the key's kind found, checked and recorded.
 */
TlbfHash
tlbf_format3_row_hash_general(Format3Hasher *hasher, FunctionCallInfo fcinfo, TbFilter *filter,
							  bool holds_keys, MemoryContext memory)
{
	TlbfKeys	basis;
	TlbfHash	hash;

	if (hasher->plain != NULL)
		return tlbf_hash_item(hasher->plain, PG_GETARG_DATUM(1), filter->seed);
	(void) tlbf_key_arg_hash_shared(fcinfo, 1, tb_keys_of(filter), holds_keys, true,
									&hash, &basis);
	tb_record_keys(filter, basis);
	if (!hasher->checked)
		take_plain_path(hasher, fcinfo, filter, hash, memory);
	return hash;
}

/*
 * Add the row of argument 1 (item) and 2 (time) to a state.  The key is
 * hashed and its time checked now (an error names its row), and it is set
 * when the keys held back fill their room, or when the state is read.
 */
static void
add_row(Format3State *state, FunctionCallInfo fcinfo)
{
	TbKey	   *key = &state->held[state->nheld];

	key->at = tlbf_insert_time_arg(fcinfo, 2);
	key->hash = tlbf_format3_row_hash(&state->hasher, fcinfo, state->filter,
									  state->filter->inserted > 0 || state->nheld > 0,
									  state->header.eoh_context);
	if (++state->nheld < state->room)
		return;
	insert_held(state);
	if (state->room < HELD_MOST && VARSIZE(state->filter) >= HELD_LARGE)
	{
		state->room *= 2;
		state->held = repalloc(state->held, state->room * sizeof(TbKey));
	}
}

/*
 * Add a row (the typed forms).  Rows with a NULL item or time are
 * skipped, as tlbf_add skips them; a group with no other row gives NULL.
 * The parameters of later rows are not read.
 */
Datum
tlbf_agg_format3_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = tlbf_format3_aggregate_memory(fcinfo, "tlbf_agg_format3_trans");
	Format3State *state;

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}
	state = PG_ARGISNULL(0) ? first_state(fcinfo, aggcontext) :
		state_arg(fcinfo, 0, aggcontext);
	add_row(state, fcinfo);
	PG_RETURN_DATUM(EOHPGetRWDatum(&state->header));
}

/*
 * Merge the second state into the first (STRICT: both are there).  The
 * second is read as a value: flattened, with its held keys, if it is a
 * state of ours.
 */
Datum
tlbf_agg_format3_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = tlbf_format3_aggregate_memory(fcinfo, "tlbf_agg_format3_combine");
	Format3State *into = state_arg(fcinfo, 0, aggcontext);
	TlbfValue	from = tlbf_arg_value(fcinfo, 1);

	if (from.v3 == NULL || from.carried != NULL)
		refuse_state();
	insert_held(into);
	into->filter = tlbf_union_format3_into(into->filter, from.v3, &into->memory);
	PG_RETURN_DATUM(EOHPGetRWDatum(&into->header));
}

/* The form of any item type: the same state, as internal. */
Datum
tlbf_agg_format3_any_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = tlbf_format3_aggregate_memory(fcinfo, "tlbf_agg_format3_any_trans");
	Format3State *state;

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_POINTER(PG_GETARG_POINTER(0));
	}
	state = PG_ARGISNULL(0) ? first_state(fcinfo, aggcontext) :
		(Format3State *) PG_GETARG_POINTER(0);
	add_row(state, fcinfo);
	PG_RETURN_POINTER(state);
}

/* The filter as a new value (the state goes on: a window may add rows). */
static TbFilter *
state_value(Format3State *state)
{
	TbFilter   *value;

	insert_held(state);
	value = palloc(VARSIZE(state->filter));
	memcpy(value, state->filter, VARSIZE(state->filter));
	return value;
}

Datum
tlbf_agg_format3_any_final(PG_FUNCTION_ARGS)
{
	(void) tlbf_format3_aggregate_memory(fcinfo, "tlbf_agg_format3_any_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(state_value((Format3State *) PG_GETARG_POINTER(0)));
}

/* Not STRICT (internal): either state may be missing. */
Datum
tlbf_agg_format3_any_combine(PG_FUNCTION_ARGS)
{
	Format3State *into;
	Format3State *from;

	(void) tlbf_format3_aggregate_memory(fcinfo, "tlbf_agg_format3_any_combine");
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	if (PG_ARGISNULL(0))
		PG_RETURN_POINTER(PG_GETARG_POINTER(1));
	into = (Format3State *) PG_GETARG_POINTER(0);
	from = (Format3State *) PG_GETARG_POINTER(1);
	insert_held(into);
	insert_held(from);
	into->filter = tlbf_union_format3_into(into->filter, from->filter, &into->memory);
	PG_RETURN_POINTER(into);
}

/* The state as the bytes of its filter (STRICT). */
Datum
tlbf_agg_format3_any_serialize(PG_FUNCTION_ARGS)
{
	(void) tlbf_format3_aggregate_memory(fcinfo, "tlbf_agg_format3_any_serialize");
	PG_RETURN_BYTEA_P((bytea *) state_value((Format3State *) PG_GETARG_POINTER(0)));
}

/* A state from those bytes, checked as any value from outside (STRICT). */
Datum
tlbf_agg_format3_any_deserialize(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = tlbf_format3_aggregate_memory(fcinfo, "tlbf_agg_format3_any_deserialize");
	bytea	   *bytes = PG_GETARG_BYTEA_PP(0);
	struct varlena *value = tlbf_validated_copy_any(VARDATA_ANY(bytes), VARSIZE_ANY_EXHDR(bytes),
													ERRCODE_INVALID_BINARY_REPRESENTATION,
													TLBF_VALUE_AGG_STATE, NULL);

	if (((TbFilter *) value)->version != TB_FORMAT_VERSION ||
		(((TbFilter *) value)->flags & TB_CARRIES) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("tlbf_agg_format3's states are filters of format 3 that carry no other")));
	PG_RETURN_POINTER(new_state(aggcontext, (TbFilter *) value));
}
