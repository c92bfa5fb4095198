/*-------------------------------------------------------------------------
 *
 * shared_functions.c
 *	  The SQL functions of named filters in shared memory: create, drop,
 *	  add (an atomic test-and-add), contains, get, list and rebuild.
 *
 * Every function first makes sure the library was preloaded and that this
 * database's saved filters are loaded (shared_snapshots.c).  Items are
 * hashed before a filter's lock is taken: nothing but the filter is
 * touched while it is held.
 *
 *-------------------------------------------------------------------------
 */
#include "shared_filters.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(tlbf_shared_create);
PG_FUNCTION_INFO_V1(tlbf_shared_drop);
PG_FUNCTION_INFO_V1(tlbf_shared_add);
PG_FUNCTION_INFO_V1(tlbf_shared_contains);
PG_FUNCTION_INFO_V1(tlbf_shared_get);
PG_FUNCTION_INFO_V1(tlbf_shared_list);
PG_FUNCTION_INFO_V1(tlbf_shared_rebuild);

#define REBUILD_BATCH 1000

static void
prepare(FunctionCallInfo fcinfo)
{
	tlbf_shared_prepare(fcinfo);
}

static char *
filter_name(FunctionCallInfo fcinfo, int argno)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(argno));

	if (name[0] == '\0' || strlen(name) >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("invalid shared tlbf filter name \"%s\"", name),
				 errdetail("A name has 1 to %d bytes.", NAMEDATALEN - 1)));
	return name;
}

/* Run a statement on the snapshot table, naming the extension's schema. */
static uint64
run_on_snapshots(FunctionCallInfo fcinfo, const char *format, int nargs,
				 Oid *types, Datum *values)
{
	char	   *query = psprintf(format,
								 quote_identifier(get_namespace_name(tlbf_function_schema(fcinfo))));
	int			result;
	uint64		processed;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	result = SPI_execute_with_args(query, nargs, types, values, NULL, false, 0);
	if (result < 0)
		elog(ERROR, "could not update the shared tlbf filter snapshots");
	processed = SPI_processed;
	SPI_finish();
	return processed;
}

/*
 * tlbf_shared_create(name, span, error_rate, capacity): a new empty filter
 * in shared memory, and its row in the snapshot table.
 */
Datum
tlbf_shared_create(PG_FUNCTION_ARGS)
{
	char	   *name = filter_name(fcinfo, 0);
	TlbfParams	params;
	TlbfProblem problem;
	int64		capacity = PG_GETARG_INT64(3);
	Tlbf	   *f;
	Size		region;
	Oid			types[3] = {TEXTOID, InvalidOid, INT8OID};
	Datum		values[3];

	prepare(fcinfo);
	params.span = tlbf_interval_usecs(PG_GETARG_INTERVAL_P(1), "span");
	params.error_rate = PG_GETARG_FLOAT8(2);
	params.capacity = capacity < 1 ? 0 : (uint64) capacity;
	params.k = 0;
	params.l = 0;
	params.seed = TLBF_DEFAULT_SEED;
	if (!tlbf_check_params(&params, &problem))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid tlbf parameters: %s", problem.message),
				 problem.hint ? errhint("%s", problem.hint) : 0));

	f = palloc(sizeof(Tlbf));
	tlbf_init(f, &params);
	tlbf_set_length(f);
	region = tlbf_shared_region_for(&params);
	tlbf_shared_create_filter(name, f, region);

	types[1] = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum("tlbf"),
							   ObjectIdGetDatum(tlbf_function_schema(fcinfo)));
	values[0] = CStringGetTextDatum(name);
	values[1] = PointerGetDatum(f);
	values[2] = Int64GetDatum((int64) region);
	run_on_snapshots(fcinfo,
					 "INSERT INTO %s.tlbf_shared_filters (name, filter, region_bytes, saved_at) "
					 "VALUES ($1, $2, $3, pg_catalog.now())",
					 3, types, values);
	PG_RETURN_VOID();
}

/* tlbf_shared_drop(name): the filter and its saved copy go at commit. */
Datum
tlbf_shared_drop(PG_FUNCTION_ARGS)
{
	char	   *name = filter_name(fcinfo, 0);
	Oid			types[1] = {TEXTOID};
	Datum		values[1];

	prepare(fcinfo);
	tlbf_shared_drop_filter(name);
	values[0] = CStringGetTextDatum(name);
	run_on_snapshots(fcinfo, "DELETE FROM %s.tlbf_shared_filters WHERE name = $1",
					 1, types, values);
	PG_RETURN_VOID();
}

/*
 * Insert hashes[0..n-1] seen at times[0..n-1] into shared filter 'name',
 * under one exclusive lock.  Returns whether the first key was absent
 * before: the test and the insertion are one atomic step.
 */
bool
tlbf_shared_insert(FunctionCallInfo fcinfo, const char *name, const TlbfHash *hashes,
				   const TlbfTime *times, int n)
{
	SharedFilterRef ref;
	TlbfMemory	memory;
	TlbfStatus	status = TLBF_OK;
	uint64		truncated_before;
	Tlbf		after;
	bool		absent;

	tlbf_shared_open_or_error(fcinfo, name, LW_EXCLUSIVE, &ref);
	memory.resize = NULL;
	memory.context = NULL;
	memory.allocated = memory.max_bytes = tlbf_shared_region(&ref);
	truncated_before = ref.filter->truncated;
	/* the insertion's cache misses overlap the query's */
	tlbf_prefetch_insert(ref.filter, hashes[0]);
	absent = !tlbf_query(ref.filter, hashes[0], times[0], ref.filter->span);
	for (int i = 0; i < n && status == TLBF_OK; i++)
		status = tlbf_insert(&ref.filter, &memory, hashes[i], times[i]);
	tlbf_shared_mark_dirty(&ref);
	after.truncated = ref.filter->truncated;
	tlbf_shared_close(&ref);

	tlbf_check_status_for(status, truncated_before, &after, "its shared memory region",
						  "Recreate the shared filter with a larger capacity.");
	return absent;
}

/*
 * tlbf_shared_add(name, item, at): add item, seen at 'at'; true when it was
 * not already present.  The test and the insertion happen under one
 * exclusive lock: of sessions adding the same new key at once, exactly one
 * gets true.
 */
Datum
tlbf_shared_add(PG_FUNCTION_ARGS)
{
	char	   *name = filter_name(fcinfo, 0);
	TlbfHash	hash = tlbf_hash_arg(fcinfo, 1, TLBF_DEFAULT_SEED);
	TlbfTime	at = tlbf_time_arg(fcinfo, 2);

	prepare(fcinfo);
	PG_RETURN_BOOL(tlbf_shared_insert(fcinfo, name, &hash, &at, 1));
}

Datum
tlbf_shared_contains(PG_FUNCTION_ARGS)
{
	char	   *name = filter_name(fcinfo, 0);
	TlbfHash	hash = tlbf_hash_arg(fcinfo, 1, TLBF_DEFAULT_SEED);
	TlbfTime	at = tlbf_time_arg(fcinfo, 2);
	SharedFilterRef ref;
	bool		found;

	prepare(fcinfo);
	tlbf_shared_open_or_error(fcinfo, name, LW_SHARED, &ref);
	found = tlbf_query(ref.filter, hash, at, ref.filter->span);
	tlbf_shared_close(&ref);
	PG_RETURN_BOOL(found);
}

/* A consistent copy of an open filter, as a value. */
static Tlbf *
copy_of(const SharedFilterRef *ref)
{
	Size		size = tlbf_size(ref->filter);
	Tlbf	   *copy = palloc(size);

	memcpy(copy, ref->filter, size);
	tlbf_set_length(copy);
	return copy;
}

/* tlbf_shared_get(name): a snapshot of the filter, usable as any tlbf. */
Datum
tlbf_shared_get(PG_FUNCTION_ARGS)
{
	char	   *name = filter_name(fcinfo, 0);
	SharedFilterRef ref;
	Tlbf	   *copy;

	prepare(fcinfo);
	tlbf_shared_open_or_error(fcinfo, name, LW_SHARED, &ref);
	copy = copy_of(&ref);
	tlbf_shared_close(&ref);
	PG_RETURN_POINTER(copy);
}

/* tlbf_shared_list(): this database's filters, with tlbf_info and more. */
Datum
tlbf_shared_list(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TimestampTz now = GetCurrentTransactionStartTimestamp();
	ListCell   *cell;
	List	   *names;

	prepare(fcinfo);
	InitMaterializedSRF(fcinfo, 0);
	tlbf_shared_restore(tlbf_function_schema(fcinfo));	/* e.g. after pg_restore */
	names = tlbf_shared_names(false);
	foreach(cell, names)
	{
		SharedFilterRef ref;
		Tlbf	   *copy;
		Size		region;
		bool		unsaved;
		char	   *extra;
		Datum		values[2];
		bool		nulls[2] = {false, false};

		if (!tlbf_shared_open(lfirst(cell), LW_SHARED, &ref))
			continue;
		copy = copy_of(&ref);
		region = tlbf_shared_region(&ref);
		unsaved = tlbf_shared_unsaved(&ref);
		tlbf_shared_close(&ref);

		extra = psprintf("{\"region_bytes\": %zu, \"unsaved_changes\": %s}",
						 region, unsaved ? "true" : "false");
		values[0] = CStringGetTextDatum(lfirst(cell));
		values[1] = DirectFunctionCall2(jsonb_concat, tlbf_info_jsonb(copy, now),
										DirectFunctionCall1(jsonb_in, CStringGetDatum(extra)));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * tlbf_shared_rebuild(name, query): add every row of the query to the
 * filter, to refill it from the rows it came from after a crash.  The last
 * column is the time (timestamptz); the others are the key, combined as
 * tlbf_reject_recent combines its columns.  Returns the rows added.
 */
Datum
tlbf_shared_rebuild(PG_FUNCTION_ARGS)
{
	char	   *name = filter_name(fcinfo, 0);
	char	   *query = text_to_cstring(PG_GETARG_TEXT_PP(1));
	TlbfHash	hashes[REBUILD_BATCH];
	TlbfTime	times[REBUILD_BATCH];
	ItemHasher **hashers = NULL;
	SPIPlanPtr	plan;
	Portal		cursor;
	int64		added = 0;

	prepare(fcinfo);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = SPI_prepare(query, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "could not prepare the rebuild query: %s", SPI_result_code_string(SPI_result));
	cursor = SPI_cursor_open(NULL, plan, NULL, NULL, true);
	for (;;)
	{
		TupleDesc	desc;
		int			nkeys;
		int			n = 0;

		SPI_cursor_fetch(cursor, true, REBUILD_BATCH);
		if (SPI_processed == 0)
			break;
		desc = SPI_tuptable->tupdesc;
		nkeys = desc->natts - 1;
		if (nkeys < 1 || SPI_gettypeid(desc, desc->natts) != TIMESTAMPTZOID)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("the rebuild query must return the key column(s), then a timestamptz")));
		if (hashers == NULL)
		{
			hashers = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, nkeys * sizeof(ItemHasher *));
			for (int c = 0; c < nkeys; c++)
				hashers[c] = tlbf_item_hasher(SPI_gettypeid(desc, c + 1),
											  TupleDescAttr(desc, c)->attcollation,
											  fcinfo->flinfo->fn_mcxt);
		}
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			Datum		values[FUNC_MAX_ARGS];
			bool		nulls[FUNC_MAX_ARGS];
			bool		time_null;
			Datum		at = SPI_getbinval(SPI_tuptable->vals[i], desc, desc->natts, &time_null);

			if (time_null || TIMESTAMP_NOT_FINITE(DatumGetTimestampTz(at)) || nkeys > FUNC_MAX_ARGS)
				continue;
			for (int c = 0; c < nkeys; c++)
				values[c] = SPI_getbinval(SPI_tuptable->vals[i], desc, c + 1, &nulls[c]);
			hashes[n] = tlbf_hash_key(hashers, values, nulls, nkeys, TLBF_DEFAULT_SEED);
			times[n] = DatumGetTimestampTz(at);
			n++;
		}
		SPI_freetuptable(SPI_tuptable);
		if (n == 0)
			continue;
		(void) tlbf_shared_insert(fcinfo, name, hashes, times, n);
		added += n;
	}
	SPI_cursor_close(cursor);
	SPI_finish();
	PG_RETURN_INT64(added);
}
