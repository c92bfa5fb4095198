/*-------------------------------------------------------------------------
 *
 * agg_format3_log.h
 *	  The aggregate of format 3 without a declared capacity
 *	  (agg_format3_log.c): its state's steps, for the internal form there
 *	  and the typed forms, whose state is a tlbf_agg_state
 *	  (agg_state_type.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_AGG_FORMAT3_LOG_H
#define TLBF_AGG_FORMAT3_LOG_H

#include "agg_hash_log.h"

/* The first bytes of a state's hashes as they travel: "TLBH", little-endian. */
#define TLBF_HASHES_MAGIC	0x48424C54u

extern AggState *tlbf_aggregation_of(FunctionCallInfo fcinfo);
extern HashLog *tlbf_format3_log_first(FunctionCallInfo fcinfo, MemoryContext aggcontext);
extern void tlbf_format3_log_add_row(HashLog *state, FunctionCallInfo fcinfo);
extern TbFilter *tlbf_format3_log_build(HashLog *state);
extern bytea *tlbf_format3_log_bytes(HashLog *state);
extern bool tlbf_format3_log_bytes_are(const bytea *bytes);
extern HashLog *tlbf_format3_log_from_bytes(const bytea *bytes, MemoryContext parent,
											AggState *aggstate);

#endif							/* TLBF_AGG_FORMAT3_LOG_H */
