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
#include "shared_directory.h"	/* the launcher and the workers ask it */

#include "postmaster/bgworker.h"

/*
 * What a maintenance pass is told by whoever runs it.  By hand, a pass
 * runs in the caller's transaction and its errors go to the caller.  In a
 * worker it runs a transaction per batch, reports an error and moves on to
 * the next table, and asks between batches whether to stop.
 */
typedef struct PassControl
{
	bool		own_transactions;
	bool		(*should_stop) (void);	/* NULL: never */
	void		(*batch_starts) (void); /* around each batch, which runs */
	void		(*batch_ends) (void);	/* a table owner's code; NULL: nothing */
	void		(*after_abort) (void);	/* after an error was rolled back */
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

/* launcher.c */
extern void tlbf_register_launcher(void);

#endif							/* TLBF_BACKGROUND_H */
