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
 * statement.  A key reserved by a statement of this transaction that has
 * finished (statements.c) without marking it stored does not count, nor
 * does a committed key that was never marked stored: the fold drops it.
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
 * read back when their filter is loaded (tlbf_prepared_read, then
 * tlbf_pending_apply_prepared before anyone sees the filter), as pending if
 * the transaction is still prepared, into the filter if it committed.
 *
 *-------------------------------------------------------------------------
 */
#include "shared_pending.h"
#include "settings.h"
#include "shared_wal.h"
#include "shared_prepared.h"
#include "statements.h"

#include "access/transam.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

/* settings (settings.c defines them) */
int			tlbf_max_pending_keys = 200000;

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
	uint32		statement;		/* and its statement, if this backend's
								 * (statements.c; 0: not known) */
	int16		slot;			/* the filter's directory slot */
	uint8		state;			/* PendingState */
	uint8		ended;			/* FATE_COMMITTED or FATE_ROLLED_BACK once
								 * seen so (0: not known), as a heap tuple's
								 * hint bits: looked up once, not again */
} PendingKey;

typedef struct PendingPart
{
	int			used;
	PendingKey	keys[FLEXIBLE_ARRAY_MEMBER];
} PendingPart;

/*
 * A filter's keys in the table, how many its last fold left there, and
 * whether that fold stopped short (the filter full)
 */
typedef struct PendingCount
{
	pg_atomic_uint32 keys;
	pg_atomic_uint32 after_fold;
	pg_atomic_uint32 fold_stopped;
} PendingCount;

typedef struct PendingShared
{
	int			parts;			/* PENDING_PARTITIONS */
	pg_atomic_uint32 after_crowded_fold;	/* keys left by the last fold of
											 * a crowded table */
	PendingCount counts[FLEXIBLE_ARRAY_MEMBER];	/* per slot */
} PendingShared;

static PendingShared *shared = NULL;
static char *parts = NULL;
static LWLockPadded *locks = NULL;

static shmem_request_hook_type previous_request_hook = NULL;
static shmem_startup_hook_type previous_startup_hook = NULL;

/* keys this backend's transaction holds in the table (for the cap) */
static int	keys_held = 0;

/*
 * The keys this transaction added, to write them down if it is prepared
 * (in TopTransactionContext: gone with the transaction).
 */
typedef struct MyKey
{
	char		name[NAMEDATALEN];
	TlbfHash	hash;
	TlbfTime	at;
	TransactionId xid;
	bool		stored;
} MyKey;

static List *my_keys = NIL;

/*
 * Those of my_keys waiting for their row to be confirmed, by hash: the
 * AFTER trigger confirms each row of a statement that may have thousands.
 */
typedef struct UnconfirmedId
{
	TlbfHash	hash;
	PendingFilter filter;
} UnconfirmedId;

typedef struct UnconfirmedKey
{
	UnconfirmedId id;			/* the hash key */
	MyKey	   *mine;
} UnconfirmedKey;

static HTAB *unconfirmed = NULL;

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
							 mul_size(tlbf_max_shared_filters, sizeof(PendingCount))));
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
		pg_atomic_init_u32(&shared->after_crowded_fold, 0);
		for (int i = 0; i < tlbf_max_shared_filters; i++)
		{
			pg_atomic_init_u32(&shared->counts[i].keys, 0);
			pg_atomic_init_u32(&shared->counts[i].after_fold, 0);
			pg_atomic_init_u32(&shared->counts[i].fold_stopped, 0);
		}
		for (int p = 0; p < PENDING_PARTITIONS; p++)
			memset(part_of(p), 0, part_bytes());
	}
	locks = GetNamedLWLockTranche("tlbf pending keys");
	LWLockRelease(AddinShmemInitLock);
}

static void write_down_keys(bool prepare);

static void
on_transaction_end(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			write_down_keys(false);
			break;
		case XACT_EVENT_PRE_PREPARE:
			write_down_keys(true);
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
			keys_held = 0;
			my_keys = NIL;		/* freed with TopTransactionContext */
			unconfirmed = NULL;
			break;
		default:
			break;
	}
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
	FATE_MINE = 1,				/* this transaction's */
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
 * The fate of a key's transaction, from its hint when it has one, else
 * looked up and hinted once it has ended.  The hint is a byte written
 * under a shared lock too, as a tuple's hint bits are: every writer writes
 * the same value, and entries move only under the exclusive lock.
 */
static KeyFate
key_fate(PendingKey *k)
{
	KeyFate		fate;

	if (k->ended != 0)
		return (KeyFate) k->ended;
	fate = fate_of(k->xid);
	if (fate == FATE_COMMITTED || fate == FATE_ROLLED_BACK)
		k->ended = (uint8) fate;
	return fate;
}

/*
 * The same, cheaper for the many keys a fold looks at: the commit log
 * first (a key whose transaction is committed there is committed, even if
 * the transaction has not left the process array yet), then the process
 * array, which takes a lock and looks through every backend.  One that
 * has left it may have committed since the first look (a commit is
 * written to the log, then leaves the array): the log is read again
 * before a key is taken for rolled back and freed.
 */
static KeyFate
fate_for_fold(TransactionId xid)
{
	if (TransactionIdIsCurrentTransactionId(xid))
		return FATE_MINE;
	if (TransactionIdDidCommit(xid))
		return FATE_COMMITTED;
	if (TransactionIdIsInProgress(xid))
		return FATE_OPEN;
	return TransactionIdDidCommit(xid) ? FATE_COMMITTED : FATE_ROLLED_BACK;
}

/*
 * What part 'p' (locked by the caller) holds of the key: see
 * tlbf_pending_find.
 */
static PendingFound
scan_part(int p, PendingFilter filter, TlbfHash hash, TransactionId *wait_for, TlbfTime *at)
{
	PendingPart *part = part_of(p);
	int			capacity = part_capacity();
	PendingFound found = PENDING_NONE;

	for (int i = home_of(hash), n = 0; n < capacity && part->keys[i].state != PENDING_FREE;
		 i = (i + 1) % capacity, n++)
	{
		PendingKey *k = &part->keys[i];

		if (!same_key(k, filter, hash))
			continue;
		switch (key_fate(k))
		{
			case FATE_MINE:
				/* reserved by a statement that ended without storing its row */
				if (k->state == PENDING_RESERVED && !tlbf_statement_running(k->statement))
					continue;
				*at = k->at;
				return PENDING_STORED;
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
				return PENDING_STORED;
			case FATE_ROLLED_BACK:
				continue;
		}
	}
	return found;
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
	PendingFound found;

	if (filter.slot < 0 || filter.slot >= tlbf_max_shared_filters)
		return PENDING_NONE;
	LWLockAcquire(&locks[p].lock, LW_SHARED);
	found = scan_part(p, filter, hash, wait_for, at);
	LWLockRelease(&locks[p].lock);
	return found;
}

/*
 * Put a key in part 'p' (locked exclusively by the caller), as
 * (sub)transaction xid's.  False if the part is full.
 */
static bool
put_key(int p, PendingFilter filter, TlbfHash hash, TlbfTime at, TransactionId xid,
		bool stored)
{
	PendingPart *part = part_of(p);
	int			capacity = part_capacity();
	int			i;

	if (part->used >= capacity - 1)
		return false;
	for (i = home_of(hash); part->keys[i].state != PENDING_FREE; i = (i + 1) % capacity)
		;
	part->keys[i].a = hash.a;
	part->keys[i].b = hash.b;
	part->keys[i].generation = filter.generation;
	part->keys[i].at = at;
	part->keys[i].xid = xid;
	part->keys[i].statement = TransactionIdIsCurrentTransactionId(xid) ?
		tlbf_statement_current() : 0;
	part->keys[i].slot = (int16) filter.slot;
	part->keys[i].state = stored ? PENDING_STORED_ROW : PENDING_RESERVED;
	part->keys[i].ended = 0;
	part->used++;
	pg_atomic_fetch_add_u32(&shared->counts[filter.slot].keys, 1);
	return true;
}

static void
report_table_full(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("too many keys of open transactions wait for shared tlbf filters"),
			 errdetail("tlbf.max_pending_keys is %d.", tlbf_max_pending_keys),
			 errhint("Commit sooner, or raise tlbf.max_pending_keys (a restart).")));
}

/* Put a key in the table, as (sub)transaction xid's; ERROR when full. */
static void
add_entry(PendingFilter filter, TlbfHash hash, TlbfTime at, TransactionId xid, bool stored)
{
	int			p = part_for(hash);
	bool		put;

	LWLockAcquire(&locks[p].lock, LW_EXCLUSIVE);
	put = put_key(p, filter, hash, at, xid, stored);
	LWLockRelease(&locks[p].lock);
	if (!put)
		report_table_full();
}

/* Remember a key this transaction added, to write it down at PREPARE. */
static void
remember_key(PendingFilter filter, const char *name, TlbfHash hash, TlbfTime at,
			 TransactionId xid, bool stored)
{
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	MyKey	   *mine = palloc0(sizeof(MyKey));

	strlcpy(mine->name, name, NAMEDATALEN);
	mine->hash = hash;
	mine->at = at;
	mine->xid = xid;
	mine->stored = stored;
	my_keys = lappend(my_keys, mine);
	keys_held++;
	if (!stored)
	{
		UnconfirmedId id;
		UnconfirmedKey *entry;

		if (unconfirmed == NULL)
		{
			HASHCTL		info;

			info.keysize = sizeof(UnconfirmedId);
			info.entrysize = sizeof(UnconfirmedKey);
			info.hcxt = TopTransactionContext;
			unconfirmed = hash_create("tlbf keys to confirm", 256, &info,
									  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		}
		memset(&id, 0, sizeof(id));	/* hashed as bytes, padding included */
		id.hash = hash;
		id.filter.slot = filter.slot;	/* (not the padding) */
		id.filter.generation = filter.generation;
		entry = hash_search(unconfirmed, &id, HASH_ENTER, NULL);
		entry->mine = mine;
	}
	MemoryContextSwitchTo(old);
}

static void
check_share(void)
{
	if (keys_held >= tlbf_max_pending_keys / 4)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("a transaction can add at most %d keys to shared tlbf filters",
						tlbf_max_pending_keys / 4),
				 errdetail("Keys wait in shared memory until their transaction commits, and one transaction may take a quarter of tlbf.max_pending_keys."),
				 errhint("Add the rows in smaller transactions, or raise tlbf.max_pending_keys (a restart).")));
}

/*
 * The test-and-add of the keys pending, in one step under the key's part's
 * lock: if the key is pending for a committed transaction or this one
 * (PENDING_STORED, *at when), or for another open one (PENDING_WAIT,
 * *wait_for), nothing is added; else (PENDING_NONE) it is added as this
 * (sub)transaction's, as tlbf_pending_reserve adds it.  So of two
 * transactions claiming a key at once, the second finds the first's.
 */
PendingFound
tlbf_pending_claim(PendingFilter filter, const char *name, TlbfHash hash, TlbfTime at,
				   bool stored, TransactionId *wait_for, TlbfTime *found_at)
{
	int			p = part_for(hash);
	TransactionId xid;
	PendingFound found;
	bool		put = true;

	check_share();
	for (;;)
	{
		/*
		 * An XID only for a key that is added: a row rejected for a key
		 * found here then commits nothing (no WAL, no flush), as a row a
		 * trigger skips should.  One is assigned with no lock held, and
		 * the key looked for again.
		 */
		xid = GetCurrentTransactionIdIfAny();
		LWLockAcquire(&locks[p].lock, LW_EXCLUSIVE);
		found = scan_part(p, filter, hash, wait_for, found_at);
		if (found == PENDING_NONE && TransactionIdIsValid(xid))
			put = put_key(p, filter, hash, at, xid, stored);
		LWLockRelease(&locks[p].lock);
		if (found != PENDING_NONE || TransactionIdIsValid(xid))
			break;
		(void) GetCurrentTransactionId();
	}
	if (!put)
		report_table_full();
	if (found == PENDING_NONE)
		remember_key(filter, name, hash, at, xid, stored);
	return found;
}

/*
 * Add a key for filter 'name' as this transaction's current
 * (sub)transaction's, whatever is pending already: 'stored' says its row is
 * stored already (a key added by tlbf_shared_add, or by a trigger without
 * an AFTER trigger), else tlbf_pending_confirm marks it once it is.  ERROR
 * (53200) when the table, or this transaction's share of it, is full.
 */
void
tlbf_pending_reserve(PendingFilter filter, const char *name, TlbfHash hash, TlbfTime at,
					 bool stored)
{
	TransactionId xid = GetCurrentTransactionId();

	check_share();
	add_entry(filter, hash, at, xid, stored);
	remember_key(filter, name, hash, at, xid, stored);
}

/*
 * Mark a key this transaction reserved as stored (its row is in the
 * table).  False if this transaction holds no such key.  Of several
 * reservations of the key (an earlier statement's row that ON CONFLICT
 * skipped, then this one's, perhaps in a subtransaction), the newest is
 * this row's: marking an older one would keep the key if this row's
 * subtransaction rolled back.
 */
bool
tlbf_pending_confirm(PendingFilter filter, TlbfHash hash)
{
	int			p = part_for(hash);
	PendingPart *part = part_of(p);
	int			capacity = part_capacity();
	PendingKey *newest = NULL;

	LWLockAcquire(&locks[p].lock, LW_EXCLUSIVE);
	for (int i = home_of(hash), n = 0; n < capacity && part->keys[i].state != PENDING_FREE;
		 i = (i + 1) % capacity, n++)
	{
		PendingKey *k = &part->keys[i];

		if (same_key(k, filter, hash) && k->state == PENDING_RESERVED &&
			TransactionIdIsCurrentTransactionId(k->xid) &&
			(newest == NULL || k->statement >= newest->statement))
			newest = k;
	}
	if (newest != NULL)
		newest->state = PENDING_STORED_ROW;
	LWLockRelease(&locks[p].lock);
	if (newest != NULL && unconfirmed != NULL)
	{
		UnconfirmedId id;
		UnconfirmedKey *entry;

		memset(&id, 0, sizeof(id));
		id.hash = hash;
		id.filter.slot = filter.slot;	/* (not the padding) */
		id.filter.generation = filter.generation;
		entry = hash_search(unconfirmed, &id, HASH_FIND, NULL);
		if (entry != NULL)
		{
			entry->mine->stored = true;
			(void) hash_search(unconfirmed, &id, HASH_REMOVE, NULL);
		}
	}
	return newest != NULL;
}

/* About how many keys wait for the filter. */
int
tlbf_pending_count(PendingFilter filter)
{
	if (filter.slot < 0 || filter.slot >= tlbf_max_shared_filters)
		return 0;
	return (int) pg_atomic_read_u32(&shared->counts[filter.slot].keys);
}

/*
 * Is a fold of the filter due: have 'keys' keys come since the last fold?
 * Counted from what the last fold left (keys of open transactions, which
 * no fold can take): else each key a long transaction adds would start a
 * fold that scans the whole table for nothing.  Always, after a fold that
 * stopped short: the filter is full, and each insertion fails until it has
 * room again.
 */
bool
tlbf_pending_fold_due(PendingFilter filter, int keys)
{
	uint32		now;
	uint32		left;

	if (filter.slot < 0 || filter.slot >= tlbf_max_shared_filters)
		return false;
	if (pg_atomic_read_u32(&shared->counts[filter.slot].fold_stopped) != 0)
		return true;
	now = pg_atomic_read_u32(&shared->counts[filter.slot].keys);
	left = pg_atomic_read_u32(&shared->counts[filter.slot].after_fold);
	return now >= left + (uint32) keys;
}

/*
 * Is the table crowded: half full, and grown by a 16th since the last
 * time it was (tlbf_pending_crowded_folded)?  Each filter folds its keys
 * when enough have come (tlbf_pending_fold_due), but many filters each
 * short of that could fill the table together, and every insertion would
 * then fail (53200) until the savers folded them: the caller
 * folds them all now.  What a fold leaves (keys of open transactions) does
 * not make the table crowded again until more come.  Read unlocked: a fold
 * a little early or late is harmless.
 */
bool
tlbf_pending_crowded(void)
{
	int			capacity = PENDING_PARTITIONS * part_capacity();
	int			used = 0;

	if (shared == NULL)
		return false;
	for (int p = 0; p < PENDING_PARTITIONS; p++)
		used += part_of(p)->used;
	return used >= capacity / 2 &&
		used >= (int) pg_atomic_read_u32(&shared->after_crowded_fold) + capacity / 16;
}

/* The caller folded what crowded the table: count from what is left. */
void
tlbf_pending_crowded_folded(void)
{
	int			used = 0;

	for (int p = 0; p < PENDING_PARTITIONS; p++)
		used += part_of(p)->used;
	pg_atomic_write_u32(&shared->after_crowded_fold, (uint32) used);
}

/*
 * The keys of filter 'filter' in the table (but those known rolled back),
 * palloc'd, *count of them: for an image of the filter in the WAL
 * (shared_wal.c), which must hold the keys of transactions that have not
 * committed yet too.  The caller holds the filter.
 */
PendingListed *
tlbf_pending_list(PendingFilter filter, int *count)
{
	PendingListed *listed = NULL;
	int			room = 0;

	*count = 0;
	if (filter.slot < 0 || filter.slot >= tlbf_max_shared_filters ||
		pg_atomic_read_u32(&shared->counts[filter.slot].keys) == 0)
		return NULL;
	for (int p = 0; p < PENDING_PARTITIONS; p++)
	{
		PendingPart *part = part_of(p);
		int			capacity = part_capacity();

		LWLockAcquire(&locks[p].lock, LW_SHARED);
		for (int i = 0; i < capacity; i++)
		{
			PendingKey *k = &part->keys[i];

			if (k->state == PENDING_FREE || k->slot != filter.slot ||
				k->generation != filter.generation || k->ended == FATE_ROLLED_BACK)
				continue;
			if (*count == room)
			{
				room = Max(room * 2, 64);
				listed = listed == NULL ? palloc(room * sizeof(PendingListed)) :
					repalloc(listed, room * sizeof(PendingListed));
			}
			listed[*count].xid = k->xid;
			listed[*count].hash.a = k->a;
			listed[*count].hash.b = k->b;
			listed[*count].at = k->at;
			(*count)++;
		}
		LWLockRelease(&locks[p].lock);
	}
	return listed;
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

/* A key of a committed transaction, to be folded. */
typedef struct FoldKey
{
	TlbfHash	hash;
	TlbfTime	at;
	TransactionId xid;
} FoldKey;

static int
by_time(const void *a, const void *b)
{
	TlbfTime	x = ((const FoldKey *) a)->at;
	TlbfTime	y = ((const FoldKey *) b)->at;

	return x < y ? -1 : x > y;
}

static int
by_identity(const void *a, const void *b)
{
	const FoldKey *x = a;
	const FoldKey *y = b;

	if (x->hash.a != y->hash.a)
		return x->hash.a < y->hash.a ? -1 : 1;
	if (x->hash.b != y->hash.b)
		return x->hash.b < y->hash.b ? -1 : 1;
	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->xid < y->xid ? -1 : x->xid > y->xid;
}

/*
 * Free the filter's keys that are folded ('folded' keys, sorted by
 * by_identity) or whose transactions ended otherwise.
 */
static void
free_ended(PendingFilter filter, const FoldKey *folded_keys, int folded)
{
	for (int p = 0; p < PENDING_PARTITIONS; p++)
	{
		PendingPart *part = part_of(p);
		int			capacity = part_capacity();

		LWLockAcquire(&locks[p].lock, LW_EXCLUSIVE);
		for (int i = 0; i < capacity; i++)
		{
			PendingKey *k = &part->keys[i];
			KeyFate		fate;
			bool		gone;

			if (k->state == PENDING_FREE || k->slot != filter.slot ||
				k->generation != filter.generation)
				continue;
			fate = k->ended != 0 ? (KeyFate) k->ended : fate_for_fold(k->xid);
			if (fate == FATE_MINE || fate == FATE_OPEN)
				continue;
			gone = fate == FATE_ROLLED_BACK || k->state != PENDING_STORED_ROW;
			if (!gone)
			{
				FoldKey		me = {{k->a, k->b}, k->at, k->xid};

				gone = bsearch(&me, folded_keys, folded, sizeof(FoldKey), by_identity) != NULL;
			}
			if (!gone)
				continue;
			free_entry(part, i);
			pg_atomic_fetch_sub_u32(&shared->counts[filter.slot].keys, 1);
			i--;				/* an entry may have moved into i */
		}
		LWLockRelease(&locks[p].lock);
	}
}

/*
 * Fold the filter's keys whose transactions have ended: those committed
 * and stored go to 'fold' (into the filter's bits), oldest first, as
 * their rows came (the filter sizes its slices by the rate keys come at:
 * thousands of keys at one time would read as a burst); the others are
 * freed; those of open transactions stay.
 * The caller holds the filter exclusively, so no key of it comes or goes
 * meanwhile.  If 'fold' fails (returns false), it and the keys after it
 * stay, to be folded later.  Returns the keys folded.
 */
int
tlbf_pending_fold(PendingFilter filter, PendingFoldFn fold, void *arg)
{
	FoldKey    *keys;
	int			nkeys = 0;
	int			folded = 0;
	int			most;

	if (filter.slot < 0 || filter.slot >= tlbf_max_shared_filters)
		return 0;
	if (pg_atomic_read_u32(&shared->counts[filter.slot].keys) == 0)
	{
		pg_atomic_write_u32(&shared->counts[filter.slot].fold_stopped, 0);
		return 0;
	}
	most = Min((int) pg_atomic_read_u32(&shared->counts[filter.slot].keys),
			   part_capacity() * PENDING_PARTITIONS);
	keys = palloc(Max(most, 1) * sizeof(FoldKey));
	for (int p = 0; p < PENDING_PARTITIONS && nkeys < most; p++)
	{
		PendingPart *part = part_of(p);
		int			capacity = part_capacity();

		LWLockAcquire(&locks[p].lock, LW_SHARED);
		for (int i = 0; i < capacity && nkeys < most; i++)
		{
			const PendingKey *k = &part->keys[i];

			if (k->state == PENDING_STORED_ROW && k->slot == filter.slot &&
				k->generation == filter.generation &&
				(k->ended != 0 ? (KeyFate) k->ended : fate_for_fold(k->xid)) == FATE_COMMITTED)
			{
				keys[nkeys].hash.a = k->a;
				keys[nkeys].hash.b = k->b;
				keys[nkeys].at = k->at;
				keys[nkeys].xid = k->xid;
				nkeys++;
			}
		}
		LWLockRelease(&locks[p].lock);
	}
	qsort(keys, nkeys, sizeof(FoldKey), by_time);
	while (folded < nkeys)
	{
		CHECK_FOR_INTERRUPTS();
		if (!fold(arg, keys[folded].hash, keys[folded].at))
			break;
		folded++;
	}
	qsort(keys, folded, sizeof(FoldKey), by_identity);
	free_ended(filter, keys, folded);
	pfree(keys);
	pg_atomic_write_u32(&shared->counts[filter.slot].after_fold,
						pg_atomic_read_u32(&shared->counts[filter.slot].keys));
	pg_atomic_write_u32(&shared->counts[filter.slot].fold_stopped, folded < nkeys);
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
			pg_atomic_fetch_sub_u32(&shared->counts[filter.slot].keys, 1);
			i--;
		}
		LWLockRelease(&locks[p].lock);
	}
	pg_atomic_write_u32(&shared->counts[filter.slot].after_fold, 0);
	pg_atomic_write_u32(&shared->counts[filter.slot].fold_stopped, 0);
}

/*
 * The keys this transaction's rows stored (not those of subtransactions
 * rolled back, nor reservations never confirmed), palloc'd; NULL if none.
 */
static PreparedKey *
stored_keys(int *count)
{
	PreparedKey *keys;
	ListCell   *cell;

	*count = 0;
	if (my_keys == NIL)
		return NULL;
	keys = palloc0(list_length(my_keys) * sizeof(PreparedKey));
	foreach(cell, my_keys)
	{
		MyKey	   *mine = lfirst(cell);

		if (!mine->stored || !TransactionIdIsCurrentTransactionId(mine->xid))
			continue;
		strlcpy(keys[*count].name, mine->name, NAMEDATALEN);
		keys[*count].a = mine->hash.a;
		keys[*count].b = mine->hash.b;
		keys[*count].at = mine->at;
		(*count)++;
	}
	return keys;
}

/*
 * The transaction is committing, or being prepared: the keys its rows
 * stored go to the WAL before its commit or PREPARE record
 * (shared_wal.c), and, if it is prepared, to a file (shared_prepared.c)
 * before its PREPARE record, so that a crash does not forget them.  They
 * stay pending in memory meanwhile.
 */
static void
write_down_keys(bool prepare)
{
	int			count;
	PreparedKey *keys = stored_keys(&count);

	if (count > 0)
	{
		tlbf_wal_log_keys(keys, count);
		if (prepare)
			tlbf_prepared_write(keys, count);
	}
	if (keys != NULL)
		pfree(keys);
}

/*
 * The filter 'filter' (held exclusively, not yet seen by anyone else) was
 * just installed: the keys tlbf_prepared_read read for it go to
 * 'fold' (into its bits) if their transaction committed, else wait in
 * the table, as they did before the restart.  Nothing here can fail: a
 * key there is no room for in the table is folded (a false positive if
 * its transaction rolls back), one the filter has no room for waits in
 * the table.  Returns the keys that found room in neither.
 */
int
tlbf_pending_apply_prepared(PendingFilter filter, const PreparedKeys *keys,
							PendingFoldFn fold, void *arg)
{
	int			lost = 0;

	for (int i = 0; keys != NULL && i < keys->count; i++)
	{
		const RestoredKey *k = &keys->keys[i];
		int			p = part_for(k->hash);
		bool		placed;

		if (k->committed && fold(arg, k->hash, k->at))
			continue;
		LWLockAcquire(&locks[p].lock, LW_EXCLUSIVE);
		placed = put_key(p, filter, k->hash, k->at, k->xid, true);
		LWLockRelease(&locks[p].lock);
		if (!placed && (k->committed || !fold(arg, k->hash, k->at)))
			lost++;
	}
	return lost;
}
