/*-------------------------------------------------------------------------
 *
 * launcher.c
 *	  The launcher: it only schedules.  With shared_preload_libraries =
 *	  'tlbf' it starts with the server, connected to no database, and keeps
 *	  a timetable per database:
 *
 *	  - one maintenance pass per database per tlbf.naptime (a short-lived
 *		"tlbf maintenance" worker; none while the last one still runs);
 *	  - a "tlbf snapshots" worker in every database that has shared filters,
 *		started again if it had to leave;
 *	  - the shared filters of dropped databases (and only of those) freed.
 *
 * A worker's start and exit wake the launcher (bgw_notify_pid), and so
 * does a database's first shared filter; a wake only does what is due.
 * When no background worker slot is free, the launcher says so at LOG, at
 * most once per naptime, and tries again a second later.
 *
 * A worker is started only in a database that still exists, and DROP
 * DATABASE and ALTER DATABASE wait until it has connected (start_worker):
 * a worker never fails to connect to a database dropped meanwhile.
 *
 * It handles SIGHUP and SIGTERM, processes interrupts and barriers
 * whenever it wakes, and exits with status 1 so that the postmaster starts
 * it again: after a crash, or after pg_terminate_backend().  Between rounds
 * it waits on the wait event TlbfLauncherMain, and on TlbfWorkerConnect
 * while a worker it started connects (compat.h).
 *
 *-------------------------------------------------------------------------
 */
#include "background.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "shared_directory.h"
#include "shared_prepared.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#define LAUNCHER_NAME		"tlbf launcher"
#define RESTART_SECONDS		10
#define RETRY_MS			1000
#define CONNECT_WAIT_MS		5000

/* pg_database.datconnlimit of a database whose DROP was interrupted */
#define INVALID_DATABASE_CONNLIMIT	(-2)

PGDLLEXPORT void tlbf_launcher_main(Datum arg);

/* The timetable of one database (in TopMemoryContext). */
typedef struct DatabaseSchedule
{
	Oid			database;
	TimestampTz next_pass;
	TimestampTz next_snapshots;	/* earliest start of a snapshot worker */
	BackgroundWorkerHandle *pass;
	BackgroundWorkerHandle *snapshots;
} DatabaseSchedule;

static List *schedules = NIL;
static TimestampTz last_no_slot_report = 0;

/* When this launcher started: its DEBUG1 round lines count from it. */
static TimestampTz launcher_started = 0;

/* The tlbf.naptime the timetables were made with. */
static int	scheduled_naptime = 0;

/* The launcher's wait events (compat.h), once named. */
static uint32 main_wait_event = 0;
static uint32 connect_wait_event = 0;

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
	strlcpy(worker.bgw_type, LAUNCHER_NAME, BGW_MAXLEN);
	strlcpy(worker.bgw_name, LAUNCHER_NAME, BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}

static bool
connectable(Form_pg_database db)
{
	return db->datallowconn && db->datconnlimit != INVALID_DATABASE_CONNLIMIT;
}

/*
 * Every database (*all) and those a worker may connect to (*open), from
 * pg_database, a shared catalog: no database connection needed.
 */
static void
list_databases(List **all, List **open)
{
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tuple;
	MemoryContext caller = CurrentMemoryContext;

	*all = NIL;
	*open = NIL;
	StartTransactionCommand();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tuple);
		MemoryContext old = MemoryContextSwitchTo(caller);

		*all = lappend_oid(*all, db->oid);
		if (connectable(db))
			*open = lappend_oid(*open, db->oid);
		MemoryContextSwitchTo(old);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
	MemoryContextSwitchTo(caller);
}

/* Is 'database' still there, and may a worker connect to it? */
static bool
database_connectable(Oid database)
{
	Relation	rel = table_open(DatabaseRelationId, AccessShareLock);
	SysScanDesc scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tuple;
	bool		found = false;

	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tuple);

		if (db->oid == database)
			found = connectable(db);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

static bool
running(BackgroundWorkerHandle *handle)
{
	pid_t		pid;

	return handle != NULL && GetBackgroundWorkerPid(handle, &pid) != BGWH_STOPPED;
}

/* Wait (a while at most) until the worker has connected, or has exited. */
static void
wait_until_connected(BackgroundWorkerHandle *handle, Oid database)
{
	pid_t		pid;

	if (WaitForBackgroundWorkerStartup(handle, &pid) != BGWH_STARTED)
		return;
	for (int waited = 0; waited < CONNECT_WAIT_MS; waited += 10)
	{
		PGPROC	   *proc;

		if (GetBackgroundWorkerPid(handle, &pid) != BGWH_STARTED)
			return;
		proc = BackendPidGetProc(pid);
		if (proc != NULL && proc->databaseId == database)
			return;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 10,
						 tlbf_wait_event(&connect_wait_event, "TlbfWorkerConnect"));
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

static void
report_no_slot(DatabaseWorkerKind kind, Oid database)
{
	TimestampTz now = GetCurrentTimestamp();

	if (!TimestampDifferenceExceeds(last_no_slot_report, now, tlbf_naptime * 1000))
		return;
	if (kind == MAINTENANCE_WORKER)
		ereport(LOG,
				(errmsg("tlbf: no background worker slot free for a maintenance pass in database %u",
						database),
				 errdetail("It will be tried again; meanwhile that database is not maintained."),
				 errhint("Raise max_worker_processes.")));
	else
		ereport(LOG,
				(errmsg("tlbf: no background worker slot free for a snapshot worker in database %u",
						database),
				 errdetail("It will be tried again; meanwhile the shared filters of that database are not saved."),
				 errhint("Raise max_worker_processes.")));
	/*
	 * Measured from after the line was written: two lines are then a
	 * naptime apart by their own times in the log, however late the first
	 * was written (016_worker_scheduling checks them so).
	 */
	last_no_slot_report = GetCurrentTimestamp();
}

/*
 * Start a worker; false if there was no slot for it.
 *
 * DROP DATABASE and ALTER DATABASE lock pg_database in ROW EXCLUSIVE mode
 * before they lock the database.  From the check that the database exists
 * until the worker has connected, the launcher holds pg_database in SHARE
 * mode: those commands wait that long (the worker then holds its own lock
 * and gives way to them), while the worker can still read the catalog to
 * connect.  Otherwise a database dropped in between would make the worker
 * fail to connect, with a FATAL in the log.  A database being dropped or
 * renamed gets no worker now; its turn comes later, if it still exists.
 */
static bool
start_worker(DatabaseWorkerKind kind, Oid database, BackgroundWorkerHandle **handle)
{
	MemoryContext caller = CurrentMemoryContext;
	BackgroundWorkerHandle *started;
	bool		slot = true;
	char	   *activity = psprintf("%s: starting a %s worker in database %u",
									LAUNCHER_NAME,
									kind == MAINTENANCE_WORKER ? "maintenance" : "snapshot",
									database);

	tlbf_report_running(activity);
	pfree(activity);
	StartTransactionCommand();
	if (ConditionalLockRelationOid(DatabaseRelationId, ShareLock) &&
		database_connectable(database))
	{
		MemoryContextSwitchTo(TopMemoryContext);
		slot = tlbf_start_database_worker(kind, database, &started);
		if (slot)
		{
			if (*handle != NULL)
				pfree(*handle);
			*handle = started;
			wait_until_connected(started, database);
			/* for the tests, which follow the launcher's decisions (docs/tests.md) */
			ereport(DEBUG1,
					(errmsg_internal("tlbf launcher: started a %s worker in database %u",
									 kind == MAINTENANCE_WORKER ? "maintenance" : "snapshot",
									 database)));
		}
	}
	CommitTransactionCommand();
	MemoryContextSwitchTo(caller);
	/* waiting may have taken a wake-up meant for the next round */
	SetLatch(MyLatch);
	if (!slot)
		report_no_slot(kind, database);
	return slot;
}

static DatabaseSchedule *
schedule_of(Oid database, TimestampTz now)
{
	ListCell   *cell;
	DatabaseSchedule *s;
	MemoryContext old;

	foreach(cell, schedules)
	{
		s = lfirst(cell);
		if (s->database == database)
			return s;
	}
	old = MemoryContextSwitchTo(TopMemoryContext);
	s = palloc0(sizeof(DatabaseSchedule));
	s->database = database;
	s->next_pass = now;
	s->next_snapshots = now;
	schedules = lappend(schedules, s);
	MemoryContextSwitchTo(old);
	return s;
}

/* Forget the timetables of databases that are gone or closed. */
static void
prune_schedules(const List *open)
{
	List	   *kept = NIL;
	ListCell   *cell;
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

	foreach(cell, schedules)
	{
		DatabaseSchedule *s = lfirst(cell);

		if (list_member_oid(open, s->database))
			kept = lappend(kept, s);
		else
		{
			if (s->pass)
				pfree(s->pass);
			if (s->snapshots)
				pfree(s->snapshots);
			pfree(s);
		}
	}
	list_free(schedules);
	schedules = kept;
	MemoryContextSwitchTo(old);
}

static TimestampTz
after_ms(TimestampTz t, int ms)
{
	return TimestampTzPlusMilliseconds(t, ms);
}

/*
 * tlbf.naptime was reloaded: a pass planned with the old naptime comes no
 * later than the new one from now (as autovacuum's launcher rebuilds its
 * schedule), so that lowering it takes effect at once.
 */
static void
follow_naptime(TimestampTz now)
{
	ListCell   *cell;

	if (tlbf_naptime == scheduled_naptime)
		return;
	foreach(cell, schedules)
	{
		DatabaseSchedule *s = lfirst(cell);

		s->next_pass = Min(s->next_pass, after_ms(now, tlbf_naptime * 1000));
	}
	scheduled_naptime = tlbf_naptime;
}

/*
 * The end of a round, at DEBUG1, for the tests (docs/tests.md): they wait
 * for these lines instead of for a while.  When it began and when the next
 * is due, on the launcher's own clock (milliseconds since it started),
 * whether passes are on, and how many of its passes still run.
 */
static void
report_round(TimestampTz now, TimestampTz wake)
{
	ListCell   *cell;
	int			passes = 0;

	foreach(cell, schedules)
	{
		DatabaseSchedule *s = lfirst(cell);

		if (running(s->pass))
			passes++;
	}
	ereport(DEBUG1,
			(errmsg_internal("tlbf launcher: round at %ld ms: passes %s, %d running; next round at %ld ms",
							 TimestampDifferenceMilliseconds(launcher_started, now),
							 tlbf_worker_enabled ? "on" : "off", passes,
							 TimestampDifferenceMilliseconds(launcher_started, wake))));
}

/*
 * One round: free the filters of dropped databases (and the keys their
 * prepared transactions wrote down), start what is due.
 * Returns when the next thing is due.
 */
static TimestampTz
run_round(void)
{
	uint64		stamp = tlbf_directory_available() ? tlbf_directory_stamp() : 0;
	List	   *all;
	List	   *open;
	List	   *with_filters;
	ListCell   *cell;
	TimestampTz now;
	TimestampTz wake;
	int			naptime_ms = tlbf_naptime * 1000;
	TransactionId next_xid = ReadNextTransactionId();

	list_databases(&all, &open);
	tlbf_directory_forget_databases(all, stamp);
	tlbf_prepared_clean_databases(all, next_xid);
	with_filters = tlbf_directory_databases();
	prune_schedules(open);

	now = GetCurrentTimestamp();
	wake = after_ms(now, naptime_ms);
	follow_naptime(now);
	foreach(cell, open)
	{
		DatabaseSchedule *s = schedule_of(lfirst_oid(cell), now);

		if (tlbf_worker_enabled && now >= s->next_pass)
		{
			/* a pass still running skips its turn */
			if (running(s->pass) ||
				start_worker(MAINTENANCE_WORKER, s->database, &s->pass))
				s->next_pass = after_ms(now, naptime_ms);
			else
				s->next_pass = after_ms(now, RETRY_MS);
		}
		if (tlbf_worker_enabled)
			wake = Min(wake, s->next_pass);

		if (list_member_oid(with_filters, s->database) && !running(s->snapshots))
		{
			if (now >= s->next_snapshots)
			{
				(void) start_worker(SNAPSHOT_WORKER, s->database, &s->snapshots);
				s->next_snapshots = after_ms(now, RETRY_MS);
			}
			wake = Min(wake, s->next_snapshots);
		}
	}
	report_round(now, wake);
	return wake;
}

static void
stop_watching(int code, Datum arg)
{
	tlbf_directory_watch(NULL);
}

void
tlbf_launcher_main(Datum arg)
{
	MemoryContext round;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname(LAUNCHER_NAME);
	launcher_started = GetCurrentTimestamp();
	tlbf_directory_watch(MyLatch);
	before_shmem_exit(stop_watching, (Datum) 0);
	round = AllocSetContextCreate(TopMemoryContext, "tlbf launcher round",
								  ALLOCSET_DEFAULT_SIZES);

	for (;;)
	{
		TimestampTz wake;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (ShutdownRequestPending)
			break;
		MemoryContextSwitchTo(round);
		wake = run_round();
		MemoryContextSwitchTo(TopMemoryContext);
		MemoryContextReset(round);
		tlbf_report_idle();
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Max(TimestampDifferenceMilliseconds(GetCurrentTimestamp(), wake), 1),
						 tlbf_wait_event(&main_wait_event, "TlbfLauncherMain"));
		ResetLatch(MyLatch);
	}
	/* status 1: the postmaster starts us again unless it is shutting down */
	proc_exit(1);
}
