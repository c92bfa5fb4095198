/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  The background workers: retiring stale slices of registered columns
 *	  and of shared filters, and saving shared filters.
 *
 * With shared_preload_libraries = 'tlbf', a launcher starts with the
 * server.  It is connected to no database; every tlbf.naptime it lists the
 * databases and starts, in each that has no worker running, a worker that
 * runs one maintenance pass (maintenance.c).  In a database without the
 * extension that worker exits at once; in one without shared filters it
 * exits after its pass, so that nothing stays connected to the database.
 *
 * In a database with shared filters the worker stays: it runs a pass every
 * tlbf.naptime, saves the filters that changed every tlbf.snapshot_interval,
 * and saves them once more when it is told to stop (a clean shutdown).
 *
 * A worker must not keep DROP DATABASE (or ALTER DATABASE ... RENAME or SET
 * TABLESPACE, or CREATE DATABASE ... TEMPLATE) from running: those refuse to
 * run while another session is connected.  So while connected, a worker
 * holds a lock on its database that new connections do not conflict with
 * but those commands do: they queue behind it, the worker sees them waiting
 * (within YIELD_CHECK_MS, or after the batch it is working on), saves its
 * shared filters, lets go and leaves, and they go on.  The launcher starts
 * a worker there again later if the database is still there.
 *
 * Both handle SIGHUP (reload the configuration) and SIGTERM (finish and
 * exit), wait on their latch and leave when the postmaster dies.  The
 * launcher exits with status 1 so that the postmaster starts it again:
 * after a crash, or after pg_terminate_backend().
 *
 *-------------------------------------------------------------------------
 */
#include "shared_filters.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lock.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#define LAUNCHER_NAME	"tlbf launcher"
#define WORKER_NAME		"tlbf maintenance"
#define RESTART_SECONDS 10
#define YIELD_CHECK_MS	500

/*
 * The lock a worker holds on its database: RowExclusiveLock, which new
 * connections also take while they start (no conflict), and which the
 * ShareLock of CREATE DATABASE ... TEMPLATE and the AccessExclusiveLock of
 * DROP DATABASE and ALTER DATABASE conflict with.
 */
#define DATABASE_LOCK	RowExclusiveLock

static bool holding_database_lock = false;

PGDLLEXPORT void tlbf_launcher_main(Datum arg);
PGDLLEXPORT void tlbf_maintenance_main(Datum arg);

/* Both kinds of worker connect to a database once recovery has finished. */
static void
describe_worker(BackgroundWorker *worker, const char *function, const char *type,
				int restart_seconds)
{
	memset(worker, 0, sizeof(*worker));
	worker->bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker->bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker->bgw_restart_time = restart_seconds;
	strlcpy(worker->bgw_library_name, "tlbf", BGW_MAXLEN);
	strlcpy(worker->bgw_function_name, function, BGW_MAXLEN);
	strlcpy(worker->bgw_type, type, BGW_MAXLEN);
}

void
tlbf_register_launcher(void)
{
	BackgroundWorker worker;

	describe_worker(&worker, "tlbf_launcher_main", LAUNCHER_NAME, RESTART_SECONDS);
	strlcpy(worker.bgw_name, LAUNCHER_NAME, BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}

/* The databases a pass may connect to (a shared catalog: no database needed). */
static List *
database_list(void)
{
	List	   *result = NIL;
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tuple;
	MemoryContext caller = CurrentMemoryContext;

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while (HeapTupleIsValid(tuple = heap_getnext(scan, ForwardScanDirection)))
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tuple);
		MemoryContext old;

		if (!db->datallowconn)
			continue;
		old = MemoryContextSwitchTo(caller);
		result = lappend_oid(result, db->oid);
		MemoryContextSwitchTo(old);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	PopActiveSnapshot();
	CommitTransactionCommand();
	return result;
}

static void
process_reload(void)
{
	if (ConfigReloadPending)
	{
		ConfigReloadPending = false;
		ProcessConfigFile(PGC_SIGHUP);
	}
}

/* The workers the launcher started, by database (in TopMemoryContext). */
typedef struct DatabaseWorker
{
	Oid			database;
	BackgroundWorkerHandle *handle;
} DatabaseWorker;

static List *database_workers = NIL;

static bool
worker_running(Oid database)
{
	ListCell   *cell;

	foreach(cell, database_workers)
	{
		DatabaseWorker *w = lfirst(cell);
		pid_t		pid;

		if (w->database == database)
			return GetBackgroundWorkerPid(w->handle, &pid) != BGWH_STOPPED;
	}
	return false;
}

/* Start a worker for one database, unless one runs there already. */
static void
start_worker_in(Oid database)
{
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;
	DatabaseWorker *w = NULL;
	ListCell   *cell;
	MemoryContext old;

	if (worker_running(database))
		return;
	describe_worker(&worker, "tlbf_maintenance_main", WORKER_NAME, BGW_NEVER_RESTART);
	snprintf(worker.bgw_name, BGW_MAXLEN, "%s in database %u", WORKER_NAME, database);
	worker.bgw_main_arg = ObjectIdGetDatum(database);
	worker.bgw_notify_pid = MyProcPid;

	old = MemoryContextSwitchTo(TopMemoryContext);
	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
	{
		MemoryContextSwitchTo(old);
		ereport(DEBUG1,
				(errmsg("tlbf: no background worker slot free for maintenance"),
				 errhint("Raise max_worker_processes.")));
		return;
	}
	foreach(cell, database_workers)
		if (((DatabaseWorker *) lfirst(cell))->database == database)
			w = lfirst(cell);
	if (w == NULL)
	{
		w = palloc(sizeof(DatabaseWorker));
		w->database = database;
		database_workers = lappend(database_workers, w);
	}
	else
		pfree(w->handle);
	w->handle = handle;
	MemoryContextSwitchTo(old);
}

void
tlbf_launcher_main(Datum arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname(LAUNCHER_NAME);

	while (!ShutdownRequestPending)
	{
		List	   *databases;
		ListCell   *cell;

		process_reload();
		databases = database_list();
		/* the shared filters of dropped databases are freed */
		tlbf_shared_forget_databases(databases);
		if (tlbf_worker_enabled)
			foreach(cell, databases)
				start_worker_in(lfirst_oid(cell));
		list_free(databases);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 tlbf_naptime * 1000L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	/* status 1: the postmaster starts us again unless it is shutting down */
	proc_exit(1);
}

/*
 * Save the shared filters of this database that changed.  A failure is
 * reported and the changes stay marked for the next try.
 */
static void
save_shared_filters(void)
{
	MemoryContext context = CurrentMemoryContext;
	List	   *saved = NIL;
	ListCell   *cell;

	PG_TRY();
	{
		Oid			schema;

		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		schema = tlbf_extension_schema();
		if (OidIsValid(schema))
			tlbf_shared_save(schema, &saved);
		SPI_finish();
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		tlbf_report_and_abort(context);
		return;
	}
	PG_END_TRY();
	/* committed: the saved versions are safe */
	foreach(cell, saved)
	{
		List	   *pair = lfirst(cell);

		tlbf_shared_saved(linitial(pair), *(uint64 *) lsecond(pair));
	}
}

/* The lock tag of this database (a shared object). */
static LOCKTAG
database_lock_tag(void)
{
	LOCKTAG		tag;

	SET_LOCKTAG_OBJECT(tag, InvalidOid, DatabaseRelationId, MyDatabaseId, 0);
	return tag;
}

/*
 * Take the worker's lock on its database, as a session lock, without
 * waiting: if it is not free, a command that needs the database to itself
 * is running, and the worker should not be there.
 */
static bool
lock_database(void)
{
	LOCKTAG		tag = database_lock_tag();

	holding_database_lock =
		LockAcquire(&tag, DATABASE_LOCK, true, true) != LOCKACQUIRE_NOT_AVAIL;
	return holding_database_lock;
}

static void
unlock_database(void)
{
	LOCKTAG		tag = database_lock_tag();

	if (holding_database_lock)
		LockRelease(&tag, DATABASE_LOCK, true);
	holding_database_lock = false;
}

/*
 * Should the worker leave now: it was asked to stop, or a command that
 * needs its database to itself is waiting for the worker's lock.
 */
bool
tlbf_worker_should_leave(void)
{
	LOCKTAG		tag = database_lock_tag();

	if (ShutdownRequestPending)
		return true;
	return holding_database_lock && LockHasWaiters(&tag, DATABASE_LOCK, true);
}

static bool
database_has_shared_filters(void)
{
	return tlbf_shared_available() && tlbf_shared_names(false) != NIL;
}

void
tlbf_maintenance_main(Datum arg)
{
	MemoryContext pass_context;
	TimestampTz next_pass = 0;
	TimestampTz next_save;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(DatumGetObjectId(arg), InvalidOid, 0);
	if (!lock_database())
		proc_exit(0);
	pgstat_report_appname(WORKER_NAME);
	pass_context = AllocSetContextCreate(TopMemoryContext, "tlbf maintenance pass",
										 ALLOCSET_DEFAULT_SIZES);
	next_save = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
											tlbf_snapshot_interval * 1000L);
	for (;;)
	{
		TimestampTz now;
		long		sleep_ms;

		process_reload();
		if (tlbf_worker_should_leave())
			break;
		now = GetCurrentTimestamp();
		if (now >= next_pass)
		{
			MemoryContextReset(pass_context);
			(void) tlbf_maintenance_pass(true, pass_context);
			if (!database_has_shared_filters())
				break;
			next_pass = TimestampTzPlusMilliseconds(now, tlbf_naptime * 1000L);
		}
		if (now >= next_save)
		{
			save_shared_filters();
			next_save = TimestampTzPlusMilliseconds(now, tlbf_snapshot_interval * 1000L);
		}
		sleep_ms = TimestampDifferenceMilliseconds(now, Min(next_pass, next_save));
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Min(Max(sleep_ms, 1), YIELD_CHECK_MS), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	/* a clean stop: what changed since the last save is saved now */
	if (database_has_shared_filters())
		save_shared_filters();
	unlock_database();
	proc_exit(0);
}
