/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  The two kinds of worker the launcher starts in a database:
 *
 *	  - "tlbf maintenance" runs one maintenance pass (maintenance.c) and
 *		exits: no worker stays connected to a database for passes;
 *	  - "tlbf snapshots" saves the database's shared filters that changed
 *		and exits: the launcher starts one every tlbf.snapshot_interval in
 *		each database with something to save.  It does nothing else, so
 *		that no table rewrite can delay a save: a crash loses at most the
 *		insertions of one snapshot interval plus one save.  (At a clean
 *		stop, the launcher writes what changed since: shared_images.c.)
 *
 * Neither may keep DROP DATABASE (or ALTER DATABASE ... RENAME or SET
 * TABLESPACE, or CREATE DATABASE ... TEMPLATE) from running: those refuse
 * to run while another session is connected.  So while connected, a
 * worker holds a session lock on its database that new connections do not
 * conflict with but those commands do: they queue behind it, the worker
 * sees them waiting (a pass before its next batch; a saver has only its
 * save, which waits for no lock), lets go and leaves, and they go on.
 * During a batch, which runs a table owner's code, the lock is let go
 * (see batch_starts).  Aborting a transaction releases session locks too
 * (PostgreSQL's
 * ProcReleaseLocks), so after every error the lock is taken again, or the
 * worker leaves if it cannot have it.
 *
 * Both handle SIGHUP (reload the configuration) and SIGTERM (finish and
 * exit; a batch in progress is cancelled), process interrupts and barriers
 * (CHECK_FOR_INTERRUPTS) whenever they wake, and leave when the postmaster
 * dies.  A database's own settings are overridden (override_database_settings).
 *
 * pg_stat_activity shows what each does (tlbf_report_running): its query
 * is "tlbf maintenance: schema.table.column" while a pass works on that
 * column, "tlbf snapshots: save" while shared filters are saved.
 *
 *-------------------------------------------------------------------------
 */
#include "background.h"
#include "shared_directory.h"

#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_database.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "safe_sql.h"
#include "shared_store.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lock.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#define MAINTENANCE_NAME	"tlbf maintenance"
#define SNAPSHOT_NAME		"tlbf snapshots"

/*
 * The lock a worker holds on its database: RowExclusiveLock, which new
 * connections also take while they start (no conflict), and which the
 * ShareLock of CREATE DATABASE ... TEMPLATE and the AccessExclusiveLock of
 * DROP DATABASE and ALTER DATABASE conflict with.
 */
#define DATABASE_LOCK	RowExclusiveLock

static bool holding_database_lock = false;
static bool lost_database_lock = false;

/* Is a maintenance worker running a batch (a table owner's code)? */
static volatile sig_atomic_t in_batch = false;

/* Does pg_stat_activity show this process at work (see tlbf_report_idle)? */
static bool reported_running = true;

PGDLLEXPORT void tlbf_maintenance_main(Datum arg);
PGDLLEXPORT void tlbf_snapshots_main(Datum arg);

/* Start a worker of 'kind' in 'database'; false if no slot is free. */
bool
tlbf_start_database_worker(DatabaseWorkerKind kind, Oid database,
						   BackgroundWorkerHandle **handle)
{
	BackgroundWorker worker;
	const char *type = kind == MAINTENANCE_WORKER ? MAINTENANCE_NAME : SNAPSHOT_NAME;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(worker.bgw_library_name, "tlbf", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name,
			kind == MAINTENANCE_WORKER ? "tlbf_maintenance_main" : "tlbf_snapshots_main",
			BGW_MAXLEN);
	strlcpy(worker.bgw_type, type, BGW_MAXLEN);
	snprintf(worker.bgw_name, BGW_MAXLEN, "%s in database %u", type, database);
	worker.bgw_main_arg = ObjectIdGetDatum(database);
	worker.bgw_notify_pid = MyProcPid;
	return RegisterDynamicBackgroundWorker(&worker, handle);
}

/*
 * Show in pg_stat_activity what this process (a worker or the launcher)
 * does now: 'activity' as its query, state active, query_start now.  Only
 * names of tables and columns, never what they hold.
 */
void
tlbf_report_running(const char *activity)
{
	SetCurrentStatementStartTimestamp();
	pgstat_report_activity(STATE_RUNNING, activity);
	reported_running = true;
}

/*
 * Show it idle (with its last activity as its query, as a client's session
 * shows its last statement).  Only after some work, so that state_change
 * says when the work ended, not when the process last woke up.
 */
void
tlbf_report_idle(void)
{
	if (!reported_running)
		return;
	pgstat_report_activity(STATE_IDLE, NULL);
	reported_running = false;
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

/* After a rollback released it: take the lock again, or plan to leave. */
static void
relock_database(void)
{
	LOCKTAG		tag = database_lock_tag();

	in_batch = false;
	if (holding_database_lock && TlbfLockHeldByMe(&tag, DATABASE_LOCK))
		return;
	if (!lock_database())
		lost_database_lock = true;
}

/*
 * A batch runs a table owner's code (triggers, index expressions), which
 * may take any time.  The lock is let go meanwhile, so that DROP DATABASE
 * gets it at once: WITH (FORCE) then terminates the worker, which cancels
 * the batch (handle_sigterm), and without FORCE it waits up to 5 s for the
 * batch to end, as for any session.  Taken again after the batch, without
 * waiting: if someone has it, the worker leaves.
 */
static void
batch_starts(void)
{
	unlock_database();
	in_batch = true;
}

static void
batch_ends(void)
{
	in_batch = false;
	if (!lock_database())
		lost_database_lock = true;
}

/*
 * SIGTERM: finish, and cancel what the worker is doing in a transaction, if
 * anything: a batch, a save (at a clean stop the launcher's images make it
 * instead, else the next saver), or a wait for a lock, which may be one
 * that a prepared transaction holds until someone ends it (a fast
 * shutdown must not wait for that).
 */
static void
handle_sigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	ShutdownRequestPending = true;
	if (in_batch || IsTransactionState())
	{
		QueryCancelPending = true;
		InterruptPending = true;
	}
	SetLatch(MyLatch);
	errno = save_errno;
}

/*
 * Should the worker leave now: it was asked to stop, it lost its lock, or
 * a command that needs its database to itself is waiting for the lock.
 */
static bool
should_leave(void)
{
	LOCKTAG		tag = database_lock_tag();

	/*
	 * A cancel SIGTERM sent to a transaction that ended before it was seen:
	 * the worker stops below, and must not stop on an ERROR instead.
	 */
	if (ShutdownRequestPending && !IsTransactionState())
		QueryCancelPending = false;
	CHECK_FOR_INTERRUPTS();
	if (ConfigReloadPending)
	{
		ConfigReloadPending = false;
		ProcessConfigFile(PGC_SIGHUP);
	}
	if (ShutdownRequestPending || lost_database_lock)
		return true;
	return holding_database_lock && LockHasWaiters(&tag, DATABASE_LOCK, true);
}

/*
 * The database's and role's own settings (ALTER DATABASE ... SET, which a
 * database owner may run) must not change what a worker does.  As
 * autovacuum does, the worker overrides every one that would, at a
 * priority no later SET (a table owner's trigger included) can undo:
 *
 * - how errors end: exit_on_error would turn one table's error into the
 *	 end of the worker, and of every later table's pass;
 * - who runs: session_authorization and role (the bootstrap superuser;
 *	 tables are written as their owners, see tlbf_become);
 * - how statements resolve and parse: search_path, transform_null_equals,
 *	 standard_conforming_strings;
 * - what transactions may do and how long they may take: read-only and
 *	 isolation defaults, every timeout, synchronous_commit;
 * - which triggers and policies apply: session_replication_role (replica
 *	 mode skips a table owner's triggers), row_security;
 * - whether a statement starts parallel workers, which would take the
 *	 slots other work needs.
 *
 * DateStyle, IntervalStyle and TimeZone are left alone: the worker's own
 * statements pass every value as a parameter and never turn one into text
 * or text into one.  A setting a server version lacks is skipped.
 */
static void
override_database_settings(void)
{
	static const char *const settings[][2] = {
		{"exit_on_error", "off"},
		{"role", "none"},
		{"search_path", TLBF_SAFE_SEARCH_PATH},
		{"transform_null_equals", "off"},
		{"standard_conforming_strings", "on"},
		{"default_transaction_read_only", "off"},
		{"default_transaction_isolation", "read committed"},
		{"default_transaction_deferrable", "off"},
		{"statement_timeout", "0"},
		{"lock_timeout", "0"},
		{"idle_in_transaction_session_timeout", "0"},
		{"idle_session_timeout", "0"},
		{"transaction_timeout", "0"},
		{"synchronous_commit", "local"},
		{"session_replication_role", "origin"},
		{"row_security", "on"},
		{"max_parallel_workers_per_gather", "0"},
		{"force_parallel_mode", "off"},
		{"debug_parallel_query", "off"},
	};

	/* the role name is looked up in the catalog: a transaction is needed */
	StartTransactionCommand();
	(void) set_config_option("session_authorization",
							 GetUserNameFromId(BOOTSTRAP_SUPERUSERID, false),
							 PGC_SUSET, PGC_S_OVERRIDE, GUC_ACTION_SET, true, ERROR, false);
	for (int i = 0; i < lengthof(settings); i++)
		(void) set_config_option(settings[i][0], settings[i][1], PGC_SUSET,
								 PGC_S_OVERRIDE, GUC_ACTION_SET, true, DEBUG1, false);
	CommitTransactionCommand();
}

/* Connect to the database in 'arg' and lock it, or exit quietly. */
static void
start_in_database(Datum arg, const char *name)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, handle_sigterm);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(DatumGetObjectId(arg), InvalidOid, 0);
	override_database_settings();
	if (!lock_database())
		proc_exit(0);
	pgstat_report_appname(name);
}

static void
leave(void)
{
	unlock_database();
	proc_exit(0);
}

/* A pass says which column it works on: "tlbf maintenance: public.t.f". */
static void
maintenance_working_on(const char *what)
{
	char	   *activity = psprintf("%s: %s", MAINTENANCE_NAME, what);

	tlbf_report_running(activity);
	pfree(activity);
}

void
tlbf_maintenance_main(Datum arg)
{
	PassControl control = {
		.own_transactions = true,
		.should_stop = should_leave,
		.batch_starts = batch_starts,
		.batch_ends = batch_ends,
		.after_abort = relock_database,
		.working_on = maintenance_working_on,
	};

	start_in_database(arg, MAINTENANCE_NAME);
	tlbf_report_running(MAINTENANCE_NAME);
	(void) tlbf_maintenance_pass(&control,
								 AllocSetContextCreate(TopMemoryContext, "tlbf maintenance pass",
													   ALLOCSET_DEFAULT_SIZES));
	leave();
}

/*
 * Save the shared filters of this database that changed.  A failure is
 * reported and the changes stay marked for the next saver.
 */
static void
save_shared_filters(MemoryContext context)
{
	List	   *acks = NIL;
	TimestampTz start = GetCurrentTimestamp();

	tlbf_report_running(SNAPSHOT_NAME ": save");
	PG_TRY();
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		(void) tlbf_store_save(context, &acks);
		PopActiveSnapshot();
		CommitTransactionCommand();
		/* so that autovacuum sees the table's dead rows */
		pgstat_report_stat(false);
		/* a crash loses at most a snapshot interval plus this */
		ereport(DEBUG1,
				(errmsg_internal("tlbf: saved %d shared filters in %ld ms",
								 list_length(acks),
								 TimestampDifferenceMilliseconds(start, GetCurrentTimestamp()))));
	}
	PG_CATCH();
	{
		tlbf_report_and_abort(context);
		relock_database();
		return;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(context);
	/* committed: the saved versions are safe */
	tlbf_store_acknowledge(acks);
}

void
tlbf_snapshots_main(Datum arg)
{
	start_in_database(arg, SNAPSHOT_NAME);
	if (!should_leave())
		save_shared_filters(AllocSetContextCreate(TopMemoryContext, "tlbf snapshots",
												  ALLOCSET_DEFAULT_SIZES));
	leave();
}
