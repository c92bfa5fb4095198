/*-------------------------------------------------------------------------
 *
 * shared_standby.c
 *	  The keys a hot standby replayed from the WAL, for its readers.
 *
 * A standby does not load shared filters: tlbf_shared_contains and its
 * kin read the copy the primary saved, replicated with the snapshot
 * table, which is up to a snapshot interval old.  The keys committed since
 * are in the WAL (shared_wal.c), which the startup process replays: it
 * puts each here (tlbf_standby_add), with the XID of its transaction, and
 * a reader finds a key in the saved copy or here, if its transaction
 * committed by the replay so far (tlbf_standby_find).  So a standby finds
 * a key once it has replayed its commit.
 *
 * Here is a ring of the last tlbf.max_pending_keys keys replayed, the
 * oldest overwritten by the next, with an index by hash (linear probing,
 * deletions by backward shift): a key stays findable for as long as the
 * ring holds it, which must outlast the primary's next save of its filter
 * (tlbf.snapshot_interval), the one that brings it in the saved copy.
 * One LWLock: the startup process writes under it exclusively, one record
 * at a time, readers look under it shared.  It is reserved only on a
 * server started as a standby; a primary never uses it.
 *
 *-------------------------------------------------------------------------
 */
#include "shared_standby.h"

#include <unistd.h>

#include "access/transam.h"
#include "access/xlog.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "shared_pending.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/procarray.h"
#include "storage/shmem.h"

typedef struct StandbyKey
{
	uint64		seq;			/* its place in the ring's order; 0: none */
	uint64		a;				/* the key's hash */
	uint64		b;
	TlbfTime	at;
	Oid			database;
	uint32		name_hash;		/* of its filter's name */
	TransactionId xid;			/* of the transaction that added it */
} StandbyKey;

typedef struct StandbyRing
{
	uint64		next_seq;		/* the next key's; starts at 1 */
	/* then 'capacity' StandbyKey, then 2 * capacity index slots (uint64 seq) */
} StandbyRing;

static StandbyRing *ring = NULL;
static StandbyKey *keys = NULL;
static uint64 *slots = NULL;
static LWLock *lock = NULL;

static shmem_request_hook_type previous_request_hook = NULL;
static shmem_startup_hook_type previous_startup_hook = NULL;

static uint64
capacity(void)
{
	return (uint64) tlbf_max_pending_keys;
}

static uint64
nslots(void)
{
	return 2 * capacity();
}

static Size
ring_bytes(void)
{
	return add_size(MAXALIGN(sizeof(StandbyRing)),
					add_size(mul_size(capacity(), sizeof(StandbyKey)),
							 mul_size(nslots(), sizeof(uint64))));
}

/*
 * Is the server starting as a standby?  Only then is the ring reserved: a
 * primary never reads it, and a server becomes a standby only by a start
 * with standby.signal.  (The postmaster asks, in the data directory.)
 */
static bool standby_start = false;

static void
request_shared_memory(void)
{
	if (previous_request_hook)
		previous_request_hook();
	standby_start = access(STANDBY_SIGNAL_FILE, F_OK) == 0;
	if (!standby_start)
		return;
	RequestAddinShmemSpace(ring_bytes());
	RequestNamedLWLockTranche("tlbf standby keys", 1);
}

static void
start_shared_memory(void)
{
	bool		found;

	if (previous_startup_hook)
		previous_startup_hook();
	if (!standby_start)
		return;
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	ring = ShmemInitStruct("tlbf standby keys", ring_bytes(), &found);
	keys = (StandbyKey *) ((char *) ring + MAXALIGN(sizeof(StandbyRing)));
	slots = (uint64 *) (keys + capacity());
	if (!found)
		memset(ring, 0, ring_bytes());
	ring->next_seq = Max(ring->next_seq, 1);
	lock = &(GetNamedLWLockTranche("tlbf standby keys"))->lock;
	LWLockRelease(AddinShmemInitLock);
}

/* Set up the ring's shared memory (from _PG_init, when preloaded). */
void
tlbf_standby_init(void)
{
	previous_request_hook = shmem_request_hook;
	shmem_request_hook = request_shared_memory;
	previous_startup_hook = shmem_startup_hook;
	shmem_startup_hook = start_shared_memory;
}

static uint32
name_hash(const char *name)
{
	return hash_bytes((const unsigned char *) name, strlen(name));
}

static uint64
home_of(uint64 a)
{
	return a % nslots();
}

static StandbyKey *
key_of(uint64 seq)
{
	return &keys[seq % capacity()];
}

/* Take the index slot of key 'k' out, shifting back those that probed past it. */
static void
unindex(const StandbyKey *k)
{
	uint64		hole = home_of(k->a);
	uint64		j;

	while (slots[hole] != k->seq)
	{
		if (slots[hole] == 0)
			return;				/* not indexed (cannot happen) */
		hole = (hole + 1) % nslots();
	}
	for (j = (hole + 1) % nslots(); slots[j] != 0; j = (j + 1) % nslots())
	{
		uint64		home = home_of(key_of(slots[j])->a);

		/* may slots[j] move back to the hole: is its home not in (hole, j]? */
		if ((j > hole && (home <= hole || home > j)) ||
			(j < hole && home <= hole && home > j))
		{
			slots[hole] = slots[j];
			hole = j;
		}
	}
	slots[hole] = 0;
}

/*
 * A key the startup process replayed (shared_wal.c): into the ring, the
 * oldest out.  Nothing here can fail.
 */
void
tlbf_standby_add(Oid database, const char *name, TransactionId xid, uint64 a, uint64 b,
				 TlbfTime at)
{
	StandbyKey *k;
	uint64		i;

	if (ring == NULL)
		return;
	LWLockAcquire(lock, LW_EXCLUSIVE);
	k = key_of(ring->next_seq);
	if (k->seq != 0)
		unindex(k);
	k->seq = ring->next_seq++;
	k->a = a;
	k->b = b;
	k->at = at;
	k->database = database;
	k->name_hash = name_hash(name);
	k->xid = xid;
	for (i = home_of(a); slots[i] != 0; i = (i + 1) % nslots())
		;
	slots[i] = k->seq;
	LWLockRelease(lock);
}

/* Did the key's transaction commit, by the replay so far? */
static bool
committed(TransactionId xid)
{
	/* the frozen XID: added at once (tlbf_shared_rebuild) */
	if (!TransactionIdIsNormal(xid))
		return xid == FrozenTransactionId;
	if (TransactionIdIsInProgress(xid))
		return false;
	return TransactionIdDidCommit(xid);
}

/*
 * On a standby: was key 'hash' of filter 'name' of this database replayed,
 * from a transaction that committed?  *at: when it was added last.
 */
bool
tlbf_standby_find(const char *name, TlbfHash hash, TlbfTime *at)
{
	uint32		nh = name_hash(name);
	bool		found = false;
	int			n = 0;
	TransactionId xids[16];
	TlbfTime	ats[16];

	if (ring == NULL)
		return false;
	/* the candidates under the lock; their fates after (the commit log) */
	LWLockAcquire(lock, LW_SHARED);
	for (uint64 i = home_of(hash.a); slots[i] != 0 && n < lengthof(xids); i = (i + 1) % nslots())
	{
		const StandbyKey *k = key_of(slots[i]);

		if (k->seq == slots[i] && k->a == hash.a && k->b == hash.b &&
			k->database == MyDatabaseId && k->name_hash == nh)
		{
			xids[n] = k->xid;
			ats[n] = k->at;
			n++;
		}
	}
	LWLockRelease(lock);
	for (int i = 0; i < n; i++)
		if (committed(xids[i]) && (!found || ats[i] > *at))
		{
			*at = ats[i];
			found = true;
		}
	return found;
}
