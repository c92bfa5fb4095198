/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  The differences between the PostgreSQL major versions tlbf builds
 *	  against (15 to 19), in one place.  Every other file includes this
 *	  (through tlbf_pg.h) instead of testing PG_VERSION_NUM itself.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_COMPAT_H
#define TLBF_COMPAT_H

#include "postgres.h"

#include "storage/lock.h"
#include "storage/proc.h"
#include "utils/wait_event.h"

/* 16 moved the varlena macros (VARSIZE, VARDATA, ...) out of postgres.h */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/*
 * 17 grouped a backend's virtual transaction id in MyProc->vxid, and asks
 * LockHeldByMe whether a stronger lock counts.
 */
#if PG_VERSION_NUM >= 170000
#define TLBF_MY_LOCAL_XID()			(MyProc->vxid.lxid)
#define TlbfLockHeldByMe(tag, mode)	LockHeldByMe((tag), (mode), false)
#else
#define TLBF_MY_LOCAL_XID()			(MyProc->lxid)
#define TlbfLockHeldByMe(tag, mode)	LockHeldByMe((tag), (mode))
#endif

/*
 * 16 lets input functions report bad input softly (errsave into the
 * caller's ErrorSaveContext: pg_input_is_valid).  Before, it is an ERROR.
 */
#if PG_VERSION_NUM >= 160000
#include "nodes/miscnodes.h"
#else
#define errsave(context, ...)		ereport(ERROR, __VA_ARGS__)
#define SOFT_ERROR_OCCURRED(context)	false
#endif

/* 16 gave make_range a soft-error context */
#if PG_VERSION_NUM >= 160000
#define tlbf_make_range(typcache, lower, upper) \
	make_range((typcache), (lower), (upper), false, NULL)
#else
#define tlbf_make_range(typcache, lower, upper) \
	make_range((typcache), (lower), (upper), false)
#endif

/*
 * 19 caches attribute offsets in a tuple descriptor: one built by hand must
 * be finished with TupleDescFinalize before use.
 */
#if PG_VERSION_NUM >= 190000
#define tlbf_finish_tupdesc(desc)	TupleDescFinalize(desc)
#else
#define tlbf_finish_tupdesc(desc)	((void) 0)
#endif

/* 17 renamed the shared transaction counters ShmemVariableCache TransamVariables */
#if PG_VERSION_NUM >= 170000
#define TLBF_OLDEST_CLOG_XID()		(TransamVariables->oldestClogXid)
#else
#define TLBF_OLDEST_CLOG_XID()		(ShmemVariableCache->oldestClogXid)
#endif

/* 17 moved a backend's local transaction id into its PGPROC's vxid */
#if PG_VERSION_NUM >= 170000
#define TLBF_PROC_LXID(proc)		((proc)->vxid.lxid)
#else
#define TLBF_PROC_LXID(proc)		((proc)->lxid)
#endif

/*
 * 17 lets an extension name its own wait events: pg_stat_activity shows
 * the name, with wait_event_type 'Extension'.  Before, every extension's
 * waits are the one event 'Extension'.  Naming one looks it up (or adds
 * it) in shared memory under a lock, so the id is kept in '*cache', which
 * starts as 0 (no event id is 0).
 */
static inline uint32
tlbf_wait_event(uint32 *cache, const char *name)
{
#if PG_VERSION_NUM >= 170000
	if (*cache == 0)
		*cache = WaitEventExtensionNew(name);
	return *cache;
#else
	return PG_WAIT_EXTENSION;
#endif
}

#endif							/* TLBF_COMPAT_H */
