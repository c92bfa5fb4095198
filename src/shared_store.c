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
 * The snapshot worker of the database saves the filters that changed
 * every tlbf.snapshot_interval, and once more when it is told to stop.
 * After a restart (or a pg_restore), a filter that shared memory does not
 * hold is loaded from its row the first time a session asks for it.
 * Loading reads the table with a fresh snapshot, never the caller's: a
 * REPEATABLE READ transaction whose snapshot predates a drop must not
 * bring the dropped filter back.  A drop that commits while the load
 * reads is caught by the directory (INSTALL_STALE) and the load retried.
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

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
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

/* Why a saved filter of this database is not in shared memory. */
typedef enum UnloadedWhy
{
	UNLOADED_NOT_ADOPTED,		/* its row was written by another database */
	UNLOADED_OLD_TABLE,			/* the table predates 1.4: rows are unstamped */
	UNLOADED_NO_SLOT,			/* tlbf.max_shared_filters are taken */
	UNLOADED_NO_ROOM			/* tlbf.shared_memory has no room for it */
} UnloadedWhy;

typedef struct Unloaded
{
	char		name[NAMEDATALEN];
	UnloadedWhy why;
	Oid			written_by;		/* NOT_ADOPTED: the database its row names */
	Size		region;			/* NO_ROOM: the bytes it needs */
} Unloaded;

/*
 * Lock a filter name of this database to the end of the transaction:
 * ExclusiveLock to create or drop it, ShareLock to save it.
 */
static bool
lock_name(const char *name, LOCKMODE mode, bool wait)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId,
						 hash_bytes((const unsigned char *) name, (int) strlen(name)),
						 NAME_LOCK_KEY, NAME_LOCK_FIELD);
	return LockAcquire(&tag, mode, false, !wait) != LOCKACQUIRE_NOT_AVAIL;
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
	rel = table_open(relid, AccessShareLock);
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

/*
 * Read one row: true with its fields, checked and copied, in *saved; false
 * after a WARNING if any field is bad, or if it is to be left alone: with
 * 'skip_held', one whose filter shared memory holds; with 'unloaded_rows'
 * (loading into this server's pool), one another database wrote, which is
 * added to *unloaded_rows.
 */
static bool
read_row(HeapTuple tuple, TupleDesc desc, bool stamped, bool skip_held,
		 List **unloaded_rows, SavedFilter *saved)
{
	bool		isnull;
	Datum		name = heap_getattr(tuple, SNAPSHOT_NAME, desc, &isnull);
	Datum		value;
	Datum		region;
	TlbfProblem problem;
	UnloadedWhy why;
	Oid			written_by;

	saved->unsaved = false;
	if (isnull)
	{
		report_bad_row("", "It has no name.");
		return false;
	}
	saved->name = TextDatumGetCString(name);
	if (saved->name[0] == '\0' || strlen(saved->name) >= NAMEDATALEN)
	{
		report_bad_row(saved->name,
					   psprintf("A name has 1 to %d bytes; this one has %zu.",
								NAMEDATALEN - 1, strlen(saved->name)));
		return false;
	}
	/* a filter shared memory has would not be loaded: leave its bytes */
	if (skip_held && tlbf_directory_holds(saved->name))
		return false;
	if (unloaded_rows != NULL && !written_here(tuple, desc, stamped, &why, &written_by))
	{
		*unloaded_rows = lappend(*unloaded_rows, unloaded(saved->name, why, written_by, 0));
		return false;
	}
	value = heap_getattr(tuple, SNAPSHOT_FILTER, desc, &isnull);
	if (isnull)
	{
		report_bad_row(saved->name, "It has no filter.");
		return false;
	}
	saved->filter = (Tlbf *) PG_DETOAST_DATUM_COPY(value);
	if (!tlbf_validate(saved->filter, VARSIZE(saved->filter), &problem))
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
 * This database's saved filters whose rows pass every check, read with
 * 'snapshot' (NULL: a fresh catalog snapshot); those shared memory holds
 * already are left out if 'skip_held'.  With 'unloaded_rows', only rows
 * written in this database are returned, and the others are added there.
 */
static List *
read_saved(Snapshot snapshot, bool skip_held, List **unloaded_rows)
{
	bool		stamped;
	Relation	rel = open_snapshot_table(&stamped);
	SysScanDesc scan;
	HeapTuple	tuple;
	List	   *saved = NIL;

	if (rel == NULL)
		return NIL;
	scan = systable_beginscan(rel, InvalidOid, false, snapshot, 0, NULL);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		SavedFilter *row = palloc(sizeof(SavedFilter));

		if (read_row(tuple, RelationGetDescr(rel), stamped, skip_held, unloaded_rows, row))
			saved = lappend(saved, row);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return saved;
}

/*
 * Load this database's saved filters that shared memory does not hold:
 * after a restart, or after pg_restore.  A filter of the same name in
 * shared memory wins (it is newer).  Returns those that were not loaded,
 * and why.
 */
static List *
load_saved(void)
{
	List	   *not_loaded = NIL;

	if (RecoveryInProgress())
		return NIL;
	for (int attempt = 0; attempt < LOAD_ATTEMPTS; attempt++)
	{
		uint64		drops = tlbf_directory_drops();
		List	   *saved;
		ListCell   *cell;
		bool		stale = false;

		not_loaded = NIL;
		/* a snapshot taken now, whatever the transaction's isolation */
		InvalidateCatalogSnapshot();
		saved = read_saved(NULL, true, &not_loaded);
		foreach(cell, saved)
		{
			SavedFilter *row = lfirst(cell);

			switch (tlbf_directory_install(row->name, row->filter, row->region, drops))
			{
				case INSTALL_DONE:
				case INSTALL_NAME_TAKEN:
					break;
				case INSTALL_NO_SLOT:
					not_loaded = lappend(not_loaded,
										 unloaded(row->name, UNLOADED_NO_SLOT, InvalidOid, row->region));
					break;
				case INSTALL_NO_ROOM:
					not_loaded = lappend(not_loaded,
										 unloaded(row->name, UNLOADED_NO_ROOM, InvalidOid, row->region));
					break;
				case INSTALL_STALE:
					stale = true;
					break;
			}
			if (stale)
				break;
		}
		if (!stale)
			break;
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
					 errmsg("shared tlbf filter \"%s\" is not loaded: the extension in this database predates version 1.4", u->name),
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
	}
}

/*
 * Load this database's saved filters that shared memory does not hold;
 * ERROR for the first one that could not be loaded, saying why.
 */
void
tlbf_store_load(void)
{
	List	   *not_loaded = load_saved();

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
	why = unloaded_named(load_saved(), name);
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

/* A shared filter's region grows within the pool (TlbfMemory.resize). */
static void *
grow_in_pool(TlbfMemory *memory, void *buffer, size_t size)
{
	SharedFilterRef *ref = memory->context;
	Tlbf	   *moved = tlbf_directory_grow(ref, size);

	if (moved != NULL)
		memory->allocated = tlbf_directory_region(ref);
	return moved;
}

/*
 * Memory for the core to insert into the filter 'ref' holds exclusively:
 * its region, moved to a larger one while the pool has room (NULL from
 * resize when it has none: the core then changes nothing).
 */
void
tlbf_store_filter_memory(SharedFilterRef *ref, TlbfMemory *memory)
{
	memory->resize = grow_in_pool;
	memory->context = ref;
	memory->allocated = tlbf_directory_region(ref);
	memory->max_bytes = tlbf_directory_max_region();
}

/* The open filter changed (held exclusively): the snapshot worker saves it. */
void
tlbf_store_count_change(SharedFilterRef *ref)
{
	tlbf_directory_count_change(ref);
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
		copy->filter = palloc(tlbf_size(ref.filter));
		memcpy(copy->filter, ref.filter, tlbf_size(ref.filter));
		tlbf_set_length(copy->filter);
		copy->region = tlbf_directory_region(&ref);
		copy->unsaved = tlbf_directory_unsaved(&ref);
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

/* A new empty filter in shared memory, and its row in the snapshot table. */
void
tlbf_store_create(const char *name, const TlbfParams *params)
{
	Oid			relid = snapshot_table_or_error();
	double		region = tlbf_directory_region_for(params);
	Tlbf	   *f;
	Oid			types[3] = {TEXTOID, InvalidOid, INT8OID};
	Datum		values[3];
	const Unloaded *why;

	if (region > (double) tlbf_directory_max_region())
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("not enough shared memory for shared tlbf filter \"%s\"", name),
				 errdetail("It needs %.0f bytes; tlbf.shared_memory is %d bytes, and one filter may have at most 1GB.",
						   region, tlbf_shared_memory),
				 errhint("Lower the filter's capacity, or raise tlbf.shared_memory and restart the server.")));
	lock_name(name, ExclusiveLock, true);
	/* a saved copy that is not loaded: say why, not "already exists" */
	why = unloaded_named(load_saved(), name);
	if (why != NULL)
		report_unloaded(why);

	f = palloc(sizeof(Tlbf));
	tlbf_init(f, params);
	tlbf_set_length(f);
	tlbf_directory_create(name, f, (Size) region);

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

	lock_name(name, ExclusiveLock, true);
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
 * next use, once this transaction has committed.  Returns how many.
 */
int64
tlbf_store_adopt(void)
{
	Oid			relid = snapshot_table_or_error();
	bool		stamped = false;
	Relation	rel = open_snapshot_table(&stamped);
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(MyDatabaseId)};

	if (rel != NULL)
		table_close(rel, AccessShareLock);
	if (!stamped)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the tlbf extension in this database predates version 1.4"),
				 errhint("Update it: ALTER EXTENSION tlbf UPDATE.")));
	return (int64) write_snapshots(relid,
								   "UPDATE %s.tlbf_shared_filters SET database_oid = $1 "
								   "WHERE database_oid IS NULL OR database_oid OPERATOR(pg_catalog.<>) $1",
								   1, types, values);
}

/*
 * Write the filters of this database that changed since they were last
 * saved, in the caller's transaction.  A filter whose name another
 * transaction is creating or dropping is left for the next save.  *acks
 * gets, in 'ack_context', what to pass to tlbf_store_acknowledge() once
 * the transaction has committed.  Returns how many were written.
 */
int
tlbf_store_save(MemoryContext ack_context, List **acks)
{
	Oid			relid = tlbf_extension_table("tlbf_shared_filters");
	List	   *changed;
	ListCell   *cell;
	Oid			types[3] = {TEXTOID, InvalidOid, INT8OID};
	int			written = 0;

	if (!OidIsValid(relid) || RecoveryInProgress())
		return 0;
	types[1] = tlbf_extension_type();
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

		if (!lock_name(id->name, ShareLock, false) ||
			!tlbf_directory_open_id(id, LW_SHARED, &ref))
			continue;
		region = tlbf_directory_region(&ref);
		if (tlbf_size(ref.filter) > region)
		{
			tlbf_directory_close(&ref);
			elog(WARNING, "shared tlbf filter \"%s\" overran its region and was not saved", id->name);
			continue;
		}
		copy = palloc(tlbf_size(ref.filter));
		memcpy(copy, ref.filter, tlbf_size(ref.filter));
		id->changes = tlbf_directory_changes(&ref);
		tlbf_directory_close(&ref);
		tlbf_set_length(copy);

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
		old = MemoryContextSwitchTo(ack_context);
		*acks = lappend(*acks, ack);
		MemoryContextSwitchTo(old);
		written++;
	}
	return written;
}

/* After the save's transaction committed: the saved versions are safe. */
void
tlbf_store_acknowledge(List *acks)
{
	ListCell   *cell;

	foreach(cell, acks)
		tlbf_directory_saved(lfirst(cell));
}

/* Retire the expired slices of this database's shared filters. */
void
tlbf_store_retire(TimestampTz now)
{
	List	   *names = tlbf_directory_names();
	ListCell   *cell;

	foreach(cell, names)
	{
		SharedFilterRef ref;

		if (!tlbf_directory_open(lfirst(cell), LW_EXCLUSIVE, &ref))
			continue;
		if (tlbf_retirable_slices(ref.filter, now) > 0)
		{
			tlbf_drop_expired(ref.filter, now);
			tlbf_directory_count_change(&ref);
		}
		tlbf_directory_close(&ref);
	}
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
	return read_saved(GetActiveSnapshot(), false, NULL);
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

/* Install the hook that drops filters with the extension (preloaded only). */
void
tlbf_store_init(void)
{
	previous_object_access_hook = object_access_hook;
	object_access_hook = on_object_access;
}
