/*-------------------------------------------------------------------------
 *
 * shared_directory.c
 *	  The directory of named filters in shared memory, the pool their
 *	  buffers live in, and which transaction sees which filter.
 *
 * Shared memory is reserved at server start (tlbf.shared_memory bytes,
 * tlbf.max_shared_filters slots), so the library must be preloaded.  Each
 * filter gets a region of the pool when it is created, sized for four
 * times what its capacity needs at steady state; a filter that needs more
 * (its keys come faster than its capacity said) moves to a larger region
 * while the pool has one (tlbf_directory_grow).  When it has none, the
 * caller decides: an error, or the filter drops its oldest slices, counted
 * in "truncated", as a filter does at the format's limits.
 *
 * Locking: the directory's LWLock, then the filter's.  An operation holds
 * the directory shared (so its slot cannot be freed under it) and the
 * filter shared (reads) or exclusive (insertions: test-and-add is one
 * critical section, hence atomic).  Creating, dropping, loading and
 * freeing take the directory exclusively; a filter moving to a larger
 * region also takes grow_lock.
 *
 * Visibility follows the transaction, as for a table: a filter created by
 * a transaction is seen only by that transaction until it commits, and
 * freed if it aborts; a filter dropped by a transaction is no longer seen
 * by it, still seen by everyone else, and freed when it commits.  The
 * transaction is identified by its top-level XID, which parallel workers
 * share with their leader.  The caller (shared_store.c) serializes creates
 * and drops of one name with a heavyweight lock held to the end of the
 * transaction, so two transactions never both create or drop a name.
 *
 * A transaction that dropped filters may be prepared (Citus commits DROP
 * EXTENSION on its workers with two-phase commit): its drops then stay in
 * the slots, marked, and the slots are settled by whoever looks once the
 * prepared transaction has ended, whichever backend ended it.  Meanwhile
 * such a slot, as any that a transaction drops, is not listed for saving
 * (tlbf_directory_changed).  The marks do not outlive a restart; the
 * prepared transaction's locks do, and keep the store from loading the
 * filter again (shared_store.c).  Creating a filter in a transaction that
 * is prepared is refused.
 *
 * A snapshot loaded from the table must not bring back a filter dropped
 * while the load was reading: every slot freed bumps 'drops', and an
 * install that saw another value is refused (INSTALL_STALE).
 *
 * Nothing here reads a catalog, and every size, offset and name in the
 * directory is checked before a filter's bytes are copied in.
 *
 *-------------------------------------------------------------------------
 */
#include "shared_directory.h"
#include "settings.h"
#include "shared_pending.h"

#include <math.h>

#include "access/transam.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "utils/memutils.h"

/* settings (settings.c defines them) */
int			tlbf_shared_memory = 64 * 1024 * 1024;
int			tlbf_max_shared_filters = 64;


typedef struct SharedSlot
{
	bool		in_use;
	Oid			database;
	char		name[NAMEDATALEN];
	uint64		generation;		/* a new value every time the slot is taken */
	Size		offset;			/* of the region in the pool */
	Size		region;			/* bytes */
	uint64		changes;		/* insertions and retirements so far */
	uint64		saved_changes;	/* 'changes' when last saved */
	TransactionId row_xid;		/* wrote the row it was last saved to */
	TransactionId created_by;	/* valid until the creating xact commits */
	TransactionId dropped_by;	/* valid while the dropping xact is open */
	bool		drop_prepared;	/* dropped_by is a prepared transaction */
	/* counted by sessions holding the filter's lock in any mode */
	pg_atomic_uint64 counters[SHARED_COUNTERS];
	pg_atomic_uint64 saved_at;	/* a TimestampTz */
	pg_atomic_uint64 reset_at;	/* a TimestampTz */
} SharedSlot;

typedef struct SharedDirectory
{
	uint64		next_generation;
	uint64		drops;			/* slots freed so far */
	Latch	   *watcher;		/* set when a database gets a filter */
	SharedSlot	slots[FLEXIBLE_ARRAY_MEMBER];
} SharedDirectory;

/* A create or drop waiting for its (sub)transaction to end. */
typedef struct PendingChange
{
	bool		created;		/* else dropped */
	int			slot;
	uint64		generation;
	SubTransactionId subxact;
} PendingChange;

static SharedDirectory *directory = NULL;
static char *pool = NULL;
static LWLockPadded *locks = NULL;
static List *pending = NIL;		/* in TopMemoryContext */

static shmem_request_hook_type previous_request_hook = NULL;
static shmem_startup_hook_type previous_startup_hook = NULL;

/*
 * Regions start on a 64-byte boundary: a filter of format 3 keeps each
 * key's group within one cache line counted from the value's start, which
 * is one line of memory only if the value's start is on one too.
 */
#define REGION_ALIGN 64

static Size
directory_bytes(void)
{
	return MAXALIGN(add_size(offsetof(SharedDirectory, slots),
							 mul_size(tlbf_max_shared_filters, sizeof(SharedSlot))));
}

Size
tlbf_directory_pool_bytes(void)
{
	return TYPEALIGN(REGION_ALIGN, (Size) tlbf_shared_memory);
}

/*
 * The largest region one filter may have: within the pool, and small
 * enough that a copy of the filter (tlbf_shared_get, a save) can be
 * allocated.
 */
Size
tlbf_directory_max_region(void)
{
	return TYPEALIGN_DOWN(REGION_ALIGN, Min(tlbf_directory_pool_bytes(), MaxAllocSize));
}

static LWLock *
directory_lock(void)
{
	return &locks[0].lock;
}

static LWLock *
slot_lock(int slot)
{
	return &locks[slot + 1].lock;
}

static void
request_shared_memory(void)
{
	if (previous_request_hook)
		previous_request_hook();
	RequestAddinShmemSpace(add_size(directory_bytes(),
									tlbf_directory_pool_bytes() + REGION_ALIGN));
	RequestNamedLWLockTranche("tlbf", tlbf_max_shared_filters + 1);
}

static void
start_shared_memory(void)
{
	bool		found;

	if (previous_startup_hook)
		previous_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	directory = ShmemInitStruct("tlbf shared filters",
								add_size(directory_bytes(),
										 tlbf_directory_pool_bytes() + REGION_ALIGN),
								&found);
	if (!found)
		memset(directory, 0, directory_bytes());
	pool = (char *) TYPEALIGN(REGION_ALIGN, (char *) directory + directory_bytes());
	locks = GetNamedLWLockTranche("tlbf");
	LWLockRelease(AddinShmemInitLock);
}

static void apply_pending(bool commit, SubTransactionId subxact);
static void mark_drops_prepared(void);
static void release_slot(SharedSlot *s);

static void
on_transaction_end(XactEvent event, void *arg)
{
	if (pending == NIL)
		return;
	switch (event)
	{
		case XACT_EVENT_COMMIT:
			apply_pending(true, InvalidSubTransactionId);
			break;
		case XACT_EVENT_ABORT:
			apply_pending(false, InvalidSubTransactionId);
			break;
		case XACT_EVENT_PRE_PREPARE:
			mark_drops_prepared();
			break;
		default:
			break;
	}
}

static void
on_subtransaction_end(SubXactEvent event, SubTransactionId mySubid,
					  SubTransactionId parentSubid, void *arg)
{
	ListCell   *cell;

	if (pending == NIL)
		return;
	if (event == SUBXACT_EVENT_ABORT_SUB)
		apply_pending(false, mySubid);
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
		foreach(cell, pending)
		{
			PendingChange *change = lfirst(cell);

			if (change->subxact == mySubid)
				change->subxact = parentSubid;
		}
}

/* Install the shared memory hooks (from _PG_init, when preloaded). */
void
tlbf_directory_init(void)
{
	previous_request_hook = shmem_request_hook;
	shmem_request_hook = request_shared_memory;
	previous_startup_hook = shmem_startup_hook;
	shmem_startup_hook = start_shared_memory;
	RegisterXactCallback(on_transaction_end, NULL);
	RegisterSubXactCallback(on_subtransaction_end, NULL);
}

bool
tlbf_directory_available(void)
{
	return directory != NULL;
}

void
tlbf_directory_require(void)
{
	if (directory == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("shared tlbf filters need the tlbf library loaded at server start"),
				 errhint("Add tlbf to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/*
 * Has the prepared transaction that dropped the filter in slot s ended, and
 * did it commit?  (Prepared transactions count as in progress.)
 */
static bool
prepared_drop_ended(const SharedSlot *s, bool *committed)
{
	if (!s->drop_prepared || TransactionIdIsInProgress(s->dropped_by))
		return false;
	*committed = TransactionIdDidCommit(s->dropped_by);
	return true;
}

/*
 * Is a transaction that has not ended dropping the filter in slot s?  (A
 * prepared drop that ended is settled by the next exclusive holder of the
 * directory: until then, one that rolled back drops nothing.)
 */
static bool
being_dropped(const SharedSlot *s)
{
	bool		committed;

	return TransactionIdIsValid(s->dropped_by) && !prepared_drop_ended(s, &committed);
}

/* Does this transaction see the filter in slot s? */
static bool
visible(const SharedSlot *s)
{
	TransactionId me = GetTopTransactionIdIfAny();
	bool		committed;

	if (!s->in_use || s->database != MyDatabaseId)
		return false;
	if (TransactionIdIsValid(s->created_by) && !TransactionIdEquals(s->created_by, me))
		return false;
	if (prepared_drop_ended(s, &committed) && committed)
		return false;
	return !(TransactionIdIsValid(s->dropped_by) && TransactionIdEquals(s->dropped_by, me));
}

/*
 * Free the slots whose prepared drop committed, and give back those whose
 * prepared drop rolled back (the directory locked exclusively).
 */
static void
settle_prepared_drops(void)
{
	for (int i = 0; i < tlbf_max_shared_filters; i++)
	{
		SharedSlot *s = &directory->slots[i];
		bool		committed;

		if (!s->in_use || !prepared_drop_ended(s, &committed))
			continue;
		if (committed)
			release_slot(s);
		else
		{
			s->dropped_by = InvalidTransactionId;
			s->drop_prepared = false;
		}
	}
}

/* The slot this backend found last: a trigger asks for one name per row. */
static struct
{
	char		name[NAMEDATALEN];
	int			slot;
	uint64		generation;		/* the slot still holds that filter if equal */
}			last_found = {"", -1, 0};

/* The slot named 'name' this transaction sees, or -1 (directory locked). */
static int
find_visible(const char *name)
{
	SharedSlot *s;

	if (last_found.slot >= 0 && strcmp(last_found.name, name) == 0)
	{
		s = &directory->slots[last_found.slot];
		if (s->generation == last_found.generation && visible(s))
			return last_found.slot;
	}
	for (int i = 0; i < tlbf_max_shared_filters; i++)
	{
		s = &directory->slots[i];
		if (visible(s) && strcmp(s->name, name) == 0)
		{
			strlcpy(last_found.name, name, NAMEDATALEN);
			last_found.slot = i;
			last_found.generation = s->generation;
			return i;
		}
	}
	return -1;
}

/* Is there a slot named 'name' in this database, whoever sees it? */
static bool
name_taken(const char *name)
{
	for (int i = 0; i < tlbf_max_shared_filters; i++)
	{
		SharedSlot *s = &directory->slots[i];
		bool		committed;

		if (s->in_use && s->database == MyDatabaseId && strcmp(s->name, name) == 0 &&
			!(prepared_drop_ended(s, &committed) && committed))
			return true;
	}
	return false;
}

static void
lock_slot(int slot, LWLockMode mode, SharedFilterRef *ref)
{
	LWLockAcquire(slot_lock(slot), mode);
	ref->slot = slot;
	ref->mode = mode;
	ref->filter = (Tlbf *) (pool + directory->slots[slot].offset);
	Assert((uintptr_t) ref->filter % REGION_ALIGN == 0);
}

/*
 * Open filter 'name' of this database with its lock in 'mode'; false if
 * this transaction sees none.  Until tlbf_directory_close(), the caller
 * must not wait for anything but these locks (no catalog access, no
 * heavyweight locks).
 */
bool
tlbf_directory_open(const char *name, LWLockMode mode, SharedFilterRef *ref)
{
	int			slot;

	tlbf_directory_require();
	LWLockAcquire(directory_lock(), LW_SHARED);
	slot = find_visible(name);
	if (slot < 0)
	{
		LWLockRelease(directory_lock());
		return false;
	}
	lock_slot(slot, mode, ref);
	return true;
}

/*
 * Is the filter in slot s committed and not being dropped, whichever
 * database it is in (the launcher, in none, retires and writes down the
 * filters of all)?
 */
static bool
committed_and_kept(const SharedSlot *s)
{
	return s->in_use && !TransactionIdIsValid(s->created_by) && !being_dropped(s);
}

/*
 * Open the filter 'id' names, if its slot still holds it and it is seen
 * (any_database: committed and kept, in whichever database).
 */
static bool
open_id(const SharedFilterId *id, LWLockMode mode, SharedFilterRef *ref, bool any_database)
{
	SharedSlot *s;

	tlbf_directory_require();
	if (id->slot < 0 || id->slot >= tlbf_max_shared_filters)
		return false;
	LWLockAcquire(directory_lock(), LW_SHARED);
	s = &directory->slots[id->slot];
	if (s->generation != id->generation ||
		!(any_database ? committed_and_kept(s) : visible(s)))
	{
		LWLockRelease(directory_lock());
		return false;
	}
	lock_slot(id->slot, mode, ref);
	return true;
}

bool
tlbf_directory_open_id(const SharedFilterId *id, LWLockMode mode, SharedFilterRef *ref)
{
	return open_id(id, mode, ref, false);
}

bool
tlbf_directory_open_any(const SharedFilterId *id, LWLockMode mode, SharedFilterRef *ref)
{
	return open_id(id, mode, ref, true);
}

void
tlbf_directory_close(SharedFilterRef *ref)
{
	LWLockRelease(slot_lock(ref->slot));
	LWLockRelease(directory_lock());
}

/* Count a change (the caller holds the filter exclusively). */
void
tlbf_directory_count_change(SharedFilterRef *ref)
{
	Assert(ref->mode == LW_EXCLUSIVE);
	directory->slots[ref->slot].changes++;
}

/* The name of the filter 'ref' opened. */
const char *
tlbf_directory_name(const SharedFilterRef *ref)
{
	return directory->slots[ref->slot].name;
}

/* Which filter holds the slot 'ref' opened (for its pending keys). */
uint64
tlbf_directory_generation(const SharedFilterRef *ref)
{
	return directory->slots[ref->slot].generation;
}

Size
tlbf_directory_region(const SharedFilterRef *ref)
{
	return directory->slots[ref->slot].region;
}

uint64
tlbf_directory_changes(const SharedFilterRef *ref)
{
	return directory->slots[ref->slot].changes;
}

bool
tlbf_directory_unsaved(const SharedFilterRef *ref)
{
	SharedSlot *s = &directory->slots[ref->slot];

	return s->changes != s->saved_changes;
}

/* Which transaction wrote the row the filter 'ref' opened was last saved to. */
TransactionId
tlbf_directory_row_xid(const SharedFilterRef *ref)
{
	return directory->slots[ref->slot].row_xid;
}

/*
 * Record that the filter 'id' names was saved as it was at id->changes,
 * by transaction id->row_xid.
 */
void
tlbf_directory_saved(const SharedFilterId *id)
{
	SharedSlot *s;

	if (id->slot < 0 || id->slot >= tlbf_max_shared_filters)
		return;
	LWLockAcquire(directory_lock(), LW_EXCLUSIVE);
	s = &directory->slots[id->slot];
	if (s->in_use && s->generation == id->generation && id->changes > s->saved_changes)
		s->saved_changes = id->changes;
	if (s->in_use && s->generation == id->generation)
	{
		s->row_xid = id->row_xid;
		pg_atomic_write_u64(&s->saved_at, (uint64) GetCurrentTimestamp());
	}
	LWLockRelease(directory_lock());
}

/*
 * Count 'n' events of one kind for the filter 'ref' opened (in any mode:
 * the counters are atomic, so that readers of the filter need not take it
 * exclusively to count).
 */
void
tlbf_directory_count(const SharedFilterRef *ref, SharedCounter counter, uint64 n)
{
	pg_atomic_fetch_add_u64(&directory->slots[ref->slot].counters[counter], n);
}

/* The counters of the filter 'ref' opened. */
void
tlbf_directory_counts(const SharedFilterRef *ref, SharedCounts *counts)
{
	SharedSlot *s = &directory->slots[ref->slot];

	for (int i = 0; i < SHARED_COUNTERS; i++)
		counts->values[i] = pg_atomic_read_u64(&s->counters[i]);
	counts->saved_at = (TimestampTz) pg_atomic_read_u64(&s->saved_at);
	counts->reset_at = (TimestampTz) pg_atomic_read_u64(&s->reset_at);
}

/* Count again from zero for the filter 'ref' opened. */
void
tlbf_directory_reset_counts(const SharedFilterRef *ref)
{
	SharedSlot *s = &directory->slots[ref->slot];

	for (int i = 0; i < SHARED_COUNTERS; i++)
		pg_atomic_write_u64(&s->counters[i], 0);
	pg_atomic_write_u64(&s->reset_at, (uint64) GetCurrentTimestamp());
}

/* The lowest offset with 'size' free bytes in the pool, or -1. */
static int64
free_region(Size size)
{
	Size		candidate = 0;
	bool		moved = true;

	/* slide past every region that overlaps the candidate, until none does */
	while (moved)
	{
		moved = false;
		for (int i = 0; i < tlbf_max_shared_filters; i++)
		{
			SharedSlot *s = &directory->slots[i];

			if (s->in_use && s->offset < candidate + size && candidate < s->offset + s->region)
			{
				candidate = s->offset + s->region;
				moved = true;
			}
		}
	}
	return candidate + size <= tlbf_directory_pool_bytes() ? (int64) candidate : -1;
}

static int
free_slot(void)
{
	for (int i = 0; i < tlbf_max_shared_filters; i++)
		if (!directory->slots[i].in_use)
			return i;
	return -1;
}

/*
 * Give slot 'slot' to a filter of this database, its bytes copied to a
 * region of 'region' bytes at 'offset'.  The directory is locked
 * exclusively, and the region was checked: it lies in the pool, overlaps
 * no other, and holds the filter.
 */
static void
fill_slot(int slot, const char *name, Size offset, Size region, const Tlbf *filter,
		  TransactionId created_by, TransactionId row_xid)
{
	SharedSlot *s = &directory->slots[slot];

	if (region < VARSIZE(filter) || region > tlbf_directory_max_region() ||
		offset + region > tlbf_directory_pool_bytes() ||
		strlen(name) >= NAMEDATALEN)
		elog(ERROR, "a shared tlbf filter region does not fit its pool");
	memset(s, 0, sizeof(SharedSlot));
	s->database = MyDatabaseId;
	strlcpy(s->name, name, NAMEDATALEN);
	s->generation = ++directory->next_generation;
	s->offset = offset;
	s->region = region;
	s->created_by = created_by;
	s->dropped_by = InvalidTransactionId;
	s->row_xid = row_xid;
	for (int i = 0; i < SHARED_COUNTERS; i++)
		pg_atomic_init_u64(&s->counters[i], 0);
	pg_atomic_init_u64(&s->saved_at, 0);
	pg_atomic_init_u64(&s->reset_at, (uint64) GetCurrentTimestamp());
	memcpy(pool + offset, filter, VARSIZE(filter));
	s->in_use = true;
}

static void
release_slot(SharedSlot *s)
{
	PendingFilter gone = {(int) (s - directory->slots), s->generation};

	s->in_use = false;
	directory->drops++;
	/* the keys open transactions added to it are moot */
	tlbf_pending_forget(gone);
}

static void
wake_watcher(void)
{
	if (directory->watcher != NULL)
		SetLatch(directory->watcher);
}

/*
 * A record of a create or drop for the end of the transaction, in the
 * pending list already but not filled in (slot -1, skipped) until the
 * change is made: allocated before the directory changes, so that running
 * out of memory here leaves no slot taken or marked that nothing would
 * give back before a restart.
 */
static PendingChange *
new_pending_change(void)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	PendingChange *change = palloc0(sizeof(PendingChange));

	change->slot = -1;
	pending = lappend(pending, change);
	MemoryContextSwitchTo(old);
	return change;
}

/* Fill in 'change' once slot 'slot' is created or marked dropped. */
static void
remember(PendingChange *change, bool created, int slot)
{
	change->created = created;
	change->generation = directory->slots[slot].generation;
	change->subxact = GetCurrentSubTransactionId();
	change->slot = slot;
}

/*
 * Put a new filter (its bytes 'initial') in a region of 'region' bytes,
 * seen by this transaction only until it commits; 'row_xid' writes its
 * row.
 */
void
tlbf_directory_create(const char *name, const Tlbf *initial, Size region,
					  TransactionId row_xid)
{
	TransactionId me = GetTopTransactionId();
	PendingChange *change;
	int			slot;
	int64		offset;

	tlbf_directory_require();
	change = new_pending_change();
	region = TYPEALIGN(REGION_ALIGN, region);
	LWLockAcquire(directory_lock(), LW_EXCLUSIVE);
	settle_prepared_drops();
	if (find_visible(name) >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("shared tlbf filter \"%s\" already exists", name)));
	slot = free_slot();
	if (slot < 0)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many shared tlbf filters"),
				 errdetail("The server holds at most %d (tlbf.max_shared_filters).",
						   tlbf_max_shared_filters),
				 errhint("Drop unused filters, or raise tlbf.max_shared_filters and restart the server.")));
	offset = free_region(region);
	if (offset < 0)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("not enough shared memory for shared tlbf filter \"%s\"", name),
				 errdetail("It needs %zu bytes; the free space of tlbf.shared_memory (%d bytes) is smaller or split.",
						   region, tlbf_shared_memory),
				 errhint("Drop unused filters, lower the filter's capacity, or raise tlbf.shared_memory and restart the server.")));

	fill_slot(slot, name, (Size) offset, region, initial, me, row_xid);
	remember(change, true, slot);
	LWLockRelease(directory_lock());
}

/* Drop filter 'name' at commit; false if this transaction sees none. */
bool
tlbf_directory_drop(const char *name)
{
	TransactionId me = GetTopTransactionId();
	PendingChange *change;
	int			slot;
	SharedSlot *s;

	tlbf_directory_require();
	change = new_pending_change();
	LWLockAcquire(directory_lock(), LW_EXCLUSIVE);
	settle_prepared_drops();
	slot = find_visible(name);
	if (slot < 0)
	{
		LWLockRelease(directory_lock());
		return false;
	}
	s = &directory->slots[slot];
	/* the caller's lock on the name keeps two transactions from this */
	if (TransactionIdIsValid(s->dropped_by))
		elog(ERROR, "shared tlbf filter \"%s\" is being dropped by another transaction", name);
	s->dropped_by = me;
	remember(change, false, slot);
	LWLockRelease(directory_lock());
	return true;
}

/*
 * End the pending creates and drops of the transaction (subxact invalid)
 * or of one subtransaction: a commit publishes created filters and frees
 * dropped ones; an abort frees created filters and brings dropped ones
 * back.
 */
static void
apply_pending(bool commit, SubTransactionId subxact)
{
	List	   *kept = NIL;
	ListCell   *cell;
	bool		published = false;

	LWLockAcquire(directory_lock(), LW_EXCLUSIVE);
	foreach(cell, pending)
	{
		PendingChange *change = lfirst(cell);
		SharedSlot *s;

		if (change->slot < 0)
		{
			/* never made (an error before it), or nothing to drop */
			pfree(change);
			continue;
		}
		s = &directory->slots[change->slot];
		if (subxact != InvalidSubTransactionId && change->subxact != subxact)
		{
			kept = lappend(kept, change);
			continue;
		}
		if (s->in_use && s->generation == change->generation)
		{
			if (change->created && commit)
			{
				s->created_by = InvalidTransactionId;
				published = true;
			}
			else if (change->created)
				release_slot(s);
			else if (commit)
				release_slot(s);
			else
				s->dropped_by = InvalidTransactionId;
		}
		pfree(change);
	}
	if (published)
		wake_watcher();
	LWLockRelease(directory_lock());
	list_free(pending);
	pending = NIL;
	if (kept != NIL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		pending = list_copy(kept);
		MemoryContextSwitchTo(old);
		list_free(kept);
	}
}

/*
 * The transaction is being prepared: its drops stay in their slots, marked,
 * to be settled once it ends (settle_prepared_drops).  A filter it created
 * cannot wait so: nobody could publish it on COMMIT PREPARED.
 */
static void
mark_drops_prepared(void)
{
	ListCell   *cell;

	foreach(cell, pending)
		if (((PendingChange *) lfirst(cell))->slot >= 0 &&
			((PendingChange *) lfirst(cell))->created)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot prepare a transaction that created a shared tlbf filter")));
	LWLockAcquire(directory_lock(), LW_EXCLUSIVE);
	foreach(cell, pending)
	{
		PendingChange *change = lfirst(cell);
		SharedSlot *s;

		if (change->slot < 0)
			continue;
		s = &directory->slots[change->slot];
		if (s->in_use && s->generation == change->generation)
			s->drop_prepared = true;
	}
	LWLockRelease(directory_lock());
	list_free_deep(pending);
	pending = NIL;
}

/* The names of the filters of this database this transaction sees. */
List *
tlbf_directory_names(void)
{
	List	   *names = NIL;

	tlbf_directory_require();
	LWLockAcquire(directory_lock(), LW_SHARED);
	for (int i = 0; i < tlbf_max_shared_filters; i++)
		if (visible(&directory->slots[i]))
			names = lappend(names, pstrdup(directory->slots[i].name));
	LWLockRelease(directory_lock());
	return names;
}

/* What names the filter in slot i (the directory locked). */
static SharedFilterId *
slot_id(int i)
{
	SharedSlot *s = &directory->slots[i];
	SharedFilterId *id = palloc(sizeof(SharedFilterId));

	id->slot = i;
	id->generation = s->generation;
	id->database = s->database;
	strlcpy(id->name, s->name, NAMEDATALEN);
	id->changes = s->changes;
	id->unsaved = s->changes != s->saved_changes;
	id->row_xid = s->row_xid;
	return id;
}

/*
 * This database's committed filters changed since they were last saved,
 * but for those a transaction is dropping: their rows are being deleted,
 * and one a prepared transaction drops must not be written back before
 * COMMIT PREPARED (nor waited for).
 */
List *
tlbf_directory_changed(void)
{
	List	   *changed = NIL;

	tlbf_directory_require();
	LWLockAcquire(directory_lock(), LW_SHARED);
	for (int i = 0; i < tlbf_max_shared_filters; i++)
	{
		SharedSlot *s = &directory->slots[i];

		if (visible(s) && committed_and_kept(s) && s->changes != s->saved_changes)
			changed = lappend(changed, slot_id(i));
	}
	LWLockRelease(directory_lock());
	return changed;
}

/*
 * The committed filters of every database but those a transaction is
 * dropping (for the launcher, which is in none).
 */
List *
tlbf_directory_all(void)
{
	List	   *all = NIL;

	tlbf_directory_require();
	LWLockAcquire(directory_lock(), LW_SHARED);
	for (int i = 0; i < tlbf_max_shared_filters; i++)
	{
		if (committed_and_kept(&directory->slots[i]))
			all = lappend(all, slot_id(i));
	}
	LWLockRelease(directory_lock());
	return all;
}

/* Does shared memory hold a filter 'name' of this database, seen or not? */
bool
tlbf_directory_holds(const char *name)
{
	bool		held;

	tlbf_directory_require();
	LWLockAcquire(directory_lock(), LW_SHARED);
	held = name_taken(name);
	LWLockRelease(directory_lock());
	return held;
}

/* How many slots were freed so far (see tlbf_directory_install). */
uint64
tlbf_directory_drops(void)
{
	uint64		drops;

	tlbf_directory_require();
	LWLockAcquire(directory_lock(), LW_SHARED);
	drops = directory->drops;
	LWLockRelease(directory_lock());
	return drops;
}

/*
 * Let 'filled' finish a filter just installed in 'slot' before anyone can
 * see it (the directory is held exclusively); if it fails, the slot is
 * freed again, the filter not loaded.
 */
static void
finish_install(int slot, InstallFilled filled, void *arg)
{
	SharedFilterRef ref;

	if (filled == NULL)
		return;
	lock_slot(slot, LW_EXCLUSIVE, &ref);
	PG_TRY();
	{
		filled(&ref, arg);
	}
	PG_CATCH();
	{
		release_slot(&directory->slots[slot]);
		PG_RE_THROW();
	}
	PG_END_TRY();
	LWLockRelease(slot_lock(slot));
}

/*
 * Install a saved filter of this database that shared memory does not
 * hold, in a region of 'region' bytes (validated by the caller against the
 * filter and the pool).  Refused if any filter was freed since the caller
 * read tlbf_directory_drops() before reading the saved copy: that copy may
 * be of a filter dropped meanwhile.
 */
InstallResult
tlbf_directory_install(const char *name, const Tlbf *filter, Size region,
					   TransactionId row_xid, uint64 drops_seen,
					   InstallFilled filled, void *arg)
{
	InstallResult result = INSTALL_DONE;
	int			slot;
	int64		offset = -1;

	tlbf_directory_require();
	region = TYPEALIGN(REGION_ALIGN, region);
	LWLockAcquire(directory_lock(), LW_EXCLUSIVE);
	settle_prepared_drops();
	if (directory->drops != drops_seen)
		result = INSTALL_STALE;
	else if (name_taken(name))
		result = INSTALL_NAME_TAKEN;
	else
	{
		slot = free_slot();
		if (slot >= 0 && region >= VARSIZE(filter) && region <= tlbf_directory_max_region())
			offset = free_region(region);
		if (slot < 0)
			result = INSTALL_NO_SLOT;
		else if (offset < 0)
			result = INSTALL_NO_ROOM;
		else
		{
			fill_slot(slot, name, (Size) offset, region, filter, InvalidTransactionId,
					  row_xid);
			finish_install(slot, filled, arg);
			wake_watcher();
		}
	}
	LWLockRelease(directory_lock());
	return result;
}

/* The databases that have committed filters in shared memory. */
List *
tlbf_directory_databases(void)
{
	List	   *databases = NIL;

	if (directory == NULL)
		return NIL;
	LWLockAcquire(directory_lock(), LW_SHARED);
	for (int i = 0; i < tlbf_max_shared_filters; i++)
	{
		SharedSlot *s = &directory->slots[i];

		if (s->in_use && !TransactionIdIsValid(s->created_by))
			databases = list_append_unique_oid(databases, s->database);
	}
	LWLockRelease(directory_lock());
	return databases;
}

/* The newest slot generation: filters created later are newer than it. */
uint64
tlbf_directory_stamp(void)
{
	uint64		stamp;

	LWLockAcquire(directory_lock(), LW_SHARED);
	stamp = directory->next_generation;
	LWLockRelease(directory_lock());
	return stamp;
}

/*
 * Free the filters of databases that no longer exist: those not in
 * 'existing', a list read after tlbf_directory_stamp() returned 'stamp'.
 * A filter created after the stamp is kept: its database was created
 * after the list was read, not dropped.
 */
void
tlbf_directory_forget_databases(const List *existing, uint64 stamp)
{
	if (directory == NULL)
		return;
	LWLockAcquire(directory_lock(), LW_EXCLUSIVE);
	for (int i = 0; i < tlbf_max_shared_filters; i++)
	{
		SharedSlot *s = &directory->slots[i];

		if (s->in_use && s->generation <= stamp &&
			!list_member_oid(existing, s->database))
			release_slot(s);
	}
	LWLockRelease(directory_lock());
}

/* The latch to set when a database gets its first committed filter. */
void
tlbf_directory_watch(Latch *latch)
{
	if (directory == NULL)
		return;
	LWLockAcquire(directory_lock(), LW_EXCLUSIVE);
	directory->watcher = latch;
	LWLockRelease(directory_lock());
}
