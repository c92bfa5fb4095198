/*-------------------------------------------------------------------------
 *
 * shared_ref.h
 *	  What the layers of shared filters pass between them: a filter opened
 *	  for use, and what the keys of open transactions say of a key.  The directory (shared_directory.h) opens it, the store
 *	  (shared_store.h) hands it to the SQL functions; a header of types
 *	  only, so that the store need not export the directory's functions.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_SHARED_REF_H
#define TLBF_SHARED_REF_H

#include "tlbf_pg.h"

#include "storage/lwlock.h"

/* A filter opened for use: the directory and filter locks are held. */
typedef struct SharedFilterRef
{
	int			slot;
	Tlbf	   *filter;			/* in shared memory */
	LWLockMode	mode;
} SharedFilterRef;

/* What a transaction that adds a key finds among the keys pending. */
typedef enum PendingFound
{
	PENDING_NONE,				/* no transaction that may commit added it */
	PENDING_STORED,				/* a committed transaction stored it, or
								 * this one did (or is storing it) */
	PENDING_WAIT				/* another open transaction added it: wait */
} PendingFound;

/* The filter a key is pending for: its slot and which filter held it. */
typedef struct PendingFilter
{
	int			slot;
	uint64		generation;
} PendingFilter;

/*
 * What each shared filter counts from its creation or load, or the last
 * tlbf_shared_stats_reset (docs/operating.md, "Watching shared filters").
 */
typedef enum SharedCounter
{
	SHARED_ADDED,				/* keys taken: rows the trigger accepted,
								 * tlbf_shared_add's true, rebuilt rows */
	SHARED_REJECTED,			/* keys offered that it held: rows the
								 * trigger skipped or refused,
								 * tlbf_shared_add's false */
	SHARED_LOOKUPS,				/* keys asked (tlbf_shared_contains, ...) */
	SHARED_FOUND,				/* of those, found */
	SHARED_GROWN,				/* times it took more of its region */
	SHARED_FULL,				/* insertions refused for room (53200) */
	SHARED_COUNTERS
} SharedCounter;

/* A filter's counters as read at one moment. */
typedef struct SharedCounts
{
	uint64		values[SHARED_COUNTERS];
	TimestampTz saved_at;		/* last saved (0: not since it was loaded) */
	TimestampTz reset_at;		/* counting since */
} SharedCounts;

#endif							/* TLBF_SHARED_REF_H */
