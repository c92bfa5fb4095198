/*-------------------------------------------------------------------------
 *
 * shared_store.h
 *	  Named filters as SQL sees them: created, dropped, opened, saved to the
 *	  snapshot table and loaded back, transactionally and per database.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_SHARED_STORE_H
#define TLBF_SHARED_STORE_H

#include "shared_directory.h"

extern void tlbf_store_init(void);
extern void tlbf_store_open(const char *name, LWLockMode mode, SharedFilterRef *ref);
extern void tlbf_store_create(const char *name, const TlbfParams *params);
extern void tlbf_store_drop(const char *name);
extern void tlbf_store_load(void);
extern int64 tlbf_store_adopt(void);
extern int	tlbf_store_save(MemoryContext ack_context, List **acks);
extern void tlbf_store_acknowledge(List *acks);
extern void tlbf_store_retire(TimestampTz now);

/* What a standby reads instead: the copies the primary saved. */
typedef struct SavedFilter
{
	char	   *name;
	Tlbf	   *filter;
	Size		region;
} SavedFilter;

extern Tlbf *tlbf_store_saved_filter(FunctionCallInfo fcinfo, const char *name);
extern List *tlbf_store_saved_filters(void);

#endif							/* TLBF_SHARED_STORE_H */
