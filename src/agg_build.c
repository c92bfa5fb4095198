/*-------------------------------------------------------------------------
 *
 * agg_build.c
 *	  How tlbf_agg builds its filter: the capacity its rows call for, an
 *	  empty filter of their kind of key, and adding rows to it one at a
 *	  time, a few held back, or in time order from a merge of its logs.
 *
 *-------------------------------------------------------------------------
 */
#include "agg_build.h"
#include "filter_args.h"
#include "filter_params.h"

#include "miscadmin.h"
#include "utils/memutils.h"

/*
 * The capacity of the filter an aggregate builds from 'rows' rows whose
 * times run from 'oldest' to 'newest': the keys one span holds at their
 * average rate, all of them if they fit in one span.  Every plan knows
 * these three numbers before it builds, so every plan builds the same
 * filter.  A filter that starts from a guess far below the keys it gets
 * sizes its slices while it learns their rate, and those slices leave it
 * above its error rate for a span: 1.8x at a million keys in one span,
 * from the guess of 1,000.
 */
uint64
tlbf_agg_capacity(uint64 rows, TlbfTime oldest, TlbfTime newest, int64 span)
{
	double		capacity = (double) rows;
	double		range = (double) newest - (double) oldest;

	if (range > (double) span)
		capacity *= (double) span / range;
	return (uint64) Min(Max(capacity, 1.0), (double) TLBF_MAX_CAPACITY);
}

/* An empty filter for the aggregate's keys, growing in 'context'. */
Tlbf *
tlbf_agg_new_filter(const TlbfParams *params, TlbfKeys keys, TlbfMemory *memory,
					MemoryContext context)
{
	TlbfParams	checked = *params;
	Tlbf	   *f;

	tlbf_params_check_value(&checked);
	f = MemoryContextAlloc(context, sizeof(Tlbf));
	tlbf_init(f, &checked);
	tlbf_record_keys(f, keys);
	tlbf_set_length(f);
	tlbf_memory_for(memory, f, context);
	return f;
}

/*
 * The buffer grows by doubling (filter_args.c); when the filter has shrunk
 * to less than half of it (expired slices dropped), give the room back.  So
 * it never holds more than twice the filter's size, plus the slice a shift
 * is about to add.
 */
static inline void
give_back_room(Tlbf **f, TlbfMemory *memory)
{
	Size		size = tlbf_size(*f);

	if (2 * size < memory->allocated)
	{
		*f = repalloc(*f, 2 * size);
		memory->allocated = 2 * size;
	}
}

/* Add one row. */
void
tlbf_agg_insert(Tlbf **f, TlbfMemory *memory, TlbfHash hash, TlbfTime at)
{
	uint64		truncated = (*f)->truncated;
	TlbfStatus	status = tlbf_insert(f, memory, hash, at);

	tlbf_check_status(status, truncated, *f);
	give_back_room(f, memory);
}

/* Add the oldest held row. */
void
tlbf_held_rows_add_oldest(HeldRows *held, Tlbf **f, TlbfMemory *memory)
{
	const TlbfRow *row = &held->rows[held->first];

	tlbf_agg_insert(f, memory, row->hash, row->at);
	held->first = (held->first + 1) % HELD_ROWS;
	held->n--;
}

/* Add every held row. */
void
tlbf_held_rows_add_all(HeldRows *held, Tlbf **f, TlbfMemory *memory)
{
	while (held->n > 0)
		tlbf_held_rows_add_oldest(held, f, memory);
}

/* Add every row of a merge, in its (time) order, a batch at a time. */
#define MERGED_BATCH_ROWS 1024

void
tlbf_agg_insert_merged(Tlbf **f, TlbfMemory *memory, TlbfRowMerge *merge)
{
	TlbfMergedBatch batch = {0};

	batch.merge = merge;
	batch.rows = palloc(MERGED_BATCH_ROWS * sizeof(TlbfRow));
	batch.capacity = MERGED_BATCH_ROWS;
	while (!batch.done)
	{
		uint64		truncated = (*f)->truncated;
		TlbfStatus	status = tlbf_insert_merged_batch(f, memory, &batch);

		tlbf_check_status(status, truncated, *f);
		give_back_room(f, memory);
		CHECK_FOR_INTERRUPTS();
	}
	pfree(batch.rows);
}
