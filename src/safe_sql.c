/*-------------------------------------------------------------------------
 *
 * safe_sql.c
 *	  Finding the extension's own objects, and running its own SQL, without
 *	  trusting anything a user could have put in the way.
 *
 * The background workers run as the bootstrap superuser, and the SQL
 * functions may be called by a superuser in a database whose schemas
 * anyone can create objects in.  A statement the extension runs must
 * therefore never resolve a name through the session's search_path: an
 * operator or function a user created in "public" would run with the
 * caller's rights.  So:
 *
 * - the extension, its schema and its tables are found by reading the
 *	 catalogs directly, and a table counts only if it belongs to the
 *	 extension;
 * - every statement runs with search_path set to "pg_catalog, pg_temp"
 *	 (tlbf_safe_execute), and names every object and operator with its
 *	 schema (OPERATOR(pg_catalog.=));
 * - what touches a user's table runs as that table's owner, in a
 *	 security-restricted operation (tlbf_become), as autovacuum, CREATE
 *	 INDEX and REFRESH MATERIALIZED VIEW do: a trigger, an index expression
 *	 or a default then runs with its owner's rights, never the caller's.
 *
 *-------------------------------------------------------------------------
 */
#include "safe_sql.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/twophase.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "storage/lock.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

/* tlbf's row of pg_extension, read without SQL; false if not installed */
static bool
read_extension(Oid *extension, Oid *schema)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	bool		found;

	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("tlbf"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	found = HeapTupleIsValid(tuple);
	if (found)
	{
		Form_pg_extension row = (Form_pg_extension) GETSTRUCT(tuple);

		*extension = row->oid;
		*schema = row->extnamespace;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * Lock the extension against DROP EXTENSION until the transaction ends,
 * for a background transaction, before it touches any of the extension's
 * tables.  DROP EXTENSION locks the extension first and then its tables
 * one by one: a transaction that took one of those tables first and then
 * waited for another could deadlock with it (the Citus tests saw it once:
 * a DROP EXTENSION and a maintenance step, each holding one of the
 * extension's tables and waiting for the other).  Taking the extension
 * first keeps one order.  A prepared transaction's lock (a prepared DROP
 * EXTENSION: Citus commits it on its workers with two-phase commit) is
 * never waited for, as nothing here waits for one: false then, and the
 * caller goes on as before, finding the tables locked without waiting for
 * them either.  False too if the extension is not installed, or if another
 * holds the lock and not 'wait'.  The waiting is a poll, so that a stop
 * request ends it.
 */
bool
tlbf_lock_extension(bool wait)
{
	static uint32 wait_event = 0;
	Oid			extension;
	Oid			schema;
	LOCKTAG		tag;

	if (!read_extension(&extension, &schema))
		return false;
	SET_LOCKTAG_OBJECT(tag, MyDatabaseId, ExtensionRelationId, extension, 0);
	for (;;)
	{
		if (LockAcquire(&tag, AccessShareLock, false, true) != LOCKACQUIRE_NOT_AVAIL)
		{
			/* (a DROP committed while this waited: the catalogs say so now) */
			AcceptInvalidationMessages();
			return true;
		}
		if (!wait || TransactionIdIsValid(tlbf_prepared_holder(&tag, AccessShareLock)))
			return false;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 100,
						 tlbf_wait_event(&wait_event, "TlbfExtensionLock"));
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* The OID of the extension in this database, or InvalidOid. */
Oid
tlbf_extension_oid(void)
{
	Oid			extension = InvalidOid;
	Oid			schema;

	(void) read_extension(&extension, &schema);
	return extension;
}

/* The schema the extension is installed in, or InvalidOid. */
Oid
tlbf_extension_schema(void)
{
	Oid			extension;
	Oid			schema = InvalidOid;

	(void) read_extension(&extension, &schema);
	return schema;
}

/* The same, quoted for a statement (the extension must be installed). */
char *
tlbf_extension_schema_quoted(void)
{
	Oid			schema = tlbf_extension_schema();

	if (!OidIsValid(schema))
		elog(ERROR, "the tlbf extension is not installed in this database");
	return pstrdup(quote_identifier(get_namespace_name(schema)));
}

/*
 * The extension's table 'name', or InvalidOid: a table of that name that
 * the extension does not own (made by a user after it was dropped, say)
 * is not it.
 */
Oid
tlbf_extension_table(const char *name)
{
	Oid			extension;
	Oid			schema;
	Oid			relid;

	if (!read_extension(&extension, &schema))
		return InvalidOid;
	relid = get_relname_relid(name, schema);
	if (!OidIsValid(relid) ||
		get_rel_relkind(relid) != RELKIND_RELATION ||
		getExtensionOfObject(RelationRelationId, relid) != extension)
		return InvalidOid;
	return relid;
}

/* The OID of the tlbf type (the extension must be installed). */
Oid
tlbf_extension_type(void)
{
	Oid			type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
									   CStringGetDatum("tlbf"),
									   ObjectIdGetDatum(tlbf_extension_schema()));

	if (!OidIsValid(type))
		elog(ERROR, "the tlbf extension is not installed in this database");
	return type;
}

/* The owner of a relation, or InvalidOid if it is gone. */
Oid
tlbf_relation_owner(Oid relid)
{
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tuple))
		return InvalidOid;
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	return owner;
}

/* Fix search_path for what runs until the GUC nest level is popped. */
static int
push_safe_search_path(void)
{
	int			nest_level = NewGUCNestLevel();

	(void) set_config_option("search_path", TLBF_SAFE_SEARCH_PATH, PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	return nest_level;
}

/*
 * Act as 'role' in a security-restricted operation with a safe
 * search_path, until tlbf_unbecome().  An error in between needs no
 * cleanup: aborting the (sub)transaction restores both.
 */
void
tlbf_become(Oid role, RoleSwitch *saved)
{
	/* never act as no one: the owner looked up may have been dropped */
	if (!OidIsValid(role))
		elog(ERROR, "tlbf: no role to act as (was its object dropped?)");
	GetUserIdAndSecContext(&saved->saved_user, &saved->saved_context);
	SetUserIdAndSecContext(role, saved->saved_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	saved->nest_level = push_safe_search_path();
}

void
tlbf_unbecome(RoleSwitch *saved)
{
	AtEOXact_GUC(false, saved->nest_level);
	SetUserIdAndSecContext(saved->saved_user, saved->saved_context);
}

/*
 * SPI_execute_with_args with search_path fixed to pg_catalog, pg_temp.
 * SPI must be connected.  Every object in 'query' is schema-qualified and
 * every operator written OPERATOR(pg_catalog.op) all the same.
 */
int
tlbf_safe_execute(const char *query, int nargs, Oid *types, Datum *values,
				  bool read_only, long count)
{
	int			nest_level = push_safe_search_path();
	int			result;

	result = SPI_execute_with_args(query, nargs, types, values, NULL, read_only, count);
	AtEOXact_GUC(false, nest_level);
	return result;
}

/*
 * The prepared transaction that holds a lock on 'tag' that conflicts with
 * 'mode', or InvalidTransactionId if none does.  Its locks are written to
 * its state file at PREPARE and taken again if the server restarts, so it
 * holds them until COMMIT PREPARED or ROLLBACK PREPARED, which may never
 * come: nothing here may wait for them.
 */
TransactionId
tlbf_prepared_holder(const LOCKTAG *tag, LOCKMODE mode)
{
	int			count;
	VirtualTransactionId *holders = GetLockConflicts(tag, mode, &count);
	TransactionId prepared = InvalidTransactionId;

	for (int i = 0; i < count && !TransactionIdIsValid(prepared); i++)
	{
		bool		more = false;

		prepared = TwoPhaseGetXidByVirtualXID(holders[i], &more);
	}
	pfree(holders);
	return prepared;
}
