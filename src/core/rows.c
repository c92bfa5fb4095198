/*-------------------------------------------------------------------------
 *
 * rows.c
 *	  Decoding rows from a stream (their encoding is inline, in
 *	  tlbf_rows.h), checking every byte; checking the runs a stream says
 *	  it has, and reading them; and merging runs by time.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "tlbf_rows.h"

void
tlbf_row_coding_init(TlbfRowCoding *coding, TlbfRowKind kind, uint64_t seed)
{
	coding->kind = kind;
	coding->seed = seed;
	coding->prev_at = 0;
	coding->prev_item = 0;
}

/* False if the bytes end early or the varint is longer than 64 bits. */
static inline bool
get_difference(const uint8_t **p, const uint8_t *end, int64_t prev, int64_t *value)
{
	const uint8_t *q = *p;
	uint64_t	zigzag = 0;
	int64_t		delta;

	for (int shift = 0;; shift += 7)
	{
		if (q == end || shift > 63)
			return false;
		zigzag |= (uint64_t) (*q & 0x7f) << shift;
		if ((*q++ & 0x80) == 0)
			break;
	}
	delta = (int64_t) (zigzag >> 1) ^ -(int64_t) (zigzag & 1);
	*value = (int64_t) ((uint64_t) prev + (uint64_t) delta);
	*p = q;
	return true;
}

/*
 * Decode a row's key part at *p (advancing it): a hash, an integer key or
 * a short byte key, which it hashes.  False on bad bytes.
 */
static inline bool
decode_key(const uint8_t **p, const uint8_t *end, TlbfRowCoding *coding,
		   TlbfHash *hash)
{
	const uint8_t *q = *p;

	if (coding->kind == TLBF_ROWS_INT64)
	{
		int64_t		item;

		if (!get_difference(&q, end, coding->prev_item, &item))
			return false;
		*hash = tlbf_hash_int64(item, coding->seed);
		coding->prev_item = item;
		*p = q;
		return true;
	}
	if (coding->kind == TLBF_ROWS_BYTES)
	{
		unsigned	len;

		if (q == end)
			return false;
		len = *q++;
		if (len > 0)
		{
			len--;
			if (len > TLBF_ROW_MAX_KEY_BYTES || (size_t) (end - q) < len)
				return false;
			*hash = tlbf_hash_bytes(q, len, coding->seed);
			*p = q + len;
			return true;
		}
		/* a length of 0: a long key, sent as its hash */
	}
	if ((size_t) (end - q) < 16)
		return false;
	memcpy(&hash->a, q, sizeof(uint64_t));
	memcpy(&hash->b, q + 8, sizeof(uint64_t));
	*p = q + 16;
	return true;
}

/*
 * Decode the row at *p into 'row', advancing *p and the coding.  False if
 * the bytes end early, a varint is longer than 64 bits, a key length is too
 * long, or the time is not a valid timestamp (the core's insertion requires
 * one).
 */
static inline bool
decode_row(const uint8_t **p, const uint8_t *end, TlbfRowCoding *coding,
		   TlbfRow *row)
{
	const uint8_t *q = *p;
	int64_t		at;

	if (!get_difference(&q, end, coding->prev_at, &at) ||
		at < TLBF_TIME_MIN || at >= TLBF_TIME_END ||
		!decode_key(&q, end, coding, &row->hash))
		return false;
	row->at = at;
	coding->prev_at = at;
	*p = q;
	return true;
}

bool
tlbf_row_decode(const uint8_t **p, const uint8_t *end, TlbfRowCoding *coding,
				TlbfRow *row)
{
	return decode_row(p, end, coding, row);
}

/*
 * Check the runs a stream of 'nrows' rows in 'len' bytes came with: the
 * first starts at its first byte and row, encoded against nothing, and each
 * next one starts at a later byte and row, before the end.  So every run
 * has at least one row, and a cursor never reads outside its run; whether
 * its rows decode and ascend, the cursor checks as it reads them.
 */
bool
tlbf_runs_check(const TlbfRun *runs, int nruns, size_t len, uint64_t nrows)
{
	if (nruns == 0)
		return nrows == 0 && len == 0;
	if (nrows == 0 || runs[0].offset != 0 || runs[0].first_row != 0 ||
		runs[0].start.prev_at != 0 || runs[0].start.prev_item != 0)
		return false;
	for (int r = 1; r < nruns; r++)
		if (runs[r].offset <= runs[r - 1].offset ||
			runs[r].first_row <= runs[r - 1].first_row)
			return false;
	return runs[nruns - 1].offset < len && runs[nruns - 1].first_row < nrows;
}

/* Write runs[0..nruns) as they are sent (TlbfSentRun each). */
void
tlbf_rows_put_runs(uint8_t *out, const TlbfRun *runs, int nruns)
{
	for (int r = 0; r < nruns; r++)
	{
		TlbfSentRun sent;

		sent.offset = runs[r].offset;
		sent.first_row = runs[r].first_row;
		sent.prev_at = runs[r].start.prev_at;
		sent.prev_item = runs[r].start.prev_item;
		memcpy(out + r * sizeof(TlbfSentRun), &sent, sizeof(sent));
	}
}

/*
 * Check a stream another process sent: 'data' is what follows its length
 * word, 'len' bytes; 'seed' hashes its integer keys.  Its header and its
 * runs are checked here, its rows as a cursor reads them (the span and
 * error rate are the caller's to check).  Returns NULL, or what is wrong.
 */
const char *
tlbf_rows_take(const uint8_t *data, size_t len, uint64_t seed, TlbfSentRows *sent)
{
	const size_t header_bytes = sizeof(TlbfRowsHeader) - sizeof(uint32_t);
	TlbfRowsHeader header;
	TlbfRowCoding first;
	size_t		runs_bytes;

	if (len < header_bytes)
		return "The state is shorter than its header.";
	memcpy((char *) &header + sizeof(uint32_t), data, header_bytes);
	data += header_bytes;
	len -= header_bytes;
	if (header.magic != TLBF_ROWS_MAGIC || header.version != TLBF_ROWS_VERSION)
		return "The state's format is not one this version knows.";
	if (header.row_kind != TLBF_ROWS_HASHES && header.row_kind != TLBF_ROWS_INT64 &&
		header.row_kind != TLBF_ROWS_BYTES)
		return "The rows are of an unknown kind.";
	if (header.nruns > TLBF_MAX_SENT_RUNS)
		return "The rows come in too many runs.";
	sent->keys.fields = header.key_fields;
	sent->keys.kinds = header.key_kinds;
	sent->keys.tag = header.key_tag;
	if (header.reserved != 0 || !tlbf_keys_check(sent->keys))
		return "The kind of key is out of range.";
	/* keys sent as such are of pinned kinds, hashed with seed 0 */
	if (header.row_kind != TLBF_ROWS_HASHES && header.key_tag != seed)
		return "The rows' kind does not match their key's tag.";
	if (header.nrows > 0 &&
		!(header.oldest >= TLBF_TIME_MIN && header.oldest <= header.newest &&
		  header.newest < TLBF_TIME_END))
		return "The rows' oldest and newest times are out of order or range.";
	runs_bytes = header.nruns * sizeof(TlbfSentRun);
	if (len < runs_bytes)
		return "The state is shorter than its runs.";

	sent->rows = data;
	sent->len = len - runs_bytes;
	sent->nrows = header.nrows;
	sent->kind = (TlbfRowKind) header.row_kind;
	sent->span = header.span;
	sent->error_rate = header.error_rate;
	sent->oldest = header.nrows > 0 ? header.oldest : 0;
	sent->newest = header.nrows > 0 ? header.newest : 0;
	sent->nruns = (int) header.nruns;
	tlbf_row_coding_init(&first, sent->kind, seed);
	for (int r = 0; r < sent->nruns; r++)
	{
		TlbfSentRun run;

		memcpy(&run, data + sent->len + r * sizeof(TlbfSentRun), sizeof(run));
		sent->runs[r].offset = run.offset;
		sent->runs[r].first_row = run.first_row;
		sent->runs[r].start = first;
		sent->runs[r].start.prev_at = run.prev_at;
		sent->runs[r].start.prev_item = run.prev_item;
	}
	if (!tlbf_runs_check(sent->runs, sent->nruns, sent->len, sent->nrows))
		return "The rows' runs do not match the rows.";
	return NULL;
}

/* A cursor over run 'run' of runs[0..nruns), which tlbf_runs_check took. */
void
tlbf_cursor_open_run(TlbfRowCursor *cursor, const uint8_t *data, size_t len,
					 uint64_t nrows, const TlbfRun *runs, int nruns, int run)
{
	bool		last = run == nruns - 1;

	cursor->next = data + runs[run].offset;
	cursor->end = data + (last ? len : runs[run + 1].offset);
	cursor->coding = runs[run].start;
	cursor->left = (last ? nrows : runs[run + 1].first_row) - runs[run].first_row;
	cursor->ascending = true;
	cursor->last = TLBF_NEVER;
	cursor->failed = false;
}

/* A cursor over a whole stream, in the order its rows were written. */
void
tlbf_cursor_open_all(TlbfRowCursor *cursor, const uint8_t *data, size_t len,
					 uint64_t nrows, const TlbfRowCoding *start)
{
	cursor->next = data;
	cursor->end = data + len;
	cursor->coding = *start;
	cursor->left = nrows;
	cursor->ascending = false;
	cursor->last = TLBF_NEVER;
	cursor->failed = false;
}

/*
 * The next row of a cursor.  At a row that does not decode, or is older
 * than the one before in a run, or at bytes left after the last row, the
 * cursor ends and says it failed.  Inline in the merge, whose sources are
 * mostly cursors.
 */
static inline bool
cursor_next(TlbfRowCursor *cursor, TlbfRow *row)
{
	if (cursor->left == 0)
	{
		if (cursor->next != cursor->end)
			cursor->failed = true;
		return false;
	}
	if (!decode_row(&cursor->next, cursor->end, &cursor->coding, row) ||
		(cursor->ascending && row->at < cursor->last))
	{
		cursor->failed = true;
		cursor->left = 0;
		cursor->next = cursor->end;
		return false;
	}
	cursor->last = row->at;
	cursor->left--;
	return true;
}

/* A TlbfRowNext over a cursor. */
bool
tlbf_cursor_next(void *source, TlbfRow *row)
{
	return cursor_next((TlbfRowCursor *) source, row);
}

/* The next row of source i of a merge. */
static inline bool
source_next(TlbfRowMerge *merge, int i, TlbfRow *row)
{
	if (merge->next[i] == tlbf_cursor_next)
		return cursor_next((TlbfRowCursor *) merge->sources[i], row);
	return merge->next[i] (merge->sources[i], row);
}

/* Is source a's head before source b's?  Equal times: the lower source. */
static inline bool
comes_first(const TlbfRowMerge *m, int a, int b)
{
	TlbfTime	ta = m->heads[a].at;
	TlbfTime	tb = m->heads[b].at;

	return ta < tb || (ta == tb && a < b);
}

static void
sift_down(TlbfRowMerge *m, int i)
{
	for (;;)
	{
		int			least = i;
		int			left = 2 * i + 1;
		int			right = left + 1;
		int			swap;

		if (left < m->nheap && comes_first(m, m->heap[left], m->heap[least]))
			least = left;
		if (right < m->nheap && comes_first(m, m->heap[right], m->heap[least]))
			least = right;
		if (least == i)
			return;
		swap = m->heap[i];
		m->heap[i] = m->heap[least];
		m->heap[least] = swap;
		i = least;
	}
}

/*
 * Start merging: the caller has set next[], sources[], and room for
 * heads[] and heap[] of 'nsources' entries.  Each source must give its rows
 * in ascending time; the merge gives all of them in ascending time, rows of
 * equal time in the order of their sources.
 */
void
tlbf_row_merge_start(TlbfRowMerge *merge, int nsources)
{
	merge->nsources = nsources;
	merge->nheap = 0;
	for (int i = 0; i < nsources; i++)
		if (source_next(merge, i, &merge->heads[i]))
			merge->heap[merge->nheap++] = i;
	for (int i = merge->nheap / 2 - 1; i >= 0; i--)
		sift_down(merge, i);
}

/*
 * Up to 'max' rows of the merge into rows[], in order; fewer only at its
 * end.  A source whose rows keep coming before every other source's head
 * (a parallel worker's stretch of the table) gives them without a trip
 * through the heap, decoded straight into place: a row written field by
 * field and read back at once as a whole stalls the CPU, so a row is
 * copied only when its source stops coming first.
 */
size_t
tlbf_row_merge_fill(TlbfRowMerge *merge, TlbfRow *rows, size_t max)
{
	size_t		n = 0;

	while (n < max && merge->nheap > 0)
	{
		int			top = merge->heap[0];
		TlbfRow    *second = NULL;
		int			second_source = -1;
		bool		more;

		if (merge->nheap > 1)
			second_source = merge->heap[1];
		if (merge->nheap > 2 && comes_first(merge, merge->heap[2], second_source))
			second_source = merge->heap[2];
		if (second_source >= 0)
			second = &merge->heads[second_source];

		rows[n++] = merge->heads[top];
		for (;;)
		{
			TlbfRow    *row = n < max ? &rows[n] : &merge->heads[top];

			more = source_next(merge, top, row);
			if (!more || row == &merge->heads[top])
				break;
			if (second != NULL &&
				(row->at > second->at || (row->at == second->at && top > second_source)))
			{
				merge->heads[top] = *row;
				break;
			}
			n++;
		}
		if (!more)
			merge->heap[0] = merge->heap[--merge->nheap];
		sift_down(merge, 0);
	}
	return n;
}
