/*-------------------------------------------------------------------------
 *
 * launcher.c
 *	  The launcher: it schedules, and at rest it is the only process tlbf
 *	  has.  With shared_preload_libraries = 'tlbf' it starts with the
 *	  server, connected to no database, and keeps a timetable per database:
 *
 *	  - one maintenance pass per database per tlbf.naptime (a short-lived
 *		"tlbf maintenance" worker; none while the last one still runs);
 *	  - a save every tlbf.snapshot_interval in every database with shared
 *		filters that changed (a short-lived "tlbf snapshots" worker that
 *		saves and exits);
 *	  - the shared filters' expired slices retired every tlbf.naptime, in
 *		every database (by the launcher itself: shared memory only);
 *	  - the shared filters of dropped databases (and only of those) freed.
 *
 * Work that is due waits in line for a background worker slot, the oldest
 * first and saves before passes, so that no database's work is starved
 * by another's when slots are short.  When no slot is free, the launcher
 * says so at LOG, at most once per naptime, and tries again a second
 * later.
 *
 * As it leaves at a clean stop (when no worker can start any more), once
 * the transactions that could add keys have ended, it writes an image of each
 * shared filter changed since its last save (shared_images.c): a clean
 * restart forgets nothing.
 *
 * A worker's start and exit wake the launcher (bgw_notify_pid), and so
 * does a database's first shared filter; a wake only does what is due.
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
#include "settings.h"

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
#include "shared_images.h"
#include "shared_prepared.h"
#include "shared_store.h"
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
/* how long a stopping launcher waits for transactions to end before its images */
#define STOP_WAIT_MS		10000

/* pg_database.datconnlimit of a database whose DROP was interrupted */
#define INVALID_DATABASE_CONNLIMIT	(-2)

PGDLLEXPORT void tlbf_launcher_main(Datum arg);

/* The timetable of one database (in TopMemoryContext). */
typedef struct DatabaseSchedule
{
	Oid			database;
	TimestampTz next_pass;
	TimestampTz next_save;		/* when to look for something to save */
	BackgroundWorkerHandle *pass;
	BackgroundWorkerHandle *saver;
} DatabaseSchedule;

/* A worker due to start, in line for a slot. */
typedef struct DueWorker
{
	DatabaseSchedule *schedule;
	DatabaseWorkerKind kind;
	TimestampTz due;
} DueWorker;

static List *schedules = NIL;
static TimestampTz last_no_slot_report = 0;

/* When the shared filters' expired slices are next retired. */
static TimestampTz next_retire = 0;

/* When this launcher started: its DEBUG1 round lines count from it. */
static TimestampTz launcher_started = 0;

/* The tlbf.naptime and tlbf.snapshot_interval the timetables were made with. */
static int	scheduled_naptime = 0;
static int	scheduled_snapshot_interval = 0;

/* The launcher's wait events (compat.h), once named. */
static uint32 main_wait_event = 0;
static uint32 connect_wait_event = 0;

/*
 * Register the launcher, except in the servers pg_upgrade starts (binary
 * upgrade mode, -b): there the catalogs are being rebuilt and the tables'
 * files are not there yet, and a pass would read half-made tables, write
 * rows and snapshots that the upgrade then overwrites, or hold locks it
 * needs (PostgreSQL 15 starts background workers there).
 */
void
tlbf_register_launcher(void)
{
	BackgroundWorker worker;

	if (IsBinaryUpgrade)
		return;
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
		(void) tlbf_checkpoints_serve();
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
				(errmsg("tlbf: no background worker slot free to save the shared filters of database %u",
						database),
				 errdetail("It will be tried again; meanwhile the changes of that database's shared filters are not saved."),
				 errhint("Raise max_worker_processes.")));
	/*
	 * Measured from after the line was written: two lines are then a
	 * naptime apart by their own times in the log, however late the first
	 * was written (016_worker_scheduling checks them so).
	 */
	last_no_slot_report = GetCurrentTimestamp();
}

/* How a start went. */
typedef enum StartResult
{
	WORKER_STARTED,
	WORKER_NO_SLOT,				/* every background worker slot is taken */
	WORKER_NOT_NOW				/* the database is being changed: later */
} StartResult;

/*
 * Start a worker.
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
static StartResult
start_worker(DatabaseWorkerKind kind, Oid database, BackgroundWorkerHandle **handle)
{
	MemoryContext caller = CurrentMemoryContext;
	BackgroundWorkerHandle *started;
	StartResult result = WORKER_NOT_NOW;
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
		result = tlbf_start_database_worker(kind, database, &started) ?
			WORKER_STARTED : WORKER_NO_SLOT;
		if (result == WORKER_STARTED)
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
	if (result == WORKER_NO_SLOT)
		report_no_slot(kind, database);
	return result;
}

static TimestampTz
after_ms(TimestampTz t, int ms)
{
	return TimestampTzPlusMilliseconds(t, ms);
}

/* for the tests, which follow the launcher's plans (docs/tests.md) */
static void
report_next_save(const DatabaseSchedule *s, TimestampTz now)
{
	ereport(DEBUG1,
			(errmsg_internal("tlbf launcher: next save in database %u in %ld ms",
							 s->database, TimestampDifferenceMilliseconds(now, s->next_save))));
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
	s->next_save = after_ms(now, tlbf_snapshot_interval * 1000);
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
			if (s->saver)
				pfree(s->saver);
			pfree(s);
		}
	}
	list_free(schedules);
	schedules = kept;
	MemoryContextSwitchTo(old);
}

/*
 * tlbf.naptime or tlbf.snapshot_interval was reloaded: a pass, a save or
 * a retirement planned with the old value comes no later than the new one
 * from now (as autovacuum's launcher rebuilds its schedule), so that
 * lowering it takes effect at once.
 */
static void
follow_intervals(TimestampTz now)
{
	ListCell   *cell;

	if (tlbf_naptime != scheduled_naptime)
	{
		foreach(cell, schedules)
		{
			DatabaseSchedule *s = lfirst(cell);

			s->next_pass = Min(s->next_pass, after_ms(now, tlbf_naptime * 1000));
		}
		next_retire = Min(next_retire, after_ms(now, tlbf_naptime * 1000));
		scheduled_naptime = tlbf_naptime;
	}
	if (tlbf_snapshot_interval != scheduled_snapshot_interval)
	{
		foreach(cell, schedules)
		{
			DatabaseSchedule *s = lfirst(cell);

			if (s->next_save > after_ms(now, tlbf_snapshot_interval * 1000))
			{
				s->next_save = after_ms(now, tlbf_snapshot_interval * 1000);
				report_next_save(s, now);
			}
		}
		scheduled_snapshot_interval = tlbf_snapshot_interval;
	}
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

/* The oldest due first; at the same time, saves before passes. */
static int
by_due(const ListCell *a, const ListCell *b)
{
	const DueWorker *x = lfirst(a);
	const DueWorker *y = lfirst(b);

	if (x->due != y->due)
		return x->due < y->due ? -1 : 1;
	return (x->kind == SNAPSHOT_WORKER ? 0 : 1) - (y->kind == SNAPSHOT_WORKER ? 0 : 1);
}

static List *
due_worker(List *due, DatabaseSchedule *s, DatabaseWorkerKind kind, TimestampTz at)
{
	DueWorker  *d = palloc(sizeof(DueWorker));

	d->schedule = s;
	d->kind = kind;
	d->due = at;
	return lappend(due, d);
}

/*
 * What is due in database s: its maintenance pass, and, if it has shared
 * filters, a save when they have something to save ('to_save').  A pass
 * still running skips its turn; a beat with nothing to save looks again
 * one snapshot interval later.
 */
static List *
add_due(List *due, DatabaseSchedule *s, const List *with_filters, const List *to_save,
		TimestampTz now)
{
	if (tlbf_worker_enabled && now >= s->next_pass)
	{
		if (running(s->pass))
			s->next_pass = after_ms(now, tlbf_naptime * 1000);
		else
			due = due_worker(due, s, MAINTENANCE_WORKER, s->next_pass);
	}
	if (list_member_oid(with_filters, s->database) && now >= s->next_save)
	{
		if (running(s->saver) || !list_member_oid(to_save, s->database))
		{
			s->next_save = after_ms(now, tlbf_snapshot_interval * 1000);
			report_next_save(s, now);
		}
		else
			due = due_worker(due, s, SNAPSHOT_WORKER, s->next_save);
	}
	return due;
}

/*
 * Start what is due, in line; once a start finds no slot, the rest keep
 * their place for the next try, as does a start in a database being
 * changed (*wake then comes a second later).
 */
static void
start_due(List *due, TimestampTz now, TimestampTz *wake)
{
	ListCell   *cell;
	bool		no_slot = false;

	list_sort(due, by_due);
	foreach(cell, due)
	{
		DueWorker  *d = lfirst(cell);
		DatabaseSchedule *s = d->schedule;
		bool		pass = d->kind == MAINTENANCE_WORKER;
		StartResult result = WORKER_NO_SLOT;

		if (!no_slot)
			result = start_worker(d->kind, s->database, pass ? &s->pass : &s->saver);
		no_slot |= result == WORKER_NO_SLOT;
		if (result != WORKER_STARTED)
		{
			*wake = Min(*wake, after_ms(now, RETRY_MS));
			continue;
		}
		if (pass)
			s->next_pass = after_ms(now, tlbf_naptime * 1000);
		else
		{
			s->next_save = after_ms(now, tlbf_snapshot_interval * 1000);
			report_next_save(s, now);
		}
	}
}

/*
 * One round: free the filters of dropped databases (and the keys their
 * prepared transactions wrote down, and their images), retire expired
 * slices, start what is due.  Returns when the next thing is due.
 */
static TimestampTz
run_round(void)
{
	uint64		stamp = tlbf_directory_available() ? tlbf_directory_stamp() : 0;
	List	   *all;
	List	   *open;
	List	   *with_images;
	List	   *with_filters = NIL;
	List	   *to_save = NIL;
	List	   *due = NIL;
	ListCell   *cell;
	TimestampTz now;
	TimestampTz wake;
	TransactionId next_xid = ReadNextTransactionId();

	list_databases(&all, &open);
	tlbf_directory_forget_databases(all, stamp);
	tlbf_prepared_clean_databases(all, next_xid);
	with_images = tlbf_images_databases(all);
	prune_schedules(open);

	now = GetCurrentTimestamp();
	follow_intervals(now);
	if (tlbf_directory_available())
	{
		if (now >= next_retire)
		{
			tlbf_store_retire_all(now);
			next_retire = after_ms(now, tlbf_naptime * 1000);
		}
		with_filters = tlbf_directory_databases();
		to_save = tlbf_store_databases_to_save();
	}
	/* after a restart: a save writes what the images hold to their rows */
	with_filters = list_concat_unique_oid(with_filters, with_images);
	to_save = list_concat_unique_oid(to_save, with_images);
	foreach(cell, open)
		due = add_due(due, schedule_of(lfirst_oid(cell), now), with_filters, to_save, now);

	wake = after_ms(now, tlbf_naptime * 1000);
	start_due(due, now, &wake);
	foreach(cell, schedules)
	{
		DatabaseSchedule *s = lfirst(cell);

		if (tlbf_worker_enabled && s->next_pass > now)
			wake = Min(wake, s->next_pass);
		if (s->next_save > now)
			wake = Min(wake, s->next_save);
	}
	if (tlbf_directory_available())
		wake = Min(wake, Max(next_retire, after_ms(now, 1)));
	report_round(now, wake);
	return wake;
}

/*
 * Does a live session (a backend or a worker) have a transaction with an
 * XID, which could still commit keys the images must hold?  Prepared
 * transactions, which have no process, do not count: their keys are
 * written down already (shared_prepared.c).
 */
static bool
transactions_remain(void)
{
	for (uint32 i = 0; i < ProcGlobal->allProcCount; i++)
	{
		PGPROC	   *proc = &ProcGlobal->allProcs[i];

		if (proc->pid != 0 && proc->pid != MyProcPid && TransactionIdIsValid(proc->xid))
			return true;
	}
	return false;
}

/* Is a saver this launcher started still there (it may not have recorded its save)? */
static bool
savers_remain(void)
{
	ListCell   *cell;

	foreach(cell, schedules)
		if (running(((DatabaseSchedule *) lfirst(cell))->saver))
			return true;
	return false;
}

/*
 * The launcher is leaving: if the server stops, no worker will save the
 * shared filters again before it does.  Once the transactions that could
 * add keys have ended (a fast stop ends them all) and the savers have
 * left, having recorded what they saved (at most STOP_WAIT_MS), write an
 * image of each filter that changed since its last save.
 */
static void
write_images(void)
{
	int			written;

	if (!tlbf_directory_available())
		return;
	for (int waited = 0; waited < STOP_WAIT_MS && (transactions_remain() || savers_remain());
		 waited += 10)
	{
		(void) tlbf_checkpoints_serve();
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 10,
						 tlbf_wait_event(&main_wait_event, "TlbfLauncherMain"));
		ResetLatch(MyLatch);
	}
	written = tlbf_store_write_images();
	ereport(DEBUG1,
			(errmsg_internal("tlbf launcher: wrote %d images of shared filters", written)));
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
	tlbf_checkpoints_start();
	round = AllocSetContextCreate(TopMemoryContext, "tlbf launcher round",
								  ALLOCSET_DEFAULT_SIZES);

	for (;;)
	{
		TimestampTz wake;
		long		sleep_ms;
		long		hold_ms;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (ShutdownRequestPending)
			break;
		MemoryContextSwitchTo(round);
		hold_ms = tlbf_checkpoints_serve();
		wake = run_round();
		MemoryContextSwitchTo(TopMemoryContext);
		MemoryContextReset(round);
		tlbf_report_idle();
		/* while it holds checkpoints, it looks for a new redo point often */
		for (;;)
		{
			sleep_ms = Max(TimestampDifferenceMilliseconds(GetCurrentTimestamp(), wake), 1);
			if (hold_ms < 0 || sleep_ms <= hold_ms)
				break;
			if (WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, hold_ms,
						  tlbf_wait_event(&main_wait_event, "TlbfLauncherMain")) & WL_LATCH_SET)
				break;
			MemoryContextSwitchTo(round);
			hold_ms = tlbf_checkpoints_serve();
			MemoryContextSwitchTo(TopMemoryContext);
			MemoryContextReset(round);
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 hold_ms < 0 ? sleep_ms : Min(sleep_ms, hold_ms),
						 tlbf_wait_event(&main_wait_event, "TlbfLauncherMain"));
		ResetLatch(MyLatch);
	}
	write_images();
	tlbf_checkpoints_stop();
	/* status 1: the postmaster starts us again unless it is shutting down */
	proc_exit(1);
}
