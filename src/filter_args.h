/*-------------------------------------------------------------------------
 *
 * filter_args.h
 *	  filter_args.c: a tlbf value out of a function argument, checked, and
 *	  memory for the core to grow one in; the state a call site keeps.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_FILTER_ARGS_H
#define TLBF_FILTER_ARGS_H

#include "tlbf_pg.h"
#include "value_cache.h"

/*
 * Per-call-site state kept in fn_extra: the item hasher, and the detoasted
 * copies of TOASTed filter arguments (value_cache.c), so that a filter
 * read in a scan or a join is fetched and checked once per query instead
 * of once per row.
 */
typedef struct SharedKeyGuess SharedKeyGuess;

typedef struct CallCache
{
	KeyMatcher *matcher;
	ValueCache *values;
	SharedKeyGuess *shared_guess;	/* for a shared filter (shared_functions.h) */
} CallCache;

/* Where a value checked by tlbf_validated_copy_any came from, for its error. */
typedef enum TlbfValueSource
{
	TLBF_VALUE_ARGUMENT,		/* a function's argument */
	TLBF_VALUE_TEXT_INPUT,		/* tlbf_in */
	TLBF_VALUE_BINARY_INPUT,	/* tlbf_recv */
	TLBF_VALUE_BYTEA_CAST,		/* CAST (bytea AS tlbf) */
	TLBF_VALUE_AGG_STATE		/* a partial tlbf_agg state */
} TlbfValueSource;

/* The limit that made a filter drop live slices, for its warning. */
typedef enum TlbfLimit
{
	TLBF_LIMIT_VALUE_SIZE,		/* the largest value PostgreSQL stores */
	TLBF_LIMIT_SLICES			/* the format's 65536 slices, in a union */
} TlbfLimit;

/* A validated value of either layout: exactly one of the two is set. */
typedef struct TlbfValue
{
	Tlbf	   *v2;				/* formats 1 and 2 (core/tlbf.h) */
	struct TbFilter *v3;		/* format 3 (core/tb.h) */
	Tlbf	   *carried;		/* of a v3 with TB_CARRIES, the frozen value
								 * of format 1 or 2 it carries (inside it:
								 * value_carry.c), else NULL */
} TlbfValue;

extern CallCache *tlbf_call_cache(FunctionCallInfo fcinfo);
extern Tlbf *tlbf_readonly_value(FunctionCallInfo fcinfo, struct varlena *raw);
extern TlbfValue tlbf_value_of(struct varlena *value);
extern TlbfValue tlbf_arg_value(FunctionCallInfo fcinfo, int argno);
extern TlbfValue tlbf_arg_value_copy(FunctionCallInfo fcinfo, int argno);
extern struct varlena *tlbf_validated_copy_any(const char *data, Size len, int sqlstate,
											   TlbfValueSource source, Node *escontext);
extern Size tlbf_filter_bytes_cap(void);
extern void tlbf_check_filter_bytes(const Tlbf *f);
extern void tlbf_memory_for(TlbfMemory *memory, const void *value, MemoryContext context);
extern void tlbf_check_status(TlbfStatus status, uint64 truncated_before,
							  const Tlbf *f);
extern void tlbf_check_core_status(TlbfStatus status, uint64 truncated_before,
								   uint64 truncated_after);
extern void tlbf_check_status_for(TlbfStatus status, uint64 truncated_before,
								  const Tlbf *f, TlbfLimit limit);
extern void tlbf_set_length(Tlbf *f);

#endif							/* TLBF_FILTER_ARGS_H */
