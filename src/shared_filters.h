/*-------------------------------------------------------------------------
 *
 * shared_filters.h
 *	  Named filters in shared memory, per database: what the SQL functions,
 *	  the trigger and the background worker share.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_SHARED_FILTERS_H
#define TLBF_SHARED_FILTERS_H

#include "tlbf_pg.h"

#include "storage/lwlock.h"

/* A filter opened for use: its slot and lock are held until closed. */
typedef struct SharedFilterRef
{
	int			slot;
	Tlbf	   *filter;			/* in shared memory */
	LWLockMode	mode;
} SharedFilterRef;

/* shared_memory.c */
extern int	tlbf_shared_memory;
extern int	tlbf_max_shared_filters;
extern void tlbf_shared_memory_init(void);
extern void tlbf_shared_require(void);
extern bool tlbf_shared_available(void);
extern bool tlbf_shared_open(const char *name, LWLockMode mode, SharedFilterRef *ref);
extern void tlbf_shared_open_or_error(FunctionCallInfo fcinfo, const char *name,
									  LWLockMode mode, SharedFilterRef *ref);
extern void tlbf_shared_close(SharedFilterRef *ref);
extern void tlbf_shared_mark_dirty(SharedFilterRef *ref);
extern void tlbf_shared_create_filter(const char *name, const Tlbf *initial, Size region);
extern void tlbf_shared_drop_filter(const char *name);
extern List *tlbf_shared_names(bool dirty_only);
extern void tlbf_shared_forget_databases(const List *existing);
extern Size tlbf_shared_region_for(const TlbfParams *params);
extern bool tlbf_shared_restored(void);
extern void tlbf_shared_install_restored(List *names, List *filters, List *regions);
extern Size tlbf_shared_region(const SharedFilterRef *ref);
extern uint64 tlbf_shared_changes(const SharedFilterRef *ref);
extern bool tlbf_shared_unsaved(const SharedFilterRef *ref);
extern void tlbf_shared_saved(const char *name, uint64 changes);

/* shared_functions.c */
extern bool tlbf_shared_insert(FunctionCallInfo fcinfo, const char *name,
							   const TlbfHash *hashes, const TlbfTime *times, int n);

/* shared_snapshots.c */
extern void tlbf_shared_restore(Oid schema);
extern void tlbf_shared_prepare(FunctionCallInfo fcinfo);
extern int	tlbf_shared_save(Oid schema, List **saved);
extern void tlbf_shared_retire(void);
extern Oid	tlbf_function_schema(FunctionCallInfo fcinfo);

#endif							/* TLBF_SHARED_FILTERS_H */
