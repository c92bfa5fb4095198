/*-------------------------------------------------------------------------
 *
 * shared_prepared.h
 *	  The keys of prepared transactions, written down in pg_tlbf/pending/
 *	  so that a crash does not forget them, and read back when their
 *	  filter is loaded again.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_SHARED_PREPARED_H
#define TLBF_SHARED_PREPARED_H

#include "tlbf_pg.h"

#include "access/transam.h"
#include "nodes/pg_list.h"

/* A key as written down: the filter's name, the key's hash, its time. */
typedef struct PreparedKey
{
	char		name[NAMEDATALEN];
	uint64		a;
	uint64		b;
	TlbfTime	at;
} PreparedKey;

/* The keys prepared transactions wrote down for one filter, read back. */
typedef struct RestoredKey
{
	TlbfHash	hash;
	TlbfTime	at;
	TransactionId xid;
	bool		committed;		/* else its transaction is still prepared */
} RestoredKey;

typedef struct PreparedKeys
{
	int			count;
	RestoredKey keys[FLEXIBLE_ARRAY_MEMBER];
} PreparedKeys;

extern void tlbf_prepared_write(const PreparedKey *keys, int count);
extern void tlbf_prepared_write_recovered(Oid database, FullTransactionId fxid,
										  const PreparedKey *keys, int count);
extern PreparedKeys *tlbf_prepared_read(const char *name);
extern void tlbf_prepared_clean(bool (*settled) (const char *name));
extern void tlbf_prepared_clean_databases(const List *existing, TransactionId next_xid);

#endif							/* TLBF_SHARED_PREPARED_H */
