/*-------------------------------------------------------------------------
 *
 * shared_memory.c
 *	  The directory of named filters in shared memory, and the pool their
 *	  buffers live in.
 *
 * Shared memory is reserved at server start (tlbf.shared_memory bytes,
 * tlbf.max_shared_filters slots), so the library must be preloaded.  Each
 * filter gets a fixed region of the pool when it is created, sized for four
 * times what its capacity needs at steady state; the core works inside it
 * without reallocating (a filter outgrowing it drops its oldest slices,
 * counted in "truncated", like any filter at its size cap).
 *
 * Locking: the directory's LWLock, then the filter's.  An operation holds
 * the directory shared (so its slot cannot be freed under it) and the
 * filter shared (reads) or exclusive (insertions: test-and-add is one
 * critical section, hence atomic).  Creating and dropping take the
 * directory exclusively.
 *
 * Creating and dropping are made transactional with transaction callbacks:
 * a filter created by a transaction that aborts is freed, and a drop takes
 * effect at commit (the filter vanishes from view at once, and comes back
 * if the transaction aborts).  The rows of the snapshot table follow the
 * same transaction.  Insertions are not transactional: bits set by a
 * transaction that rolls back stay set (a false positive at worst).
 *
 *-------------------------------------------------------------------------
 */
#include "shared_filters.h"

#include <math.h>

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/memutils.h"

/* GUCs (guc.c defines them) */
int			tlbf_shared_memory = 64 * 1024 * 1024;
int			tlbf_max_shared_filters = 64;

#define MAX_RESTORED_DATABASES 1024
#define MIN_REGION_BYTES	(64 * 1024)

typedef struct SharedSlot
{
	bool		in_use;
	bool		dropping;		/* dropped by a transaction not yet ended */
	Oid			database;
	char		name[NAMEDATALEN];
	uint64		generation;		/* a new value every time the slot is taken */
	Size		offset;			/* of the region in the pool */
	Size		region;			/* bytes */
	uint64		changes;		/* insertions and retirements so far */
	uint64		saved_changes;	/* 'changes' when last saved */
} SharedSlot;

typedef struct SharedDirectory
{
	uint64		next_generation;
	int			nrestored;
	Oid			restored[MAX_RESTORED_DATABASES];	/* snapshots loaded */
	SharedSlot	slots[FLEXIBLE_ARRAY_MEMBER];
} SharedDirectory;

/* A create or drop waiting for its transaction to end. */
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

static Size
directory_bytes(void)
{
	return MAXALIGN(add_size(offsetof(SharedDirectory, slots),
							 mul_size(tlbf_max_shared_filters, sizeof(SharedSlot))));
}

static Size
pool_bytes(void)
{
	return TYPEALIGN(sizeof(uint64), (Size) tlbf_shared_memory);
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
	RequestAddinShmemSpace(add_size(directory_bytes(), pool_bytes() + sizeof(uint64)));
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
								add_size(directory_bytes(), pool_bytes() + sizeof(uint64)),
								&found);
	if (!found)
		memset(directory, 0, directory_bytes());
	pool = (char *) TYPEALIGN(sizeof(uint64), (char *) directory + directory_bytes());
	locks = GetNamedLWLockTranche("tlbf");
	LWLockRelease(AddinShmemInitLock);
}

static void apply_pending(bool commit, SubTransactionId subxact);

static void
on_transaction_end(XactEvent event, void *arg)
{
	if (pending == NIL)
		return;
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			apply_pending(true, InvalidSubTransactionId);
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			apply_pending(false, InvalidSubTransactionId);
			break;
		case XACT_EVENT_PRE_PREPARE:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot prepare a transaction that created or dropped a shared tlbf filter")));
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
tlbf_shared_memory_init(void)
{
	previous_request_hook = shmem_request_hook;
	shmem_request_hook = request_shared_memory;
	previous_startup_hook = shmem_startup_hook;
	shmem_startup_hook = start_shared_memory;
	RegisterXactCallback(on_transaction_end, NULL);
	RegisterSubXactCallback(on_subtransaction_end, NULL);
}

bool
tlbf_shared_available(void)
{
	return directory != NULL;
}

void
tlbf_shared_require(void)
{
	if (directory == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("shared tlbf filters need the tlbf library loaded at server start"),
				 errhint("Add tlbf to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/* The slot this backend found last: a trigger asks for one name per row. */
static struct
{
	char		name[NAMEDATALEN];
	int			slot;
	uint64		generation;		/* the slot still holds that filter if equal */
}			last_found = {"", -1, 0};

/* The visible slot named 'name' in this database, or -1 (directory locked). */
static int
find_slot(const char *name)
{
	SharedSlot *s;

	if (last_found.slot >= 0 && strcmp(last_found.name, name) == 0)
	{
		s = &directory->slots[last_found.slot];
		if (s->in_use && !s->dropping && s->generation == last_found.generation &&
			s->database == MyDatabaseId)
			return last_found.slot;
	}
	for (int i = 0; i < tlbf_max_shared_filters; i++)
	{
		s = &directory->slots[i];
		if (s->in_use && !s->dropping && s->database == MyDatabaseId &&
			strcmp(s->name, name) == 0)
		{
			strlcpy(last_found.name, name, NAMEDATALEN);
			last_found.slot = i;
			last_found.generation = s->generation;
			return i;
		}
	}
	return -1;
}

/*
 * Open filter 'name' of this database with its lock in 'mode'; false if
 * there is none.  Until tlbf_shared_close(), the caller must not wait for
 * anything but these locks (no catalog access, no heavyweight locks).
 */
bool
tlbf_shared_open(const char *name, LWLockMode mode, SharedFilterRef *ref)
{
	int			slot;

	tlbf_shared_require();
	LWLockAcquire(directory_lock(), LW_SHARED);
	slot = find_slot(name);
	if (slot < 0)
	{
		LWLockRelease(directory_lock());
		return false;
	}
	LWLockAcquire(slot_lock(slot), mode);
	ref->slot = slot;
	ref->mode = mode;
	ref->filter = (Tlbf *) (pool + directory->slots[slot].offset);
	return true;
}

/*
 * Open a filter of this database, loading it from the snapshot table if
 * shared memory does not have it yet (restored by pg_restore, say); error
 * if there is no such filter.  'fcinfo' is the calling function's.
 */
void
tlbf_shared_open_or_error(FunctionCallInfo fcinfo, const char *name, LWLockMode mode,
						  SharedFilterRef *ref)
{
	if (tlbf_shared_open(name, mode, ref))
		return;
	tlbf_shared_restore(tlbf_function_schema(fcinfo));
	if (!tlbf_shared_open(name, mode, ref))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("shared tlbf filter \"%s\" does not exist", name),
				 errhint("Create it with tlbf_shared_create(); tlbf_shared_list() shows the filters of this database.")));
}

void
tlbf_shared_close(SharedFilterRef *ref)
{
	LWLockRelease(slot_lock(ref->slot));
	LWLockRelease(directory_lock());
}

/* Count a change (the caller holds the filter exclusively). */
void
tlbf_shared_mark_dirty(SharedFilterRef *ref)
{
	Assert(ref->mode == LW_EXCLUSIVE);
	directory->slots[ref->slot].changes++;
}

/* The region a filter with these parameters gets: 4x its steady size. */
Size
tlbf_shared_region_for(const TlbfParams *p)
{
	double		bits_per_key = (double) (p->k + p->l) * p->k / (p->l * log(2.0));
	double		steady = bits_per_key * p->capacity / 8 +
		(double) (p->k + p->l + 2) * sizeof(TlbfSlice) + sizeof(Tlbf);
	double		region = fmax(4 * steady, 2.0 * tlbf_first_generation_bytes(p));

	region = fmax(region, MIN_REGION_BYTES);
	if (region > (double) pool_bytes())
		return pool_bytes() + 1;	/* can never fit: the caller reports it */
	return TYPEALIGN(sizeof(uint64), (Size) region);
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
	return candidate + size <= pool_bytes() ? (int64) candidate : -1;
}

/*
 * Give a free slot to a filter in this database, with its bytes at 'offset'
 * in the pool.  The caller holds the directory lock exclusively.
 */
static void
fill_slot(int slot, const char *name, Size offset, Size region, const Tlbf *filter)
{
	SharedSlot *s = &directory->slots[slot];

	memset(s, 0, sizeof(SharedSlot));
	s->database = MyDatabaseId;
	strlcpy(s->name, name, NAMEDATALEN);
	s->generation = ++directory->next_generation;
	s->offset = offset;
	s->region = region;
	memcpy(pool + offset, filter, VARSIZE(filter));
	s->in_use = true;
}

static void
remember(bool created, int slot)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	PendingChange *change = palloc(sizeof(PendingChange));

	change->created = created;
	change->slot = slot;
	change->generation = directory->slots[slot].generation;
	change->subxact = GetCurrentSubTransactionId();
	pending = lappend(pending, change);
	MemoryContextSwitchTo(old);
}

/* Put a new filter (its bytes 'initial') in a region of 'region' bytes. */
void
tlbf_shared_create_filter(const char *name, const Tlbf *initial, Size region)
{
	int			slot = -1;
	int64		offset;

	tlbf_shared_require();
	LWLockAcquire(directory_lock(), LW_EXCLUSIVE);
	if (find_slot(name) >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("shared tlbf filter \"%s\" already exists", name)));
	for (int i = 0; i < tlbf_max_shared_filters && slot < 0; i++)
		if (!directory->slots[i].in_use)
			slot = i;
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
				 errdetail("It needs %zu bytes; tlbf.shared_memory is %d bytes.",
						   region, tlbf_shared_memory),
				 errhint("Drop unused filters, lower the filter's capacity, or raise tlbf.shared_memory and restart the server.")));

	fill_slot(slot, name, (Size) offset, region, initial);
	remember(true, slot);
	LWLockRelease(directory_lock());
}

void
tlbf_shared_drop_filter(const char *name)
{
	int			slot;

	tlbf_shared_require();
	LWLockAcquire(directory_lock(), LW_EXCLUSIVE);
	slot = find_slot(name);
	if (slot < 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("shared tlbf filter \"%s\" does not exist", name)));
	directory->slots[slot].dropping = true;
	remember(false, slot);
	LWLockRelease(directory_lock());
}

/*
 * End the pending creates and drops of the transaction (subxact invalid)
 * or of one subtransaction: a commit frees dropped filters, an abort frees
 * created ones and brings dropped ones back.
 */
static void
apply_pending(bool commit, SubTransactionId subxact)
{
	List	   *kept = NIL;
	ListCell   *cell;

	LWLockAcquire(directory_lock(), LW_EXCLUSIVE);
	foreach(cell, pending)
	{
		PendingChange *change = lfirst(cell);
		SharedSlot *s = &directory->slots[change->slot];

		if (subxact != InvalidSubTransactionId && change->subxact != subxact)
		{
			kept = lappend(kept, change);
			continue;
		}
		if (s->in_use && s->generation == change->generation)
		{
			if (change->created && !commit)
				s->in_use = false;
			else if (!change->created)
			{
				if (commit)
					s->in_use = false;
				else
					s->dropping = false;
			}
		}
		pfree(change);
	}
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
 * The names of this database's filters (only those changed since they were
 * last saved, if dirty_only), with the change count they were seen at.
 */
List *
tlbf_shared_names(bool dirty_only)
{
	List	   *names = NIL;

	tlbf_shared_require();
	LWLockAcquire(directory_lock(), LW_SHARED);
	for (int i = 0; i < tlbf_max_shared_filters; i++)
	{
		SharedSlot *s = &directory->slots[i];

		if (s->in_use && !s->dropping && s->database == MyDatabaseId &&
			(!dirty_only || s->changes != s->saved_changes))
			names = lappend(names, pstrdup(s->name));
	}
	LWLockRelease(directory_lock());
	return names;
}

/* Free the filters of databases that no longer exist. */
void
tlbf_shared_forget_databases(const List *existing)
{
	if (directory == NULL)
		return;
	LWLockAcquire(directory_lock(), LW_EXCLUSIVE);
	for (int i = 0; i < tlbf_max_shared_filters; i++)
		if (directory->slots[i].in_use &&
			!list_member_oid(existing, directory->slots[i].database))
			directory->slots[i].in_use = false;
	for (int i = 0; i < directory->nrestored; i++)
		if (!list_member_oid(existing, directory->restored[i]))
			directory->restored[i--] = directory->restored[--directory->nrestored];
	LWLockRelease(directory_lock());
}

/* Have this database's snapshots been loaded since the server started? */
bool
tlbf_shared_restored(void)
{
	bool		found = false;

	tlbf_shared_require();
	LWLockAcquire(directory_lock(), LW_SHARED);
	for (int i = 0; i < directory->nrestored && !found; i++)
		found = directory->restored[i] == MyDatabaseId;
	LWLockRelease(directory_lock());
	return found;
}

/* Is there a slot named 'name' in this database, even one being dropped? */
static bool
name_taken(const char *name)
{
	for (int i = 0; i < tlbf_max_shared_filters; i++)
	{
		SharedSlot *s = &directory->slots[i];

		if (s->in_use && s->database == MyDatabaseId && strcmp(s->name, name) == 0)
			return true;
	}
	return false;
}

/*
 * Install this database's saved filters (validated by the caller) that
 * shared memory does not hold: after a restart, after pg_restore, or when
 * another process was quicker.  A filter of the same name in shared memory
 * wins (it is newer).  Filters that do not fit are reported and left out.
 * The database then counts as loaded.
 */
void
tlbf_shared_install_restored(List *names, List *filters, List *regions)
{
	ListCell   *n,
			   *f,
			   *r;
	bool		loaded = false;

	LWLockAcquire(directory_lock(), LW_EXCLUSIVE);
	forthree(n, names, f, filters, r, regions)
	{
		const char *name = lfirst(n);
		const Tlbf *filter = lfirst(f);
		Size		region = Max((Size) *(int64 *) lfirst(r), VARSIZE(filter));
		int			slot = -1;
		int64		offset;

		if (name_taken(name))
			continue;
		for (int i = 0; i < tlbf_max_shared_filters && slot < 0; i++)
			if (!directory->slots[i].in_use)
				slot = i;
		offset = slot < 0 ? -1 : free_region(TYPEALIGN(sizeof(uint64), region));
		if (offset < 0)
		{
			ereport(WARNING,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("no room to restore shared tlbf filter \"%s\"", name),
					 errhint("Raise tlbf.shared_memory or tlbf.max_shared_filters and restart the server.")));
			continue;
		}
		fill_slot(slot, name, (Size) offset, TYPEALIGN(sizeof(uint64), region), filter);
	}
	for (int i = 0; i < directory->nrestored && !loaded; i++)
		loaded = directory->restored[i] == MyDatabaseId;
	if (!loaded && directory->nrestored < MAX_RESTORED_DATABASES)
		directory->restored[directory->nrestored++] = MyDatabaseId;
	LWLockRelease(directory_lock());
}

/* The region size and change count of an open filter. */
Size
tlbf_shared_region(const SharedFilterRef *ref)
{
	return directory->slots[ref->slot].region;
}

uint64
tlbf_shared_changes(const SharedFilterRef *ref)
{
	return directory->slots[ref->slot].changes;
}

bool
tlbf_shared_unsaved(const SharedFilterRef *ref)
{
	return directory->slots[ref->slot].changes != directory->slots[ref->slot].saved_changes;
}

/* Record that filter 'name' was saved as it was after 'changes' changes. */
void
tlbf_shared_saved(const char *name, uint64 changes)
{
	SharedFilterRef ref;

	if (!tlbf_shared_open(name, LW_EXCLUSIVE, &ref))
		return;
	if (changes > directory->slots[ref.slot].saved_changes)
		directory->slots[ref.slot].saved_changes = changes;
	tlbf_shared_close(&ref);
}
