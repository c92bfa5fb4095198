/*-------------------------------------------------------------------------
 *
 * agg_union.h
 *	  tlbf_union_agg's state (agg_union.c), which the tlbf_agg_state type
 *	  holds for Citus (agg_state_type.c), and what the aggregates share.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_AGG_UNION_H
#define TLBF_AGG_UNION_H

#include "tlbf_pg.h"
#include "filter_args.h"

typedef struct UnionState UnionState;

extern MemoryContext tlbf_aggregate_context(FunctionCallInfo fcinfo, const char *function);
extern void tlbf_agg_bad_state(const char *detail);	/* raises an ERROR */
extern UnionState *tlbf_union_state_create(MemoryContext context);
extern void tlbf_union_state_add(UnionState *state, TlbfValue f, MemoryContext context);
extern void tlbf_union_state_combine(UnionState *into, UnionState *from,
									 MemoryContext context);
extern bytea *tlbf_union_state_bytes(UnionState *state, MemoryContext context);
extern UnionState *tlbf_union_state_from_bytes(const bytea *bytes, MemoryContext context);
extern struct varlena *tlbf_union_state_result(UnionState *state);

#endif							/* TLBF_AGG_UNION_H */
