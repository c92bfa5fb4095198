/*-------------------------------------------------------------------------
 *
 * agg_union.c
 *	  The state of tlbf_union_agg(tlbf): the union of its filters, kept in
 *	  the tlbf_agg_state type, which Citus can split (agg_state_type.c), or
 *	  as internal by 1.3's transition function.
 *
 * Filters of format 3 (core/tb.h) merge exactly by OR, so they are OR'ed
 * into one as they come.  Filters of formats 1 and 2 merge only all at
 * once (tlbf_merge_values sizes the result from all of them): they are
 * kept, each copied, and merged at the end; so are the older values that
 * filters of format 3 carry (value_carry.c), which the result carries
 * merged, as tlbf_union does.
 *
 * Until 1.5 this state also held tlbf_agg's rows; tlbf_agg now keeps its
 * rows' hashes (agg_format3_log.c), and a state of rows from outside (a
 * node of an older version) is refused.
 *
 *-------------------------------------------------------------------------
 */
#include "agg_union.h"
#include "union.h"
#include "value_carry.h"

#include "utils/memutils.h"

#include "core/tb.h"

PG_FUNCTION_INFO_V1(tlbf_union_agg_trans);

/* The magic number of a state of rows, as tlbf_agg sent them before 1.5. */
#define TLBF_ROWS_MAGIC 0x52424C54u /* "TLBR" read as little-endian */

struct UnionState
{
	const Tlbf **parts;			/* of formats 1 and 2, merged at the end */
	int			nparts;
	int			parts_allocated;
	TbFilter   *union3;			/* the union of those of format 3, or NULL */
	TlbfMemory	union3_memory;	/* how it may grow */
	MemoryContext owned_in;		/* set if only this state points to its
								 * filters, which live in this context */
};

/* The memory of the aggregate 'function' runs in; ERROR outside one. */
MemoryContext
tlbf_aggregate_context(FunctionCallInfo fcinfo, const char *function)
{
	MemoryContext context;

	if (!AggCheckCallContext(fcinfo, &context))
		elog(ERROR, "%s called in a non-aggregate context", function);
	return context;
}

void
tlbf_agg_bad_state(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
			 errmsg("invalid tlbf_agg state"),
			 errdetail("%s", detail)));
}

UnionState *
tlbf_union_state_create(MemoryContext context)
{
	return MemoryContextAllocZero(context, sizeof(UnionState));
}

static void
add_part(UnionState *state, const Tlbf *part, MemoryContext context)
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

/*
 * A filter of format 3 joins the union: the first is copied (or taken, if
 * 'take' and it lives in 'context'), later ones OR'ed in.  The value it
 * carries, if any, is kept apart with the filters of formats 1 and 2.
 */
static void
add_format3(UnionState *state, TbFilter *f, bool take, MemoryContext context)
{
	Tlbf	   *carried = tlbf_carried(f);

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
			f = (TbFilter *) copy_in((Tlbf *) f, context);
		state->union3 = f;
		tlbf_memory_for(&state->union3_memory, f, context);
		return;
	}
	state->union3 = tlbf_union_format3_into(state->union3, f, &state->union3_memory);
}

/* Add a filter (copied: the state outlives the argument). */
void
tlbf_union_state_add(UnionState *state, TlbfValue f, MemoryContext context)
{
	if (f.v3 != NULL)
		add_format3(state, f.v3, false, context);
	else
		add_part(state, copy_in(f.v2, context), context);
}

/*
 * tlbf_union_agg's transition function up to 1.3 (1.4 keeps its state in
 * tlbf_agg_state); a database not yet updated still calls it.
 */
Datum
tlbf_union_agg_trans(PG_FUNCTION_ARGS)
{
	MemoryContext context = tlbf_aggregate_context(fcinfo, "tlbf_union_agg_trans");
	UnionState *state = PG_ARGISNULL(0) ? NULL : (UnionState *) PG_GETARG_POINTER(0);

	if (PG_ARGISNULL(1))
	{
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state);
	}
	if (state == NULL)
		state = tlbf_union_state_create(context);
	tlbf_union_state_add(state, tlbf_arg_value(fcinfo, 1), context);
	PG_RETURN_POINTER(state);
}

/*
 * Combine a partial state into another.  What 'from' holds in 'context'
 * (made there by tlbf_union_state_from_bytes) moves instead of being
 * copied: filters are megabytes each, and nothing else points to them.
 */
void
tlbf_union_state_combine(UnionState *into, UnionState *from, MemoryContext context)
{
	bool		owned = from->owned_in == context;

	if (from->union3 != NULL)
	{
		add_format3(into, from->union3, owned, context);
		if (owned)
			from->union3 = NULL;
	}
	for (int i = 0; i < from->nparts; i++)
		add_part(into, owned ? from->parts[i] : copy_in(from->parts[i], context), context);
	if (owned)
		from->nparts = 0;
}

/*
 * The union as a new value in the current memory context, or NULL if the
 * state holds no filter.  The state is unchanged, and may be asked again.
 */
struct varlena *
tlbf_union_state_result(UnionState *state)
{
	Tlbf	   *merged = NULL;

	if (state->nparts == 1)
		merged = copy_in(state->parts[0], CurrentMemoryContext);
	else if (state->nparts > 1)
		merged = tlbf_merge_values(state->parts, state->nparts);
	if (state->union3 == NULL)
		return (struct varlena *) merged;
	if (merged == NULL)
		return (struct varlena *) copy_in((Tlbf *) state->union3, CurrentMemoryContext);

	/* filters of format 3 carrying the others merged (tlbf_union's way) */
	tlbf_check_carry(state->union3, merged);
	return (struct varlena *) tlbf_carry(state->union3, merged->nslices > 0 ? merged : NULL);
}

/* A partial state travels as its union (a tlbf value is a bytea). */
bytea *
tlbf_union_state_bytes(UnionState *state, MemoryContext context)
{
	MemoryContext old = MemoryContextSwitchTo(context);
	struct varlena *result = tlbf_union_state_result(state);

	MemoryContextSwitchTo(old);
	if (result == NULL)
		elog(ERROR, "tlbf_union_agg's state holds no filter");
	return (bytea *) result;
}

/*
 * A state from what tlbf_union_state_bytes made, in 'context', every byte
 * checked as any value from outside.
 */
UnionState *
tlbf_union_state_from_bytes(const bytea *bytes, MemoryContext context)
{
	UnionState *state = tlbf_union_state_create(context);
	MemoryContext old;
	uint32		magic = 0;
	TlbfValue	f;

	if (VARSIZE_ANY_EXHDR(bytes) >= sizeof(magic))
		memcpy(&magic, VARDATA_ANY(bytes), sizeof(magic));
	if (magic == TLBF_ROWS_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid tlbf_agg state"),
				 errdetail("It holds rows, as tlbf_agg sent them before version 1.5 of tlbf; version 1.5 sends its rows' hashes."),
				 errhint("Update tlbf to the same version on every node: ALTER EXTENSION tlbf UPDATE.")));
	old = MemoryContextSwitchTo(context);
	f = tlbf_value_of(tlbf_validated_copy_any(VARDATA_ANY(bytes), VARSIZE_ANY_EXHDR(bytes),
											  ERRCODE_INVALID_BINARY_REPRESENTATION,
											  TLBF_VALUE_AGG_STATE, NULL));
	MemoryContextSwitchTo(old);
	if (f.v3 != NULL)
		add_format3(state, f.v3, true, context);
	else
		add_part(state, f.v2, context);
	state->owned_in = context;
	return state;
}
