/*-------------------------------------------------------------------------
 *
 * value_cache.h
 *	  value_cache.c: the TOASTed filters a call site reads, each detoasted and
 *	  validated once per query.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_VALUE_CACHE_H
#define TLBF_VALUE_CACHE_H

#include "tlbf_pg.h"

typedef struct ValueCache ValueCache;

extern MemoryContext tlbf_value_cache_memory(ValueCache **cache, MemoryContext parent);
extern struct varlena *tlbf_value_cache_find(ValueCache *cache, const struct varatt_external *id);
extern struct varlena *tlbf_value_cache_keep(ValueCache *cache, const struct varatt_external *id,
											 struct varlena *filter);

#endif							/* TLBF_VALUE_CACHE_H */
