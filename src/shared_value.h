/*-------------------------------------------------------------------------
 *
 * shared_value.h
 *	  A shared filter's value, of format 2 or 3: what the shared layers
 *	  read and change of it (shared_value.c).  They hold a 'Tlbf *' as
 *	  before; the value's version says which core reads it, and only these
 *	  functions look.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_SHARED_VALUE_H
#define TLBF_SHARED_VALUE_H

#include "tlbf_pg.h"

/* A new filter in 'buffer' (room for its header): format 3 (since 1.5). */
extern void shared_value_init(Tlbf *buffer, const TlbfParams *params);
extern Size shared_value_header_bytes(void);
extern double shared_value_region_for(const TlbfParams *params);
extern Size shared_value_min_region(const TlbfParams *params);

extern Size shared_value_size(const Tlbf *f);
extern void shared_value_set_length(Tlbf *f);
extern Tlbf *shared_value_copy(const Tlbf *f);
extern bool shared_value_validate(const void *buffer, Size len, TlbfProblem *problem);
extern bool shared_value_plausible(const Tlbf *f, Size bytes);

extern int64 shared_value_span(const Tlbf *f);
extern uint64 shared_value_truncated(const Tlbf *f);
extern bool shared_value_holds_keys(const Tlbf *f);
extern TlbfKeys shared_value_keys(const Tlbf *f);
extern void shared_value_record_keys(Tlbf *f, TlbfKeys keys);
extern bool shared_value_unkinded(const Tlbf *f);
extern bool shared_value_expired(const Tlbf *f, TlbfTime at);

extern TlbfStatus shared_value_insert(Tlbf **f, TlbfMemory *memory, TlbfHash hash,
									  TlbfTime at);
extern bool shared_value_query(const Tlbf *f, TlbfHash hash, TlbfTime at, int64 window);
extern bool shared_value_last_seen(const Tlbf *f, TlbfHash hash, TlbfTime at, int64 window,
								   TlbfTime *lower, TlbfTime *upper);
extern double shared_value_posterior(const Tlbf *f, TlbfHash hash, TlbfTime at,
									 int64 window, double prior);
extern bool shared_value_retire(Tlbf *f, TlbfTime at);
extern bool shared_value_move_to_format3(Tlbf *f, Size region);
extern Datum shared_value_info(const Tlbf *f, TlbfTime at);

#endif							/* TLBF_SHARED_VALUE_H */
