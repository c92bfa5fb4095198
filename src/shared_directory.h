/*-------------------------------------------------------------------------
 *
 * shared_directory.h
 *	  The directory of named filters in shared memory: the pool their bytes
 *	  live in, their slots and locks, and which transaction sees which.
 *	  No catalog access: see shared_store.h for loading and saving.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_SHARED_DIRECTORY_H
#define TLBF_SHARED_DIRECTORY_H

#include "shared_ref.h"

#include "storage/latch.h"

/* One filter as it was at a moment, to save it and acknowledge the save. */
typedef struct SharedFilterId
{
	int			slot;
	uint64		generation;		/* which filter held the slot */
	Oid			database;
	char		name[NAMEDATALEN];
	uint64		changes;		/* its change count then */
	bool		unsaved;		/* changed since its last save */
	TransactionId row_xid;		/* wrote its row of tlbf_shared_filters */
} SharedFilterId;

typedef enum InstallResult
{
	INSTALL_DONE,
	INSTALL_NAME_TAKEN,			/* shared memory has (or is creating) it */
	INSTALL_NO_SLOT,			/* every slot is taken */
	INSTALL_NO_ROOM,			/* no free region of its size in the pool */
	INSTALL_STALE				/* a filter was dropped since the caller looked */
} InstallResult;

extern void tlbf_directory_init(void);
extern bool tlbf_directory_available(void);
extern void tlbf_directory_require(void);
extern Size tlbf_directory_pool_bytes(void);
extern Size tlbf_directory_max_region(void);

extern bool tlbf_directory_open(const char *name, LWLockMode mode, SharedFilterRef *ref);
extern bool tlbf_directory_open_id(const SharedFilterId *id, LWLockMode mode,
								   SharedFilterRef *ref);
extern bool tlbf_directory_open_any(const SharedFilterId *id, LWLockMode mode,
									SharedFilterRef *ref);
extern void tlbf_directory_close(SharedFilterRef *ref);
extern void tlbf_directory_count_change(SharedFilterRef *ref);
extern Size tlbf_directory_region(const SharedFilterRef *ref);
extern uint64 tlbf_directory_generation(const SharedFilterRef *ref);
extern const char *tlbf_directory_name(const SharedFilterRef *ref);
extern uint64 tlbf_directory_changes(const SharedFilterRef *ref);
extern bool tlbf_directory_unsaved(const SharedFilterRef *ref);
extern TransactionId tlbf_directory_row_xid(const SharedFilterRef *ref);
extern void tlbf_directory_saved(const SharedFilterId *id);
extern void tlbf_directory_count(const SharedFilterRef *ref, SharedCounter counter, uint64 n);
extern void tlbf_directory_counts(const SharedFilterRef *ref, SharedCounts *counts);
extern void tlbf_directory_reset_counts(const SharedFilterRef *ref);

extern void tlbf_directory_create(const char *name, const Tlbf *initial, Size region,
								  TransactionId row_xid);
extern bool tlbf_directory_drop(const char *name);
extern List *tlbf_directory_names(void);
extern List *tlbf_directory_changed(void);
extern List *tlbf_directory_all(void);
extern bool tlbf_directory_holds(const char *name);
extern uint64 tlbf_directory_drops(void);
typedef void (*InstallFilled) (SharedFilterRef *ref, void *arg);
extern InstallResult tlbf_directory_install(const char *name, const Tlbf *filter,
											Size region, TransactionId row_xid,
											uint64 drops_seen,
											InstallFilled filled, void *arg);

extern List *tlbf_directory_databases(void);
extern uint64 tlbf_directory_stamp(void);
extern void tlbf_directory_forget_databases(const List *existing, uint64 stamp);
extern void tlbf_directory_watch(Latch *latch);

#endif							/* TLBF_SHARED_DIRECTORY_H */
