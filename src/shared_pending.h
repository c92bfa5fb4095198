/*-------------------------------------------------------------------------
 *
 * shared_pending.h
 *	  Keys that transactions still open have added to shared filters: they
 *	  enter a filter's bits only when their transaction commits.
 *	  No catalog access; the store (shared_store.c) calls these under the
 *	  filter's lock.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_SHARED_PENDING_H
#define TLBF_SHARED_PENDING_H

#include "shared_ref.h"

extern int	tlbf_max_pending_keys;

extern void tlbf_pending_init(void);
extern PendingFound tlbf_pending_find(PendingFilter filter, TlbfHash hash,
									  TransactionId *wait_for, TlbfTime *at);
extern void tlbf_pending_reserve(PendingFilter filter, const char *name, TlbfHash hash,
								 TlbfTime at, bool stored);
extern PendingFound tlbf_pending_claim(PendingFilter filter, const char *name, TlbfHash hash,
									   TlbfTime at, bool stored, TransactionId *wait_for,
									   TlbfTime *found_at);
extern bool tlbf_pending_confirm(PendingFilter filter, TlbfHash hash);
extern int	tlbf_pending_count(PendingFilter filter);

/* A key of the table, as an image in the WAL holds it. */
typedef struct PendingListed
{
	TransactionId xid;
	TlbfHash	hash;
	TlbfTime	at;
} PendingListed;

extern PendingListed *tlbf_pending_list(PendingFilter filter, int *count);
extern bool tlbf_pending_fold_due(PendingFilter filter, int keys);
extern bool tlbf_pending_crowded(void);
extern void tlbf_pending_crowded_folded(void);

/* what tlbf_pending_fold does with each key of a committed transaction */
typedef bool (*PendingFoldFn) (void *arg, TlbfHash hash, TlbfTime at);
extern int	tlbf_pending_fold(PendingFilter filter, PendingFoldFn fold, void *arg);
extern void tlbf_pending_forget(PendingFilter filter);

/* the keys prepared transactions wrote down before a restart (shared_prepared.h) */
struct PreparedKeys;
extern int	tlbf_pending_apply_prepared(PendingFilter filter, const struct PreparedKeys *keys,
										PendingFoldFn fold, void *arg);

#endif							/* TLBF_SHARED_PENDING_H */
