/*-------------------------------------------------------------------------
 *
 * shared_store.c
 *	  Named filters as SQL sees them: created and dropped transactionally,
 *	  saved to the table tlbf_shared_filters of the extension's schema and
 *	  loaded back from it.
 *
 * Every filter of shared memory has a row in the snapshot table, written
 * in the same transaction that creates it and deleted in the one that
 * drops it.  A create or drop first takes a heavyweight lock on the name,
 * held to the end of its transaction: creates and drops of one name
 * happen one transaction after the other, so once transactions end, the
 * directory and the table agree.
 *
 * A saver the launcher starts in the database every tlbf.snapshot_interval
 * saves the filters that changed (worker.c); at a clean stop, the
 * launcher writes what changed since as images (shared_images.c), taken
 * instead of the row at the next load.
 * After a restart (or a pg_restore), a filter that shared memory does not
 * hold is loaded from its row the first time a session asks for it.
 * Loading reads the table with a fresh snapshot, never the caller's: a
 * REPEATABLE READ transaction whose snapshot predates a drop must not
 * bring the dropped filter back.  Each filter is loaded under its name's
 * lock, and its row read again once the lock is held, so that no drop
 * commits between the read and the install (load_one).
 *
 * A drop may be prepared (two-phase commit), and the server may stop
 * before COMMIT PREPARED: the directory's mark on the slot is then lost,
 * but the prepared transaction's locks are not (PostgreSQL takes them
 * again at startup), on the name or, for DROP EXTENSION, on the table.
 * Nothing here waits for a lock that a prepared transaction holds, which
 * may be held for ever: such a filter is neither loaded nor saved, and
 * every use of it fails with 55006 until the transaction ends
 * (tlbf_prepared_holder).  A transaction that adopted filters holds their
 * names too, so it cannot be prepared.
 *
 * Loading fills the cluster's shared pool, which only members of
 * tlbf_admin (and superusers) may do.  So a row is loaded only if it was
 * written in this database: every row written is stamped with the
 * database it was written in (a trigger sets database_oid), and a copy of
 * a database (CREATE DATABASE ... TEMPLATE) carries rows stamped with
 * another database's OID until a member of tlbf_admin adopts them
 * (tlbf_store_adopt).  A restore writes its rows, which are stamped where
 * they are restored.  A row that is not loaded, for that reason or for
 * want of room, makes every use of its name fail with one error that says
 * why and what to do (report_unloaded).
 *
 * The table is untrusted input.  Only the extension's functions write it
 * (as its owner; no role is granted INSERT, UPDATE or DELETE), but a
 * superuser or a restored dump can put anything in it: every field of
 * every row is checked before it sizes, names or fills a slot, and a bad
 * row is skipped with a WARNING.
 *
 * On a standby, shared memory is not used at all: the functions that read
 * a filter read its saved copy, replicated with the table.
 *
 *-------------------------------------------------------------------------
 */
#include "shared_store.h"
#include "filter_args.h"
#include "settings.h"
#include "shared_wal.h"
#include "shared_standby.h"
#include "shared_pending.h"
#include "shared_images.h"
#include "shared_value.h"
#include "shared_prepared.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "citus_tables.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "safe_sql.h"
#include "shared_directory.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

/* Columns of tlbf_shared_filters (see the install script). */
#define SNAPSHOT_NAME		1
#define SNAPSHOT_FILTER		2
#define SNAPSHOT_REGION		3
#define SNAPSHOT_DATABASE	5	/* since 1.4: the database that wrote it */

/* The advisory lock tag of a name: tlbf's own key, apart from users' keys. */
#define NAME_LOCK_KEY		0x74626c66	/* "tlbf" */
#define NAME_LOCK_FIELD		3

/* A load gives up after this many drops committed while it read. */
#define LOAD_ATTEMPTS		10

static object_access_hook_type previous_object_access_hook = NULL;

/*
 * Has this transaction locked names to adopt them (tlbf_store_adopt)?  It
 * cannot be prepared then: a prepared transaction that holds a name's
 * lock is taken for one that drops the filter.  (Still set if the adopting
 * subtransaction rolled back: the refusal errs on the safe side.)
 */
static bool adopting = false;

/* Why a saved filter of this database is not in shared memory. */
typedef enum UnloadedWhy
{
	UNLOADED_NOT_ADOPTED,		/* its row was written by another database */
	UNLOADED_OLD_TABLE,			/* the table predates 1.4: rows are unstamped */
	UNLOADED_NO_SLOT,			/* tlbf.max_shared_filters are taken */
	UNLOADED_NO_ROOM,			/* tlbf.shared_memory has no room for it */
	UNLOADED_BEING_DROPPED		/* a prepared transaction drops it */
} UnloadedWhy;

typedef struct Unloaded
{
	char		name[NAMEDATALEN];
	UnloadedWhy why;
	Oid			written_by;		/* NOT_ADOPTED: the database its row names */
	Size		region;			/* NO_ROOM: the bytes it needs */
	TransactionId prepared;		/* BEING_DROPPED: the transaction */
} Unloaded;

/* How lock_name went. */
typedef enum NameLock
{
	NAME_LOCKED,
	NAME_BUSY,					/* another transaction holds it (not waited for) */
	NAME_PREPARED				/* a prepared transaction holds it */
} NameLock;

/*
 * Lock a filter name of this database to the end of the transaction:
 * ExclusiveLock to create, drop or adopt it, ShareLock to load or save
 * it.  A transaction that holds the name is waited for if 'wait', but
 * never a prepared one (NAME_PREPARED, its XID in *prepared): only a
 * drop holds a name when it is prepared (a create or an adopt cannot be),
 * and it holds it until COMMIT PREPARED or ROLLBACK PREPARED.  (A
 * transaction that prepares while it is waited for is waited for until
 * it ends, as for any lock of it; lock_timeout and a cancel apply.)
 */
static NameLock
lock_name(const char *name, LOCKMODE mode, bool wait, TransactionId *prepared)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId,
						 hash_bytes((const unsigned char *) name, (int) strlen(name)),
						 NAME_LOCK_KEY, NAME_LOCK_FIELD);
	if (LockAcquire(&tag, mode, false, true) != LOCKACQUIRE_NOT_AVAIL)
		return NAME_LOCKED;
	*prepared = tlbf_prepared_holder(&tag, mode);
	if (TransactionIdIsValid(*prepared))
		return NAME_PREPARED;
	if (!wait)
		return NAME_BUSY;
	(void) LockAcquire(&tag, mode, false, false);
	return NAME_LOCKED;
}

/* Let go of a lock lock_name took (a load holds it only while it loads). */
static void
unlock_name(const char *name, LOCKMODE mode)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId,
						 hash_bytes((const unsigned char *) name, (int) strlen(name)),
						 NAME_LOCK_KEY, NAME_LOCK_FIELD);
	LockRelease(&tag, mode, false);
}

/*
 * Every use of a name that a prepared transaction drops fails with this
 * until that transaction ends: loading its saved copy would bring back a
 * filter that COMMIT PREPARED then drops from the table only.
 */
static void
report_being_dropped(const char *name, TransactionId prepared)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_IN_USE),
			 errmsg("shared tlbf filter \"%s\" is being dropped by a prepared transaction", name),
			 errdetail("Prepared transaction %u dropped it.  Until that transaction ends, the filter is not loaded from its saved copy, saved, created or dropped.",
					   prepared),
			 errhint("End the prepared transaction (pg_prepared_xacts lists it): after COMMIT PREPARED the filter is gone, after ROLLBACK PREPARED it is loaded again on its next use.")));
}

/* Lock filter 'name' with lock_name to create or drop it. */
static void
lock_name_to_change(const char *name)
{
	TransactionId prepared;

	if (lock_name(name, ExclusiveLock, true, &prepared) == NAME_PREPARED)
		report_being_dropped(name, prepared);
}

/*
 * Lock the snapshot table 'relid' in 'mode' to the end of the transaction
 * (or until the caller unlocks it), waiting for a transaction that holds
 * it, but not for a prepared one: a prepared DROP EXTENSION holds it in
 * AccessExclusiveLock until COMMIT PREPARED or ROLLBACK PREPARED.
 */
static void
lock_snapshot_table(Oid relid, LOCKMODE mode)
{
	LOCKTAG		tag;
	TransactionId prepared;

	if (ConditionalLockRelationOid(relid, mode))
		return;
	SET_LOCKTAG_RELATION(tag, MyDatabaseId, relid);
	prepared = tlbf_prepared_holder(&tag, mode);
	if (TransactionIdIsValid(prepared))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("table tlbf_shared_filters is locked by a prepared transaction"),
				 errdetail("Prepared transaction %u holds a lock on it (it ran DROP EXTENSION tlbf, or changed the table).  Until that transaction ends, no shared filter of this database is loaded from the table or written to it.",
						   prepared),
				 errhint("End the prepared transaction with COMMIT PREPARED or ROLLBACK PREPARED (pg_prepared_xacts lists it).")));
	LockRelationOid(relid, mode);
}

static void
report_bad_row(const char *name, const char *detail)
{
	ereport(WARNING,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("saved shared tlbf filter \"%s\" is invalid and was not loaded", name),
			 errdetail("%s", detail),
			 errhint("Drop it with tlbf_shared_drop() and create it again.")));
}

static bool
column_is(TupleDesc desc, AttrNumber attnum, Oid type)
{
	Form_pg_attribute column = TupleDescAttr(desc, attnum - 1);

	return !column->attisdropped && column->atttypid == type;
}

/*
 * The snapshot table, opened for reading, or NULL if it is not usable;
 * *stamped tells whether its rows name the database that wrote them.
 */
static Relation
open_snapshot_table(bool *stamped)
{
	Oid			relid = tlbf_extension_table("tlbf_shared_filters");
	Relation	rel;
	TupleDesc	desc;

	if (!OidIsValid(relid))
		return NULL;
	/* a standby: the startup process holds a prepared transaction's locks */
	if (RecoveryInProgress())
		rel = table_open(relid, AccessShareLock);
	else
	{
		lock_snapshot_table(relid, AccessShareLock);
		/* dropped while the lock was waited for? */
		rel = try_table_open(relid, NoLock);
		if (rel == NULL)
		{
			UnlockRelationOid(relid, AccessShareLock);
			return NULL;
		}
	}
	desc = RelationGetDescr(rel);
	if (desc->natts < SNAPSHOT_REGION ||
		!column_is(desc, SNAPSHOT_NAME, TEXTOID) ||
		!column_is(desc, SNAPSHOT_FILTER, tlbf_extension_type()) ||
		!column_is(desc, SNAPSHOT_REGION, INT8OID))
	{
		ereport(WARNING,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("table tlbf_shared_filters does not have the columns tlbf expects"),
				 errdetail("Its first three columns must be name text, filter tlbf and region_bytes bigint."),
				 errhint("Reinstall the extension.")));
		table_close(rel, AccessShareLock);
		return NULL;
	}
	*stamped = desc->natts >= SNAPSHOT_DATABASE && column_is(desc, SNAPSHOT_DATABASE, OIDOID);
	return rel;
}

static Unloaded *
unloaded(const char *name, UnloadedWhy why, Oid written_by, Size region)
{
	Unloaded   *u = palloc0(sizeof(Unloaded));

	strlcpy(u->name, name, NAMEDATALEN);
	u->why = why;
	u->written_by = written_by;
	u->region = region;
	return u;
}

/*
 * Was this row written in this database?  If not, *why says why it is not
 * loaded, and *written_by which database wrote it.
 */
static bool
written_here(HeapTuple tuple, TupleDesc desc, bool stamped, UnloadedWhy *why,
			 Oid *written_by)
{
	bool		isnull;
	Datum		database;

	*written_by = InvalidOid;
	if (!stamped)
	{
		*why = UNLOADED_OLD_TABLE;
		return false;
	}
	database = heap_getattr(tuple, SNAPSHOT_DATABASE, desc, &isnull);
	if (!isnull)
		*written_by = DatumGetObjectId(database);
	*why = UNLOADED_NOT_ADOPTED;
	return *written_by == MyDatabaseId;
}

/* Which rows of the snapshot table read_saved returns, and what of them. */
typedef struct RowsWanted
{
	Snapshot	snapshot;		/* NULL: a fresh catalog snapshot */
	bool		skip_held;		/* not those whose filter shared memory holds */
	List	  **unloaded_rows;	/* if set, only this database's (see read_row) */
	const char *only;			/* if set, only the row of this name */
	bool		names_only;		/* their names, not their filters */
} RowsWanted;

/*
 * Read one row: true with its fields, checked and copied, in *saved; false
 * after a WARNING if any field is bad, or if it is not wanted: with
 * 'skip_held', one whose filter shared memory holds; with 'unloaded_rows'
 * (loading into this server's pool), one another database wrote, which is
 * added to *unloaded_rows; with 'only', one of another name (no WARNING
 * then for its name: it was given when the names were read).  With
 * 'names_only', only its name is read and checked.
 */
static bool
read_row(HeapTuple tuple, TupleDesc desc, bool stamped, const RowsWanted *wanted,
		 SavedFilter *saved)
{
	bool		isnull;
	Datum		name = heap_getattr(tuple, SNAPSHOT_NAME, desc, &isnull);
	Datum		value;
	Datum		region;
	TlbfProblem problem;
	UnloadedWhy why;
	Oid			written_by;

	saved->unsaved = false;
	saved->filter = NULL;
	saved->region = 0;
	saved->row_xid = HeapTupleHeaderGetRawXmin(tuple->t_data);
	if (isnull)
	{
		if (wanted->only == NULL)
			report_bad_row("", "It has no name.");
		return false;
	}
	saved->name = TextDatumGetCString(name);
	if (wanted->only != NULL && strcmp(saved->name, wanted->only) != 0)
		return false;
	if (saved->name[0] == '\0' || strlen(saved->name) >= NAMEDATALEN)
	{
		report_bad_row(saved->name,
					   psprintf("A name has 1 to %d bytes; this one has %zu.",
								NAMEDATALEN - 1, strlen(saved->name)));
		return false;
	}
	/* a filter shared memory has would not be loaded: leave its bytes */
	if (wanted->skip_held && tlbf_directory_holds(saved->name))
		return false;
	if (wanted->unloaded_rows != NULL &&
		!written_here(tuple, desc, stamped, &why, &written_by))
	{
		*wanted->unloaded_rows = lappend(*wanted->unloaded_rows,
										 unloaded(saved->name, why, written_by, 0));
		return false;
	}
	if (wanted->names_only)
		return true;
	value = heap_getattr(tuple, SNAPSHOT_FILTER, desc, &isnull);
	if (isnull)
	{
		report_bad_row(saved->name, "It has no filter.");
		return false;
	}
	saved->filter = (Tlbf *) PG_DETOAST_DATUM_COPY(value);
	if (!shared_value_validate(saved->filter, VARSIZE(saved->filter), &problem))
	{
		report_bad_row(saved->name, psprintf("%s.", problem.message));
		return false;
	}
	region = heap_getattr(tuple, SNAPSHOT_REGION, desc, &isnull);
	if (isnull || DatumGetInt64(region) < (int64) VARSIZE(saved->filter) ||
		DatumGetInt64(region) > (int64) tlbf_directory_max_region())
	{
		report_bad_row(saved->name,
					   psprintf("Its region_bytes must be between its size (%zu bytes) and %zu bytes (tlbf.shared_memory, at most 1GB).",
								(Size) VARSIZE(saved->filter), tlbf_directory_max_region()));
		return false;
	}
	saved->region = (Size) DatumGetInt64(region);
	return true;
}

/*
 * This database's saved filters whose rows pass every check and are
 * wanted (RowsWanted says which, and whether with their filters).
 */
static List *
read_saved(const RowsWanted *wanted)
{
	bool		stamped;
	Relation	rel = open_snapshot_table(&stamped);
	SysScanDesc scan;
	HeapTuple	tuple;
	List	   *saved = NIL;

	if (rel == NULL)
		return NIL;
	scan = systable_beginscan(rel, InvalidOid, false, wanted->snapshot, 0, NULL);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		SavedFilter *row = palloc(sizeof(SavedFilter));

		if (read_row(tuple, RelationGetDescr(rel), stamped, wanted, row))
			saved = lappend(saved, row);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return saved;
}

/*
 * Keys of open transactions (shared_pending.c), for the filter 'ref'
 * holds: the lock keeps a fold from moving a key between the filter's bits
 * and the table while the caller looks at both.
 */
static PendingFilter
pending_id(const SharedFilterRef *ref)
{
	PendingFilter id = {ref->slot, tlbf_directory_generation(ref)};

	return id;
}

static void fold_committed_keys(void);

/* What a fold inserts into, and how it went. */
typedef struct FoldInto
{
	SharedFilterRef *ref;
	TlbfMemory	memory;
	bool		drop_oldest;
	TlbfStatus	status;
} FoldInto;

static bool
fold_one(void *arg, TlbfHash hash, TlbfTime at)
{
	FoldInto   *into = arg;
	TlbfStatus	status;

	if (into->status != TLBF_OK)
		return false;
	/* expired by the filter's newer keys: nothing would ask for it */
	if (shared_value_expired(into->ref->filter, at))
		return true;
	status = shared_value_insert(&into->ref->filter, &into->memory, hash, at);
	if (status != TLBF_OK && into->drop_oldest)
	{
		TlbfMemory	dropping = into->memory;

		dropping.keep_live = false;
		status = shared_value_insert(&into->ref->filter, &dropping, hash, at);
	}
	into->status = status;
	return status == TLBF_OK;
}

/* The same, each key tried whatever became of the one before. */
static bool
fold_one_retrying(void *arg, TlbfHash hash, TlbfTime at)
{
	((FoldInto *) arg)->status = TLBF_OK;
	return fold_one(arg, hash, at);
}

/*
 * A filter was installed (after a restart), not yet seen by anyone: the
 * keys that prepared transactions wrote down for it come back
 * (shared_prepared.c), pending if the transaction is still prepared,
 * folded into it if it committed.
 */
typedef struct Restoring
{
	PreparedKeys *keys;
	int			lost;
	bool		from_image;		/* installed from an image, not its row */
} Restoring;

static void
restore_prepared_keys(SharedFilterRef *ref, void *arg)
{
	Restoring  *restoring = arg;
	FoldInto	into;

	/* an image holds what its row does not: the next save writes it */
	if (restoring->from_image)
		tlbf_directory_count_change(ref);
	if (restoring->keys == NULL)
		return;
	into.ref = ref;
	tlbf_store_filter_memory(ref, &into.memory);
	into.drop_oldest = false;
	into.status = TLBF_OK;
	restoring->lost = tlbf_pending_apply_prepared(pending_id(ref), restoring->keys,
												  fold_one_retrying, &into);
	tlbf_directory_count_change(ref);
}

/*
 * Load saved filter 'name', if shared memory does not hold it, under the
 * lock on its name (ShareLock, let go once it is loaded): no create or
 * drop of the name runs meanwhile.  One that has not ended is waited for
 * if 'wait', else the name is left for its next use.  A prepared drop is
 * never waited for, and its filter never loaded: COMMIT PREPARED would
 * delete its row but leave it in shared memory, where a saver
 * would save it again.  The row is read again once the name is locked,
 * with a fresh snapshot, so a drop that committed since the names were
 * read is seen, and under a lock on the table, so that DROP EXTENSION
 * cannot commit before the filter is installed.  What is not loaded, and
 * why, is added to *not_loaded.
 */
static void
load_one(Oid relid, const char *name, bool wait, List **not_loaded)
{
	TransactionId prepared;
	RowsWanted	wanted = {.skip_held = true, .unloaded_rows = not_loaded, .only = name};

	switch (lock_name(name, ShareLock, wait, &prepared))
	{
		case NAME_LOCKED:
			break;
		case NAME_BUSY:
			return;
		case NAME_PREPARED:
			{
				Unloaded   *u = unloaded(name, UNLOADED_BEING_DROPPED, InvalidOid, 0);

				u->prepared = prepared;
				*not_loaded = lappend(*not_loaded, u);
				return;
			}
	}
	lock_snapshot_table(relid, AccessShareLock);
	for (int attempt = 0; attempt < LOAD_ATTEMPTS; attempt++)
	{
		uint64		drops = tlbf_directory_drops();
		List	   *saved;
		SavedFilter *row;
		Tlbf	   *image;
		InstallResult result;
		Restoring	restoring;

		InvalidateCatalogSnapshot();
		saved = read_saved(&wanted);
		if (saved == NIL)
			break;				/* dropped, loaded by another session, or bad */
		row = linitial(saved);
		image = tlbf_image_read(row->name, row->row_xid, row->region);
		restoring.keys = tlbf_prepared_read(row->name);
		restoring.lost = 0;
		restoring.from_image = image != NULL;
		result = tlbf_directory_install(row->name, image ? image : row->filter, row->region,
										row->row_xid, drops, restore_prepared_keys, &restoring);
		/* installed or not, its bytes are not needed here: one filter at a time */
		pfree(row->filter);
		if (image != NULL)
			pfree(image);
		if (restoring.keys != NULL)
			pfree(restoring.keys);
		if (restoring.lost > 0)
			ereport(WARNING,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg_plural("%d key of prepared transactions found no room in shared tlbf filter \"%s\"",
								   "%d keys of prepared transactions found no room in shared tlbf filter \"%s\"",
								   restoring.lost, restoring.lost, row->name),
					 errhint("Raise tlbf.max_pending_keys, or the filter's max_bytes, and refill it with tlbf_shared_rebuild.")));
		if (result == INSTALL_NO_SLOT || result == INSTALL_NO_ROOM)
			*not_loaded = lappend(*not_loaded,
								  unloaded(row->name,
										   result == INSTALL_NO_SLOT ? UNLOADED_NO_SLOT : UNLOADED_NO_ROOM,
										   InvalidOid, row->region));
		if (result != INSTALL_STALE)
			break;
	}
	UnlockRelationOid(relid, AccessShareLock);
	unlock_name(name, ShareLock);
}

/*
 * Load this database's saved filters that shared memory does not hold:
 * after a restart, or after pg_restore.  A filter of the same name in
 * shared memory wins (it is newer).  'wanted' is the name the caller is
 * about to use, whose create or drop in another transaction is waited
 * for (see load_one); NULL if it wants them all.  Returns those that were
 * not loaded, and why.
 */
static List *
load_saved(const char *wanted)
{
	Oid			relid = tlbf_extension_table("tlbf_shared_filters");
	List	   *not_loaded = NIL;
	RowsWanted	names = {.skip_held = true, .unloaded_rows = &not_loaded, .names_only = true};
	ListCell   *cell;

	if (RecoveryInProgress() || !OidIsValid(relid))
		return NIL;
	/* a snapshot taken now, whatever the transaction's isolation */
	InvalidateCatalogSnapshot();
	foreach(cell, read_saved(&names))
	{
		const char *name = ((SavedFilter *) lfirst(cell))->name;

		load_one(relid, name, wanted == NULL || strcmp(name, wanted) == 0, &not_loaded);
	}
	return not_loaded;
}

/* Why filter 'name' is not loaded, or NULL if it is not among them. */
static const Unloaded *
unloaded_named(const List *not_loaded, const char *name)
{
	ListCell   *cell;

	foreach(cell, not_loaded)
	{
		const Unloaded *u = lfirst(cell);

		if (strcmp(u->name, name) == 0)
			return u;
	}
	return NULL;
}

/* Every use of a filter that could not be loaded fails with this error. */
static void
report_unloaded(const Unloaded *u)
{
	char	   *writer = OidIsValid(u->written_by) ? get_database_name(u->written_by) : NULL;

	switch (u->why)
	{
		case UNLOADED_NOT_ADOPTED:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("shared tlbf filter \"%s\" was saved by another database and is not loaded", u->name),
					 writer ?
					 errdetail("Its saved copy was written by database \"%s\", of which this database is a copy (CREATE DATABASE ... TEMPLATE, or a restore with triggers disabled).", writer) :
					 errdetail("Its saved copy was written by a database (OID %u) of which this database is a copy (CREATE DATABASE ... TEMPLATE, or a restore with triggers disabled).", u->written_by),
					 errhint("A member of tlbf_admin makes this database's saved filters its own with SELECT tlbf_shared_adopt(), or drops this one with tlbf_shared_drop().")));
			break;
		case UNLOADED_OLD_TABLE:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("shared tlbf filter \"%s\" is not loaded", u->name),
					 errdetail("The tlbf extension in this database predates version 1.4."),
					 errhint("Update it: ALTER EXTENSION tlbf UPDATE.")));
			break;
		case UNLOADED_NO_SLOT:
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("no free slot to load shared tlbf filter \"%s\"", u->name),
					 errdetail("The server holds at most %d shared filters (tlbf.max_shared_filters), of all databases together, and holds that many.",
							   tlbf_max_shared_filters),
					 errhint("Raise tlbf.max_shared_filters and restart the server, or drop filters that are not needed with tlbf_shared_drop().")));
			break;
		case UNLOADED_NO_ROOM:
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("not enough shared memory to load shared tlbf filter \"%s\"", u->name),
					 errdetail("It needs %zu bytes; the free space of tlbf.shared_memory (%d bytes, for all databases together) is smaller or split.",
							   u->region, tlbf_shared_memory),
					 errhint("Raise tlbf.shared_memory and restart the server, or drop filters that are not needed with tlbf_shared_drop().")));
			break;
		case UNLOADED_BEING_DROPPED:
			report_being_dropped(u->name, u->prepared);
			break;
	}
}

/*
 * Load this database's saved filters that shared memory does not hold;
 * ERROR for the first one that could not be loaded, saying why.
 */
void
tlbf_store_load(void)
{
	List	   *not_loaded = load_saved(NULL);

	if (not_loaded != NIL)
		report_unloaded(linitial(not_loaded));
}

/*
 * Open filter 'name' of this database, loading it from its saved copy if
 * shared memory does not hold it yet; ERROR if there is none.  Close it
 * with tlbf_store_close.
 */
void
tlbf_store_open(const char *name, LWLockMode mode, SharedFilterRef *ref)
{
	const Unloaded *why;

	if (tlbf_directory_open(name, mode, ref))
		return;
	why = unloaded_named(load_saved(name), name);
	if (why != NULL)
		report_unloaded(why);
	if (!tlbf_directory_open(name, mode, ref))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("shared tlbf filter \"%s\" does not exist", name),
				 tlbf_citus_installed() ?
				 errhint("Create it with tlbf_shared_create().  On a Citus cluster each node has its own shared filters: create it on every node that uses it (run_command_on_workers).") :
				 errhint("Create it with tlbf_shared_create(); tlbf_shared_list() shows the filters of this database.")));
}

/*
 * The SQL functions' way to the directory, which they never call
 * themselves (docs/server.md, Layers).  From tlbf_store_open to
 * tlbf_store_close the caller holds the directory's and the filter's
 * LWLocks, so it must not access a catalog or wait for a heavyweight
 * lock; the functions below that take an open filter only call the
 * directory, which does neither.
 */

/* Is the library preloaded, with its shared memory? */
bool
tlbf_store_available(void)
{
	return tlbf_directory_available();
}

/* ERROR, saying what to do, if the library was not preloaded. */
void
tlbf_store_require(void)
{
	tlbf_directory_require();
}

void
tlbf_store_close(SharedFilterRef *ref)
{
	tlbf_directory_close(ref);
}

/* The bytes of the pool the open filter may fill before it must move. */
Size
tlbf_store_region(const SharedFilterRef *ref)
{
	return tlbf_directory_region(ref);
}

/* A filter's region is all it gets (tlbf_store_create). */
static void *
no_more_room(TlbfMemory *memory, void *buffer, size_t size)
{
	return NULL;
}

/*
 * Memory for the core to insert into the filter 'ref' holds exclusively:
 * its region, which it never leaves and which caps its size.  The core
 * keeps every live slice (an insertion that would need one dropped fails,
 * changing nothing) unless the caller, who wants the oldest slices dropped
 * instead, unsets keep_live.
 */
void
tlbf_store_filter_memory(SharedFilterRef *ref, TlbfMemory *memory)
{
	memory->resize = no_more_room;
	memory->context = ref;
	memory->allocated = tlbf_directory_region(ref);
	memory->max_bytes = memory->allocated;
	memory->keep_live = true;
}

/* The open filter changed (held exclusively): the next saver saves it. */
void
tlbf_store_count_change(SharedFilterRef *ref)
{
	tlbf_directory_count_change(ref);
}

/* Count 'n' events of one kind for the open filter (tlbf_shared_stats). */
void
tlbf_store_count(const SharedFilterRef *ref, SharedCounter counter, uint64 n)
{
	tlbf_directory_count(ref, counter, n);
}

/*
 * The counters of each filter of this database that this transaction
 * sees, in a list of SavedCounts.  Loads nothing: a filter not loaded yet
 * has counted nothing.
 */
List *
tlbf_store_counts(void)
{
	List	   *all = NIL;
	ListCell   *cell;

	foreach(cell, tlbf_directory_names())
	{
		SharedFilterRef ref;
		SavedCounts *counts;

		if (!tlbf_directory_open(lfirst(cell), LW_SHARED, &ref))
			continue;
		counts = palloc(sizeof(SavedCounts));
		counts->name = lfirst(cell);
		tlbf_directory_counts(&ref, &counts->counts);
		tlbf_directory_close(&ref);
		all = lappend(all, counts);
	}
	return all;
}

/*
 * Count from zero again for filter 'name', or for every filter of this
 * database (NULL).  Returns how many filters it reset.
 */
int
tlbf_store_reset_counts(const char *name)
{
	int			reset = 0;
	ListCell   *cell;

	foreach(cell, tlbf_directory_names())
	{
		SharedFilterRef ref;

		if (name != NULL && strcmp(name, lfirst(cell)) != 0)
			continue;
		if (!tlbf_directory_open(lfirst(cell), LW_SHARED, &ref))
			continue;
		tlbf_directory_reset_counts(&ref);
		tlbf_directory_close(&ref);
		reset++;
	}
	return reset;
}

/*
 * The open filter's version: every insertion and retirement counts as a
 * change (a saver saves a filter that changed), and a filter
 * dropped and made again, or loaded again, has a new generation.
 */
StoreVersion
tlbf_store_version(const SharedFilterRef *ref)
{
	StoreVersion version = {pending_id(ref), tlbf_directory_changes(ref)};

	return version;
}

bool
tlbf_store_same_version(StoreVersion a, StoreVersion b)
{
	return a.id.slot == b.id.slot && a.id.generation == b.id.generation &&
		a.changes == b.changes;
}

PendingFound
tlbf_store_pending_find(const SharedFilterRef *ref, TlbfHash hash, TransactionId *wait_for,
						TlbfTime *at)
{
	return tlbf_pending_find(pending_id(ref), hash, wait_for, at);
}

void
tlbf_store_pending_reserve(const SharedFilterRef *ref, TlbfHash hash, TlbfTime at, bool stored)
{
	tlbf_pending_reserve(pending_id(ref), tlbf_directory_name(ref), hash, at, stored);
}

PendingFound
tlbf_store_pending_claim(const SharedFilterRef *ref, TlbfHash hash, TlbfTime at, bool stored,
						 TransactionId *wait_for, TlbfTime *found_at)
{
	return tlbf_pending_claim(pending_id(ref), tlbf_directory_name(ref), hash, at, stored,
							  wait_for, found_at);
}

bool
tlbf_store_pending_confirm(const SharedFilterRef *ref, TlbfHash hash)
{
	return tlbf_pending_confirm(pending_id(ref), hash);
}

/*
 * Should the filter be folded (tlbf_store_fold)?  When enough keys wait
 * for it, since a fold looks through the whole table of pending keys.
 */
bool
tlbf_store_fold_due(const SharedFilterRef *ref)
{
	return tlbf_pending_fold_due(pending_id(ref), Max(16, tlbf_max_pending_keys / 16));
}

/*
 * Before adding a key (no filter open): if the table of keys waiting to
 * commit is crowded with keys a fold could take, fold this database's
 * filters (tlbf_pending_crowded).
 */
void
tlbf_store_fold_if_crowded(void)
{
	if (tlbf_pending_crowded())
	{
		fold_committed_keys();
		tlbf_pending_crowded_folded();
	}
}

/*
 * Fold the keys of committed transactions into the bits of the filter
 * 'ref' holds exclusively, and forget those of transactions that rolled
 * back.  When the pool has no room for the filter to grow, the filter
 * drops its oldest slices if 'drop_oldest' (counted in 'truncated'), else
 * the keys stay pending, still found, and the status says so.
 */
TlbfStatus
tlbf_store_fold(SharedFilterRef *ref, bool drop_oldest)
{
	FoldInto	into;
	Size		size_before = shared_value_size(ref->filter);

	Assert(ref->mode == LW_EXCLUSIVE);
	into.ref = ref;
	tlbf_store_filter_memory(ref, &into.memory);
	into.drop_oldest = drop_oldest;
	into.status = TLBF_OK;
	if (tlbf_pending_fold(pending_id(ref), fold_one, &into) > 0)
		tlbf_directory_count_change(ref);
	/* (ref->filter may have moved within its region) */
	if (shared_value_size(ref->filter) > size_before)
		tlbf_directory_count(ref, SHARED_GROWN, 1);
	return into.status;
}

/*
 * Copies of this database's filters that shared memory holds and this
 * transaction sees, each taken under its shared lock, with its region and
 * whether it changed since it was saved.  Loads nothing: call
 * tlbf_store_load first for the saved ones.
 */
List *
tlbf_store_copies(void)
{
	List	   *copies = NIL;
	ListCell   *cell;

	foreach(cell, tlbf_directory_names())
	{
		SharedFilterRef ref;
		SavedFilter *copy;

		if (!tlbf_directory_open(lfirst(cell), LW_SHARED, &ref))
			continue;
		copy = palloc(sizeof(SavedFilter));
		copy->name = lfirst(cell);
		copy->filter = shared_value_copy(ref.filter);
		copy->region = tlbf_directory_region(&ref);
		/* keys of transactions enter the bits (and a save) later */
		copy->unsaved = tlbf_directory_unsaved(&ref) ||
			tlbf_pending_count(pending_id(&ref)) > 0;
		tlbf_directory_close(&ref);
		copies = lappend(copies, copy);
	}
	return copies;
}

/*
 * Run a statement on the snapshot table as the table's owner (no caller
 * needs a privilege on it).  Returns the rows it processed.
 */
static uint64
write_snapshots(Oid relid, const char *format, int nargs, Oid *types, Datum *values)
{
	char	   *query = psprintf(format, tlbf_extension_schema_quoted());
	RoleSwitch	role;
	uint64		processed;

	lock_snapshot_table(relid, RowExclusiveLock);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	tlbf_become(tlbf_relation_owner(relid), &role);
	if (tlbf_safe_execute(query, nargs, types, values, false, 0) < 0)
		elog(ERROR, "could not write the shared tlbf filter snapshots");
	processed = SPI_processed;
	tlbf_unbecome(&role);
	SPI_finish();
	return processed;
}

static Oid
snapshot_table_or_error(void)
{
	Oid			relid = tlbf_extension_table("tlbf_shared_filters");

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the tlbf extension has no table tlbf_shared_filters"),
				 errhint("Update the extension: ALTER EXTENSION tlbf UPDATE.")));
	return relid;
}

/*
 * A new empty filter in shared memory, and its row in the snapshot table.
 * Its region, taken from the pool now for good, is 'max_bytes' (0: what
 * the capacity needs, see shared_value_region_for): a filter never grows
 * past it, so no role that adds keys can take another filter's room.
 */
void
tlbf_store_create(const char *name, const TlbfParams *params, int64 max_bytes)
{
	Oid			relid = snapshot_table_or_error();
	double		needed = shared_value_region_for(params);
	double		region = max_bytes > 0 ? (double) max_bytes : needed;
	Tlbf	   *f;
	Oid			types[3] = {TEXTOID, InvalidOid, INT8OID};
	Datum		values[3];
	const Unloaded *why;

	if (max_bytes < 0 || (max_bytes > 0 && max_bytes < shared_value_min_region(params)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_bytes of shared tlbf filter \"%s\" must be at least %zu bytes",
						name, shared_value_min_region(params)),
				 errdetail("Its first generation's band, twice, needs that much."),
				 errhint("Leave max_bytes out for the size its capacity needs (%.0f bytes), or give more.",
						 needed)));
	if (region > (double) tlbf_directory_max_region())
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("not enough shared memory for shared tlbf filter \"%s\"", name),
				 errdetail("It needs %.0f bytes; tlbf.shared_memory is %d bytes, and one filter may have at most 1GB.",
						   region, tlbf_shared_memory),
				 errhint("Lower the filter's capacity, or raise tlbf.shared_memory and restart the server.")));
	lock_name_to_change(name);
	/* a saved copy that is not loaded: say why, not "already exists" */
	why = unloaded_named(load_saved(name), name);
	if (why != NULL)
		report_unloaded(why);

	f = palloc(shared_value_header_bytes());
	shared_value_init(f, params);
	/* the row below is written by this (sub)transaction */
	tlbf_directory_create(name, f, (Size) region, GetCurrentTransactionId());

	types[1] = tlbf_extension_type();
	values[0] = CStringGetTextDatum(name);
	values[1] = PointerGetDatum(f);
	values[2] = Int64GetDatum((int64) TYPEALIGN(sizeof(uint64), (Size) region));
	if (write_snapshots(relid,
						"INSERT INTO %s.tlbf_shared_filters (name, filter, region_bytes, saved_at) "
						"VALUES ($1, $2, $3, pg_catalog.now()) ON CONFLICT (name) DO NOTHING",
						3, types, values) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("shared tlbf filter \"%s\" already exists", name),
				 errdetail("Its saved copy is invalid (a WARNING said why) and was not loaded."),
				 errhint("Drop it with tlbf_shared_drop() first.")));
}

/* Drop a filter and its saved copy, at commit. */
void
tlbf_store_drop(const char *name)
{
	Oid			relid = snapshot_table_or_error();
	Oid			types[1] = {TEXTOID};
	Datum		values[1];
	bool		in_memory;
	uint64		rows;

	lock_name_to_change(name);
	/* first: a prepared DROP EXTENSION that holds it drops this filter too */
	lock_snapshot_table(relid, RowExclusiveLock);
	in_memory = tlbf_directory_drop(name);
	values[0] = CStringGetTextDatum(name);
	rows = write_snapshots(relid,
						   "DELETE FROM %s.tlbf_shared_filters WHERE name OPERATOR(pg_catalog.=) $1",
						   1, types, values);
	if (!in_memory && rows == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("shared tlbf filter \"%s\" does not exist", name)));
}

/*
 * The saved filters of this database that another database wrote (this
 * one is a copy of it) become this database's own: each is loaded on its
 * next use, once this transaction has committed.  Each name is locked as
 * for a create or drop, to the end of the transaction; one that a
 * prepared transaction drops is left, with a WARNING (its row would be
 * waited for until COMMIT PREPARED or ROLLBACK PREPARED).  Returns how
 * many were adopted.
 */
int64
tlbf_store_adopt(void)
{
	Oid			relid = snapshot_table_or_error();
	bool		stamped = false;
	Relation	rel = open_snapshot_table(&stamped);
	List	   *others = NIL;
	RowsWanted	wanted = {.unloaded_rows = &others, .names_only = true};
	Oid			types[2] = {OIDOID, TEXTOID};
	Datum		values[2];
	int64		adopted = 0;
	ListCell   *cell;

	if (rel != NULL)
		table_close(rel, AccessShareLock);
	if (!stamped)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the tlbf extension in this database predates version 1.4"),
				 errhint("Update it: ALTER EXTENSION tlbf UPDATE.")));
	/* the rows other databases wrote, as of now */
	InvalidateCatalogSnapshot();
	(void) read_saved(&wanted);
	values[0] = ObjectIdGetDatum(MyDatabaseId);
	foreach(cell, others)
	{
		const char *name = ((const Unloaded *) lfirst(cell))->name;
		TransactionId prepared;

		if (lock_name(name, ExclusiveLock, true, &prepared) == NAME_PREPARED)
		{
			ereport(WARNING,
					(errcode(ERRCODE_OBJECT_IN_USE),
					 errmsg("shared tlbf filter \"%s\" is being dropped by a prepared transaction and was not adopted",
							name),
					 errdetail("Prepared transaction %u dropped it.", prepared),
					 errhint("After ROLLBACK PREPARED, adopt it with tlbf_shared_adopt(); after COMMIT PREPARED it is gone.")));
			continue;
		}
		adopting = true;
		values[1] = CStringGetTextDatum(name);
		adopted += (int64) write_snapshots(relid,
										   "UPDATE %s.tlbf_shared_filters SET database_oid = $1 "
										   "WHERE name OPERATOR(pg_catalog.=) $2 AND "
										   "(database_oid IS NULL OR database_oid OPERATOR(pg_catalog.<>) $1)",
										   2, types, values);
	}
	return adopted;
}

/*
 * Write the filters of this database that changed since they were last
 * saved, in the caller's transaction.  A filter whose name another
 * transaction is creating or dropping is left for the next save, and so
 * is every filter while another transaction holds the table (DROP
 * EXTENSION, prepared or not): nothing here waits for a lock.  *acks
 * gets, in 'ack_context', what to pass to tlbf_store_acknowledge() once
 * the transaction has committed.  Returns how many were written.
 */
/*
 * Are the keys a prepared transaction wrote down for filter 'name' safe
 * elsewhere (tlbf_pending_clean)?  Yes if the filter is loaded (they were
 * folded into it then) and saved since, or if it no longer exists.
 */
static bool
prepared_keys_settled(const char *name)
{
	SharedFilterRef ref;
	RowsWanted	wanted = {.only = name, .names_only = true};
	bool		unsaved;

	if (tlbf_directory_open(name, LW_SHARED, &ref))
	{
		unsaved = tlbf_directory_unsaved(&ref);
		tlbf_directory_close(&ref);
		return !unsaved;
	}
	InvalidateCatalogSnapshot();
	return read_saved(&wanted) == NIL;
}

/*
 * Fold the keys that committed transactions added to this database's
 * filters into their bits (shared_pending.c), so that a save holds them.
 * A filter whose pool has no room keeps them pending (still found, not
 * saved yet).
 */
static void
fold_committed_keys(void)
{
	ListCell   *cell;

	foreach(cell, tlbf_directory_names())
	{
		SharedFilterRef ref;
		PendingFilter id;

		if (!tlbf_directory_open(lfirst(cell), LW_SHARED, &ref))
			continue;
		id = pending_id(&ref);
		tlbf_directory_close(&ref);
		if (tlbf_pending_count(id) == 0 ||
			!tlbf_directory_open(lfirst(cell), LW_EXCLUSIVE, &ref))
			continue;
		(void) tlbf_store_fold(&ref, false);
		tlbf_directory_close(&ref);
	}
}

/*
 * A save after a restart: this database's filters that have an image
 * (written at the last clean stop) and are not in shared memory are
 * loaded, from their images, so that the save writes what those hold to
 * their rows; an image whose row is gone is removed.  A name that is busy
 * is left for the next save.  (The caller holds the table.)
 */
static void
load_imaged(Oid relid)
{
	ListCell   *cell;

	foreach(cell, tlbf_image_names())
	{
		const char *name = lfirst(cell);
		List	   *not_loaded = NIL;
		RowsWanted	row = {.only = name, .names_only = true};

		if (tlbf_directory_holds(name))
			continue;
		load_one(relid, name, false, &not_loaded);
		InvalidateCatalogSnapshot();
		if (!tlbf_directory_holds(name) && read_saved(&row) == NIL)
			tlbf_image_remove(MyDatabaseId, name);
	}
}

int
tlbf_store_save(MemoryContext ack_context, List **acks)
{
	Oid			relid;
	List	   *changed;
	ListCell   *cell;
	Oid			types[3] = {TEXTOID, InvalidOid, INT8OID};
	int			written = 0;
	bool		locked;

	if (RecoveryInProgress())
		return 0;
	/*
	 * The extension before its table, as DROP EXTENSION locks them
	 * (safe_sql.c); not waited for, as the table is not (below): a DROP
	 * under way, and the next saver saves, or finds the extension gone.
	 */
	locked = tlbf_lock_extension(false);
	relid = tlbf_extension_table("tlbf_shared_filters");
	if (!OidIsValid(relid))
	{
		/* the extension was dropped: its filters' images are moot */
		foreach(cell, tlbf_image_names())
			tlbf_image_remove(MyDatabaseId, lfirst(cell));
		return 0;
	}
	/*
	 * Never wait for the table: a prepared DROP EXTENSION holds it until
	 * COMMIT PREPARED, and a worker told to stop must not wait for that.
	 */
	if (!locked || !ConditionalLockRelationOid(relid, RowExclusiveLock))
		return 0;
	types[1] = tlbf_extension_type();
	tlbf_prepared_clean(prepared_keys_settled);
	load_imaged(relid);
	fold_committed_keys();
	changed = tlbf_directory_changed();
	foreach(cell, changed)
	{
		SharedFilterId *id = lfirst(cell);
		SharedFilterRef ref;
		Tlbf	   *copy;
		Size		region;
		Datum		values[3];
		SharedFilterId *ack;
		MemoryContext old;
		TransactionId prepared;

		if (lock_name(id->name, ShareLock, false, &prepared) != NAME_LOCKED ||
			!tlbf_directory_open_id(id, LW_SHARED, &ref))
			continue;
		region = tlbf_directory_region(&ref);
		if (shared_value_size(ref.filter) > region)
		{
			tlbf_directory_close(&ref);
			elog(WARNING, "shared tlbf filter \"%s\" overran its region and was not saved", id->name);
			continue;
		}
		copy = shared_value_copy(ref.filter);
		id->changes = tlbf_directory_changes(&ref);
		tlbf_directory_close(&ref);

		values[0] = CStringGetTextDatum(id->name);
		values[1] = PointerGetDatum(copy);
		values[2] = Int64GetDatum((int64) region);
		(void) write_snapshots(relid,
							   "INSERT INTO %s.tlbf_shared_filters AS s (name, filter, region_bytes, saved_at) "
							   "VALUES ($1, $2, $3, pg_catalog.now()) "
							   "ON CONFLICT (name) DO UPDATE SET filter = excluded.filter, "
							   "region_bytes = excluded.region_bytes, saved_at = excluded.saved_at",
							   3, types, values);
		pfree(copy);
		ack = MemoryContextAlloc(ack_context, sizeof(SharedFilterId));
		*ack = *id;
		ack->row_xid = GetCurrentTransactionId();
		old = MemoryContextSwitchTo(ack_context);
		*acks = lappend(*acks, ack);
		MemoryContextSwitchTo(old);
		written++;
	}
	return written;
}

/*
 * After the save's transaction committed: the saved versions are safe,
 * and the images written at the last stop are older.
 */
void
tlbf_store_acknowledge(List *acks)
{
	ListCell   *cell;

	foreach(cell, acks)
	{
		SharedFilterId *id = lfirst(cell);

		tlbf_image_remove(MyDatabaseId, id->name);
		tlbf_directory_saved(id);
	}
}

/* Retire the expired slices of the filter 'ref' holds exclusively, then close it. */
static void
retire_and_close(SharedFilterRef *ref, TimestampTz now)
{
	bool		changed = shared_value_retire(ref->filter, now);

	/* and a filter of format 2 moves to format 3 (shared_value.c) */
	if (shared_value_move_to_format3(ref->filter, tlbf_directory_region(ref)))
		changed = true;
	if (changed)
		tlbf_directory_count_change(ref);
	tlbf_directory_close(ref);
}

/* Retire the expired slices of this database's shared filters (a pass). */
void
tlbf_store_retire(TimestampTz now)
{
	ListCell   *cell;

	foreach(cell, tlbf_directory_names())
	{
		SharedFilterRef ref;

		if (tlbf_directory_open(lfirst(cell), LW_EXCLUSIVE, &ref))
			retire_and_close(&ref, now);
	}
}

/*
 * Retire the expired slices of every database's shared filters (the
 * launcher, in no database, does this every tlbf.naptime).
 */
void
tlbf_store_retire_all(TimestampTz now)
{
	ListCell   *cell;

	foreach(cell, tlbf_directory_all())
	{
		SharedFilterRef ref;

		if (tlbf_directory_open_any(lfirst(cell), LW_EXCLUSIVE, &ref))
			retire_and_close(&ref, now);
	}
}

/*
 * The server is stopping (the launcher calls this as it leaves, once the
 * transactions that could add keys have ended): fold the keys committed
 * transactions left pending into every filter of every database, and
 * write an image of each that changed since its last save
 * (shared_images.c).  Returns how many were written.
 */
int
tlbf_store_write_images(void)
{
	MemoryContext context = AllocSetContextCreate(CurrentMemoryContext, "tlbf images",
												  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(context);
	ListCell   *cell;
	int			written = 0;

	foreach(cell, tlbf_directory_all())
	{
		SharedFilterId *id = lfirst(cell);
		SharedFilterRef ref;
		TransactionId row_xid;
		Size		region;
		Tlbf	   *copy = NULL;

		if (!tlbf_directory_open_any(id, LW_EXCLUSIVE, &ref))
			continue;
		(void) tlbf_store_fold(&ref, false);
		row_xid = tlbf_directory_row_xid(&ref);
		region = tlbf_directory_region(&ref);
		if (tlbf_directory_unsaved(&ref) && TransactionIdIsValid(row_xid) &&
			shared_value_size(ref.filter) <= region)
			copy = shared_value_copy(ref.filter);
		tlbf_directory_close(&ref);
		if (copy == NULL)
			continue;
		if (tlbf_image_write(id->database, id->name, row_xid, region, copy))
			written++;
		pfree(copy);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(context);
	return written;
}

/*
 * Keys were just added to the bits of the filter 'ref' holds exclusively,
 * at once (tlbf_shared_rebuild): to the WAL with them, so that a crash
 * does not forget them either (shared_wal.c).  Returns where the record
 * ends, for tlbf_store_flush once the filter is closed.
 */
XLogRecPtr
tlbf_store_log_added(const SharedFilterRef *ref, const TlbfHash *hashes, const TlbfTime *times,
					 int n)
{
	return tlbf_wal_log_added(tlbf_directory_name(ref), hashes, times, n);
}

/* Make the WAL durable up to 'end' (tlbf_store_log_added). */
void
tlbf_store_flush(XLogRecPtr end)
{
	tlbf_wal_flush(end);
}

/*
 * On a standby, which reads saved copies: was key 'hash' of filter 'name'
 * committed since, by the WAL replayed so far (shared_standby.c)?
 */
bool
tlbf_store_replayed_find(const char *name, TlbfHash hash, TlbfTime *at)
{
	return tlbf_standby_find(name, hash, at);
}

/*
 * A checkpoint has set a new redo point (the launcher calls this, while
 * the checkpoint waits: launcher_checkpoints.c): write to the WAL an image
 * of every filter of every database whose state is not all in its row (it
 * changed since its last save, or keys wait for it), each under its lock.
 * A recovery from that redo point starts from these images.  Returns how
 * many were written.
 */
int
tlbf_store_log_images(void)
{
	MemoryContext context = AllocSetContextCreate(CurrentMemoryContext, "tlbf images",
												  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(context);
	ListCell   *cell;
	int			written = 0;

	foreach(cell, tlbf_directory_all())
	{
		SharedFilterId *id = lfirst(cell);
		SharedFilterRef ref;
		PendingListed *pending;
		int			npending;

		if (!tlbf_directory_open_any(id, LW_EXCLUSIVE, &ref))
			continue;
		(void) tlbf_store_fold(&ref, false);
		pending = tlbf_pending_list(pending_id(&ref), &npending);
		if ((tlbf_directory_unsaved(&ref) || npending > 0) &&
			shared_value_size(ref.filter) <= tlbf_directory_region(&ref))
		{
			tlbf_wal_log_image(id->database, id->name, tlbf_directory_row_xid(&ref),
							   tlbf_directory_region(&ref), ref.filter, pending, npending);
			written++;
		}
		tlbf_directory_close(&ref);
		if (pending != NULL)
			pfree(pending);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(context);
	return written;
}

/*
 * The databases that have something to save: a shared filter that changed
 * since its last save, or keys waiting to be folded into one (which a
 * save folds first).  For the launcher, which starts a saver in each.
 */
List *
tlbf_store_databases_to_save(void)
{
	List	   *databases = NIL;
	ListCell   *cell;

	foreach(cell, tlbf_directory_all())
	{
		SharedFilterId *id = lfirst(cell);
		PendingFilter pending = {id->slot, id->generation};

		if (id->unsaved || tlbf_pending_count(pending) > 0)
			databases = list_append_unique_oid(databases, id->database);
	}
	return databases;
}

/*
 * On a standby: the saved copy of filter 'name', as of the query's
 * snapshot, for reading only (fetched once per call site while the row
 * does not change).
 */
Tlbf *
tlbf_store_saved_filter(FunctionCallInfo fcinfo, const char *name)
{
	bool		stamped;
	Relation	rel = open_snapshot_table(&stamped);
	SysScanDesc scan;
	HeapTuple	tuple;
	Tlbf	   *filter = NULL;

	if (rel != NULL)
	{
		TupleDesc	desc = RelationGetDescr(rel);

		scan = systable_beginscan(rel, InvalidOid, false, GetActiveSnapshot(), 0, NULL);
		while (filter == NULL && HeapTupleIsValid(tuple = systable_getnext(scan)))
		{
			bool		isnull;
			Datum		row_name = heap_getattr(tuple, SNAPSHOT_NAME, desc, &isnull);
			Datum		value;

			if (isnull || strcmp(TextDatumGetCString(row_name), name) != 0)
				continue;
			value = heap_getattr(tuple, SNAPSHOT_FILTER, desc, &isnull);
			if (isnull)
				continue;
			/* a value stored in the row lives in a buffer: copy it out */
			if (!VARATT_IS_EXTERNAL_ONDISK(DatumGetPointer(value)))
				value = PointerGetDatum(PG_DETOAST_DATUM_COPY(value));
			filter = tlbf_readonly_value(fcinfo, (struct varlena *) DatumGetPointer(value));
		}
		systable_endscan(scan);
		table_close(rel, AccessShareLock);
	}
	if (filter == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("shared tlbf filter \"%s\" does not exist", name),
				 errdetail("During recovery, shared filters are read from their saved copies.")));
	return filter;
}

/* On a standby: every valid saved copy, as of the query's snapshot. */
List *
tlbf_store_saved_filters(void)
{
	RowsWanted	wanted = {.snapshot = GetActiveSnapshot()};

	return read_saved(&wanted);
}

/*
 * DROP EXTENSION (or DROP SCHEMA ... CASCADE, DROP OWNED) drops the
 * filters of this database with the extension, at commit.  Other
 * transactions' creates and drops of these names have ended by then:
 * each wrote the snapshot table, which the drop has locked.
 */
static void
on_object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId,
				 void *arg)
{
	if (previous_object_access_hook)
		previous_object_access_hook(access, classId, objectId, subId, arg);
	if (access == OAT_DROP && classId == ExtensionRelationId &&
		tlbf_directory_available() && objectId == tlbf_extension_oid())
	{
		ListCell   *cell;

		foreach(cell, tlbf_directory_names())
			(void) tlbf_directory_drop(lfirst(cell));
	}
}

/*
 * A transaction that adopted saved filters cannot be prepared (see
 * 'adopting'); the mark goes with the transaction, however it ends.
 */
static void
on_transaction_end(XactEvent event, void *arg)
{
	if (!adopting)
		return;
	if (event == XACT_EVENT_PRE_PREPARE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot prepare a transaction that adopted shared tlbf filters"),
				 errdetail("Until it ended, their names would stay locked as if a prepared transaction dropped them."),
				 errhint("Run tlbf_shared_adopt() in a transaction of its own.")));
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE)
		adopting = false;
}

/*
 * Install the hook that drops filters with the extension, and the check
 * that a transaction that adopted filters is not prepared (preloaded
 * only).
 */
void
tlbf_store_init(void)
{
	previous_object_access_hook = object_access_hook;
	object_access_hook = on_object_access;
	RegisterXactCallback(on_transaction_end, NULL);
}
