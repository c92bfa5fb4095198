/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  The background workers that retire stale slices.
 *
 * With shared_preload_libraries = 'tlbf', a launcher starts with the
 * server.  It is connected to no database; every tlbf.naptime it lists the
 * databases and, one after the other, starts a short-lived worker in each
 * that runs one maintenance pass (maintenance.c) and exits at once if tlbf
 * is not installed there.  Because no process stays connected to a
 * database between passes, DROP DATABASE is not blocked by us (a pass in
 * progress holds it up for as long as the pass lasts, and DROP DATABASE
 * waits five seconds for that).
 *
 * Both handle SIGHUP (reload the configuration) and SIGTERM (exit), wait on
 * their latch and leave when the postmaster dies.  The launcher exits with
 * status 1 so that the postmaster starts it again: after a crash, or after
 * pg_terminate_backend().
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#define LAUNCHER_NAME	"tlbf launcher"
#define WORKER_NAME		"tlbf maintenance"
#define RESTART_SECONDS 10

PGDLLEXPORT void tlbf_launcher_main(Datum arg);
PGDLLEXPORT void tlbf_maintenance_main(Datum arg);

void
tlbf_register_launcher(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = RESTART_SECONDS;
	strlcpy(worker.bgw_library_name, "tlbf", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "tlbf_launcher_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, LAUNCHER_NAME, BGW_MAXLEN);
	strlcpy(worker.bgw_type, LAUNCHER_NAME, BGW_MAXLEN);
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

/* Run one pass in one database and wait for it to end. */
static void
run_pass_in(Oid database)
{
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;
	pid_t		pid;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(worker.bgw_library_name, "tlbf", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "tlbf_maintenance_main", BGW_MAXLEN);
	snprintf(worker.bgw_name, BGW_MAXLEN, "%s in database %u", WORKER_NAME, database);
	strlcpy(worker.bgw_type, WORKER_NAME, BGW_MAXLEN);
	worker.bgw_main_arg = ObjectIdGetDatum(database);
	worker.bgw_notify_pid = MyProcPid;

	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
	{
		ereport(DEBUG1,
				(errmsg("tlbf: no background worker slot free for maintenance"),
				 errhint("Raise max_worker_processes.")));
		return;
	}
	/* the postmaster sets our latch whenever the worker starts or stops */
	while (GetBackgroundWorkerPid(handle, &pid) != BGWH_STOPPED)
	{
		if (ShutdownRequestPending)
		{
			TerminateBackgroundWorker(handle);
			return;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		process_reload();
	}
}

void
tlbf_launcher_main(Datum arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname(LAUNCHER_NAME);
	ereport(DEBUG1, (errmsg("tlbf launcher started")));

	while (!ShutdownRequestPending)
	{
		process_reload();
		if (tlbf_worker_enabled)
		{
			List	   *databases = database_list();
			ListCell   *cell;

			foreach(cell, databases)
			{
				if (ShutdownRequestPending || !tlbf_worker_enabled)
					break;
				run_pass_in(lfirst_oid(cell));
			}
			list_free(databases);
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 tlbf_naptime * 1000L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	/* status 1: the postmaster starts us again unless it is shutting down */
	proc_exit(1);
}

void
tlbf_maintenance_main(Datum arg)
{
	MemoryContext pass_context;
	List	   *registrations;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(DatumGetObjectId(arg), InvalidOid, 0);
	pgstat_report_appname(WORKER_NAME);

	pass_context = AllocSetContextCreate(TopMemoryContext, "tlbf maintenance pass",
										 ALLOCSET_DEFAULT_SIZES);
	registrations = tlbf_maintenance_pass(true, pass_context);
	ereport(DEBUG1,
			(errmsg("tlbf maintenance pass done: %d registered columns",
					list_length(registrations))));
	proc_exit(0);
}
