/*-------------------------------------------------------------------------
 *
 * citus_tables.h
 *	  What tlbf asks of Citus's metadata: whether a relation is a shard, of
 *	  which table, distributed by which column, and where a distributed
 *	  table's shards are.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_CITUS_TABLES_H
#define TLBF_CITUS_TABLES_H

#include "tlbf_pg.h"

#include "utils/rel.h"

/* A shard relation, as its Citus table sees it. */
typedef struct CitusShard
{
	char	   *table;			/* the Citus table, for messages */
	char		method;			/* pg_dist_partition.partmethod: h, r, a or n */
	char		replication;	/* pg_dist_partition.repmodel: s, t or c */
	char	   *column;			/* the distribution column; NULL if none */
} CitusShard;

/* One placement of a shard of a Citus table. */
typedef struct CitusPlacement
{
	int64		shard;
	char	   *shard_name;		/* qualified and quoted */
	char	   *node;
	int32		port;
} CitusPlacement;

extern bool tlbf_citus_installed(void);
extern bool tlbf_citus_shard_of(Relation rel, CitusShard *shard);
extern bool tlbf_citus_is_distributed(Oid relid, char *replication);
extern List *tlbf_citus_placements(Oid relid);

#endif							/* TLBF_CITUS_TABLES_H */
