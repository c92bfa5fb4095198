/*-------------------------------------------------------------------------
 *
 * shared_snapshots.c
 *	  Keeping shared filters across restarts: saving them to the table
 *	  tlbf_shared_filters in the extension's schema, loading them back, and
 *	  retiring their expired slices.
 *
 * The maintenance worker of a database with shared filters saves the
 * filters that changed every tlbf.snapshot_interval and when it is told to
 * stop (a clean shutdown).  After a restart, the first process that uses a
 * shared filter in a database (a backend or the worker) loads that
 * database's filters from the table.  After a crash, the adds since the
 * last save are lost; tlbf_shared_rebuild() adds them again from the rows
 * they came from.
 *
 *-------------------------------------------------------------------------
 */
#include "shared_filters.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

/* Columns of tlbf_shared_filters (see the install script). */
#define SNAPSHOT_NAME		1
#define SNAPSHOT_FILTER		2
#define SNAPSHOT_REGION		3

Oid
tlbf_function_schema(FunctionCallInfo fcinfo)
{
	return get_func_namespace(fcinfo->flinfo->fn_oid);
}

/*
 * Load this database's saved filters that shared memory does not hold.
 * Reads the table directly (no privileges needed: whoever may use a filter
 * may cause it to be loaded); every value is validated first.
 */
void
tlbf_shared_restore(Oid schema)
{
	Oid			relid;
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tuple;
	List	   *names = NIL;
	List	   *filters = NIL;
	List	   *regions = NIL;

	relid = get_relname_relid("tlbf_shared_filters", schema);
	if (OidIsValid(relid))
	{
		rel = table_open(relid, AccessShareLock);
		scan = systable_beginscan(rel, InvalidOid, false, GetActiveSnapshot(), 0, NULL);
		while ((tuple = systable_getnext(scan)) != NULL)
		{
			TupleDesc	desc = RelationGetDescr(rel);
			bool		name_null,
						filter_null,
						region_null;
			Datum		name = heap_getattr(tuple, SNAPSHOT_NAME, desc, &name_null);
			Datum		value = heap_getattr(tuple, SNAPSHOT_FILTER, desc, &filter_null);
			Datum		region_bytes = heap_getattr(tuple, SNAPSHOT_REGION, desc, &region_null);
			int64	   *region;
			Tlbf	   *filter;
			TlbfProblem problem;

			if (name_null || filter_null || region_null)
				continue;
			filter = (Tlbf *) PG_DETOAST_DATUM_COPY(value);
			if (!tlbf_validate(filter, VARSIZE(filter), &problem))
			{
				ereport(WARNING,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("saved shared tlbf filter \"%s\" is invalid and was not restored",
								TextDatumGetCString(name)),
						 errdetail("%s.", problem.message)));
				continue;
			}
			region = palloc(sizeof(int64));
			*region = DatumGetInt64(region_bytes);
			names = lappend(names, TextDatumGetCString(name));
			filters = lappend(filters, filter);
			regions = lappend(regions, region);
		}
		systable_endscan(scan);
		table_close(rel, AccessShareLock);
	}
	tlbf_shared_install_restored(names, filters, regions);
}

/*
 * Ready to use shared filters: preloaded, and this database's loaded.  The
 * caller is one of the extension's functions, which live in its schema.
 */
void
tlbf_shared_prepare(FunctionCallInfo fcinfo)
{
	static bool restored = false;	/* a backend never outlives shared memory */

	tlbf_shared_require();
	if (!restored)
	{
		if (!tlbf_shared_restored())
			tlbf_shared_restore(tlbf_function_schema(fcinfo));
		restored = true;
	}
}

/*
 * Write the filters that changed since they were last saved (in the
 * caller's transaction, with SPI connected).  A row that is gone means the
 * filter is being dropped: it is not written back.  Returns how many were
 * written; *saved gets (name, changes) pairs to acknowledge after commit.
 */
int
tlbf_shared_save(Oid schema, List **saved)
{
	List	   *names = tlbf_shared_names(true);
	ListCell   *cell;
	char	   *query = psprintf("UPDATE %s.tlbf_shared_filters "
								 "SET filter = $2, region_bytes = $3, saved_at = pg_catalog.now() "
								 "WHERE name = $1",
								 quote_identifier(get_namespace_name(schema)));
	Oid			types[3] = {TEXTOID, InvalidOid, INT8OID};
	int			written = 0;

	types[1] = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
							   CStringGetDatum("tlbf"), ObjectIdGetDatum(schema));
	foreach(cell, names)
	{
		const char *name = lfirst(cell);
		SharedFilterRef ref;
		Tlbf	   *copy;
		uint64	   *changes;
		Datum		values[3];
		Size		region;

		if (!tlbf_shared_open(name, LW_SHARED, &ref))
			continue;
		copy = palloc(tlbf_size(ref.filter));
		memcpy(copy, ref.filter, tlbf_size(ref.filter));
		changes = palloc(sizeof(uint64));
		*changes = tlbf_shared_changes(&ref);
		region = tlbf_shared_region(&ref);
		tlbf_shared_close(&ref);
		tlbf_set_length(copy);

		values[0] = CStringGetTextDatum(name);
		values[1] = PointerGetDatum(copy);
		values[2] = Int64GetDatum((int64) region);
		if (SPI_execute_with_args(query, 3, types, values, NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "could not save shared tlbf filter \"%s\"", name);
		if (SPI_processed == 1)
		{
			*saved = lappend(*saved, list_make2(pstrdup(name), changes));
			written++;
		}
	}
	return written;
}

/* Retire the expired slices of this database's shared filters. */
void
tlbf_shared_retire(void)
{
	List	   *names = tlbf_shared_names(false);
	TimestampTz now = GetCurrentTimestamp();
	ListCell   *cell;

	foreach(cell, names)
	{
		SharedFilterRef ref;

		if (!tlbf_shared_open(lfirst(cell), LW_EXCLUSIVE, &ref))
			continue;
		if (tlbf_retirable_slices(ref.filter, now) > 0)
		{
			tlbf_drop_expired(ref.filter, now);
			tlbf_shared_mark_dirty(&ref);
		}
		tlbf_shared_close(&ref);
	}
}
