/*-------------------------------------------------------------------------
 *
 * maintenance.c
 *	  One maintenance pass: for every tlbf column registered with
 *	  tlbf_maintain(), rewrite the rows whose filter has expired slices with
 *	  tlbf_retire(), so that filters nobody writes to any more give their
 *	  dead bits back; and retire the expired slices of the database's
 *	  shared filters.
 *
 * A maintenance worker runs a pass with one transaction per batch;
 * tlbf_maintenance_run() runs the same pass by hand, in the caller's
 * transaction, over the registered tables the caller may update.  Either
 * way every batch runs as the table's owner, in a security-restricted
 * operation with a safe search_path (safe_sql.c): a trigger, an index
 * expression or a default on the table runs with its owner's rights,
 * never with the worker's or the caller's.  The pass's own bookkeeping
 * (reading registrations, forgetting stale ones, recording what it did in
 * tlbf_maintenance_stats) names every object and operator with its
 * schema, and the rows it writes are written as their table's owner.
 *
 * With tlbf.maintenance_to_format3 (the default) a pass also moves the
 * values of formats 1 and 2 it finds to format 3 (tlbf_to_format3): each
 * becomes a value of format 3 carrying the old one, which answers as
 * before and is dropped once its keys have expired, so that a tended
 * column is of format 3 within one span of an update to 1.5.
 *
 * A table is walked in ranges of blocks (TID range scans), each range in
 * batches of at most BATCH_ROWS rows locked with FOR UPDATE SKIP LOCKED:
 * rows a user holds are skipped and done on a later pass, and no user row
 * waits long for us.  Only rows for which tlbf_retirable() is true are
 * updated, so a row with nothing to retire never gets a new version.
 *
 * A Citus table keeps its rows in shards on other nodes: its table here is
 * empty.  Its pass reads where the shards are now (so it follows them when
 * they move) and sends each placement the same batches through Citus
 * (master_run_on_worker), connected as the table's owner; each batch
 * commits there on its own.  Slices are retired as of this node's clock,
 * rounded down to the second (retiring as of an earlier time retires
 * less, never a live slice).
 *
 *-------------------------------------------------------------------------
 */
#include "background.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "citus_tables.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "safe_sql.h"
#include "settings.h"
#include "shared_store.h"
#include "storage/bufmgr.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

#define BLOCKS_PER_RANGE	32
#define BATCH_ROWS			200
#define MAX_BATCHES_PER_RANGE \
	(BLOCKS_PER_RANGE * MaxHeapTuplesPerPage / BATCH_ROWS + 1)
/* a round trip per batch: larger ranges and batches on other nodes */
#define REMOTE_BLOCKS_PER_RANGE	1024
#define REMOTE_BATCH_ROWS		1000
#define MAX_REMOTE_BATCHES_PER_RANGE \
	(REMOTE_BLOCKS_PER_RANGE * MaxHeapTuplesPerPage / REMOTE_BATCH_ROWS + 1)

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
	const PassControl *control;
	MemoryContext context;		/* for what outlives a step */
	char	   *schema_name;	/* the extension's, quoted */
	Oid			tlbf_type;
	Oid			registry;		/* tlbf_maintained */
	Oid			stats;			/* tlbf_maintenance_stats, if installed */
} Pass;

static void
begin_step(const Pass *pass)
{
	if (pass->control->own_transactions)
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		/* before any of its tables, as DROP EXTENSION locks them (safe_sql.c) */
		(void) tlbf_lock_extension(true);
	}
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
}

static void
end_step(const Pass *pass)
{
	SPI_finish();
	if (pass->control->own_transactions)
	{
		PopActiveSnapshot();
		CommitTransactionCommand();
		pgstat_report_stat(false);
		/* a commit leaves us in TopMemoryContext */
		MemoryContextSwitchTo(pass->context);
	}
}

static bool
should_stop(const Pass *pass)
{
	CHECK_FOR_INTERRUPTS();
	return pass->control->should_stop != NULL && pass->control->should_stop();
}

/* Run one of the pass's own statements as the owner of table 'relid'. */
static void
write_as_owner(Oid relid, const char *query, int nargs, Oid *types, Datum *values)
{
	RoleSwitch	role;
	Oid			owner = tlbf_relation_owner(relid);

	/* dropped since the pass began (DROP EXTENSION meanwhile): nothing to write */
	if (!OidIsValid(owner))
		return;
	tlbf_become(owner, &role);
	if (tlbf_safe_execute(query, nargs, types, values, false, 0) < 0)
		elog(ERROR, "could not record tlbf maintenance");
	tlbf_unbecome(&role);
}

/* The registrations, copied into 'context'. */
static List *
read_registrations(const Pass *pass, MemoryContext context)
{
	List	   *result = NIL;
	char	   *query = psprintf("SELECT tbl::pg_catalog.oid, col FROM %s.tlbf_maintained ORDER BY 1, 2",
								 pass->schema_name);

	begin_step(pass);
	if (tlbf_safe_execute(query, 0, NULL, NULL, true, 0) != SPI_OK_SELECT)
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

	namestrcpy(&column, r->column);
	values[0] = ObjectIdGetDatum(r->relid);
	values[1] = NameGetDatum(&column);
	write_as_owner(pass->registry,
				   psprintf("DELETE FROM %s.tlbf_maintained "
							"WHERE tbl::pg_catalog.oid OPERATOR(pg_catalog.=) $1 "
							"AND col OPERATOR(pg_catalog.=) $2",
							pass->schema_name),
				   2, types, values);
}

/* Forget what passes did for columns no longer registered. */
static void
forget_unregistered_stats(const Pass *pass)
{
	if (!OidIsValid(pass->stats))
		return;
	begin_step(pass);
	write_as_owner(pass->stats,
				   psprintf("DELETE FROM %1$s.tlbf_maintenance_stats s WHERE NOT EXISTS "
							"(SELECT FROM %1$s.tlbf_maintained m "
							" WHERE m.tbl::pg_catalog.oid OPERATOR(pg_catalog.=) s.tbl::pg_catalog.oid "
							" AND m.col OPERATOR(pg_catalog.=) s.col)",
							pass->schema_name),
				   0, NULL, NULL);
	end_step(pass);
}

/* Record what a pass did for a registration (or its error). */
static void
record_stats(const Pass *pass, const Registration *r, const char *error)
{
	Oid			types[5] = {OIDOID, NAMEOID, INT8OID, INT8OID, TEXTOID};
	NameData	column;
	Datum		values[5];

	if (!OidIsValid(pass->stats))
		return;
	namestrcpy(&column, r->column);
	values[0] = ObjectIdGetDatum(r->relid);
	values[1] = NameGetDatum(&column);
	values[2] = Int64GetDatum(r->rows_rewritten);
	values[3] = Int64GetDatum(r->bytes_freed);
	values[4] = CStringGetTextDatum(error ? error : "");
	write_as_owner(pass->stats,
				   psprintf(error == NULL ?
							"INSERT INTO %1$s.tlbf_maintenance_stats AS s "
							"(tbl, col, last_pass, rows_rewritten, bytes_freed) "
							"VALUES ($1::pg_catalog.regclass, $2, pg_catalog.now(), $3, $4) "
							"ON CONFLICT (tbl, col) DO UPDATE SET last_pass = excluded.last_pass, "
							"rows_rewritten = s.rows_rewritten OPERATOR(pg_catalog.+) excluded.rows_rewritten, "
							"bytes_freed = s.bytes_freed OPERATOR(pg_catalog.+) excluded.bytes_freed" :
							"INSERT INTO %1$s.tlbf_maintenance_stats AS s "
							"(tbl, col, last_error, last_error_at) "
							"VALUES ($1::pg_catalog.regclass, $2, $5, pg_catalog.now()) "
							"ON CONFLICT (tbl, col) DO UPDATE SET last_error = excluded.last_error, "
							"last_error_at = excluded.last_error_at",
							pass->schema_name),
				   5, types, values);
}

/*
 * Which rows of 'column' a batch rewrites, as of 'at' (SQL): those with
 * slices to retire, and with tlbf.maintenance_to_format3 those of formats 1
 * and 2, which it moves to format 3 (tlbf_to_format3: a value of format 3
 * carrying the old one until its keys expire).
 */
static char *
rows_to_rewrite(const Pass *pass, const char *column, const char *at)
{
	if (!tlbf_maintenance_to_format3)
		return psprintf("%2$s.tlbf_retirable(%1$s, %3$s)", column, pass->schema_name, at);
	return psprintf("(%2$s.tlbf_retirable(%1$s, %3$s)"
					" OR %2$s.tlbf_format(%1$s) OPERATOR(pg_catalog.<) 3)",
					column, pass->schema_name, at);
}

/* What a batch writes for 'value', as of 'at' (SQL). */
static char *
rewritten(const Pass *pass, const char *value, const char *at)
{
	if (!tlbf_maintenance_to_format3)
		return psprintf("%2$s.tlbf_retire(%1$s, %3$s)", value, pass->schema_name, at);
	return psprintf("%2$s.tlbf_to_format3(%2$s.tlbf_retire(%1$s, %3$s))",
					value, pass->schema_name, at);
}

/*
 * One batch: retire at most BATCH_ROWS rows of blocks [first, last), as the
 * table's owner.  Returns how many rows it rewrote.
 */
static uint64
retire_batch(const Pass *pass, Registration *r, Oid owner, BlockNumber first,
			 BlockNumber last)
{
	const char *table = quote_qualified_identifier(get_namespace_name(get_rel_namespace(r->relid)),
												   get_rel_name(r->relid));
	const char *column = quote_identifier(r->column);
	char	   *query;
	ItemPointerData from,
				to;
	Oid			types[2] = {TIDOID, TIDOID};
	Datum		values[2];
	RoleSwitch	role;

	query = psprintf("WITH batch AS ("
					 "  SELECT ctid, pg_catalog.pg_column_size(%2$s) AS old_bytes FROM ONLY %1$s"
					 "  WHERE ctid OPERATOR(pg_catalog.>=) $1 AND ctid OPERATOR(pg_catalog.<) $2"
					 "    AND %2$s IS NOT NULL"
					 "    AND %4$s"
					 "  LIMIT %3$d FOR UPDATE SKIP LOCKED) "
					 "UPDATE ONLY %1$s AS t SET %2$s = %5$s "
					 "FROM batch WHERE t.ctid OPERATOR(pg_catalog.=) batch.ctid "
					 "RETURNING batch.old_bytes OPERATOR(pg_catalog.-) pg_catalog.pg_column_size(t.%2$s)",
					 table, column, BATCH_ROWS,
					 rows_to_rewrite(pass, column, "pg_catalog.now()"),
					 rewritten(pass, psprintf("t.%s", column), "pg_catalog.now()"));
	ItemPointerSet(&from, first, 0);
	ItemPointerSet(&to, last, 0);
	values[0] = PointerGetDatum(&from);
	values[1] = PointerGetDatum(&to);

	tlbf_become(owner, &role);
	if (tlbf_safe_execute(query, 2, types, values, false, 0) < 0)
		elog(ERROR, "could not retire tlbf slices in %s", table);
	tlbf_unbecome(&role);
	/* a rule on the table may have replaced the UPDATE and its RETURNING */
	if (SPI_tuptable != NULL && SPI_tuptable->tupdesc->natts == 1 &&
		SPI_gettypeid(SPI_tuptable->tupdesc, 1) == INT4OID)
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
 * May the caller of a pass by hand have this table's rows rewritten?  It
 * needs SELECT and UPDATE on the table, each: pg_class_aclcheck() given
 * both bits at once passes with either one.
 */
static bool
caller_may_rewrite(Oid relid)
{
	return pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) == ACLCHECK_OK &&
		pg_class_aclcheck(relid, GetUserId(), ACL_UPDATE) == ACLCHECK_OK;
}

/*
 * Run 'command' on the node of placement 'p' as role 'owner', through
 * Citus, and return its one value; an error there is raised here.
 */
static char *
run_on_node(const CitusPlacement *p, Oid owner, const char *command)
{
	Oid			types[3] = {TEXTOID, INT4OID, TEXTOID};
	Datum		values[3];
	RoleSwitch	role;
	bool		isnull;
	bool		success;
	char	   *result;

	values[0] = CStringGetTextDatum(p->node);
	values[1] = Int32GetDatum(p->port);
	values[2] = CStringGetTextDatum(command);
	tlbf_become(owner, &role);
	if (tlbf_safe_execute("SELECT success, result FROM pg_catalog.master_run_on_worker("
						  "ARRAY[$1], ARRAY[$2], ARRAY[$3], false)",
						  3, types, values, false, 0) != SPI_OK_SELECT || SPI_processed != 1)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("could not reach node %s:%d", p->node, p->port)));
	tlbf_unbecome(&role);
	success = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	result = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
	if (isnull || !success)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("tlbf maintenance of shard %s on node %s:%d failed",
						p->shard_name, p->node, p->port),
				 result ?
				 errdetail("Remote error: %s", result) :
				 errdetail("The node returned no result.")));
	return result ? result : "";
}

/*
 * One batch on a placement: retire at most REMOTE_BATCH_ROWS rows of
 * blocks [first, last) as of 'at'.  Returns how many rows it rewrote.
 */
static uint64
retire_remote_batch(const Pass *pass, Registration *r, const CitusPlacement *p,
					Oid owner, const char *at, BlockNumber first, BlockNumber last)
{
	const char *column = quote_identifier(r->column);
	long long	rows = 0;
	long long	freed = 0;
	char	   *result;

	result = run_on_node(p, owner, psprintf(
		"WITH batch AS ("
		"  SELECT ctid, pg_catalog.pg_column_size(%2$s) AS old_bytes FROM ONLY %1$s"
		"  WHERE ctid OPERATOR(pg_catalog.>=) '(%3$u,0)'::pg_catalog.tid"
		"    AND ctid OPERATOR(pg_catalog.<) '(%4$u,0)'::pg_catalog.tid"
		"    AND %2$s IS NOT NULL AND %6$s"
		"  LIMIT %5$d FOR UPDATE SKIP LOCKED), "
		"done AS ("
		"  UPDATE ONLY %1$s AS t SET %2$s = %7$s"
		"  FROM batch WHERE t.ctid OPERATOR(pg_catalog.=) batch.ctid"
		"  RETURNING batch.old_bytes OPERATOR(pg_catalog.-) pg_catalog.pg_column_size(t.%2$s) AS freed) "
		"SELECT pg_catalog.format('%%s %%s', pg_catalog.count(*), pg_catalog.sum(freed)) FROM done",
		p->shard_name, column, first, last, REMOTE_BATCH_ROWS,
		rows_to_rewrite(pass, column, at), rewritten(pass, psprintf("t.%s", column), at)));
	if (sscanf(result, "%lld %lld", &rows, &freed) < 1 || rows < 0 || rows > REMOTE_BATCH_ROWS)
		elog(ERROR, "unexpected result from shard %s: \"%s\"", p->shard_name, result);
	r->rows_rewritten += rows;
	r->bytes_freed += freed;
	return (uint64) rows;
}

/* The blocks of a placement's shard, as its node says (checked). */
static BlockNumber
placement_blocks(const CitusPlacement *p, Oid owner)
{
	char	   *result = run_on_node(p, owner, psprintf(
		"SELECT pg_catalog.pg_relation_size(%s::pg_catalog.regclass) "
		"OPERATOR(pg_catalog./) pg_catalog.current_setting('block_size')::pg_catalog.int8",
		quote_literal_cstr(p->shard_name)));
	char	   *end;
	unsigned long long blocks;

	errno = 0;
	blocks = strtoull(result, &end, 10);
	if (errno != 0 || end == result || *end != '\0' || blocks > MaxBlockNumber)
		elog(ERROR, "unexpected size of shard %s: \"%s\"", p->shard_name, result);
	return (BlockNumber) blocks;
}

/* Every batch of one placement of a Citus table's shard. */
static void
maintain_placement(const Pass *pass, Registration *r, const CitusPlacement *p,
				   const char *at)
{
	BlockNumber nblocks = 0;
	bool		stopped = false;
	Oid			owner;

	begin_step(pass);
	owner = tlbf_relation_owner(r->relid);
	if (OidIsValid(owner))
		nblocks = placement_blocks(p, owner);
	end_step(pass);

	for (BlockNumber first = 0; first < nblocks && !stopped; first += REMOTE_BLOCKS_PER_RANGE)
	{
		BlockNumber last = first + Min(REMOTE_BLOCKS_PER_RANGE, nblocks - first);
		uint64		rewritten = 0;
		int			batches = 0;

		do
		{
			stopped = should_stop(pass);
			if (stopped)
				break;
			begin_step(pass);
			owner = tlbf_relation_owner(r->relid);
			if (OidIsValid(owner))
				rewritten = retire_remote_batch(pass, r, p, owner, at, first, last);
			end_step(pass);
			if (!OidIsValid(owner))
				return;
		} while (rewritten == REMOTE_BATCH_ROWS && ++batches < MAX_REMOTE_BATCHES_PER_RANGE);
	}
}

/*
 * A Citus table: every placement of its shards, wherever they are now,
 * then its record.
 */
static void
maintain_shards(const Pass *pass, Registration *r)
{
	MemoryContext context = AllocSetContextCreate(pass->context, "tlbf shards",
												  ALLOCSET_SMALL_SIZES);
	MemoryContext old;
	List	   *placements;
	ListCell   *cell;
	char	   *at;

	/* this node's clock, down to the second: an exact literal */
	at = MemoryContextStrdup(context,
							 psprintf("pg_catalog.to_timestamp(" INT64_FORMAT ")",
									  GetCurrentTimestamp() / USECS_PER_SEC +
									  (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY));
	begin_step(pass);
	old = MemoryContextSwitchTo(context);
	placements = tlbf_citus_placements(r->relid);
	MemoryContextSwitchTo(old);
	end_step(pass);
	foreach(cell, placements)
	{
		if (should_stop(pass))
			break;
		maintain_placement(pass, r, lfirst(cell), at);
	}
	MemoryContextDelete(context);
	begin_step(pass);
	record_stats(pass, r, NULL);
	end_step(pass);
}

/*
 * Tell whoever runs the pass which column it works on now, if they ask.
 * No lock is held on the table yet: a table dropped meanwhile goes untold.
 */
static void
say_working_on(const Pass *pass, const Registration *r)
{
	char	   *schema;
	char	   *table;

	if (pass->control->working_on == NULL)
		return;
	schema = get_namespace_name(get_rel_namespace(r->relid));
	table = get_rel_name(r->relid);
	if (schema != NULL && table != NULL)
		pass->control->working_on(psprintf("%s.%s",
										   quote_qualified_identifier(schema, table),
										   quote_identifier(r->column)));
}

static bool table_unlocked(Oid relid);

/* Every batch of one registered column, then its record. */
static void
maintain_column(const Pass *pass, Registration *r)
{
	BlockNumber nblocks;
	Relation	rel;
	bool		stopped = false;
	char		replication;

	begin_step(pass);
	if (!registration_is_valid(pass, r))
	{
		forget_registration(pass, r);
		end_step(pass);
		return;
	}
	if (!pass->control->own_transactions && !caller_may_rewrite(r->relid))
	{
		end_step(pass);
		return;
	}
	say_working_on(pass, r);
	if (tlbf_citus_is_distributed(r->relid, &replication))
	{
		if (replication != 's')
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("tlbf cannot maintain Citus table %s because its shards have a copy on several nodes",
							get_rel_name(r->relid)),
					 errhint("Only distributed tables (one copy of each shard) are maintained.")));
		end_step(pass);
		r->done = true;
		maintain_shards(pass, r);
		return;
	}
	if (!table_unlocked(r->relid))
	{
		end_step(pass);
		return;
	}
	rel = table_open(r->relid, AccessShareLock);
	nblocks = RelationGetNumberOfBlocks(rel);
	table_close(rel, AccessShareLock);
	end_step(pass);
	r->done = true;

	for (BlockNumber first = 0; first < nblocks && !stopped; first += BLOCKS_PER_RANGE)
	{
		BlockNumber last = first + Min(BLOCKS_PER_RANGE, nblocks - first);
		uint64		rewritten = 0;
		int			batches = 0;

		do
		{
			Oid			owner;

			stopped = should_stop(pass);
			if (stopped)
				break;
			if (pass->control->batch_starts)
				pass->control->batch_starts();
			begin_step(pass);
			owner = tlbf_relation_owner(r->relid);
			/* (each batch is a transaction: the table is locked anew) */
			if (OidIsValid(owner) && !table_unlocked(r->relid))
			{
				end_step(pass);
				stopped = true;
				break;
			}
			if (OidIsValid(owner))	/* else dropped meanwhile */
				rewritten = retire_batch(pass, r, owner, first, last);
			end_step(pass);
			if (pass->control->batch_ends)
				pass->control->batch_ends();
			if (!OidIsValid(owner))
				return;
			/* a range holds no more rows than this, whatever a rule reports */
		} while (rewritten == BATCH_ROWS && ++batches < MAX_BATCHES_PER_RANGE);
	}
	begin_step(pass);
	record_stats(pass, r, NULL);
	end_step(pass);
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
	/* a worker is cancelled only to make it leave (see worker.c) */
	if (geterrcode() != ERRCODE_QUERY_CANCELED)
		EmitErrorReport();
	AbortCurrentTransaction();
	FlushErrorState();
	RESUME_INTERRUPTS();
}

/*
 * A failure in one table (a lock timeout, a trigger that raises, a rule
 * that refuses the UPDATE) is reported, rolled back and recorded, and the
 * pass moves on to the next registration: a table owner's code cannot
 * stop the pass for everyone else's tables.  A worker reports it in the
 * log; a pass by hand, as a WARNING inside a subtransaction.  A cancel
 * request stops a pass by hand.
 */
static void
maintain_column_safely(const Pass *pass, Registration *r, MemoryContext context)
{
	ResourceOwner owner = CurrentResourceOwner;
	ErrorData  *error = NULL;

	if (!pass->control->own_transactions)
		BeginInternalSubTransaction(NULL);
	PG_TRY();
	{
		maintain_column(pass, r);
		if (!pass->control->own_transactions)
		{
			ReleaseCurrentSubTransaction();
			MemoryContextSwitchTo(context);
			CurrentResourceOwner = owner;
		}
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(context);
		error = CopyErrorData();
		if (pass->control->own_transactions)
		{
			tlbf_report_and_abort(context);
			if (pass->control->after_abort)
				pass->control->after_abort();
		}
		else
		{
			if (error->sqlerrcode == ERRCODE_QUERY_CANCELED)
				PG_RE_THROW();
			FlushErrorState();
			RollbackAndReleaseCurrentSubTransaction();
			MemoryContextSwitchTo(context);
			CurrentResourceOwner = owner;
			if (get_rel_name(r->relid) != NULL)
				ereport(WARNING,
						(errcode(error->sqlerrcode),
						 errmsg("tlbf maintenance of %s skipped", get_rel_name(r->relid)),
						 errdetail("The error was: %s", error->message)));
			else
				ereport(WARNING,
						(errcode(error->sqlerrcode),
						 errmsg("tlbf maintenance of a dropped table skipped"),
						 errdetail("The error was: %s", error->message)));
		}
	}
	PG_END_TRY();
	if (error == NULL)
		return;
	r->done = false;
	if (error->sqlerrcode == ERRCODE_QUERY_CANCELED)
		return;					/* the worker is leaving */
	PG_TRY();
	{
		begin_step(pass);
		record_stats(pass, r, error->message);
		end_step(pass);
	}
	PG_CATCH();
	{
		if (!pass->control->own_transactions)
			PG_RE_THROW();
		tlbf_report_and_abort(context);
		if (pass->control->after_abort)
			pass->control->after_abort();
	}
	PG_END_TRY();
}

/*
 * Lock 'relid' in 'mode' to the end of the transaction, unless a prepared
 * transaction holds a lock that conflicts (false, its XID in *prepared): a
 * prepared DROP EXTENSION, LOCK TABLE or ALTER TABLE holds it until
 * someone ends it, and a worker has no lock_timeout and no user to cancel
 * it.  An open transaction that holds it is waited for by looking again
 * every 100 ms, not by queueing for the lock: one that prepared while it
 * was waited for would keep the lock, and the worker with it (seen once
 * in CI).  A SIGTERM or a cancel ends the wait.
 */
static bool
lock_unless_prepared(Oid relid, LOCKMODE mode, TransactionId *prepared)
{
	static uint32 wait_event = 0;
	LOCKTAG		tag;

	SET_LOCKTAG_RELATION(tag, MyDatabaseId, relid);
	for (;;)
	{
		if (ConditionalLockRelationOid(relid, mode))
			return true;
		*prepared = tlbf_prepared_holder(&tag, mode);
		if (TransactionIdIsValid(*prepared))
			return false;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 100,
						 tlbf_wait_event(&wait_event, "TlbfMaintenanceLock"));
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Can the pass read the registry?  Not while a prepared transaction holds
 * it (a prepared DROP EXTENSION): the pass is skipped, the next one tries
 * again.
 */
static bool
registry_unlocked(Oid registry)
{
	TransactionId prepared;

	if (lock_unless_prepared(registry, AccessShareLock, &prepared))
		return true;
	ereport(LOG,
			(errmsg("tlbf maintenance skipped a pass: prepared transaction %u holds the extension's tables",
					prepared),
			 errdetail("It ran DROP EXTENSION tlbf, or changed tlbf_maintained; the next pass after it ends runs.")));
	return false;
}

/*
 * Can the pass rewrite rows of registered table 'relid' in this step?  Not
 * while a prepared transaction holds a lock on it that conflicts: the
 * table is left for a later pass, and the pass goes on with the others.
 */
static bool
table_unlocked(Oid relid)
{
	TransactionId prepared;

	if (lock_unless_prepared(relid, RowExclusiveLock, &prepared))
		return true;
	ereport(LOG,
			(errmsg("tlbf maintenance skipped table \"%s\" in this pass: prepared transaction %u holds a lock on it",
					get_rel_name(relid), prepared),
			 errdetail("The next pass after that transaction ends maintains it.")));
	return false;
}

/*
 * Run one pass over the current database.  Returns the registrations with
 * what was done for each, allocated in 'context'; NIL if the extension is
 * not installed.
 */
List *
tlbf_maintenance_pass(const PassControl *control, MemoryContext context)
{
	Pass		pass;
	List	   *registrations = NIL;
	ListCell   *cell;

	pass.control = control;
	pass.context = context;
	MemoryContextSwitchTo(context);
	begin_step(&pass);
	pass.registry = tlbf_extension_table("tlbf_maintained");
	if (OidIsValid(pass.registry))
	{
		pass.schema_name = MemoryContextStrdup(context, tlbf_extension_schema_quoted());
		pass.tlbf_type = tlbf_extension_type();
		pass.stats = tlbf_extension_table("tlbf_maintenance_stats");
	}
	if (OidIsValid(pass.registry) && control->own_transactions &&
		!registry_unlocked(pass.registry))
		pass.registry = InvalidOid;
	end_step(&pass);
	if (!OidIsValid(pass.registry))
		return NIL;

	registrations = read_registrations(&pass, context);
	forget_unregistered_stats(&pass);
	foreach(cell, registrations)
	{
		if (should_stop(&pass))
			break;
		maintain_column_safely(&pass, (Registration *) lfirst(cell), context);
	}

	/* and the shared filters of this database, when the server has them */
	if (tlbf_store_available())
	{
		if (control->working_on)
			control->working_on("shared filters");
		tlbf_store_retire(GetCurrentTimestamp());
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
	PassControl control = {false, NULL, NULL, NULL, NULL, NULL};
	List	   *registrations;
	ListCell   *cell;

	PreventCommandDuringRecovery("tlbf_maintenance_run()");
	InitMaterializedSRF(fcinfo, 0);
	registrations = tlbf_maintenance_pass(&control, CurrentMemoryContext);
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
