/*-------------------------------------------------------------------------
 *
 * agg_format3.h
 *	  What the aggregates that build format 3 filters share
 *	  (agg_format3.c, agg_format3_log.c): hashing a row's item, and their
 *	  memory.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_AGG_FORMAT3_H
#define TLBF_AGG_FORMAT3_H

#include "tlbf_pg.h"
#include "datum_hash.h"

#include "core/tb.h"

typedef struct Format3Hasher
{
	ItemHasher *plain;			/* the keys' hasher, once the first key showed
								 * that it gives their hash (NULL: the
								 * general path) */
	bool		checked;
} Format3Hasher;

extern TlbfHash tlbf_format3_row_hash(Format3Hasher *hasher, FunctionCallInfo fcinfo,
									  TbFilter *filter, bool holds_keys,
									  MemoryContext memory);

extern MemoryContext tlbf_format3_aggregate_memory(FunctionCallInfo fcinfo,
												   const char *function);

#endif							/* TLBF_AGG_FORMAT3_H */
