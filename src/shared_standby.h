/*-------------------------------------------------------------------------
 *
 * shared_standby.h
 *	  The keys a hot standby replayed from the WAL, for its readers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_SHARED_STANDBY_H
#define TLBF_SHARED_STANDBY_H

#include "tlbf_pg.h"

extern void tlbf_standby_init(void);
extern void tlbf_standby_add(Oid database, const char *name, TransactionId xid, uint64 a,
							 uint64 b, TlbfTime at);
extern bool tlbf_standby_find(const char *name, TlbfHash hash, TlbfTime *at);

#endif							/* TLBF_SHARED_STANDBY_H */
