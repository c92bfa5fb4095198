/*-------------------------------------------------------------------------
 *
 * scalar_functions.c
 *	  The scalar SQL functions: create, add, contains, retire.
 *
 * Values are never modified in place: tlbf_add and tlbf_retire work on a
 * copy (PostgreSQL may share an argument's memory with a table's buffer).
 * Each takes values of format 3 too (core/tb.h), through its own core.
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"
#include "filter_args.h"
#include "filter_params.h"
#include "inference.h"
#include "key_match.h"
#include "times.h"
#include "value_carry.h"

#include "access/detoast.h"
#include "access/xact.h"

#include "core/tb.h"

PG_FUNCTION_INFO_V1(tlbf_create);
PG_FUNCTION_INFO_V1(tlbf_create_format3);
PG_FUNCTION_INFO_V1(tlbf_create_format2);
PG_FUNCTION_INFO_V1(tlbf_add);
PG_FUNCTION_INFO_V1(tlbf_contains);
PG_FUNCTION_INFO_V1(tlbf_contains_within);
PG_FUNCTION_INFO_V1(tlbf_contains_now);
PG_FUNCTION_INFO_V1(tlbf_retire);
PG_FUNCTION_INFO_V1(tlbf_retirable);
PG_FUNCTION_INFO_V1(tlbf_to_format3);
PG_FUNCTION_INFO_V1(tlbf_format);

/* An empty filter of format 2 of checked parameters. */
static Tlbf *
empty_format2(const TlbfParams *params)
{
	Tlbf	   *f = palloc(sizeof(Tlbf));

	tlbf_init(f, params);
	tlbf_set_length(f);
	return f;
}

/* An empty filter of format 3 (tlbf_format3_params checks the arguments). */
static TbFilter *
empty_format3(const Interval *span, double error_rate, int64 capacity, bool declared)
{
	TbParams	params;
	TbFilter   *f;

	tlbf_format3_params(&params, span, error_rate, capacity, declared);
	f = palloc(tb_lines_offset(0));
	tb_init(f, &params);
	SET_VARSIZE(f, tb_size(f));
	return f;
}

/*
 * tlbf_create(span, error_rate, capacity, k, l): an empty filter.  NULL
 * span, error_rate or capacity give NULL.  Of format 3 (since 1.5), its
 * capacity the first generation's guess; with k and l (the paper's
 * parameters), of format 2.  The arguments are checked as before either
 * way.
 */
Datum
tlbf_create(PG_FUNCTION_ARGS)
{
	TlbfParams	params;

	if (!tlbf_params_from_args(fcinfo, 0, 5, &params))
		PG_RETURN_NULL();
	tlbf_params_check_value(&params);
	if (PG_ARGISNULL(3) && PG_ARGISNULL(4))
		PG_RETURN_POINTER(empty_format3(PG_GETARG_INTERVAL_P(0), PG_GETARG_FLOAT8(1),
										PG_GETARG_INT64(2), false));
	PG_RETURN_POINTER(empty_format2(&params));
}

/*
 * tlbf_create_format2(span, error_rate, capacity): an empty filter of
 * format 2, as tlbf_create made until 1.5 (k and l chosen from
 * error_rate).  NULL arguments give NULL.
 */
Datum
tlbf_create_format2(PG_FUNCTION_ARGS)
{
	TlbfParams	params;

	if (!tlbf_params_from_args(fcinfo, 0, 3, &params))
		PG_RETURN_NULL();
	tlbf_params_check_value(&params);
	PG_RETURN_POINTER(empty_format2(&params));
}

/*
 * tlbf_create_format3(span, error_rate, capacity, declared): an empty filter
 * of format 3 (in development, issue 36; docs/format.md).  With 'declared'
 * the capacity is a promise that sizes every generation, so that filters
 * built apart (by shard, by node) unite bit for bit; else it is the first
 * generation's guess, and later ones follow the rate.  STRICT.
 */
Datum
tlbf_create_format3(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(empty_format3(PG_GETARG_INTERVAL_P(0), PG_GETARG_FLOAT8(1),
									PG_GETARG_INT64(2), PG_GETARG_BOOL(3)));
}

/*
 * tlbf_add for a format 3 copy: the same steps through its core.  Bands
 * that hold no key yet and carry a value that records its kind of key take
 * that kind (a key of another type is converted or refused as the carried
 * value would have it): a value moved by tlbf_to_format3 takes the keys it
 * took before.
 */
static TbFilter *
add_to_format3(FunctionCallInfo fcinfo, TbFilter *f, const Tlbf *carried)
{
	TlbfMemory	memory;
	TlbfStatus	status;
	TlbfHash	hash;
	TlbfKeys	basis;
	TlbfKeys	keys = tb_keys_of(f);
	bool		holds_keys = f->inserted > 0;
	TlbfTime	at = tlbf_insert_time_arg(fcinfo, 2);
	uint64		truncated = f->truncated;

	if (!holds_keys && carried != NULL && carried->inserted > 0 && carried->key_fields > 0)
	{
		keys = tlbf_keys_of(carried);
		holds_keys = true;
	}
	(void) tlbf_key_arg_hash_shared(fcinfo, 1, keys, holds_keys, true, &hash, &basis);
	tb_record_keys(f, basis);
	tlbf_memory_for(&memory, f, CurrentMemoryContext);
	status = tb_insert(&f, &memory, hash, at);
	tlbf_check_core_status(status, truncated, f->truncated);
	SET_VARSIZE(f, tb_size(f));
	return f;
}

/*
 * tlbf_add(f, item, at): a new filter that also holds item.  A NULL item or
 * time leaves the filter as it was, as the aggregate skips such rows.
 */
Datum
tlbf_add(PG_FUNCTION_ARGS)
{
	TlbfMemory	memory;
	TlbfStatus	status;
	TlbfHash	hash;
	TlbfTime	at;
	uint64		truncated;
	TlbfValue	v;
	Tlbf	   *f;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));

	v = tlbf_arg_value_copy(fcinfo, 0);
	if (v.v3 != NULL && v.carried == NULL)
		PG_RETURN_POINTER(add_to_format3(fcinfo, v.v3, NULL));
	if (v.v3 != NULL)
	{
		/* to the bands; the carried value kept while it has keys of the span */
		TbFilter   *bands = add_to_format3(fcinfo, tlbf_bands_copy(v.v3), v.carried);

		PG_RETURN_POINTER(tlbf_carry(bands, bands->newest == TLBF_NEVER ? v.carried :
									 tlbf_carried_after(v.carried, bands->newest)));
	}
	f = v.v2;
	at = tlbf_insert_time_arg(fcinfo, 2);
	hash = tlbf_key_arg_hash_for_add(fcinfo, 1, f);
	tlbf_memory_for(&memory, f, CurrentMemoryContext);
	truncated = f->truncated;
	status = tlbf_insert(&f, &memory, hash, at);
	tlbf_check_status(status, truncated, f);
	tlbf_set_length(f);
	PG_RETURN_POINTER(f);
}

/*
 * Does the filter hold the key of argument 1, added within 'window' before
 * at?  A key that equals none of the kind the filter holds is not there.
 */
static bool
holds_key(FunctionCallInfo fcinfo, TlbfValue v, TlbfTime at, int64 window)
{
	TlbfHash	hash;

	if (v.v3 != NULL)
		return (tlbf_key_arg_hash_query(fcinfo, 1, tb_keys_of(v.v3), v.v3->inserted > 0, &hash) &&
				tb_query(v.v3, hash, at, window)) ||
			/* a carried value hashes the key its own way */
			(v.carried != NULL &&
			 tlbf_key_arg_hash_query(fcinfo, 1, tlbf_keys_of(v.carried), v.carried->inserted > 0,
									 &hash) &&
			 tlbf_query(v.carried, hash, at, window));
	return tlbf_key_arg_hash_query(fcinfo, 1, tlbf_keys_of(v.v2), v.v2->inserted > 0, &hash) &&
		tlbf_query(v.v2, hash, at, window);
}

static int64
span_of(TlbfValue v)
{
	return v.v3 != NULL ? v.v3->span : v.v2->span;
}

/*
 * tlbf_contains(f, item, at): was item added within the span before at (or
 * is it a false positive)?  Of formats 1 and 2, a key added after 'at' may
 * be found (the filter keeps no time per key); of format 3, one added in a
 * later generation is not.
 */
Datum
tlbf_contains(PG_FUNCTION_ARGS)
{
	TlbfValue	v = tlbf_arg_value(fcinfo, 0);
	TlbfTime	at = tlbf_time_arg(fcinfo, 2);

	PG_RETURN_BOOL(holds_key(fcinfo, v, at, span_of(v)));
}

/*
 * tlbf_contains(f, item, at, within): the same, trusting only slices written
 * within 'within' before at: no false negatives for keys added within it.
 */
Datum
tlbf_contains_within(PG_FUNCTION_ARGS)
{
	TlbfValue	v = tlbf_arg_value(fcinfo, 0);
	TlbfTime	at = tlbf_time_arg(fcinfo, 2);
	int64		within = tlbf_window_arg(fcinfo, 3, span_of(v));

	PG_RETURN_BOOL(holds_key(fcinfo, v, at, within));
}

/* f @> item: contains at the transaction's start time, like now(). */
Datum
tlbf_contains_now(PG_FUNCTION_ARGS)
{
	TlbfValue	v = tlbf_arg_value(fcinfo, 0);

	PG_RETURN_BOOL(holds_key(fcinfo, v, GetCurrentTransactionStartTimestamp(), span_of(v)));
}

/*
 * tlbf_retire(f, at): f without the slices expired at 'at'.  Answers for
 * times at or after 'at' do not change.  A filter with nothing to drop is
 * returned as it is, without a copy.
 */
Datum
tlbf_retire(PG_FUNCTION_ARGS)
{
	TlbfValue	v = tlbf_arg_value(fcinfo, 0);
	TlbfTime	at = tlbf_time_arg(fcinfo, 1);
	Tlbf	   *f = v.v2;
	Tlbf	   *copy;

	if (v.v3 != NULL)
	{
		TbFilter   *blocks;

		if (!tb_retirable(v.v3, at) && !tb_releasable(v.v3) &&
			(v.carried == NULL || !tlbf_carried_retirable(v.carried, at)))
			PG_RETURN_DATUM(PG_GETARG_DATUM(0));
		blocks = tlbf_bands_copy(v.v3);
		tb_retire(blocks, at);
		/* nothing left: the header alone (tb_release) */
		tb_release(blocks);
		SET_VARSIZE(blocks, tb_size(blocks));
		if (v.carried != NULL)
			PG_RETURN_POINTER(tlbf_carry(blocks, tlbf_carried_after(v.carried, at)));
		PG_RETURN_POINTER(blocks);
	}
	if (tlbf_retirable_slices(f, at) == 0)
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	copy = palloc(VARSIZE(f));
	memcpy(copy, f, VARSIZE(f));
	tlbf_drop_expired(copy, at);
	tlbf_set_length(copy);
	PG_RETURN_POINTER(copy);
}

/*
 * The value's header and slice directory, validated, without its bits: a
 * TOASTed filter is fetched (and decompressed) only as far as needed.  NULL
 * for a value of format 3.
 */
static Tlbf *
directory_of(Datum value)
{
	Size		size = toast_raw_datum_size(value);
	Size		wanted = Min(size, sizeof(Tlbf));
	struct varlena *prefix = PG_DETOAST_DATUM_SLICE(value, 0, wanted - VARHDRSZ);
	TlbfProblem problem;

	/* format 3: NULL, for the caller to read it whole */
	if (VARSIZE(prefix) >= offsetof(Tlbf, hash_scheme) &&
		((Tlbf *) prefix)->version == TB_FORMAT_VERSION)
		return NULL;
	/* with the header at hand, fetch the directory it announces */
	if (VARSIZE(prefix) == sizeof(Tlbf))
	{
		uint32		nslices = Min(((Tlbf *) prefix)->nslices, TLBF_MAX_SLICES);

		wanted = Min(size, tlbf_layout_bytes(nslices, 0));
		if (wanted > VARSIZE(prefix))
			prefix = PG_DETOAST_DATUM_SLICE(value, 0, wanted - VARHDRSZ);
	}
	if (!tlbf_validate_directory(prefix, VARSIZE(prefix), size, &problem))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid tlbf value in argument"),
				 errdetail("%s.", problem.message)));
	return (Tlbf *) prefix;
}

/*
 * tlbf_retirable(f, at): would tlbf_retire(f, at) drop anything?  Reads
 * only the slice directory, so that the maintenance worker can skip the
 * rows with nothing to retire cheaply.
 */
Datum
tlbf_retirable(PG_FUNCTION_ARGS)
{
	TlbfTime	at = tlbf_time_arg(fcinfo, 1);
	Tlbf	   *f = directory_of(PG_GETARG_DATUM(0));

	/* (format 3 is read whole: its directory says nothing without its size checked) */
	if (f == NULL)
	{
		TlbfValue	v = tlbf_arg_value(fcinfo, 0);

		PG_RETURN_BOOL(tb_retirable(v.v3, at) || tb_releasable(v.v3) ||
					   (v.carried != NULL && tlbf_carried_retirable(v.carried, at)));
	}
	PG_RETURN_BOOL(tlbf_retirable_slices(f, at) > 0);
}

/*
 * tlbf_to_format3(f): f as a value of format 3.  One of format 3 is
 * returned as it is; one of format 1 or 2 becomes empty bands of format 3
 * carrying it while it has keys (value_carry.c): every key it holds is
 * answered as before, new keys go to the bands, and within one span it is
 * a plain value of format 3.  The maintenance pass applies it to the
 * columns it tends (tlbf.maintenance_to_format3).
 */
Datum
tlbf_to_format3(PG_FUNCTION_ARGS)
{
	TlbfValue	v = tlbf_arg_value(fcinfo, 0);

	if (v.v3 != NULL)
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	PG_RETURN_POINTER(tlbf_format3_carrying(v.v2));
}

/*
 * tlbf_format(f): the format of a value, 1, 2 or 3, from its first bytes
 * alone (a TOASTed value is not read whole): the maintenance pass asks it
 * of every row it visits.  The type's input functions checked the rest.
 */
Datum
tlbf_format(PG_FUNCTION_ARGS)
{
	const Size	needed = offsetof(Tlbf, hash_scheme) - VARHDRSZ;
	struct varlena *head = PG_DETOAST_DATUM_SLICE(PG_GETARG_DATUM(0), 0, needed);
	Tlbf		header;

	if (VARSIZE_ANY_EXHDR(head) < needed)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid tlbf value"),
				 errdetail("Value is too short for a tlbf header.")));
	memcpy((char *) &header + VARHDRSZ, VARDATA_ANY(head), needed);
	if (header.magic != TLBF_MAGIC ||
		(header.version != TLBF_FORMAT_VERSION_1 && header.version != TLBF_FORMAT_VERSION &&
		 header.version != TB_FORMAT_VERSION))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid tlbf value"),
				 errdetail("Its header is not a tlbf value's.")));
	PG_RETURN_INT32(header.version);
}
