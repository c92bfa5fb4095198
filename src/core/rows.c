/*-------------------------------------------------------------------------
 *
 * rows.c
 *	  Decoding rows from a stream (their encoding is inline, in
 *	  tlbf_rows.h), checking every byte; splitting a stream into its
 *	  ascending runs; and merging runs by time.
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
static bool
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
 * a short byte key, hashed if want_hash.  False on bad bytes.
 */
static bool
decode_key(const uint8_t **p, const uint8_t *end, TlbfRowCoding *coding,
		   TlbfHash *hash, bool want_hash)
{
	const uint8_t *q = *p;

	if (coding->kind == TLBF_ROWS_INT64)
	{
		int64_t		item;

		if (!get_difference(&q, end, coding->prev_item, &item))
			return false;
		if (want_hash)
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
			if (want_hash)
				*hash = tlbf_hash_bytes(q, len, coding->seed);
			*p = q + len;
			return true;
		}
		/* a length of 0: a long key, sent as its hash */
	}
	if ((size_t) (end - q) < 16)
		return false;
	if (want_hash)
	{
		memcpy(&hash->a, q, sizeof(uint64_t));
		memcpy(&hash->b, q + 8, sizeof(uint64_t));
	}
	*p = q + 16;
	return true;
}

/*
 * Decode the row at *p into 'row' (its hash only if want_hash), advancing
 * *p and the coding.  False if the bytes end early, a varint is longer than
 * 64 bits, a key length is too long, or the time is not a valid timestamp
 * (the core's insertion requires one).
 */
static bool
decode_row(const uint8_t **p, const uint8_t *end, TlbfRowCoding *coding,
		   TlbfRow *row, bool want_hash)
{
	const uint8_t *q = *p;
	int64_t		at;

	if (!get_difference(&q, end, coding->prev_at, &at) ||
		at < TLBF_TIME_MIN || at >= TLBF_TIME_END ||
		!decode_key(&q, end, coding, &row->hash, want_hash))
		return false;
	row->at = at;
	coding->prev_at = at;
	*p = q;
	return true;
}

bool
tlbf_row_decode(const uint8_t **p, const uint8_t *end, TlbfRowCoding *coding, TlbfRow *row)
{
	return decode_row(p, end, coding, row, true);
}

/*
 * Check a stream of 'nrows' rows that must fill 'len' bytes exactly, read
 * from the coding 'start', and find its ascending runs (a row older than
 * the one before starts a new run; equal times stay in the run, in their
 * order).  False if a row does not decode, the count or length is off, or
 * there are more than max_runs runs.
 */
bool
tlbf_rows_split(const uint8_t *data, size_t len, uint64_t nrows,
				const TlbfRowCoding *start, TlbfRun *runs, int max_runs, int *nruns)
{
	const uint8_t *p = data;
	const uint8_t *end = data + len;
	TlbfRowCoding coding = *start;
	TlbfRow		row;
	int			n = 0;

	for (uint64_t i = 0; i < nrows; i++)
	{
		size_t		offset = (size_t) (p - data);
		TlbfRowCoding before = coding;

		if (!decode_row(&p, end, &coding, &row, false))
			return false;
		if (i == 0 || row.at < before.prev_at)
		{
			if (n == max_runs)
				return false;
			runs[n].offset = offset;
			runs[n].start = before;
			runs[n].rows = 0;
			n++;
		}
		runs[n - 1].rows++;
	}
	if (p != end)
		return false;
	*nruns = n;
	return true;
}

void
tlbf_cursor_open(TlbfRowCursor *cursor, const uint8_t *data, size_t len,
				 const TlbfRun *run)
{
	cursor->next = data + run->offset;
	cursor->end = data + len;
	cursor->coding = run->start;
	cursor->left = run->rows;
}

/* A TlbfRowNext over a cursor. */
bool
tlbf_cursor_next(void *source, TlbfRow *row)
{
	TlbfRowCursor *cursor = source;

	if (cursor->left == 0 ||
		!tlbf_row_decode(&cursor->next, cursor->end, &cursor->coding, row))
		return false;
	cursor->left--;
	return true;
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
		if (merge->next[i] (merge->sources[i], &merge->heads[i]))
			merge->heap[merge->nheap++] = i;
	for (int i = merge->nheap / 2 - 1; i >= 0; i--)
		sift_down(merge, i);
}

bool
tlbf_row_merge_next(TlbfRowMerge *merge, TlbfRow *row)
{
	int			top;

	if (merge->nheap == 0)
		return false;
	top = merge->heap[0];
	*row = merge->heads[top];
	if (!merge->next[top] (merge->sources[top], &merge->heads[top]))
		merge->heap[0] = merge->heap[--merge->nheap];
	sift_down(merge, 0);
	return true;
}
