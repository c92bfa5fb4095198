/*-------------------------------------------------------------------------
 *
 * agg_hash_log.c
 *	  The hashes an aggregate without a declared capacity keeps until its
 *	  end (agg_format3_log.c): per generation, in chunks, only those within
 *	  the span before the newest time seen (a generation that leaves it is
 *	  forgotten as the rows come).  Past its share of work_mem (a hashed
 *	  aggregation's groups share it) a state writes its full chunks to a
 *	  temporary file, read back when the hashes are visited: a chunk there
 *	  names its generation, and one of a generation forgotten since is
 *	  skipped.
 *
 *-------------------------------------------------------------------------
 */
#include "agg_hash_log.h"
#include "filter_args.h"
#include "union.h"

#include "commands/tablespace.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

/* A chunk's hashes, at first: a group of a hashed plan may hold a few. */
#define FIRST_CHUNK_HASHES	64

#define chunk_bytes(allocated) (offsetof(HashChunk, hashes) + (Size) (allocated) * sizeof(TlbfHash))

/* A chunk in the file: this, then its hashes (at most MAX_CHUNK_HASHES). */
typedef struct SpilledChunk
{
	int64		generation;
	uint32		n;
	uint32		zero;
} SpilledChunk;

HashLog *
tlbf_hash_log_create(MemoryContext aggcontext, const TbFilter *header)
{
	MemoryContext memory = AllocSetContextCreate(aggcontext, "tlbf_agg hashes",
												 ALLOCSET_SMALL_SIZES);
	HashLog    *state = MemoryContextAllocZero(memory, sizeof(HashLog));

	state->context = memory;
	state->file = -1;
	state->header = MemoryContextAlloc(memory, tb_lines_offset(0));
	memcpy(state->header, header, tb_lines_offset(0));
	SET_VARSIZE(state->header, tb_lines_offset(0));
	for (int s = 0; s < TB_MAX_SLOTS; s++)
		state->logs[s].generation = TB_NO_GENERATION;
	return state;
}

void
tlbf_hash_log_forget(HashLog *state, GenerationLog *log)
{
	HashChunk  *c = log->chunks;

	while (c != NULL)
	{
		HashChunk  *older = c->next;

		state->in_memory -= chunk_bytes(c->allocated);
		pfree(c);
		c = older;
	}
	if (log->counter != NULL)
	{
		state->in_memory -= sizeof(TbCounter);
		pfree(log->counter);
	}
	log->generation = TB_NO_GENERATION;
	log->chunks = NULL;
	log->n = 0;
	log->earliest = 0;
	log->in_file = 0;
	log->counter = NULL;
	Assert(tlbf_generation_count(log) == GENERATION_NONE);
}

/*
 * Forget the generations that left the span before the newest time, and
 * note until when the oldest kept stays (rows mostly come in time order:
 * each moves the newest time, few move the oldest generation).
 */
void
tlbf_hash_log_forget_past(HashLog *state)
{
	TbFilter   *h = state->header;

	state->oldest = tb_oldest_kept(h, h->newest);
	/* (the oldest moves on when newest - span reaches the next generation) */
	state->oldest_until = state->oldest < (TLBF_TIME_END - h->span) / h->length - 1 ?
		(state->oldest + 1) * h->length + h->span : TLBF_TIME_END;
	for (int s = 0; s < tb_slots(h); s++)
		if (state->logs[s].generation != TB_NO_GENERATION &&
			state->logs[s].generation < state->oldest)
			tlbf_hash_log_forget(state, &state->logs[s]);
	state->last = NULL;
}

/*
 * The log of generation 'g' (within the span: two such generations never
 * share a slot), started if need be with its earliest time 'earliest'.
 */
GenerationLog *
tlbf_hash_log_generation(HashLog *state, int64 g, TlbfTime earliest)
{
	GenerationLog *log = &state->logs[tb_slot_of(state->header, g)];

	Assert(log->generation == TB_NO_GENERATION || log->generation == g);
	if (log->generation != g)
	{
		/* NONE -> FEW */
		Assert(tlbf_generation_count(log) == GENERATION_NONE);
		log->generation = g;
		log->earliest = earliest;
		Assert(tlbf_generation_count(log) == GENERATION_FEW);
	}
	else if (earliest < log->earliest)
		log->earliest = earliest;
	return log;
}

/*
 * The memory a state's chunks may take: work_mem, or in a hashed
 * aggregation, which keeps every group's state at once, a group's share of
 * it (at least 64kB).
 */
static Size
memory_budget(const HashLog *state)
{
	const AggState *aggstate = state->aggstate;
	int			kb = work_mem;

	if (aggstate != NULL && aggstate->aggstrategy != AGG_PLAIN &&
		aggstate->aggstrategy != AGG_SORTED)
		kb = Max(work_mem / Max(aggstate->hash_ngroups_current, 1), 64);
	return (Size) kb * 1024;
}

static void
close_file(void *arg)
{
	HashLog    *state = arg;

	if (state->file >= 0)
		FileClose(state->file);
	state->file = -1;
}

/*
 * Write 'bytes' at 'offset' of the file.  The file is written and read in
 * whole chunks, a call each (a BufFile would copy them through its 8 kB
 * buffer, a system call per 8 kB: at 30M rows, 480 MB go out and back,
 * and those calls were a tenth of the query).  temp_file_limit is checked
 * by FileWrite, as for any temporary file.
 */
static void
write_at(HashLog *state, const void *bytes, size_t n, off_t offset)
{
	const char *p = bytes;

	while (n > 0)
	{
		int			done = FileWrite(state->file, (char *) p, (int) Min(n, MaxAllocSize),
									 offset, WAIT_EVENT_BUFFILE_WRITE);

		if (done <= 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not write to a tlbf_agg temporary file: %m")));
		p += done;
		n -= done;
		offset += done;
	}
}

/* Read 'n' bytes at 'offset' of the file: all of them, or an ERROR. */
static void
read_at(HashLog *state, void *bytes, size_t n, off_t offset)
{
	char	   *p = bytes;

	while (n > 0)
	{
		int			done = FileRead(state->file, p, (int) Min(n, MaxAllocSize),
									offset, WAIT_EVENT_BUFFILE_READ);

		if (done <= 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read a tlbf_agg temporary file: %m")));
		p += done;
		n -= done;
		offset += done;
	}
}

/* Write 'n' hashes of generation 'g' to the file, in chunks of at most MAX_CHUNK_HASHES. */
static void
write_hashes(HashLog *state, int64 g, const TlbfHash *hashes, size_t n)
{
	if (state->file < 0)
	{
		/*
		 * Not the transaction's (interXact): closed when the state's memory
		 * goes, at the end of the query or of an aborted transaction, never
		 * twice (a file the transaction held would be closed first on
		 * abort); a backend's exit removes its temporary files.  In a
		 * temporary tablespace if any is set, as a BufFile would be.
		 */
		PrepareTempTablespaces();
		state->file = OpenTemporaryFile(true);
		state->file_end = 0;
		state->close_file.func = close_file;
		state->close_file.arg = state;
		MemoryContextRegisterResetCallback(state->context, &state->close_file);
	}
	while (n > 0)
	{
		SpilledChunk header = {g, (uint32) Min(n, MAX_CHUNK_HASHES), 0};

		write_at(state, &header, sizeof(header), state->file_end);
		write_at(state, hashes, header.n * sizeof(TlbfHash), state->file_end + sizeof(header));
		state->file_end += sizeof(header) + header.n * sizeof(TlbfHash);
		hashes += header.n;
		n -= header.n;
	}
}

/*
 * Write every full chunk of a generation's log to the file (not its newest
 * chunk while it has room: rows go on into it).
 */
static void
spill_log(HashLog *state, GenerationLog *log)
{
	HashChunk **link = &log->chunks;
	GenerationCount before PG_USED_FOR_ASSERTS_ONLY = tlbf_generation_count(log);

	Assert(before != GENERATION_NONE);

	if (*link != NULL && (*link)->n < (*link)->allocated)
		link = &(*link)->next;
	while (*link != NULL)
	{
		HashChunk  *c = *link;

		write_hashes(state, log->generation, c->hashes, c->n);
		log->in_file += c->n;
		*link = c->next;
		state->in_memory -= chunk_bytes(c->allocated);
		pfree(c);
	}
	/* writing out changes where its hashes are, not how they are counted */
	Assert(tlbf_generation_count(log) == before);
}

/*
 * Past the budget: write full chunks to the file, those of the
 * generations counted as they come first.  A generation not counted yet
 * keeps its hashes in memory while that is enough: one that writes some
 * before its count starts must be read from the file once more at the end
 * to be counted (the rows of a large aggregate mostly come in time order:
 * a new generation grows past TB_COUNT_EXACT while older ones spill).
 */
void
tlbf_hash_log_spill_if_over(HashLog *state, Size more)
{
	Size		budget = memory_budget(state);

	if (state->in_memory + more <= budget)
		return;
	for (int s = 0; s < tb_slots(state->header); s++)
		if (state->logs[s].generation != TB_NO_GENERATION && state->logs[s].counter != NULL)
			spill_log(state, &state->logs[s]);
	if (state->in_memory + more <= budget)
		return;
	for (int s = 0; s < tb_slots(state->header); s++)
		if (state->logs[s].generation != TB_NO_GENERATION && state->logs[s].counter == NULL)
			spill_log(state, &state->logs[s]);
}

/* A new chunk of 'allocated' hashes, in memory (the state spills first if need be). */
HashChunk *
tlbf_hash_log_new_chunk(HashLog *state, uint32 allocated)
{
	HashChunk  *c;

	tlbf_hash_log_spill_if_over(state, chunk_bytes(allocated));
	c = MemoryContextAllocHuge(state->context, chunk_bytes(allocated));
	c->next = NULL;
	c->n = 0;
	c->allocated = allocated;
	state->in_memory += chunk_bytes(allocated);
	return c;
}

/* Room for one more hash in the log's newest chunk (tlbf_hash_log_append). */
HashChunk *
tlbf_hash_log_chunk_with_room(HashLog *state, GenerationLog *log)
{
	HashChunk  *c = log->chunks;

	if (c == NULL || c->n == c->allocated)
	{
		c = tlbf_hash_log_new_chunk(state, c == NULL ? FIRST_CHUNK_HASHES :
					  Min(2 * c->allocated, MAX_CHUNK_HASHES));
		c->next = log->chunks;
		log->chunks = c;
	}
	return c;
}

/*
 * Start the sketch of a log that now holds more than TB_COUNT_EXACT
 * hashes, from those it holds: unless some are in the file only (it is
 * then counted at the end, from all of them).
 */
void
tlbf_hash_log_start_counter(HashLog *state, GenerationLog *log)
{
	/* FEW -> SKETCHED; FEW -> UNSKETCHED if some hashes are in the file */
	if (log->counter != NULL || log->in_file > 0 || log->n <= TB_COUNT_EXACT)
	{
		Assert(tlbf_generation_count(log) != GENERATION_NONE);
		return;
	}
	log->counter = MemoryContextAlloc(state->context, sizeof(TbCounter));
	state->in_memory += sizeof(TbCounter);
	tb_count_init(log->counter);
	for (HashChunk *c = log->chunks; c != NULL; c = c->next)
		tb_count_add(log->counter, c->hashes, c->n);
	Assert(tlbf_generation_count(log) == GENERATION_SKETCHED);
}

/*
 * The log just took these hashes (its n counts them already): count them
 * into its sketch, which starts once it holds more than TB_COUNT_EXACT.
 * The registers keep maxima: a sketch is the same whatever order, or
 * however many times, its hashes came.
 */
void
tlbf_hash_log_counted(HashLog *state, GenerationLog *log, const TlbfHash *hashes, size_t n)
{
	if (log->counter != NULL)
		tb_count_add(log->counter, hashes, n);
	else
		tlbf_hash_log_start_counter(state, log);
}

/* Add a full chunk behind the log's newest (which keeps taking rows). */
void
tlbf_hash_log_add_behind(GenerationLog *log, HashChunk *c)
{
	if (log->chunks == NULL)
	{
		c->next = NULL;
		log->chunks = c;
	}
	else
	{
		c->next = log->chunks->next;
		log->chunks->next = c;
	}
}

/*
 * Call 'visit' for the hashes of every live generation, in batches of
 * runs: one batch of every chunk in memory (if 'memory'; the runs point
 * into the chunks, which 'visit' may reorder but not change), then (if
 * 'file') the chunks in the file, read into a buffer of 'buffer_bytes' (at
 * least a chunk's and its header's) as many at a time as it holds, from
 * its start (reads and writes name their offsets: more chunks may be
 * written after).
 */
void
tlbf_hash_log_visit_batches(HashLog *state, bool memory, bool file, Size buffer_bytes,
							BatchVisitor visit, void *arg)
{
	HashRun    *runs;
	int			nruns = 0;
	int			room = 0;
	char	   *buffer;
	size_t		bytes;
	size_t		filled = 0;
	off_t		offset = 0;

	for (int s = 0; memory && s < tb_slots(state->header); s++)
		if (state->logs[s].generation != TB_NO_GENERATION)
			for (HashChunk *c = state->logs[s].chunks; c != NULL; c = c->next)
				room++;
	/* (room for the largest chunk and its header, at least) */
	bytes = Max(buffer_bytes, MAX_CHUNK_HASHES * sizeof(TlbfHash)) + sizeof(SpilledChunk);
	if (file && state->file >= 0)
		room = Max(room, (int) (bytes / (sizeof(SpilledChunk) + FIRST_CHUNK_HASHES * sizeof(TlbfHash))) + 1);
	runs = palloc(Max(room, 1) * sizeof(HashRun));
	for (int s = 0; memory && s < tb_slots(state->header); s++)
		if (state->logs[s].generation != TB_NO_GENERATION)
			for (HashChunk *c = state->logs[s].chunks; c != NULL; c = c->next)
				runs[nruns++] = (HashRun) {&state->logs[s], c->hashes, c->n};
	if (nruns > 0)
		visit(runs, nruns, arg);
	nruns = 0;
	if (!file || state->file < 0)
	{
		pfree(runs);
		return;
	}
	/*
	 * Read as much of the file as the buffer holds, then visit the live
	 * chunks read whole; a chunk cut at the buffer's end moves to its start
	 * for the next read.  Every offset is a multiple of 16 bytes: the runs
	 * point at aligned hashes.
	 */
	buffer = palloc_extended(bytes, MCXT_ALLOC_HUGE);
	for (;;)
	{
		size_t		parsed = 0;
		size_t		more = (size_t) Min((off_t) (bytes - filled), state->file_end - offset);

		read_at(state, buffer + filled, more, offset);
		offset += more;
		filled += more;
		for (;;)
		{
			SpilledChunk header;
			size_t		whole;
			GenerationLog *log;

			if (filled - parsed < sizeof(header) || nruns == room)
				break;
			memcpy(&header, buffer + parsed, sizeof(header));
			if (header.n > MAX_CHUNK_HASHES || header.zero != 0)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("could not read a tlbf_agg temporary file")));
			whole = sizeof(header) + header.n * sizeof(TlbfHash);
			if (filled - parsed < whole)
				break;
			/* (a generation forgotten since: its slot holds a newer one, or none) */
			log = &state->logs[tb_slot_of(state->header, header.generation)];
			if (log->generation == header.generation && header.n > 0)
				runs[nruns++] = (HashRun) {log, (TlbfHash *) (buffer + parsed + sizeof(header)), header.n};
			parsed += whole;
		}
		if (nruns > 0)
			visit(runs, nruns, arg);
		nruns = 0;
		if (parsed == 0 && more == 0)
		{
			/* the file ends within a chunk */
			if (filled > 0)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("could not read a tlbf_agg temporary file")));
			break;
		}
		memmove(buffer, buffer + parsed, filled - parsed);
		filled -= parsed;
	}
	pfree(buffer);
	pfree(runs);
}

/* tlbf_hash_log_visit's: each run of a batch, one by one. */
typedef struct VisitEach
{
	HashVisitor visit;
	void	   *arg;
} VisitEach;

static void
visit_each(HashRun *runs, int nruns, void *arg)
{
	VisitEach  *each = arg;

	for (int r = 0; r < nruns; r++)
		each->visit(runs[r].log, runs[r].hashes, runs[r].n, each->arg);
}

/*
 * Call 'visit' for the hashes of every live generation, a chunk at a time:
 * those in memory (if 'memory') and those in the file (if 'file').
 */
void
tlbf_hash_log_visit(HashLog *state, bool memory, bool file, HashVisitor visit, void *arg)
{
	VisitEach	each = {visit, arg};

	tlbf_hash_log_visit_batches(state, memory, file, 0, visit_each, &each);
}

/* A chunk of the other state's, copied into 'arg' (tlbf_hash_log_take). */
static void
copy_hashes(GenerationLog *log, const TlbfHash *hashes, size_t n, void *arg)
{
	HashLog    *into = arg;
	GenerationLog *dst;
	HashChunk  *c;

	if (log->generation < into->oldest || n == 0)
		return;
	dst = tlbf_hash_log_generation(into, log->generation, log->earliest);
	c = tlbf_hash_log_new_chunk(into, (uint32) n);
	memcpy(c->hashes, hashes, n * sizeof(TlbfHash));
	c->n = (uint32) n;
	tlbf_hash_log_add_behind(dst, c);
	dst->n += n;
	tlbf_hash_log_counted(into, dst, c->hashes, n);
}

/*
 * Add the rows of 'from' to 'into'.  A state deserialized by this
 * aggregation lives in its memory and is no longer used: its chunks in
 * memory join into's lists as they are (no copy: the leader takes every
 * worker's hashes), and it is emptied.  PostgreSQL serializes every
 * partial state of type internal, even within one process (partitionwise
 * aggregation), so 'from' is always such a state; one that is not would
 * live in memory its own node resets for its next group, and is copied
 * and left as it is.
 */
void
tlbf_hash_log_take(HashLog *into, HashLog *from)
{
	TlbfMemory	memory;

	/* (the kind of key, the newest time, the rows: headers unite as filters) */
	tlbf_memory_for(&memory, into->header, into->context);
	into->header = tlbf_union_format3_into(into->header, from->header, &memory);
	tlbf_hash_log_forget_past(into);
	tlbf_hash_log_visit(from, !from->deserialized, true, copy_hashes, into);
	if (from->deserialized)
	{
		for (int s = 0; s < tb_slots(from->header); s++)
		{
			GenerationLog *src = &from->logs[s];
			GenerationLog *dst;
			bool		merged;

			if (src->generation == TB_NO_GENERATION || src->generation < into->oldest)
				continue;
			dst = tlbf_hash_log_generation(into, src->generation, src->earliest);
			/*
			 * Both sketched: one takes the other's registers, and the
			 * hashes moved are not counted again (each was by 'from').
			 */
			merged = tlbf_generation_count(src) == GENERATION_SKETCHED &&
				tlbf_generation_count(dst) == GENERATION_SKETCHED;
			if (merged)
				tb_count_merge(dst->counter, src->counter);
			while (src->chunks != NULL)
			{
				HashChunk  *c = src->chunks;

				src->chunks = c->next;
				tlbf_hash_log_add_behind(dst, c);
				dst->n += c->n;
				from->in_memory -= chunk_bytes(c->allocated);
				into->in_memory += chunk_bytes(c->allocated);
				if (!merged)
					tlbf_hash_log_counted(into, dst, c->hashes, c->n);
			}
		}
		for (int s = 0; s < tb_slots(from->header); s++)
			tlbf_hash_log_forget(from, &from->logs[s]);
		from->last = NULL;
		if (from->file >= 0)
		{
			FileClose(from->file);
			from->file = -1;
		}
	}
	tlbf_hash_log_spill_if_over(into, 0);
}

