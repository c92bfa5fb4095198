/*-------------------------------------------------------------------------
 *
 * shared_pending.c
 *	  Keys that transactions still open have added to shared filters.
 *
 * A Bloom filter cannot take a key back, so a key a transaction adds to a
 * shared filter (the dedup trigger's, tlbf_shared_add's) does not enter the
 * filter's bits until the transaction has committed.  Until then it waits
 * here, in a table in shared memory, with the XID of the (sub)transaction
 * that added it, and the rest follows from that XID's fate, as a heap
 * tuple's visibility follows its xmin:
 *
 *	- a key whose (sub)transaction is in progress (a prepared one too) makes
 *	  another transaction adding it wait for that one (XactLockTableWait, as
 *	  a unique index waits), then look again;
 *	- a key whose transaction committed is as good as in the filter: asked,
 *	  it is found, and whoever holds the filter exclusively next folds it
 *	  into the bits (tlbf_pending_fold);
 *	- a key whose (sub)transaction rolled back (a savepoint, an error, a
 *	  crash, ROLLBACK PREPARED) is ignored, and freed by the next fold.
 *
 * Nothing happens when a transaction ends, so nothing can fail then.
 *
 * A key is added in two steps by the dedup trigger when it has an AFTER
 * trigger (INSERT ... ON CONFLICT needs one): reserved by its BEFORE
 * trigger (so that a concurrent insertion of it waits), and marked stored
 * by its AFTER trigger, which fires only for a row that was stored (not for
 * one INSERT ... ON CONFLICT DO NOTHING skipped), at the end of the
 * statement.  A key reserved by an earlier statement of this transaction
 * and never marked stored does not count, nor does a committed key that
 * was never marked stored: the fold drops it.
 *
 * The table has tlbf.max_pending_keys entries in PENDING_PARTITIONS parts,
 * each with its LWLock; a key's part and place in it come from its hash
 * (linear probing, deletions by backward shift, so no tombstones).  One
 * transaction may hold at most a quarter of it, so that a bulk load cannot
 * keep other databases from adding keys.  Locking: a filter's lock (held
 * by the caller, the store), then a part's.
 *
 * A transaction that is prepared keeps its keys in memory, and writes them
 * to pg_tlbf/pending/ before its PREPARE record: after a crash they are
 * read back when their filter is loaded (tlbf_pending_restore), as pending
 * if the transaction is still prepared, into the filter if it committed.
 *
 *-------------------------------------------------------------------------
 */
#include "shared_pending.h"

#include <sys/stat.h>
#include <unistd.h>

#include "access/transam.h"
#include "access/twophase.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "utils/memutils.h"

/* settings (settings.c defines them) */
int			tlbf_max_pending_keys = 100000;

#define PENDING_PARTITIONS	16

typedef enum PendingState
{
	PENDING_FREE = 0,
	PENDING_RESERVED,			/* its row is being stored */
	PENDING_STORED_ROW			/* its row was stored */
} PendingState;

typedef struct PendingKey
{
	uint64		a;				/* the key's hash */
	uint64		b;
	uint64		generation;		/* of the filter's slot */
	TlbfTime	at;				/* when it was added */
	TransactionId xid;			/* the (sub)transaction that added it */
	CommandId	command;		/* and its statement */
	int16		slot;			/* the filter's directory slot */
	uint8		state;			/* PendingState */
} PendingKey;

typedef struct PendingPart
{
	int			used;
	PendingKey	keys[FLEXIBLE_ARRAY_MEMBER];
} PendingPart;

typedef struct PendingShared
{
	int			parts;			/* PENDING_PARTITIONS */
	pg_atomic_uint32 counts[FLEXIBLE_ARRAY_MEMBER];	/* keys per slot */
} PendingShared;

static PendingShared *shared = NULL;
static char *parts = NULL;
static LWLockPadded *locks = NULL;

static shmem_request_hook_type previous_request_hook = NULL;
static shmem_startup_hook_type previous_startup_hook = NULL;

/* keys this backend's transaction holds in the table (for the cap) */
static int	keys_held = 0;

static int
part_capacity(void)
{
	return Max(tlbf_max_pending_keys / PENDING_PARTITIONS, 16);
}

static Size
part_bytes(void)
{
	return MAXALIGN(add_size(offsetof(PendingPart, keys),
							 mul_size(part_capacity(), sizeof(PendingKey))));
}

static Size
shared_bytes(void)
{
	return MAXALIGN(add_size(offsetof(PendingShared, counts),
							 mul_size(tlbf_max_shared_filters, sizeof(pg_atomic_uint32))));
}

static PendingPart *
part_of(int p)
{
	return (PendingPart *) (parts + (Size) p * part_bytes());
}

static int
part_for(TlbfHash hash)
{
	return (int) (hash.b % PENDING_PARTITIONS);
}

static int
home_of(TlbfHash hash)
{
	return (int) (hash.a % (uint64) part_capacity());
}

static void
request_shared_memory(void)
{
	if (previous_request_hook)
		previous_request_hook();
	RequestAddinShmemSpace(add_size(shared_bytes(), mul_size(PENDING_PARTITIONS, part_bytes())));
	RequestNamedLWLockTranche("tlbf pending keys", PENDING_PARTITIONS);
}

static void
start_shared_memory(void)
{
	bool		found;

	if (previous_startup_hook)
		previous_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct("tlbf pending keys",
							 add_size(shared_bytes(), mul_size(PENDING_PARTITIONS, part_bytes())),
							 &found);
	parts = (char *) shared + shared_bytes();
	if (!found)
	{
		shared->parts = PENDING_PARTITIONS;
		for (int i = 0; i < tlbf_max_shared_filters; i++)
			pg_atomic_init_u32(&shared->counts[i], 0);
		for (int p = 0; p < PENDING_PARTITIONS; p++)
			memset(part_of(p), 0, part_bytes());
	}
	locks = GetNamedLWLockTranche("tlbf pending keys");
	LWLockRelease(AddinShmemInitLock);
}

static void
on_transaction_end(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE)
		keys_held = 0;
}

/* Set up the table's shared memory (from _PG_init, when preloaded). */
void
tlbf_pending_init(void)
{
	previous_request_hook = shmem_request_hook;
	shmem_request_hook = request_shared_memory;
	previous_startup_hook = shmem_startup_hook;
	shmem_startup_hook = start_shared_memory;
	RegisterXactCallback(on_transaction_end, NULL);
}

static bool
same_key(const PendingKey *k, PendingFilter filter, TlbfHash hash)
{
	return k->state != PENDING_FREE && k->a == hash.a && k->b == hash.b &&
		k->slot == filter.slot && k->generation == filter.generation;
}

/* What became of the (sub)transaction that added a key. */
typedef enum KeyFate
{
	FATE_MINE,					/* this transaction's */
	FATE_OPEN,					/* another's, in progress or prepared */
	FATE_COMMITTED,
	FATE_ROLLED_BACK
} KeyFate;

static KeyFate
fate_of(TransactionId xid)
{
	if (TransactionIdIsCurrentTransactionId(xid))
		return FATE_MINE;
	if (TransactionIdIsInProgress(xid))
		return FATE_OPEN;
	return TransactionIdDidCommit(xid) ? FATE_COMMITTED : FATE_ROLLED_BACK;
}

/*
 * Is the key pending for the filter?  PENDING_STORED if a committed
 * transaction stored it (not yet folded: *at is when), or this one added
 * it; PENDING_WAIT if another open transaction added it (*wait_for is
 * that (sub)transaction); else PENDING_NONE.  The caller holds the filter
 * locked, so that no fold moves the key meanwhile.
 */
PendingFound
tlbf_pending_find(PendingFilter filter, TlbfHash hash, TransactionId *wait_for, TlbfTime *at)
{
	int			p = part_for(hash);
	PendingPart *part = part_of(p);
	int			capacity = part_capacity();
	PendingFound found = PENDING_NONE;

	if (filter.slot < 0 || filter.slot >= tlbf_max_shared_filters)
		return PENDING_NONE;
	LWLockAcquire(&locks[p].lock, LW_SHARED);
	for (int i = home_of(hash), n = 0; n < capacity && part->keys[i].state != PENDING_FREE;
		 i = (i + 1) % capacity, n++)
	{
		const PendingKey *k = &part->keys[i];

		if (!same_key(k, filter, hash))
			continue;
		switch (fate_of(k->xid))
		{
			case FATE_MINE:
				/* reserved by an earlier statement, never confirmed: skipped */
				if (k->state == PENDING_RESERVED &&
					k->command < GetCurrentCommandId(false))
					continue;
				*at = k->at;
				found = PENDING_STORED;
				break;
			case FATE_OPEN:
				if (found == PENDING_NONE)
				{
					*wait_for = k->xid;
					found = PENDING_WAIT;
				}
				continue;
			case FATE_COMMITTED:
				if (k->state != PENDING_STORED_ROW)
					continue;
				*at = k->at;
				found = PENDING_STORED;
				break;
			case FATE_ROLLED_BACK:
				continue;
		}
		break;
	}
	LWLockRelease(&locks[p].lock);
	return found;
}

/*
 * Add a key this transaction reserves for the filter, as its current
 * (sub)transaction's: 'stored' says its row is stored already (a key added
 * by tlbf_shared_add), else tlbf_pending_confirm marks it once it is.
 * ERROR (53200) when the table, or this transaction's share of it, is
 * full.
 */
void
tlbf_pending_reserve(PendingFilter filter, TlbfHash hash, TlbfTime at, bool stored)
{
	int			p = part_for(hash);
	PendingPart *part = part_of(p);
	int			capacity = part_capacity();
	TransactionId xid = GetCurrentTransactionId();
	int			i;

	if (keys_held >= tlbf_max_pending_keys / 4)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("a transaction can add at most %d keys to shared tlbf filters",
						tlbf_max_pending_keys / 4),
				 errdetail("Keys wait in shared memory until their transaction commits, and one transaction may take a quarter of tlbf.max_pending_keys."),
				 errhint("Add the rows in smaller transactions, or raise tlbf.max_pending_keys (a restart).")));
	LWLockAcquire(&locks[p].lock, LW_EXCLUSIVE);
	if (part->used >= capacity - 1)
	{
		LWLockRelease(&locks[p].lock);
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many keys of open transactions wait for shared tlbf filters"),
				 errdetail("tlbf.max_pending_keys is %d.", tlbf_max_pending_keys),
				 errhint("Commit sooner, or raise tlbf.max_pending_keys (a restart).")));
	}
	for (i = home_of(hash); part->keys[i].state != PENDING_FREE; i = (i + 1) % capacity)
		;
	part->keys[i].a = hash.a;
	part->keys[i].b = hash.b;
	part->keys[i].generation = filter.generation;
	part->keys[i].at = at;
	part->keys[i].xid = xid;
	part->keys[i].command = GetCurrentCommandId(false);
	part->keys[i].slot = (int16) filter.slot;
	part->keys[i].state = stored ? PENDING_STORED_ROW : PENDING_RESERVED;
	part->used++;
	LWLockRelease(&locks[p].lock);
	pg_atomic_fetch_add_u32(&shared->counts[filter.slot], 1);
	keys_held++;
}

/*
 * Mark a key this transaction reserved as stored (its row is in the
 * table).  False if this transaction holds no such key.
 */
bool
tlbf_pending_confirm(PendingFilter filter, TlbfHash hash)
{
	int			p = part_for(hash);
	PendingPart *part = part_of(p);
	int			capacity = part_capacity();
	bool		found = false;

	LWLockAcquire(&locks[p].lock, LW_EXCLUSIVE);
	for (int i = home_of(hash), n = 0; n < capacity && part->keys[i].state != PENDING_FREE;
		 i = (i + 1) % capacity, n++)
	{
		PendingKey *k = &part->keys[i];

		if (same_key(k, filter, hash) && k->state == PENDING_RESERVED &&
			TransactionIdIsCurrentTransactionId(k->xid))
		{
			k->state = PENDING_STORED_ROW;
			found = true;
			break;
		}
	}
	LWLockRelease(&locks[p].lock);
	return found;
}

/* About how many keys wait for the filter (to decide when to fold). */
int
tlbf_pending_count(PendingFilter filter)
{
	if (filter.slot < 0 || filter.slot >= tlbf_max_shared_filters)
		return 0;
	return (int) pg_atomic_read_u32(&shared->counts[filter.slot]);
}

/*
 * Free entry i of a part, shifting back the entries after it that probed
 * past it, so that every key stays reachable from its home.
 */
static void
free_entry(PendingPart *part, int i)
{
	int			capacity = part_capacity();
	int			hole = i;

	part->keys[hole].state = PENDING_FREE;
	part->used--;
	for (int j = (hole + 1) % capacity; part->keys[j].state != PENDING_FREE; j = (j + 1) % capacity)
	{
		TlbfHash	h = {part->keys[j].a, part->keys[j].b};
		int			home = home_of(h);

		/* j may move to the hole if its home is not in (hole, j] */
		if ((hole < j) ? (home <= hole || home > j) : (home <= hole && home > j))
		{
			part->keys[hole] = part->keys[j];
			part->keys[j].state = PENDING_FREE;
			hole = j;
		}
	}
}

/*
 * Fold the filter's keys whose transactions have ended: those committed
 * and stored go to 'fold' (into the filter's bits), the others are freed;
 * those of open transactions stay.  The caller holds the filter
 * exclusively.  If 'fold' fails (returns false, or raises an error), the
 * key stays, to be folded later.  Returns the keys folded.
 */
int
tlbf_pending_fold(PendingFilter filter, PendingFoldFn fold, void *arg)
{
	int			folded = 0;

	if (filter.slot < 0 || filter.slot >= tlbf_max_shared_filters ||
		pg_atomic_read_u32(&shared->counts[filter.slot]) == 0)
		return 0;
	for (int p = 0; p < PENDING_PARTITIONS; p++)
	{
		PendingPart *part = part_of(p);
		int			capacity = part_capacity();

		LWLockAcquire(&locks[p].lock, LW_EXCLUSIVE);
		for (int i = 0; i < capacity; i++)
		{
			PendingKey *k = &part->keys[i];
			TlbfHash	h;
			KeyFate		fate;

			CHECK_FOR_INTERRUPTS();
			if (k->state == PENDING_FREE || k->slot != filter.slot ||
				k->generation != filter.generation)
				continue;
			fate = fate_of(k->xid);
			if (fate == FATE_MINE || fate == FATE_OPEN)
				continue;
			h.a = k->a;
			h.b = k->b;
			if (fate == FATE_COMMITTED && k->state == PENDING_STORED_ROW)
			{
				if (!fold(arg, h, k->at))
					continue;
				folded++;
			}
			free_entry(part, i);
			pg_atomic_fetch_sub_u32(&shared->counts[filter.slot], 1);
			i--;				/* an entry may have moved into i */
		}
		LWLockRelease(&locks[p].lock);
	}
	return folded;
}

/* Free every key pending for a filter that is gone (dropped, freed). */
void
tlbf_pending_forget(PendingFilter filter)
{
	if (filter.slot < 0 || filter.slot >= tlbf_max_shared_filters)
		return;
	for (int p = 0; p < PENDING_PARTITIONS; p++)
	{
		PendingPart *part = part_of(p);
		int			capacity = part_capacity();

		LWLockAcquire(&locks[p].lock, LW_EXCLUSIVE);
		for (int i = 0; i < capacity; i++)
		{
			PendingKey *k = &part->keys[i];

			if (k->state == PENDING_FREE || k->slot != filter.slot ||
				k->generation != filter.generation)
				continue;
			free_entry(part, i);
			pg_atomic_fetch_sub_u32(&shared->counts[filter.slot], 1);
			i--;
		}
		LWLockRelease(&locks[p].lock);
	}
}
