/*-------------------------------------------------------------------------
 *
 * shared_store.h
 *	  Named filters as SQL sees them: created, dropped, opened, saved to the
 *	  snapshot table and loaded back, transactionally and per database.
 *
 * The SQL functions reach shared memory only through these: a filter
 * opened here is read, grown and closed here too.  This header does not
 * include the directory's (shared_directory.h); scripts/check_layers.sh
 * keeps it so.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_SHARED_STORE_H
#define TLBF_SHARED_STORE_H

#include "shared_ref.h"

#include "access/xlogdefs.h"

extern void tlbf_store_init(void);
extern bool tlbf_store_available(void);
extern void tlbf_store_require(void);

/* A filter in use: between open and close, no catalog access, no waiting */
extern void tlbf_store_open(const char *name, LWLockMode mode, SharedFilterRef *ref);
extern void tlbf_store_close(SharedFilterRef *ref);
extern Size tlbf_store_region(const SharedFilterRef *ref);
extern void tlbf_store_filter_memory(SharedFilterRef *ref, TlbfMemory *memory);
extern void tlbf_store_count_change(SharedFilterRef *ref);

/* Which filter, after how many changes: two equal versions, equal bits */
typedef struct StoreVersion
{
	PendingFilter id;
	uint64		changes;
} StoreVersion;
extern StoreVersion tlbf_store_version(const SharedFilterRef *ref);
extern bool tlbf_store_same_version(StoreVersion a, StoreVersion b);

/* keys of open transactions (shared_pending.c), for an open filter */
extern PendingFound tlbf_store_pending_find(const SharedFilterRef *ref, TlbfHash hash,
											TransactionId *wait_for, TlbfTime *at);
extern void tlbf_store_pending_reserve(const SharedFilterRef *ref, TlbfHash hash,
									   TlbfTime at, bool stored);
extern PendingFound tlbf_store_pending_claim(const SharedFilterRef *ref, TlbfHash hash,
											 TlbfTime at, bool stored,
											 TransactionId *wait_for, TlbfTime *found_at);
extern bool tlbf_store_pending_confirm(const SharedFilterRef *ref, TlbfHash hash);
extern bool tlbf_store_fold_due(const SharedFilterRef *ref);
extern TlbfStatus tlbf_store_fold(SharedFilterRef *ref, bool drop_oldest);
extern void tlbf_store_fold_if_crowded(void);

extern void tlbf_store_create(const char *name, const TlbfParams *params, int64 max_bytes);
extern void tlbf_store_drop(const char *name);
extern void tlbf_store_load(void);
extern int64 tlbf_store_adopt(void);
extern int	tlbf_store_save(MemoryContext ack_context, List **acks);
extern void tlbf_store_acknowledge(List *acks);
extern void tlbf_store_retire(TimestampTz now);
extern void tlbf_store_retire_all(TimestampTz now);
extern List *tlbf_store_databases_to_save(void);
extern int	tlbf_store_write_images(void);
extern int	tlbf_store_log_images(void);
extern XLogRecPtr tlbf_store_log_added(const SharedFilterRef *ref, const TlbfHash *hashes,
									   const TlbfTime *times, int n);
extern void tlbf_store_flush(XLogRecPtr end);
extern bool tlbf_store_replayed_find(const char *name, TlbfHash hash, TlbfTime *at);

/*
 * A copy of a filter: one the primary saved (what a standby reads), or
 * one of shared memory (tlbf_store_copies).
 */
typedef struct SavedFilter
{
	char	   *name;
	Tlbf	   *filter;
	Size		region;
	bool		unsaved;		/* changed since it was last saved */
	TransactionId row_xid;		/* wrote its row (read_row) */
} SavedFilter;

extern List *tlbf_store_copies(void);

/* A filter's counters, by name. */
typedef struct SavedCounts
{
	char	   *name;
	SharedCounts counts;
} SavedCounts;

extern void tlbf_store_count(const SharedFilterRef *ref, SharedCounter counter, uint64 n);
extern List *tlbf_store_counts(void);
extern int	tlbf_store_reset_counts(const char *name);
extern Tlbf *tlbf_store_saved_filter(FunctionCallInfo fcinfo, const char *name);
extern List *tlbf_store_saved_filters(void);

#endif							/* TLBF_SHARED_STORE_H */
