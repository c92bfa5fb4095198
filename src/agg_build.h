/*-------------------------------------------------------------------------
 *
 * agg_build.h
 *	  How tlbf_agg builds its filter: sized for its rows, which are added in
 *	  time order, a few rows late so that their cache misses overlap
 *	  (agg_build.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_AGG_BUILD_H
#define TLBF_AGG_BUILD_H

#include "tlbf_pg.h"

#include "core/tlbf_rows.h"

extern uint64 tlbf_agg_capacity(uint64 rows, TlbfTime oldest, TlbfTime newest, int64 span);
extern Tlbf *tlbf_agg_new_filter(const TlbfParams *params, TlbfKeys keys, TlbfMemory *memory,
								 MemoryContext context);
extern void tlbf_agg_insert(Tlbf **f, TlbfMemory *memory, TlbfHash hash, TlbfTime at);
extern void tlbf_agg_insert_merged(Tlbf **f, TlbfMemory *memory, TlbfRowMerge *merge);

/*
 * Rows added to a filter HELD_ROWS rows late, in order: each row's words
 * are prefetched when it comes and written once the rows after it have
 * come, so that the cache misses of several insertions overlap instead of
 * each insertion waiting on its k misses.  (A prefetch is a hint: when a
 * shift moves the slices in between, the insertion is still right, only
 * slower.)  Whoever reads the filter adds the held rows first.
 */
#define HELD_ROWS 8

typedef struct HeldRows
{
	int			n;				/* rows held, */
	int			first;			/* oldest first, from this slot of */
	TlbfRow		rows[HELD_ROWS];	/* a ring */
} HeldRows;

extern void tlbf_held_rows_add_oldest(HeldRows *held, Tlbf **f, TlbfMemory *memory);
extern void tlbf_held_rows_add_all(HeldRows *held, Tlbf **f, TlbfMemory *memory);

/* Hold 'row', adding the oldest held row if the ring is full.  Inline: a
 * serial tlbf_agg holds every row. */
static inline void
tlbf_held_rows_push(HeldRows *held, Tlbf **f, TlbfMemory *memory, const TlbfRow *row)
{
	tlbf_prefetch_insert(*f, row->hash);
	if (held->n == HELD_ROWS)
		tlbf_held_rows_add_oldest(held, f, memory);
	held->rows[(held->first + held->n) % HELD_ROWS] = *row;
	held->n++;
}

#endif							/* TLBF_AGG_BUILD_H */
