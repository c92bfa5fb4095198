/*-------------------------------------------------------------------------
 *
 * background.h
 *	  The launcher, the per-database workers it starts, and the maintenance
 *	  pass they (or tlbf_maintenance_run) run.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_BACKGROUND_H
#define TLBF_BACKGROUND_H

#include "tlbf_pg.h"

#include "postmaster/bgworker.h"

/*
 * What a maintenance pass is told by whoever runs it.  By hand, a pass
 * runs in the caller's transaction and its errors go to the caller.  In a
 * worker it runs a transaction per batch, reports an error and moves on to
 * the next table, asks between batches whether to stop, and says which
 * column it works on (pg_stat_activity shows it).
 */
typedef struct PassControl
{
	bool		own_transactions;
	bool		(*should_stop) (void);	/* NULL: never */
	void		(*batch_starts) (void); /* around each batch, which runs */
	void		(*batch_ends) (void);	/* a table owner's code; NULL: nothing */
	void		(*after_abort) (void);	/* after an error was rolled back */
	/* what the pass works on now: schema.table.column, or "shared filters" */
	void		(*working_on) (const char *what);	/* NULL: nobody is told */
} PassControl;

/* maintenance.c */
extern List *tlbf_maintenance_pass(const PassControl *control, MemoryContext context);
extern void tlbf_report_and_abort(MemoryContext context);

/* worker.c: the two kinds of worker the launcher starts in a database */
typedef enum DatabaseWorkerKind
{
	MAINTENANCE_WORKER,			/* one pass, then exit */
	SNAPSHOT_WORKER				/* saves shared filters while there are any */
} DatabaseWorkerKind;

extern bool tlbf_start_database_worker(DatabaseWorkerKind kind, Oid database,
									   BackgroundWorkerHandle **handle);
extern void tlbf_report_running(const char *activity);
extern void tlbf_report_idle(void);

/* launcher.c */
extern void tlbf_register_launcher(void);

/* launcher_checkpoints.c */
extern void tlbf_checkpoints_start(void);
extern long tlbf_checkpoints_serve(void);
extern void tlbf_checkpoints_stop(void);

#endif							/* TLBF_BACKGROUND_H */
