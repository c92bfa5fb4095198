/*-------------------------------------------------------------------------
 *
 * citus_tables.c
 *	  What tlbf asks of Citus's metadata (pg_dist_partition, pg_dist_shard,
 *	  pg_dist_placement, pg_dist_node), read with SQL when Citus is
 *	  installed in the database.
 *
 * The dedup trigger asks whether the relation it fires on is a shard, and
 * of what kind of table: each node has its own shared filters, so a key
 * is checked against one filter only if every row with that key goes to
 * the same shard (it includes the distribution column) and a shard has
 * one placement.  The maintenance pass asks where a distributed table's
 * shards are now, at every pass, so that it follows them when they move.
 *
 * Citus's catalogs are read like any table a user could have written: the
 * statements run with a safe search_path and name every object with its
 * schema (safe_sql.c), and what they return is only compared, looked up
 * or quoted, never trusted to be well formed.
 *
 *-------------------------------------------------------------------------
 */
#include "citus_tables.h"

#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "safe_sql.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

bool
tlbf_citus_installed(void)
{
	return OidIsValid(get_extension_oid("citus", true));
}

/* Column 'n' of SPI's row 'row' as text in 'context'; NULL if null. */
static char *
text_column(uint64 row, int n, MemoryContext context)
{
	char	   *value = SPI_getvalue(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, n);

	return value == NULL ? NULL : MemoryContextStrdup(context, value);
}

/*
 * Connect to SPI and read Citus's metadata with 'query' (at most 'count'
 * rows, 0: all); the caller reads SPI_tuptable, then calls SPI_finish().
 */
static void
read_metadata(const char *query, int nargs, Oid *types, Datum *values, long count)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (tlbf_safe_execute(query, nargs, types, values, true, count) != SPI_OK_SELECT)
		elog(ERROR, "could not read Citus's metadata");
}

/*
 * The shard id a shard relation's name ends with ("clicks_102008"), or -1.
 * Citus keeps that suffix even when it shortens a long name.
 */
static int64
shard_id_in_name(const char *name)
{
	const char *suffix = strrchr(name, '_');
	int64		id = 0;

	if (suffix == NULL || suffix[1] == '\0')
		return -1;
	for (const char *c = suffix + 1; *c; c++)
	{
		if (*c < '0' || *c > '9' || id > (PG_INT64_MAX - 9) / 10)
			return -1;
		id = id * 10 + (*c - '0');
	}
	return id;
}

/*
 * Is 'rel' a shard of a Citus table?  If so, describe that table.  A
 * relation counts as a shard only if Citus names the shard its name ends
 * with exactly as the relation is named.
 */
bool
tlbf_citus_shard_of(Relation rel, CitusShard *shard)
{
	MemoryContext caller = CurrentMemoryContext;
	const char *name = RelationGetRelationName(rel);
	const char *schema;
	int64		id = shard_id_in_name(name);
	Oid			types[3] = {INT8OID, TEXTOID, TEXTOID};
	Datum		values[3];
	bool		found;

	if (id < 0 || !tlbf_citus_installed())
		return false;
	schema = get_namespace_name(RelationGetNamespace(rel));
	if (schema == NULL)
		return false;
	values[0] = Int64GetDatum(id);
	values[1] = CStringGetTextDatum(quote_identifier(name));
	values[2] = CStringGetTextDatum(quote_qualified_identifier(schema, name));
	read_metadata("SELECT p.partmethod::pg_catalog.text, p.repmodel::pg_catalog.text, "
				  "  CASE WHEN p.partmethod OPERATOR(pg_catalog.<>) 'n' "
				  "    THEN pg_catalog.column_to_column_name(p.logicalrelid, p.partkey) END, "
				  "  p.logicalrelid::pg_catalog.regclass::pg_catalog.text "
				  "FROM pg_catalog.pg_dist_shard s "
				  "JOIN pg_catalog.pg_dist_partition p "
				  "  ON p.logicalrelid OPERATOR(pg_catalog.=) s.logicalrelid "
				  "WHERE s.shardid OPERATOR(pg_catalog.=) $1 "
				  "  AND pg_catalog.shard_name(s.logicalrelid, s.shardid) "
				  "      OPERATOR(pg_catalog.=) ANY (ARRAY[$2, $3])",
				  3, types, values, 1);
	found = SPI_processed == 1;
	if (found)
	{
		char	   *method = text_column(0, 1, caller);
		char	   *replication = text_column(0, 2, caller);

		shard->method = method ? method[0] : '?';
		shard->replication = replication ? replication[0] : '?';
		shard->column = text_column(0, 3, caller);
		shard->table = text_column(0, 4, caller);
		if (shard->table == NULL)
			shard->table = MemoryContextStrdup(caller, name);
	}
	SPI_finish();
	return found;
}

/*
 * Does Citus keep the rows of table 'relid' in shards?  If so, how it
 * replicates them (pg_dist_partition.repmodel: 's' one placement a shard).
 */
bool
tlbf_citus_is_distributed(Oid relid, char *replication)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1];
	bool		found;

	if (!tlbf_citus_installed())
		return false;
	values[0] = ObjectIdGetDatum(relid);
	read_metadata("SELECT repmodel::pg_catalog.text FROM pg_catalog.pg_dist_partition "
				  "WHERE logicalrelid OPERATOR(pg_catalog.=) $1",
				  1, types, values, 1);
	found = SPI_processed == 1;
	if (found)
	{
		char	   *model = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		*replication = model ? model[0] : '?';
	}
	SPI_finish();
	return found;
}

/*
 * The placements of table 'relid''s shards on active primary nodes, as the
 * metadata says now, in 'CurrentMemoryContext'.
 */
List *
tlbf_citus_placements(Oid relid)
{
	MemoryContext caller = CurrentMemoryContext;
	Oid			types[1] = {OIDOID};
	Datum		values[1];
	List	   *result = NIL;

	values[0] = ObjectIdGetDatum(relid);
	/* shard_name() leaves "public." out; put it back, for the nodes' search_path */
	read_metadata("SELECT s.shardid, "
				  "  CASE WHEN ns.nspname OPERATOR(pg_catalog.=) 'public' "
				  "    THEN 'public.' ELSE '' END "
				  "  OPERATOR(pg_catalog.||) pg_catalog.shard_name(s.logicalrelid, s.shardid), "
				  "  n.nodename, n.nodeport "
				  "FROM pg_catalog.pg_dist_shard s "
				  "JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) s.logicalrelid "
				  "JOIN pg_catalog.pg_namespace ns ON ns.oid OPERATOR(pg_catalog.=) c.relnamespace "
				  "JOIN pg_catalog.pg_dist_placement pl "
				  "  ON pl.shardid OPERATOR(pg_catalog.=) s.shardid "
				  "JOIN pg_catalog.pg_dist_node n "
				  "  ON n.groupid OPERATOR(pg_catalog.=) pl.groupid "
				  "WHERE s.logicalrelid OPERATOR(pg_catalog.=) $1 "
				  "  AND n.isactive AND n.noderole::pg_catalog.text OPERATOR(pg_catalog.=) 'primary' "
				  "ORDER BY s.shardid, n.nodename, n.nodeport",
				  1, types, values, 0);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		MemoryContext old = MemoryContextSwitchTo(caller);
		CitusPlacement *p = palloc0(sizeof(CitusPlacement));
		char	   *shard = text_column(i, 1, caller);
		char	   *port = text_column(i, 4, caller);

		p->shard_name = text_column(i, 2, caller);
		p->node = text_column(i, 3, caller);
		if (shard == NULL || port == NULL || p->shard_name == NULL || p->node == NULL)
			elog(ERROR, "a placement of a shard of %s has no name, node or port",
				 get_rel_name(relid));
		p->shard = pg_strtoint64(shard);
		p->port = pg_strtoint32(port);
		result = lappend(result, p);
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	return result;
}
