/*-------------------------------------------------------------------------
 *
 * agg_hash_log.h
 *	  The keys' hashes an aggregate without a declared capacity keeps until
 *	  its end, per generation (agg_hash_log.c), for agg_format3_log.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_AGG_HASH_LOG_H
#define TLBF_AGG_HASH_LOG_H

#include "tlbf_pg.h"
#include "agg_format3.h"

#include "nodes/execnodes.h"
#include "storage/fd.h"

#include "core/tb.h"

/* A chunk's hashes: at most 1 MB. */
#define MAX_CHUNK_HASHES	65536

typedef struct HashChunk
{
	struct HashChunk *next;		/* the older chunk */
	uint32		n;
	uint32		allocated;
	TlbfHash	hashes[FLEXIBLE_ARRAY_MEMBER];
} HashChunk;

/*
 * One generation's rows: their hashes, in chunks, and its earliest time;
 * and, once it holds more than TB_COUNT_EXACT, the sketch that counts its
 * keys, kept as the hashes come (tlbf_hash_log_counted), so that the end
 * need not read them all once more before setting them.
 */
typedef struct GenerationLog
{
	int64		generation;		/* TB_NO_GENERATION: none */
	TlbfTime	earliest;
	uint64		n;
	HashChunk  *chunks;			/* the newest first */
	uint64		in_file;		/* of its hashes, those written to the file */
	TbCounter  *counter;		/* the sketch of all its hashes, or NULL:
								 * while it holds at most TB_COUNT_EXACT
								 * (counted exactly at the end), or if some
								 * went to the file before it had one
								 * (counted at the end from them all) */
} GenerationLog;

typedef struct HashLog
{
	MemoryContext context;		/* the state's own, a child of the
								 * aggregate's */
	AggState   *aggstate;		/* the aggregation (for its strategy), or
								 * NULL */
	Size		in_memory;		/* bytes of the chunks held in memory */
	File		file;			/* the chunks written out, or -1 */
	MemoryContextCallback close_file;	/* closes it with the state's memory */
	off_t		file_end;		/* where the next is written */
	TbFilter   *header;			/* parameters, kind of key, newest time,
								 * rows added; no band (VARSIZE kept) */
	Format3Hasher hasher;
	int64		oldest;			/* the oldest generation kept */
	TlbfTime	oldest_until;	/* a newest time from which it is another */
	GenerationLog *last;		/* the log the last row went to */
	bool		deserialized;	/* made from bytes by the aggregation that
								 * combines it, in its memory */
	TbFilter   *window;			/* in a window, where the final function is
								 * called after each row: the filter rows
								 * go into as they come (tb_insert), and
								 * no hash is kept; else NULL */
	TlbfMemory	window_memory;
	GenerationLog logs[TB_MAX_SLOTS];	/* generation g in logs[g mod slots] */
} HashLog;

/*
 * How a generation's keys are counted: the state of its log.  A slot
 * starts NONE; its first hash makes it FEW; past TB_COUNT_EXACT hashes it
 * becomes SKETCHED if they are all in memory (its sketch starts from them
 * and takes each one after), else UNSKETCHED (some were written to the
 * file first: the end counts it from them all); it is NONE again once its
 * generation leaves the span.  tlbf_generation_count asserts that the
 * fields agree with one of these.
 */
typedef enum GenerationCount
{
	GENERATION_NONE,			/* the slot holds no generation */
	GENERATION_FEW,				/* at most TB_COUNT_EXACT hashes: counted
								 * exactly at the end */
	GENERATION_SKETCHED,		/* counted by its sketch as they come */
	GENERATION_UNSKETCHED		/* more, some of them in the file before a
								 * sketch could start: counted at the end */
} GenerationCount;

static inline GenerationCount
tlbf_generation_count(const GenerationLog *log)
{
	if (log->generation == TB_NO_GENERATION)
	{
		Assert(log->n == 0 && log->chunks == NULL && log->in_file == 0 && log->counter == NULL);
		return GENERATION_NONE;
	}
	Assert(log->in_file <= log->n);
	if (log->counter != NULL)
	{
		Assert(log->n > TB_COUNT_EXACT);
		return GENERATION_SKETCHED;
	}
	if (log->n <= TB_COUNT_EXACT)
		return GENERATION_FEW;
	Assert(log->in_file > 0);
	return GENERATION_UNSKETCHED;
}

/* What tlbf_hash_log_visit calls for the hashes of one chunk of a live generation. */
typedef void (*HashVisitor) (GenerationLog *log, const TlbfHash *hashes, size_t n, void *arg);

extern HashLog *tlbf_hash_log_create(MemoryContext aggcontext, const TbFilter *header);
extern void tlbf_hash_log_forget(HashLog *state, GenerationLog *log);
extern void tlbf_hash_log_forget_past(HashLog *state);
/*
 * The newest time is now 'at' if later (the generations that leave the
 * span then are forgotten).  Inline: every row comes here.
 */
static inline void
tlbf_hash_log_move_newest(HashLog *state, TlbfTime at)
{
	if (state->header->newest != TLBF_NEVER && at <= state->header->newest)
		return;
	state->header->newest = at;
	if (unlikely(at >= state->oldest_until || state->oldest_until == 0))
		tlbf_hash_log_forget_past(state);
}
extern GenerationLog *tlbf_hash_log_generation(HashLog *state, int64 g, TlbfTime earliest);
extern void tlbf_hash_log_counted(HashLog *state, GenerationLog *log,
								  const TlbfHash *hashes, size_t n);
extern void tlbf_hash_log_start_counter(HashLog *state, GenerationLog *log);

/* A chunk with room for one more hash (agg_hash_log.c). */
extern HashChunk *tlbf_hash_log_chunk_with_room(HashLog *state, GenerationLog *log);

/*
 * Add a hash to a generation's log (the state spills first if need be),
 * and count it.  Inline: every row comes here.
 */
static inline void
tlbf_hash_log_append(HashLog *state, GenerationLog *log, TlbfHash hash)
{
	HashChunk  *c = log->chunks;

	if (unlikely(c == NULL || c->n == c->allocated))
		c = tlbf_hash_log_chunk_with_room(state, log);
	c->hashes[c->n++] = hash;
	log->n++;
	if (likely(log->counter != NULL))
		tb_count_one(log->counter, hash);
	else if (log->n > TB_COUNT_EXACT)
		tlbf_hash_log_start_counter(state, log);
}
extern HashChunk *tlbf_hash_log_new_chunk(HashLog *state, uint32 allocated);
extern void tlbf_hash_log_add_behind(GenerationLog *log, HashChunk *c);
extern void tlbf_hash_log_spill_if_over(HashLog *state, Size more);
extern void tlbf_hash_log_visit(HashLog *state, bool memory, bool file, HashVisitor visit,
								void *arg);

/* Hashes of a live generation, for tlbf_hash_log_visit_batches. */
typedef struct HashRun
{
	GenerationLog *log;
	TlbfHash   *hashes;
	size_t		n;
} HashRun;
typedef void (*BatchVisitor) (HashRun *runs, int nruns, void *arg);
extern void tlbf_hash_log_visit_batches(HashLog *state, bool memory, bool file,
										Size buffer_bytes, BatchVisitor visit, void *arg);
extern void tlbf_hash_log_take(HashLog *into, HashLog *from);

#endif							/* TLBF_AGG_HASH_LOG_H */
