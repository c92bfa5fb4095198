/*-------------------------------------------------------------------------
 *
 * union.h
 *	  union.c: merging filters (tlbf_union, and the aggregates' merges).
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_UNION_H
#define TLBF_UNION_H

#include "tlbf_pg.h"

extern Tlbf *tlbf_merge_values(const Tlbf *const *inputs, int n);
extern struct TbFilter *tlbf_union_format3_into(struct TbFilter *into, const struct TbFilter *b,
												TlbfMemory *memory);
extern void tlbf_refuse_mixed_formats(void);	/* raises an ERROR */
extern void tlbf_check_carry(const struct TbFilter *bands, const Tlbf *old);

#endif							/* TLBF_UNION_H */
