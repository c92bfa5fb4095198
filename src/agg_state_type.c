/*-------------------------------------------------------------------------
 *
 * agg_state_type.c
 *	  The tlbf_agg_state type, and the aggregates whose state it is:
 *	  tlbf_agg(item, at, span [, error_rate]) for items of the types Citus
 *	  sees most (smallint, integer, bigint, text, uuid, bytea), and
 *	  tlbf_union_agg(tlbf).
 *
 * Citus splits an aggregate between the workers, next to the shards, and
 * the coordinator only if its state is of a real type (not internal) with
 * a combine function: each shard's partial state then crosses as that
 * type's text or binary form, and the coordinator combines them.  The
 * state lives in an expanded object (utils/expandeddatum.h), which the
 * executor keeps from row to row without copying: tlbf_agg's is the keys'
 * hashes that tlbf_agg("any", ...) keeps too (agg_format3_log.c), whose
 * flat form is tlbf_format3_log_bytes's; tlbf_union_agg's is its filters
 * (agg_union.c), whose flat form is their union.  The text form is
 * base64.  A flat state from outside is checked byte by byte before it is
 * used, and a function of one kind refuses a state of the other.
 *
 * The transition function is called with the item's type known from the
 * call site, or, under Citus, from its own declaration (Citus calls it
 * through a FmgrInfo of its own, without the call's expression): hence one
 * declaration per item type, which also lets a driver's untyped parameter
 * resolve to text.
 *
 *-------------------------------------------------------------------------
 */
#include "agg_format3_log.h"
#include "agg_union.h"
#include "filter_args.h"
#include "type_io.h"

#include "libpq/pqformat.h"
#include "utils/expandeddatum.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(tlbf_agg_state_in);
PG_FUNCTION_INFO_V1(tlbf_agg_state_out);
PG_FUNCTION_INFO_V1(tlbf_agg_state_recv);
PG_FUNCTION_INFO_V1(tlbf_agg_state_send);
PG_FUNCTION_INFO_V1(tlbf_agg_typed_trans);
PG_FUNCTION_INFO_V1(tlbf_union_agg_typed_trans);
PG_FUNCTION_INFO_V1(tlbf_agg_typed_combine);
PG_FUNCTION_INFO_V1(tlbf_agg_typed_final);

/*
 * One of two states, in hdr.eoh_context: tlbf_union_agg's filters
 * (agg_union.c), or tlbf_agg's keys' hashes per generation
 * (agg_format3_log.c).  A flat form of hashes begins with a magic number
 * of its own, one of filters is a tlbf value; a function of one refuses
 * the other.
 */
typedef struct ExpandedState
{
	ExpandedObjectHeader hdr;
	UnionState *filters;		/* filters, or NULL */
	HashLog    *hashes;			/* hashes, or NULL */
	bytea	   *flat;			/* its flat form, once made, until it changes */
} ExpandedState;

static Size state_flat_size(ExpandedObjectHeader *eohptr);
static void state_flatten(ExpandedObjectHeader *eohptr, void *result, Size allocated_size);

static const ExpandedObjectMethods state_methods = {
	state_flat_size,
	state_flatten
};

/* The flat form is made once, in the object's memory, and copied out. */
static Size
state_flat_size(ExpandedObjectHeader *eohptr)
{
	ExpandedState *expanded = (ExpandedState *) eohptr;

	if (expanded->flat == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(expanded->hdr.eoh_context);

		expanded->flat = expanded->hashes != NULL ?
			tlbf_format3_log_bytes(expanded->hashes) :
			tlbf_union_state_bytes(expanded->filters, expanded->hdr.eoh_context);
		MemoryContextSwitchTo(old);
	}
	return VARSIZE(expanded->flat);
}

static void
state_flatten(ExpandedObjectHeader *eohptr, void *result, Size allocated_size)
{
	ExpandedState *expanded = (ExpandedState *) eohptr;

	Assert(expanded->flat != NULL && VARSIZE(expanded->flat) == allocated_size);
	memcpy(result, expanded->flat, allocated_size);
}

/* An object in a memory context of its own under 'parent', holding no state yet. */
static ExpandedState *
new_object(MemoryContext parent)
{
	/* small blocks: a hashed GROUP BY keeps one per group */
	MemoryContext context = AllocSetContextCreate(parent, "tlbf_agg_state",
												  ALLOCSET_SMALL_SIZES);
	ExpandedState *expanded = MemoryContextAllocZero(context, sizeof(ExpandedState));

	EOH_init_header(&expanded->hdr, &state_methods, context);
	return expanded;
}

/*
 * A new state under 'parent': no filters yet, or made from a flat one of
 * either kind, every byte checked.
 */
static ExpandedState *
new_expanded(MemoryContext parent, const bytea *flat)
{
	ExpandedState *expanded = new_object(parent);
	MemoryContext context = expanded->hdr.eoh_context;

	if (flat == NULL)
		expanded->filters = tlbf_union_state_create(context);
	else if (tlbf_format3_log_bytes_are(flat))
	{
		expanded->hashes = tlbf_format3_log_from_bytes(flat, context, NULL);
		tlbf_hash_log_spill_if_over(expanded->hashes, 0);
	}
	else
		expanded->filters = tlbf_union_state_from_bytes(flat, context);
	return expanded;
}

/* Refuse a state of the other kind (a user's aggregate may pass one). */
static void
check_kind(const ExpandedState *expanded, bool hashes)
{
	if ((expanded->hashes != NULL) != hashes)
		tlbf_agg_bad_state(hashes ?
						   "tlbf_agg keeps its rows' hashes, not this state's filters." :
						   "This state holds tlbf_agg's hashes, not tlbf_union_agg's filters.");
}

/*
 * Argument 'argno', a state: the executor's own (an expanded object of
 * ours), or a flat one, made a new object under 'parent'.  NULL for NULL.
 */
static ExpandedState *
state_arg(FunctionCallInfo fcinfo, int argno, MemoryContext parent)
{
	Datum		value;

	if (PG_ARGISNULL(argno))
		return NULL;
	value = PG_GETARG_DATUM(argno);
	if (VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(value)) &&
		DatumGetEOHP(value)->eoh_methods == &state_methods)
		return (ExpandedState *) DatumGetEOHP(value);
	return new_expanded(parent, PG_GETARG_BYTEA_PP(argno));
}

/*
 * The state a transition function adds to, made on its first row in the
 * aggregate's memory, where the executor keeps it as it is.  Its flat form
 * is out of date from now on.
 */
static ExpandedState *
state_to_change(FunctionCallInfo fcinfo, MemoryContext aggregate, bool hashes)
{
	ExpandedState *expanded = state_arg(fcinfo, 0, aggregate);

	if (expanded == NULL)
		expanded = new_expanded(aggregate, NULL);
	check_kind(expanded, hashes);
	expanded->flat = NULL;
	return expanded;
}

/*
 * tlbf_agg(item, at, span [, error_rate]) for an item of a declared type:
 * the keys' hashes (agg_format3_log.c), which travel between processes and
 * nodes as the flat form.  The first row makes the state, from its
 * parameters.
 */
Datum
tlbf_agg_typed_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggregate;
	ExpandedState *expanded;

	/*
	 * Every row but the first: the state is the object the aggregation
	 * keeps (read-write, its hashes), and the row adds to it; checked
	 * here without calls, as each costs a share of a row's time.  Anything
	 * else takes the general path below.
	 */
	if (likely(!PG_ARGISNULL(0) && !PG_ARGISNULL(1) && !PG_ARGISNULL(2) &&
			   fcinfo->context != NULL && IsA(fcinfo->context, AggState) &&
			   VARATT_IS_EXTERNAL_EXPANDED_RW(DatumGetPointer(PG_GETARG_DATUM(0))) &&
			   DatumGetEOHP(PG_GETARG_DATUM(0))->eoh_methods == &state_methods))
	{
		expanded = (ExpandedState *) DatumGetEOHP(PG_GETARG_DATUM(0));
		if (likely(expanded->hashes != NULL))
		{
			expanded->flat = NULL;
			expanded->hashes->aggstate = (AggState *) fcinfo->context;
			tlbf_format3_log_add_row(expanded->hashes, fcinfo);
			PG_RETURN_DATUM(PG_GETARG_DATUM(0));
		}
	}

	aggregate = tlbf_aggregate_context(fcinfo, "tlbf_agg_typed_trans");

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}
	if (PG_ARGISNULL(0))
	{
		expanded = new_object(aggregate);
		expanded->hashes = tlbf_format3_log_first(fcinfo, expanded->hdr.eoh_context);
	}
	else
		expanded = state_to_change(fcinfo, aggregate, true);
	expanded->flat = NULL;
	expanded->hashes->aggstate = tlbf_aggregation_of(fcinfo);
	tlbf_format3_log_add_row(expanded->hashes, fcinfo);
	PG_RETURN_DATUM(EOHPGetRWDatum(&expanded->hdr));
}

Datum
tlbf_union_agg_typed_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggregate = tlbf_aggregate_context(fcinfo, "tlbf_union_agg_typed_trans");
	ExpandedState *expanded;

	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}
	expanded = state_to_change(fcinfo, aggregate, false);
	tlbf_union_state_add(expanded->filters, tlbf_arg_value(fcinfo, 1),
						 expanded->hdr.eoh_context);
	PG_RETURN_DATUM(EOHPGetRWDatum(&expanded->hdr));
}

/*
 * Combine a partial state into the first.  Either may be NULL.  The second
 * is read in its flat form, as it crosses between processes and nodes,
 * also when it comes in memory (a partitionwise plan's partial aggregates
 * run in the same process): its filters join the first's union, or its
 * hashes move into the first's logs without a copy.
 */
Datum
tlbf_agg_typed_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggregate = tlbf_aggregate_context(fcinfo, "tlbf_agg_typed_combine");
	ExpandedState *into;
	UnionState *from;
	bytea	   *bytes;

	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}
	bytes = PG_GETARG_BYTEA_PP(1);
	if (tlbf_format3_log_bytes_are(bytes))
	{
		if (PG_ARGISNULL(0))
			into = new_expanded(aggregate, bytes);
		else
		{
			into = state_to_change(fcinfo, aggregate, true);
			tlbf_hash_log_take(into->hashes,
							   tlbf_format3_log_from_bytes(bytes, into->hdr.eoh_context,
														   tlbf_aggregation_of(fcinfo)));
		}
		into->flat = NULL;
		into->hashes->aggstate = tlbf_aggregation_of(fcinfo);
		PG_RETURN_DATUM(EOHPGetRWDatum(&into->hdr));
	}
	into = state_to_change(fcinfo, aggregate, false);
	from = tlbf_union_state_from_bytes(bytes, into->hdr.eoh_context);
	tlbf_union_state_combine(into->filters, from, into->hdr.eoh_context);
	PG_RETURN_DATUM(EOHPGetRWDatum(&into->hdr));
}

Datum
tlbf_agg_typed_final(PG_FUNCTION_ARGS)
{
	MemoryContext aggregate = tlbf_aggregate_context(fcinfo, "tlbf_agg_typed_final");
	ExpandedState *expanded = state_arg(fcinfo, 0, aggregate);
	struct varlena *result;

	if (expanded == NULL)
		PG_RETURN_NULL();
	if (expanded->hashes != NULL)
		PG_RETURN_POINTER(tlbf_format3_log_build(expanded->hashes));
	result = tlbf_union_state_result(expanded->filters);
	if (result == NULL)
		PG_RETURN_NULL();
	PG_RETURN_POINTER(result);
}

/*
 * A flat state from outside, as a new value: checked as a final
 * aggregation would read it, then copied.
 */
static bytea *
checked_state(const char *data, Size len)
{
	bytea	   *flat;
	ExpandedState *expanded;

	if (len > MaxAllocSize - VARHDRSZ)
		tlbf_agg_bad_state("The state is too large.");
	flat = palloc(VARHDRSZ + len);
	SET_VARSIZE(flat, VARHDRSZ + len);
	memcpy(VARDATA(flat), data, len);
	expanded = new_expanded(CurrentMemoryContext, flat);
	DeleteExpandedObject(EOHPGetRWDatum(&expanded->hdr));
	return flat;
}

Datum
tlbf_agg_state_in(PG_FUNCTION_ARGS)
{
	int			len;
	char	   *decoded = tlbf_base64_decode(PG_GETARG_CSTRING(0), &len, "tlbf_agg_state", NULL);

	PG_RETURN_BYTEA_P(checked_state(decoded, len));
}

/* The flat form (an expanded state is flattened on the way in). */
Datum
tlbf_agg_state_out(PG_FUNCTION_ARGS)
{
	bytea	   *flat = PG_GETARG_BYTEA_PP(0);

	PG_RETURN_CSTRING(tlbf_base64_encode(VARDATA_ANY(flat), VARSIZE_ANY_EXHDR(flat)));
}

Datum
tlbf_agg_state_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int			len = buf->len - buf->cursor;

	PG_RETURN_BYTEA_P(checked_state(pq_getmsgbytes(buf, len), len));
}

Datum
tlbf_agg_state_send(PG_FUNCTION_ARGS)
{
	bytea	   *flat = PG_GETARG_BYTEA_PP(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbytes(&buf, VARDATA_ANY(flat), VARSIZE_ANY_EXHDR(flat));
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}
