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
	int			int_bytes;		/* the plain hasher's items are integers of
								 * this width, hashed here without a call
								 * through it (tlbf_int_item_bytes); or 0 */
} Format3Hasher;

extern TlbfHash tlbf_format3_row_hash_general(Format3Hasher *hasher, FunctionCallInfo fcinfo,
											  TbFilter *filter, bool holds_keys,
											  MemoryContext memory);

/*
 * The hash of argument 1 (the item) for 'filter', whose kind of key it
 * records ('holds_keys': it holds some already, which the item must
 * match).  'memory' lasts as long as the hasher (the call site's may last
 * one call).  Inline: once the first key chose the plain path, every row
 * of an aggregate is hashed here, integers without a call but the hash's.
 */
static inline TlbfHash
tlbf_format3_row_hash(Format3Hasher *hasher, FunctionCallInfo fcinfo, TbFilter *filter,
					  bool holds_keys, MemoryContext memory)
{
	if (likely(hasher->plain != NULL))
	{
		Datum		item = PG_GETARG_DATUM(1);

		switch (hasher->int_bytes)
		{
			case 8:
				return tlbf_hash_int64(DatumGetInt64(item), filter->seed);
			case 4:
				return tlbf_hash_int64(DatumGetInt32(item), filter->seed);
			case 2:
				return tlbf_hash_int64(DatumGetInt16(item), filter->seed);
			default:
				return tlbf_hash_item(hasher->plain, item, filter->seed);
		}
	}
	return tlbf_format3_row_hash_general(hasher, fcinfo, filter, holds_keys, memory);
}

extern MemoryContext tlbf_format3_aggregate_memory(FunctionCallInfo fcinfo,
												   const char *function);

#endif							/* TLBF_AGG_FORMAT3_H */
