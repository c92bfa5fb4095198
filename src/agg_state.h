/*-------------------------------------------------------------------------
 *
 * agg_state.h
 *	  tlbf_agg's state, as the aggregates' two faces use it: the internal
 *	  state of tlbf_agg("any", ...) (aggregates.c) and the tlbf_agg_state
 *	  type of the typed aggregates, which Citus can split between its
 *	  workers and its coordinator (agg_state_type.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_AGG_STATE_H
#define TLBF_AGG_STATE_H

#include "tlbf_pg.h"
#include "filter_args.h"

#include "nodes/execnodes.h"

typedef struct TlbfAggState TlbfAggState;

extern MemoryContext tlbf_aggregate_context(FunctionCallInfo fcinfo, const char *function);
extern int	tlbf_aggregate_memory_kb(const AggState *aggstate);
extern TlbfAggState *tlbf_agg_state_create(MemoryContext context);
extern void tlbf_agg_state_add_row(TlbfAggState *state, FunctionCallInfo fcinfo,
								   MemoryContext context);
extern void tlbf_agg_state_add_filter(TlbfAggState *state, TlbfValue f,
									  MemoryContext context);
extern void tlbf_agg_state_combine(TlbfAggState *into, TlbfAggState *from,
								   MemoryContext context);
extern bytea *tlbf_agg_state_serialize(TlbfAggState *state, MemoryContext context);
extern TlbfAggState *tlbf_agg_state_deserialize(const bytea *bytes, MemoryContext context,
												bool check_rows);
extern struct varlena *tlbf_agg_state_result(TlbfAggState *state, MemoryContext context);

#endif							/* TLBF_AGG_STATE_H */
