/*-------------------------------------------------------------------------
 *
 * shared_wal.h
 *	  The keys committed to shared filters, written to the WAL (a custom
 *	  resource manager), and what a recovery makes of them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_SHARED_WAL_H
#define TLBF_SHARED_WAL_H

#include "tlbf_pg.h"

#include "access/xlogdefs.h"
#include "shared_pending.h"
#include "shared_prepared.h"

extern int	tlbf_wal_resource_manager;

extern void tlbf_wal_init(void);
extern bool tlbf_wal_enabled(void);
extern void tlbf_wal_log_keys(const PreparedKey *keys, int count);
extern XLogRecPtr tlbf_wal_log_added(const char *name, const TlbfHash *hashes,
									 const TlbfTime *times, int n);
extern void tlbf_wal_flush(XLogRecPtr end);
extern void tlbf_wal_log_image(Oid database, const char *name, TransactionId row_xid,
							   Size region, const Tlbf *filter, const PendingListed *pending,
							   int npending);

#endif							/* TLBF_SHARED_WAL_H */
