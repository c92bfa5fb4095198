/*-------------------------------------------------------------------------
 *
 * filter_args.c
 *	  Getting a tlbf value out of a function argument, checked, and giving
 *	  the core memory to grow one in.
 *
 * Every value is validated before the core reads it, wherever it came
 * from, by the core of its format: 1 and 2 (the paper's layout, tlbf.h),
 * or 3 (tb.h).  Functions that take format 3 ask for a TlbfValue; the
 * others get formats 1 and 2 only, and refuse a format 3 value whole
 * (0A000) instead of reading it as another layout.
 *
 * A TOASTed value read without modification is detoasted and validated
 * once per call site and query: the copy is kept in fn_extra, keyed by the
 * TOAST pointer (which names an immutable value).
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"
#include "filter_args.h"
#include "huge_pages.h"
#include "settings.h"
#include "value_cache.h"
#include "value_carry.h"

#include "core/tb.h"

#include "access/detoast.h"
#include "storage/proc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

CallCache *
tlbf_call_cache(FunctionCallInfo fcinfo)
{
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(CallCache));
	return (CallCache *) fcinfo->flinfo->fn_extra;
}

/* The primary message for an invalid value from 'source' (in an ereport). */
static int
errmsg_invalid_value(TlbfValueSource source)
{
	switch (source)
	{
		case TLBF_VALUE_ARGUMENT:
			return errmsg("invalid tlbf value in argument");
		case TLBF_VALUE_TEXT_INPUT:
			return errmsg("invalid tlbf value in text input");
		case TLBF_VALUE_BINARY_INPUT:
			return errmsg("invalid tlbf value in binary input");
		case TLBF_VALUE_BYTEA_CAST:
			return errmsg("invalid tlbf value in cast from bytea");
		case TLBF_VALUE_AGG_STATE:
			return errmsg("invalid tlbf value in aggregate state");
	}
	return errmsg("invalid tlbf value");
}

/*
 * Report an invalid value: an ERROR, or into 'escontext' when the caller
 * asks for soft errors (an input function under pg_input_is_valid).
 */
static void
report_invalid(int sqlstate, TlbfValueSource source, const TlbfProblem *problem,
			   Node *escontext)
{
	errsave(escontext,
			errcode(sqlstate),
			errmsg_invalid_value(source),
			errdetail("%s.", problem->message));
}

/* Is a detoasted value of format 3?  (The version lies where every format keeps it.) */
static bool
is_format3(const struct varlena *value)
{
	return VARSIZE(value) >= offsetof(TbFilter, hash_scheme) &&
		((const TbFilter *) value)->version == TB_FORMAT_VERSION;
}

/*
 * Validate a detoasted value in place, by the core of its format; the cores
 * rely on word alignment.  NULL if it is invalid and 'escontext' took the
 * error.
 */
static struct varlena *
validated_soft(struct varlena *value, int sqlstate, TlbfValueSource source,
			   Node *escontext)
{
	TlbfProblem problem;
	bool		valid;

	if ((uintptr_t) value % sizeof(uint64) != 0)
	{
		struct varlena *aligned = palloc(VARSIZE(value));

		memcpy(aligned, value, VARSIZE(value));
		value = aligned;
	}
	if (is_format3(value))
		valid = tb_validate(value, VARSIZE(value), &problem) &&
			(!(((TbFilter *) value)->flags & TB_CARRIES) ||
			 tlbf_carried_validate((TbFilter *) value, VARSIZE(value), &problem));
	else
		valid = tlbf_validate(value, VARSIZE(value), &problem);
	if (!valid)
	{
		report_invalid(sqlstate, source, &problem, escontext);
		return NULL;
	}
	return value;
}

static struct varlena *
validated(struct varlena *value, int sqlstate, TlbfValueSource source)
{
	return validated_soft(value, sqlstate, source, NULL);
}

/*
 * A validated value a shared filter can be: of any format, or a carrier
 * (value_carry.c) of the one shape a shared filter writes when it moves to
 * format 3 (its bands hash keys as its carried value does: shared_value.c).
 * Another carrier is refused by name of the function.
 */
static Tlbf *
shared_layout_only(FunctionCallInfo fcinfo, struct varlena *value)
{
	if (value != NULL && is_format3(value) && (((const TbFilter *) value)->flags & TB_CARRIES) != 0 &&
		!tlbf_carrier_shares_keys((const TbFilter *) value))
	{
		char	   *name = fcinfo != NULL && fcinfo->flinfo != NULL ?
			get_func_name(fcinfo->flinfo->fn_oid) : NULL;

		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not take a saved copy that carries an older tlbf value",
						name != NULL ? name : "this function"),
				 errdetail("No shared filter writes one whose parts hash keys differently: the saved copy was changed by hand."),
				 errhint("Save a filter made by tlbf_create, or drop and create the shared filter again.")));
	}
	return (Tlbf *) value;
}

/* The parts of a validated value of any format. */
TlbfValue
tlbf_value_of(struct varlena *value)
{
	TlbfValue	v = {NULL, NULL, NULL};

	if (is_format3(value))
	{
		v.v3 = (TbFilter *) value;
		v.carried = tlbf_carried(v.v3);
	}
	else
		v.v2 = (Tlbf *) value;
	return v;
}

/*
 * Copy 'len' bytes of a value's payload (everything after the length word)
 * into a new varlena and validate it, whatever its format.  For input and
 * receive functions: NULL if it is invalid and 'escontext' took the error.
 */
struct varlena *
tlbf_validated_copy_any(const char *data, Size len, int sqlstate, TlbfValueSource source,
						Node *escontext)
{
	struct varlena *value;

	if (len > MaxAllocSize - VARHDRSZ)
	{
		errsave(escontext,
				errcode(sqlstate),
				errmsg_invalid_value(source),
				errdetail("The value is too large."));
		return NULL;
	}
	value = palloc(VARHDRSZ + len);
	SET_VARSIZE(value, VARHDRSZ + len);
	memcpy(VARDATA(value), data, len);
	return validated_soft(value, sqlstate, source, escontext);
}

/*
 * A value for reading only, of any format, from its raw (possibly TOASTed)
 * datum.  A value stored out of line is fetched and checked once per call
 * site and TOAST pointer, and kept in the call site's cache
 * (value_cache.c).
 */
static struct varlena *
readonly_any(FunctionCallInfo fcinfo, struct varlena *raw)
{
	struct varatt_external toast_id;
	CallCache  *cache;
	struct varlena *filter;
	MemoryContext old;

	if (!VARATT_IS_EXTERNAL_ONDISK(raw) || fcinfo->flinfo == NULL)
		return validated(pg_detoast_datum(raw), ERRCODE_INVALID_PARAMETER_VALUE, TLBF_VALUE_ARGUMENT);

	VARATT_EXTERNAL_GET_POINTER(toast_id, raw);
	cache = tlbf_call_cache(fcinfo);
	filter = tlbf_value_cache_find(cache->values, &toast_id);
	if (filter != NULL)
		return filter;
	old = MemoryContextSwitchTo(tlbf_value_cache_memory(&cache->values,
														fcinfo->flinfo->fn_mcxt));
	filter = validated(detoast_attr(raw), ERRCODE_INVALID_PARAMETER_VALUE, TLBF_VALUE_ARGUMENT);
	MemoryContextSwitchTo(old);
	return tlbf_value_cache_keep(cache->values, &toast_id, filter);
}

/* The same, for a shared filter's saved copy (shared_value.c): a carrier only of its shape. */
Tlbf *
tlbf_readonly_value(FunctionCallInfo fcinfo, struct varlena *raw)
{
	return shared_layout_only(fcinfo, readonly_any(fcinfo, raw));
}

/* A filter argument of any format, for reading only. */
TlbfValue
tlbf_arg_value(FunctionCallInfo fcinfo, int argno)
{
	return tlbf_value_of(readonly_any(fcinfo, (struct varlena *) PG_GETARG_POINTER(argno)));
}

/* A private, modifiable copy of a filter argument of any format. */
TlbfValue
tlbf_arg_value_copy(FunctionCallInfo fcinfo, int argno)
{
	return tlbf_value_of(validated(PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(argno)),
								   ERRCODE_INVALID_PARAMETER_VALUE, TLBF_VALUE_ARGUMENT));
}

/* Set the varlena length word from the filter's own layout. */
void
tlbf_set_length(Tlbf *f)
{
	SET_VARSIZE(f, tlbf_size(f));
}

/*
 * tlbf.max_filter_bytes is a limit, not a parameter: a filter that would
 * grow past it makes the call fail (54000), and below it the setting
 * changes nothing.  So the filters tlbf_add, tlbf_union and tlbf_create
 * return depend on their arguments alone, which is what lets them be
 * IMMUTABLE (and be used in UPDATEs on Citus tables).  The core itself is
 * held only to what PostgreSQL can store at all (MaxAllocSize), a constant.
 */
static void
report_over_cap(Size size)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("tlbf filter would exceed tlbf.max_filter_bytes (%zu bytes)",
					tlbf_filter_bytes_cap()),
			 errdetail("It would need %zu bytes.", size),
			 errhint("Raise tlbf.max_filter_bytes, or use a shorter span or a larger error rate.")));
}

/*
 * Growth for the core: at least double, so that a filter filled one key at
 * a time (an aggregate) is copied O(log n) times, but never past the cap.
 */
static void *
resize_in_context(TlbfMemory *memory, void *buffer, size_t size)
{
	Size		cap = tlbf_filter_bytes_cap();
	Size		grown;
	void	   *result;

	if (size > cap)
		report_over_cap(size);
	grown = Max(size, Min(2 * memory->allocated, cap));
	result = repalloc(buffer, grown);
	memory->allocated = grown;
	/* (the new part is untouched yet: a large filter gets huge pages) */
	tlbf_advise_huge_pages(result, grown, false);
	return result;
}

/*
 * The size cap as filters are held to it: tlbf.max_filter_bytes, but no
 * more than palloc and a varlena's length word allow.  The setting takes
 * '1GB', one byte more, so that the documented maximum can be written.
 */
Size
tlbf_filter_bytes_cap(void)
{
	return Min((Size) tlbf_max_filter_bytes, MaxAllocSize);
}

/* Fail if a filter built without the core's growth is over the cap. */
void
tlbf_check_filter_bytes(const Tlbf *f)
{
	if (tlbf_size(f) > tlbf_filter_bytes_cap())
		report_over_cap(tlbf_size(f));
}

/* Describe a palloc'd filter of VARSIZE bytes, of any format, to its core. */
void
tlbf_memory_for(TlbfMemory *memory, const void *value, MemoryContext context)
{
	memory->resize = resize_in_context;
	memory->context = context;
	memory->allocated = VARSIZE(value);
	memory->max_bytes = MaxAllocSize;
	memory->keep_live = false;
}

static void check_status(TlbfStatus status, uint64 truncated_before, uint64 truncated_after,
						 TlbfLimit limit);

/*
 * Report what the core could not do, and warn (once per transaction) when
 * the largest value PostgreSQL stores made it drop live slices: the only
 * way keys are ever lost.
 */
void
tlbf_check_status(TlbfStatus status, uint64 truncated_before, const Tlbf *f)
{
	tlbf_check_status_for(status, truncated_before, f, TLBF_LIMIT_VALUE_SIZE);
}

/* What to do about reaching 'limit' (in an ereport). */
static int
errhint_limit(TlbfLimit limit)
{
	switch (limit)
	{
		case TLBF_LIMIT_VALUE_SIZE:
			return errhint("Use a shorter span or a larger error rate.");
		case TLBF_LIMIT_SLICES:
			return errhint("Union fewer filters, or retire expired slices first (tlbf_retire).");
	}
	return 0;
}

/* The same, naming the limit that was reached and what to do about it. */
void
tlbf_check_status_for(TlbfStatus status, uint64 truncated_before, const Tlbf *f,
					  TlbfLimit limit)
{
	check_status(status, truncated_before, f->truncated, limit);
}

/* The same for a filter of any format, given its count of truncations after. */
void
tlbf_check_core_status(TlbfStatus status, uint64 truncated_before, uint64 truncated_after)
{
	check_status(status, truncated_before, truncated_after, TLBF_LIMIT_VALUE_SIZE);
}

static void
check_status(TlbfStatus status, uint64 truncated_before, uint64 truncated_after,
			 TlbfLimit limit)
{
	static LocalTransactionId warned_in = InvalidLocalTransactionId;

	if (status == TLBF_OUT_OF_MEMORY)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory for a tlbf filter")));
	if (status == TLBF_OVER_LIMIT)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 limit == TLBF_LIMIT_SLICES ?
				 errmsg("tlbf filter would exceed the limit of 65536 slices") :
				 errmsg("tlbf filter would exceed the largest value PostgreSQL stores (1GB)"),
				 errhint_limit(limit)));
	if (truncated_after > truncated_before && TLBF_MY_LOCAL_XID() != warned_in)
	{
		warned_in = TLBF_MY_LOCAL_XID();
		ereport(WARNING,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 limit == TLBF_LIMIT_SLICES ?
				 errmsg("tlbf filter reached the limit of 65536 slices and dropped unexpired slices") :
				 errmsg("tlbf filter reached the largest value PostgreSQL stores (1GB) and dropped unexpired slices"),
				 errdetail("Keys in the dropped slices may now be reported absent; tlbf_info() counts such slices in \"truncated\" (now " UINT64_FORMAT ").",
						   truncated_after),
				 errhint_limit(limit)));
	}
}
