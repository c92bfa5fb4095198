/*-------------------------------------------------------------------------
 *
 * maintenance.c
 *	  One maintenance pass: for every tlbf column registered with
 *	  tlbf_maintain(), rewrite the rows whose filter has expired slices with
 *	  tlbf_retire(), so that filters nobody writes to any more give their
 *	  dead bits back.
 *
 * The background worker runs a pass with one transaction per batch, as the
 * owner of each table; tlbf_maintenance_run() runs the same pass by hand,
 * in the caller's transaction and with the caller's privileges.
 *
 * A table is walked in ranges of blocks (TID range scans), each range in
 * batches of at most BATCH_ROWS rows locked with FOR UPDATE SKIP LOCKED:
 * rows a user holds are skipped and done on a later pass, and no user row
 * waits long for us.  Only rows for which tlbf_retirable() is true are
 * updated, so a row with nothing to retire never gets a new version.
 * Names come from the catalogs by OID and are quoted.
 *
 *-------------------------------------------------------------------------
 */
#include "shared_filters.h"

#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

#define BLOCKS_PER_RANGE	32
#define BATCH_ROWS			200

PG_FUNCTION_INFO_V1(tlbf_maintenance_run);

typedef struct Registration
{
	Oid			relid;
	char		column[NAMEDATALEN];
	int64		rows_rewritten;
	int64		bytes_freed;
	bool		done;			/* processed (not stale, not skipped) */
} Registration;

typedef struct Pass
{
	bool		own_transactions;	/* the worker: a transaction per batch */
	Oid			schema;			/* the extension's schema */
	char	   *schema_name;	/* quoted */
	Oid			tlbf_type;
} Pass;

static void
begin_step(const Pass *pass)
{
	if (pass->own_transactions)
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
	}
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
}

static void
end_step(const Pass *pass)
{
	SPI_finish();
	if (pass->own_transactions)
	{
		PopActiveSnapshot();
		CommitTransactionCommand();
		pgstat_report_stat(false);
	}
}

/* The registrations, copied into 'context'. */
static List *
read_registrations(const Pass *pass, MemoryContext context)
{
	List	   *result = NIL;
	char	   *query = psprintf("SELECT tbl::pg_catalog.oid, col FROM %s.tlbf_maintained ORDER BY 1, 2",
								 pass->schema_name);

	begin_step(pass);
	if (SPI_execute(query, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the tlbf registrations");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		Registration *r = MemoryContextAllocZero(context, sizeof(Registration));
		MemoryContext old;
		bool		isnull;

		r->relid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
		strlcpy(r->column,
				NameStr(*DatumGetName(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull))),
				NAMEDATALEN);
		/* the list must outlive SPI's memory, like its elements */
		old = MemoryContextSwitchTo(context);
		result = lappend(result, r);
		MemoryContextSwitchTo(old);
	}
	end_step(pass);
	return result;
}

/* Is the registration still a plain table with a tlbf column of that name? */
static bool
registration_is_valid(const Pass *pass, const Registration *r)
{
	AttrNumber	attnum;

	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(r->relid)) ||
		get_rel_relkind(r->relid) != RELKIND_RELATION)
		return false;
	attnum = get_attnum(r->relid, r->column);
	return attnum != InvalidAttrNumber && get_atttype(r->relid, attnum) == pass->tlbf_type;
}

static void
forget_registration(const Pass *pass, const Registration *r)
{
	Oid			types[2] = {OIDOID, NAMEOID};
	NameData	column;
	Datum		values[2];
	char	   *query = psprintf("DELETE FROM %s.tlbf_maintained WHERE tbl = $1 AND col = $2",
								 pass->schema_name);

	namestrcpy(&column, r->column);
	values[0] = ObjectIdGetDatum(r->relid);
	values[1] = NameGetDatum(&column);
	if (SPI_execute_with_args(query, 2, types, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not remove a tlbf registration");
}

/*
 * One batch: retire at most BATCH_ROWS rows of blocks [first, last).
 * Returns how many rows it rewrote.
 */
static uint64
retire_batch(const Pass *pass, Registration *r, BlockNumber first, BlockNumber last)
{
	const char *table = quote_qualified_identifier(get_namespace_name(get_rel_namespace(r->relid)),
												   get_rel_name(r->relid));
	const char *column = quote_identifier(r->column);
	char	   *query;
	ItemPointerData from,
				to;
	Oid			types[2] = {TIDOID, TIDOID};
	Datum		values[2];

	query = psprintf("WITH batch AS ("
					 "  SELECT ctid, pg_catalog.pg_column_size(%2$s) AS old_bytes FROM %1$s"
					 "  WHERE ctid >= $1 AND ctid < $2 AND %2$s IS NOT NULL"
					 "    AND %3$s.tlbf_retirable(%2$s, pg_catalog.now())"
					 "  LIMIT %4$d FOR UPDATE SKIP LOCKED) "
					 "UPDATE %1$s AS t SET %2$s = %3$s.tlbf_retire(t.%2$s, pg_catalog.now()) "
					 "FROM batch WHERE t.ctid = batch.ctid "
					 "RETURNING batch.old_bytes - pg_catalog.pg_column_size(t.%2$s)",
					 table, column, pass->schema_name, BATCH_ROWS);
	ItemPointerSet(&from, first, 0);
	ItemPointerSet(&to, last, 0);
	values[0] = PointerGetDatum(&from);
	values[1] = PointerGetDatum(&to);

	if (SPI_execute_with_args(query, 2, types, values, NULL, false, 0) != SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "could not retire tlbf slices in %s", table);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		freed = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
			r->bytes_freed += DatumGetInt32(freed);
	}
	r->rows_rewritten += SPI_processed;
	return SPI_processed;
}

/*
 * The worker runs each table's batches as the table's owner, in a
 * restricted operation with a safe search_path, as autovacuum does: a
 * trigger on the table must not run with the worker's privileges.
 */
static void
retire_batch_as_owner(const Pass *pass, Registration *r, BlockNumber first,
					  BlockNumber last, uint64 *rewritten)
{
	Oid			saved_user;
	int			saved_context;
	int			nest_level;
	HeapTuple	class_tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(r->relid));
	Oid			owner;

	if (!HeapTupleIsValid(class_tuple))
		return;
	owner = ((Form_pg_class) GETSTRUCT(class_tuple))->relowner;
	ReleaseSysCache(class_tuple);

	GetUserIdAndSecContext(&saved_user, &saved_context);
	SetUserIdAndSecContext(owner, saved_context | SECURITY_RESTRICTED_OPERATION);
	nest_level = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	*rewritten = retire_batch(pass, r, first, last);
	AtEOXact_GUC(false, nest_level);
	SetUserIdAndSecContext(saved_user, saved_context);
}

/* Every batch of one registered column. */
static void
maintain_column(const Pass *pass, Registration *r)
{
	BlockNumber nblocks;
	Relation	rel;

	begin_step(pass);
	if (!registration_is_valid(pass, r))
	{
		forget_registration(pass, r);
		end_step(pass);
		return;
	}
	if (!pass->own_transactions &&
		pg_class_aclcheck(r->relid, GetUserId(), ACL_SELECT | ACL_UPDATE) != ACLCHECK_OK)
	{
		end_step(pass);
		return;
	}
	rel = table_open(r->relid, AccessShareLock);
	nblocks = RelationGetNumberOfBlocks(rel);
	table_close(rel, AccessShareLock);
	end_step(pass);
	r->done = true;

	for (BlockNumber first = 0; first < nblocks; first += BLOCKS_PER_RANGE)
	{
		BlockNumber last = first + Min(BLOCKS_PER_RANGE, nblocks - first);
		uint64		rewritten;

		do
		{
			CHECK_FOR_INTERRUPTS();
			if (pass->own_transactions && tlbf_worker_should_leave())
				return;			/* the worker is to leave: go on next time */
			begin_step(pass);
			if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(r->relid)))
			{
				end_step(pass);
				return;			/* dropped meanwhile: the next pass forgets it */
			}
			if (pass->own_transactions)
				retire_batch_as_owner(pass, r, first, last, &rewritten);
			else
				rewritten = retire_batch(pass, r, first, last);
			end_step(pass);
		} while (rewritten == BATCH_ROWS);
	}
}

/*
 * In a worker, inside PG_CATCH: log the error, roll back the transaction it
 * happened in and carry on in 'context'.
 */
void
tlbf_report_and_abort(MemoryContext context)
{
	MemoryContextSwitchTo(context);
	HOLD_INTERRUPTS();
	EmitErrorReport();
	AbortCurrentTransaction();
	FlushErrorState();
	RESUME_INTERRUPTS();
}

/*
 * The worker keeps going after a failure in one table (a lock timeout, a
 * trigger that raises): it reports the error, rolls back that batch and
 * moves on to the next registration.  By hand, errors go to the caller.
 */
static void
maintain_column_safely(const Pass *pass, Registration *r)
{
	MemoryContext context = CurrentMemoryContext;

	if (!pass->own_transactions)
	{
		maintain_column(pass, r);
		return;
	}
	PG_TRY();
	{
		maintain_column(pass, r);
	}
	PG_CATCH();
	{
		tlbf_report_and_abort(context);
	}
	PG_END_TRY();
}

/* The schema tlbf is installed in, or InvalidOid (SPI must be connected). */
Oid
tlbf_extension_schema(void)
{
	bool		isnull;

	if (SPI_execute("SELECT extnamespace FROM pg_catalog.pg_extension WHERE extname = 'tlbf'",
					true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look for the tlbf extension");
	if (SPI_processed == 0)
		return InvalidOid;
	return DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * Run one pass over the current database.  Returns the registrations with
 * what was done for each, allocated in 'context'; NIL if the extension is
 * not installed (or too old to have registrations).
 */
List *
tlbf_maintenance_pass(bool own_transactions, MemoryContext context)
{
	Pass		pass;
	List	   *registrations;
	ListCell   *cell;
	bool		installed;

	pass.own_transactions = own_transactions;
	begin_step(&pass);
	pass.schema = tlbf_extension_schema();
	installed = OidIsValid(pass.schema) &&
		OidIsValid(get_relname_relid("tlbf_maintained", pass.schema));
	if (installed)
	{
		pass.schema_name = MemoryContextStrdup(context,
											   quote_identifier(get_namespace_name(pass.schema)));
		pass.tlbf_type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
										 CStringGetDatum("tlbf"),
										 ObjectIdGetDatum(pass.schema));
	}
	end_step(&pass);
	if (!installed)
		return NIL;

	registrations = read_registrations(&pass, context);
	foreach(cell, registrations)
		maintain_column_safely(&pass, (Registration *) lfirst(cell));

	/* and the shared filters of this database, when the server has them */
	if (tlbf_shared_available())
	{
		begin_step(&pass);
		tlbf_shared_restore(pass.schema);
		tlbf_shared_retire();
		end_step(&pass);
	}
	return registrations;
}

/*
 * tlbf_maintenance_run(): one pass by hand, in this transaction, over the
 * registered tables this user may update.
 */
Datum
tlbf_maintenance_run(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	List	   *registrations;
	ListCell   *cell;

	InitMaterializedSRF(fcinfo, 0);
	registrations = tlbf_maintenance_pass(false, CurrentMemoryContext);
	foreach(cell, registrations)
	{
		Registration *r = (Registration *) lfirst(cell);
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};
		NameData	column;

		if (!r->done)
			continue;
		namestrcpy(&column, r->column);
		values[0] = ObjectIdGetDatum(r->relid);
		values[1] = NameGetDatum(&column);
		values[2] = Int64GetDatum(r->rows_rewritten);
		values[3] = Int64GetDatum(r->bytes_freed);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
