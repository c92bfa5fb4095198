/*
 * test_rows.c
 *	  Rows kept for tlbf_agg (rows.c): encoding, checking bytes that come
 *	  from outside, noting a stream's ascending runs and reading them back
 *	  (refusing runs that do not match the rows), and merging runs so that
 *	  a filter built from the merge is the filter built in time order.
 */
#include "harness.h"
#include "tlbf_rows.h"

#define MAX_RUNS 16

static TlbfRow
row_at(TlbfTime at, uint64_t key)
{
	TlbfRow		row = {at, key_hash(key)};

	return row;
}

static TlbfRowKey
int_key(int64_t value)
{
	TlbfRowKey	key = {value, NULL, 0};

	return key;
}

static TlbfRowCoding
coding_of(TlbfRowKind kind)
{
	TlbfRowCoding coding;

	tlbf_row_coding_init(&coding, kind, 0);
	return coding;
}

/* A stream being written, noting its runs as the aggregate does. */
typedef struct Writer
{
	uint8_t    *bytes;
	size_t		len;
	uint64_t	nrows;
	TlbfRowCoding coding;
	TlbfRun		runs[MAX_RUNS];
	int			nruns;
} Writer;

static void
write_row(Writer *w, const TlbfRow *row, const TlbfRowKey *key)
{
	tlbf_note_run(w->runs, &w->nruns, MAX_RUNS, w->len, w->nrows, &w->coding, row->at);
	w->len += tlbf_row_encode(w->bytes + w->len, &w->coding, row, key);
	w->nrows++;
}

/* Read run r of a stream into out[]; returns the rows read, -1 if the
 * cursor failed. */
static int
read_run(const uint8_t *bytes, size_t len, uint64_t nrows, const TlbfRun *runs,
		 int nruns, int r, TlbfRow *out, int max)
{
	TlbfRowCursor cursor;
	int			n = 0;

	tlbf_cursor_open_run(&cursor, bytes, len, nrows, runs, nruns, r);
	while (n < max && tlbf_cursor_next(&cursor, &out[n]))
		n++;
	if (n == max)
	{
		TlbfRow		extra;

		assert_false(tlbf_cursor_next(&cursor, &extra));
	}
	return cursor.failed ? -1 : n;
}

/* Encode rows[0..n-1] (with hashes) as one stream; returns its length. */
static size_t
encode_all(uint8_t *out, const TlbfRow *rows, int n)
{
	size_t		len = 0;
	TlbfRowCoding coding = coding_of(TLBF_ROWS_HASHES);

	for (int i = 0; i < n; i++)
		len += tlbf_row_encode(out + len, &coding, &rows[i], NULL);
	return len;
}

static void
test_rows_round_trip(void **unused)
{
	TlbfTime	times[] = {0, 1, -1, TLBF_TIME_MIN, TLBF_TIME_END - 1, TLBF_TIME_MIN,
		TLBF_TIME_END - 1, 1000, 999, 1000 + HOUR, 5};
	int			n = (int) (sizeof(times) / sizeof(times[0]));
	TlbfRow		rows[16];
	uint8_t		bytes[16 * TLBF_ROW_MAX_BYTES];
	size_t		len;
	const uint8_t *p = bytes;
	TlbfRowCoding coding = coding_of(TLBF_ROWS_HASHES);

	for (int i = 0; i < n; i++)
		rows[i] = row_at(times[i], (uint64_t) i);
	len = encode_all(bytes, rows, n);
	for (int i = 0; i < n; i++)
	{
		TlbfRow		row;

		assert_true(tlbf_row_decode(&p, bytes + len, &coding, &row));
		assert_int_equal(row.at, times[i]);
		assert_memory_equal(&row.hash, &rows[i].hash, sizeof(TlbfHash));
	}
	assert_ptr_equal(p, bytes + len);
}

/*
 * A row 100 us after the one before takes 18 bytes with its hash, 3 with an
 * integer key one more than the one before; the key decodes to its hash.
 */
static void
test_rows_are_compact(void **unused)
{
	uint8_t		bytes[2 * TLBF_ROW_MAX_BYTES];
	TlbfRow		row = row_at(100, 1);
	TlbfRowCoding hashes = coding_of(TLBF_ROWS_HASHES);
	TlbfRowCoding keys = coding_of(TLBF_ROWS_INT64);
	TlbfRowCoding reading = coding_of(TLBF_ROWS_INT64);
	const uint8_t *p = bytes;
	size_t		len;
	TlbfRow		out;

	TlbfRowKey	k41 = int_key(41);
	TlbfRowKey	k42 = int_key(42);

	assert_int_equal(tlbf_row_encode(bytes, &hashes, &row, NULL), 18);
	len = tlbf_row_encode(bytes, &keys, &row, &k41);
	row.at = 200;
	assert_int_equal(tlbf_row_encode(bytes + len, &keys, &row, &k42), 3);
	len += 3;
	assert_true(tlbf_row_decode(&p, bytes + len, &reading, &out));
	assert_true(tlbf_row_decode(&p, bytes + len, &reading, &out));
	assert_int_equal(out.at, 200);
	row.hash = key_hash(42);
	assert_memory_equal(&out.hash, &row.hash, sizeof(TlbfHash));
}

/*
 * Keys hashed as byte strings: up to 15 bytes travel as such (a length
 * byte and the key) and decode to their hash; longer ones travel as their
 * hash behind a length byte of 0.  A length byte past 16 is refused.
 */
static void
test_rows_byte_keys(void **unused)
{
	const char *keys[] = {"", "x", "fifteen bytes!!", "sixteen bytes!!!", "a much longer key than that"};
	uint8_t		bytes[5 * TLBF_ROW_MAX_BYTES];
	TlbfRowCoding writing = coding_of(TLBF_ROWS_BYTES);
	TlbfRowCoding reading = coding_of(TLBF_ROWS_BYTES);
	size_t		len = 0;
	const uint8_t *p = bytes;
	TlbfRow		out;
	uint8_t		bad[] = {0x02, 17, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l',
	'm', 'n', 'o', 'p', 'q'};

	for (int i = 0; i < 5; i++)
	{
		TlbfRowKey	key = {0, (const uint8_t *) keys[i], (uint32_t) strlen(keys[i])};
		TlbfRow		row = {1000 * i, tlbf_hash_bytes(keys[i], strlen(keys[i]), 0)};
		size_t		n = tlbf_row_encode(bytes + len, &writing, &row, &key);

		assert_int_equal(n, key.len <= TLBF_ROW_MAX_KEY_BYTES ? 2 + key.len + (i > 0) : 2 + (i > 0) + 16);
		len += n;
	}
	for (int i = 0; i < 5; i++)
	{
		TlbfHash	expected = tlbf_hash_bytes(keys[i], strlen(keys[i]), 0);

		assert_true(tlbf_row_decode(&p, bytes + len, &reading, &out));
		assert_int_equal(out.at, 1000 * i);
		assert_memory_equal(&out.hash, &expected, sizeof(TlbfHash));
	}
	assert_ptr_equal(p, bytes + len);

	p = bad;
	reading = coding_of(TLBF_ROWS_BYTES);
	assert_false(tlbf_row_decode(&p, bad + sizeof(bad), &reading, &out));
}

static void
test_rows_bad_bytes_refused(void **unused)
{
	TlbfRow		row = row_at(HOUR, 7);
	TlbfRow		out;
	uint8_t		bytes[2 * TLBF_ROW_MAX_BYTES];
	uint8_t		overlong[TLBF_ROW_MAX_BYTES + 16];
	const uint8_t *p;
	TlbfRowCoding coding;

	TlbfRowKey	key = {INT64_MIN, (const uint8_t *) "a short key", 11};

	for (int kind = TLBF_ROWS_HASHES; kind <= TLBF_ROWS_BYTES; kind++)
	{
		TlbfRowCoding writing = coding_of(kind);
		size_t		len = tlbf_row_encode(bytes, &writing, &row, &key);

		/* every truncation */
		for (size_t cut = 0; cut < len; cut++)
		{
			p = bytes;
			coding = coding_of(kind);
			assert_false(tlbf_row_decode(&p, bytes + cut, &coding, &out));
		}

		/* a varint longer than 64 bits, for the time and for the key */
		memset(overlong, 0x80, sizeof(overlong));
		p = overlong;
		coding = coding_of(kind);
		assert_false(tlbf_row_decode(&p, overlong + sizeof(overlong), &coding, &out));
		if (kind == TLBF_ROWS_INT64)
		{
			overlong[0] = 0x02;
			p = overlong;
			coding = coding_of(kind);
			assert_false(tlbf_row_decode(&p, overlong + sizeof(overlong), &coding, &out));
		}

		/* a time past the valid range, and one before it */
		p = bytes;
		coding = coding_of(kind);
		coding.prev_at = TLBF_TIME_END - 1;
		assert_false(tlbf_row_decode(&p, bytes + len, &coding, &out));
		row.at = -HOUR;
		writing = coding_of(kind);
		len = tlbf_row_encode(bytes, &writing, &row, &key);
		p = bytes;
		coding = coding_of(kind);
		coding.prev_at = TLBF_TIME_MIN;
		assert_false(tlbf_row_decode(&p, bytes + len, &coding, &out));
		row.at = HOUR;
	}
}

static void
test_rows_runs_noted_and_read(void **unused)
{
	/* three runs: 1 2 2 3 | 0 5 | 4; equal times stay in a run */
	TlbfTime	times[] = {1, 2, 2, 3, 0, 5, 4};
	int			expected_rows[] = {4, 2, 1};
	uint8_t		bytes[7 * TLBF_ROW_MAX_BYTES];
	Writer		w = {bytes, 0, 0, coding_of(TLBF_ROWS_HASHES), {{0}}, 0};
	TlbfRun		runs[MAX_RUNS];
	TlbfRow		out[8];
	int			next = 0;

	for (int i = 0; i < 7; i++)
	{
		TlbfRow		row = row_at(times[i], (uint64_t) i);

		write_row(&w, &row, NULL);
	}
	assert_int_equal(w.nruns, 3);
	assert_true(tlbf_runs_check(w.runs, 3, w.len, 7));
	for (int r = 0; r < 3; r++)
	{
		assert_int_equal(read_run(bytes, w.len, 7, w.runs, 3, r, out, 8), expected_rows[r]);
		for (int i = 0; i < expected_rows[r]; i++)
		{
			TlbfRow		row = row_at(times[next], (uint64_t) next);

			assert_int_equal(out[i].at, row.at);
			assert_memory_equal(&out[i].hash, &row.hash, sizeof(TlbfHash));
			next++;
		}
	}

	/* runs that do not fit the stream are refused before any row is read */
	assert_false(tlbf_runs_check(w.runs, 3, w.len, 6));	/* a run past the rows */
	assert_false(tlbf_runs_check(w.runs, 3, w.runs[2].offset, 7));	/* past the bytes */
	assert_false(tlbf_runs_check(w.runs, 0, w.len, 7));
	assert_false(tlbf_runs_check(w.runs, 3, 0, 0));
	assert_true(tlbf_runs_check(w.runs, 0, 0, 0));
	memcpy(runs, w.runs, sizeof(runs));
	runs[2].offset = runs[1].offset;	/* no bytes for run 1 */
	assert_false(tlbf_runs_check(runs, 3, w.len, 7));
	memcpy(runs, w.runs, sizeof(runs));
	runs[0].offset = 1;
	assert_false(tlbf_runs_check(runs, 3, w.len, 7));
	memcpy(runs, w.runs, sizeof(runs));
	runs[0].start.prev_at = 5;		/* the first row is encoded against 0 */
	assert_false(tlbf_runs_check(runs, 3, w.len, 7));

	/* runs that fit but do not match the rows fail as they are read */
	assert_int_equal(read_run(bytes, w.len, 9, w.runs, 3, 2, out, 8), -1);	/* rows missing */
	memcpy(runs, w.runs, sizeof(runs));
	runs[1] = runs[2];				/* run 0 now takes 1 2 2 3 0 5: not ascending */
	assert_true(tlbf_runs_check(runs, 2, w.len, 7));
	assert_int_equal(read_run(bytes, w.len, 7, runs, 2, 0, out, 8), -1);
	memcpy(runs, w.runs, sizeof(runs));
	runs[2].first_row = 5;			/* run 1 says 1 row and has 2: bytes left */
	assert_true(tlbf_runs_check(runs, 3, w.len, 7));
	assert_int_equal(read_run(bytes, w.len, 7, runs, 3, 1, out, 8), -1);
	memcpy(runs, w.runs, sizeof(runs));
	runs[1].offset += 1;			/* run 1 starts inside a row */
	assert_true(tlbf_runs_check(runs, 3, w.len, 7));
	assert_int_equal(read_run(bytes, w.len, 7, runs, 3, 0, out, 8), -1);
}

/*
 * A state as a worker sends it (after its length word): taken whole, and
 * refused for a short or unknown header, too many runs, oldest and newest
 * times out of order or range, runs cut off or not fitting the rows.
 */
static void
test_rows_take_checks_the_state(void **unused)
{
	const size_t header_bytes = sizeof(TlbfRowsHeader) - sizeof(uint32_t);
	TlbfTime	times[] = {1, 2, 2, 3, 0, 5, 4};
	uint8_t		rows[7 * TLBF_ROW_MAX_BYTES];
	Writer		w = {rows, 0, 0, coding_of(TLBF_ROWS_INT64), {{0}}, 0};
	TlbfRowsHeader header = {0};
	uint8_t		state[sizeof(TlbfRowsHeader) + sizeof(rows) + 3 * sizeof(TlbfSentRun)];
	uint8_t		bad[sizeof(state)];
	size_t		len;
	TlbfSentRows sent;

	for (int i = 0; i < 7; i++)
	{
		TlbfRow		row = row_at(times[i], 0);
		TlbfRowKey	key = int_key(100 + i);

		row.hash = tlbf_hash_int64(100 + i, 0);
		write_row(&w, &row, &key);
	}
	header.magic = TLBF_ROWS_MAGIC;
	header.version = TLBF_ROWS_VERSION;
	header.row_kind = TLBF_ROWS_INT64;
	header.nruns = 3;
	header.span = HOUR;
	header.error_rate = 0.01;
	header.nrows = 7;
	header.oldest = 0;
	header.newest = 5;
	memcpy(state, (char *) &header + sizeof(uint32_t), header_bytes);
	memcpy(state + header_bytes, rows, w.len);
	tlbf_rows_put_runs(state + header_bytes + w.len, w.runs, 3);
	len = header_bytes + w.len + 3 * sizeof(TlbfSentRun);

	assert_null(tlbf_rows_take(state, len, 0, &sent));
	assert_int_equal(sent.nruns, 3);
	assert_int_equal(sent.nrows, 7);
	assert_int_equal(sent.len, w.len);
	assert_int_equal(sent.kind, TLBF_ROWS_INT64);
	assert_int_equal(sent.span, HOUR);
	assert_int_equal(sent.oldest, 0);
	assert_int_equal(sent.newest, 5);
	assert_memory_equal(sent.rows, rows, w.len);
	for (int r = 0; r < 3; r++)
	{
		assert_int_equal(sent.runs[r].offset, w.runs[r].offset);
		assert_int_equal(sent.runs[r].first_row, w.runs[r].first_row);
		assert_int_equal(sent.runs[r].start.prev_at, w.runs[r].start.prev_at);
		assert_int_equal(sent.runs[r].start.prev_item, w.runs[r].start.prev_item);
	}
	{
		TlbfRow		out[8];
		TlbfHash	expected = tlbf_hash_int64(105, 0);	/* the integer key, hashed */

		/* run 1: the rows at times 0 and 5 */
		assert_int_equal(read_run(sent.rows, sent.len, sent.nrows, sent.runs, 3, 1, out, 8), 2);
		assert_int_equal(out[0].at, 0);
		assert_int_equal(out[1].at, 5);
		assert_memory_equal(&out[1].hash, &expected, sizeof(TlbfHash));
	}

	/* every cut of the state is refused (fewer bytes than it says) */
	for (size_t cut = 0; cut < len; cut++)
		assert_non_null(tlbf_rows_take(state, cut, 0, &sent));

	/* each header field out of range */
	for (int field = 0; field < 8; field++)
	{
		TlbfRowsHeader changed = header;

		memcpy(bad, state, len);
		if (field == 0)
			changed.magic++;
		else if (field == 1)
			changed.version++;
		else if (field == 2)
			changed.row_kind = 3;
		else if (field == 3)
			changed.nruns = TLBF_MAX_SENT_RUNS + 1;
		else if (field == 4)
			changed.nrows = 6;		/* the last run starts past the rows */
		else if (field == 5)
			changed.oldest = 6;		/* after the newest */
		else if (field == 6)
			changed.oldest = TLBF_TIME_MIN - 1;
		else
			changed.newest = TLBF_TIME_END;
		memcpy(bad, (char *) &changed + sizeof(uint32_t), header_bytes);
		assert_non_null(tlbf_rows_take(bad, len, 0, &sent));
	}

	/* runs that do not fit the rows */
	memcpy(bad, state, len);
	bad[header_bytes + w.len + sizeof(TlbfSentRun)] ^= 0xff;	/* run 1's offset */
	assert_non_null(tlbf_rows_take(bad, len, 0, &sent));
}

/*
 * Random bytes with random runs never read past the end of a run (run
 * under the sanitizers too), and a cursor that gives a row gives a valid
 * time, in ascending order.
 */
static void
test_rows_random_bytes(void **unused)
{
	uint64_t	rng = 42;
	uint8_t    *bytes = malloc(4096);

	assert_non_null(bytes);
	for (int round = 0; round < 20000; round++)
	{
		size_t		len = (size_t) (rng_next(&rng) % 4096);
		uint64_t	nrows = rng_next(&rng) % 300;
		int			nruns = (int) (rng_next(&rng) % (MAX_RUNS + 1));
		TlbfRun		runs[MAX_RUNS];
		uint8_t    *copy;

		for (size_t i = 0; i < len; i++)
			bytes[i] = (uint8_t) rng_next(&rng);
		/* often a plausible first byte, so that decoding goes further */
		if (len > 0 && round % 2 == 0)
			bytes[0] &= 0x7f;
		for (int r = 0; r < nruns; r++)
		{
			runs[r].offset = r == 0 ? 0 : runs[r - 1].offset + 1 + rng_next(&rng) % 64;
			runs[r].first_row = r == 0 ? 0 : runs[r - 1].first_row + 1 + rng_next(&rng) % 8;
			runs[r].start = coding_of((TlbfRowKind) (round % 3));
			if (r > 0)
				runs[r].start.prev_at = (TlbfTime) (rng_next(&rng) % 1000);
		}
		copy = malloc(len + 1);
		assert_non_null(copy);
		memcpy(copy, bytes, len);
		if (tlbf_runs_check(runs, nruns, len, nrows))
			for (int r = 0; r < nruns; r++)
			{
				TlbfRowCursor cursor;
				TlbfRow		row;
				TlbfTime	last = TLBF_NEVER;

				tlbf_cursor_open_run(&cursor, copy, len, nrows, runs, nruns, r);
				while (tlbf_cursor_next(&cursor, &row))
				{
					assert_true(row.at >= last && row.at < TLBF_TIME_END);
					last = row.at;
				}
			}
		free(copy);
	}
	free(bytes);
}

typedef struct ArraySource
{
	const TlbfRow *rows;
	int			n;
	int			next;
} ArraySource;

static bool
array_next(void *source, TlbfRow *row)
{
	ArraySource *a = source;

	if (a->next == a->n)
		return false;
	*row = a->rows[a->next++];
	return true;
}

/* Rows of equal time come out in the order of their sources. */
static void
test_merge_orders_ties_by_source(void **unused)
{
	TlbfRow		first[] = {row_at(1, 10), row_at(5, 11)};
	TlbfRow		second[] = {row_at(1, 20), row_at(3, 21), row_at(5, 22)};
	ArraySource a = {first, 2, 0};
	ArraySource b = {second, 3, 0};
	TlbfRowNext next[2] = {array_next, array_next};
	void	   *sources[2] = {&a, &b};
	TlbfRow		heads[2];
	int			heap[2];
	TlbfRowMerge merge = {0, 0, next, sources, heads, heap};
	const TlbfRow *expected[] = {&first[0], &second[0], &second[1], &first[1], &second[2]};
	TlbfRow		row;

	tlbf_row_merge_start(&merge, 2);
	for (int i = 0; i < 5; i++)
	{
		assert_int_equal(tlbf_row_merge_fill(&merge, &row, 1), 1);
		assert_int_equal(row.at, expected[i]->at);
		assert_memory_equal(&row.hash, &expected[i]->hash, sizeof(TlbfHash));
	}
	assert_int_equal(tlbf_row_merge_fill(&merge, &row, 1), 0);

	/* the same a few rows at a time, as a batch is filled */
	{
		TlbfRow		got[5];
		size_t		n = 0;
		size_t		more;

		a.next = b.next = 0;
		tlbf_row_merge_start(&merge, 2);
		while ((more = tlbf_row_merge_fill(&merge, got + n, n + 2 <= 5 ? 2 : 5 - n)) > 0)
			n += more;
		assert_int_equal(n, 5);
		for (int i = 0; i < 5; i++)
		{
			assert_int_equal(got[i].at, expected[i]->at);
			assert_memory_equal(&got[i].hash, &expected[i]->hash, sizeof(TlbfHash));
		}
		assert_int_equal(tlbf_row_merge_fill(&merge, got, 5), 0);
	}
}

/*
 * Rows dealt out in chunks to three "workers", each worker's rows a stream
 * of ascending runs (a wrapped scan gives two), merged: the filter built
 * from the merge is byte for byte the filter built in time order.
 */
static void
test_merged_filter_is_the_ordered_filter(void **unused)
{
	enum
	{
		NROWS = 200000, NWORKERS = 3, BATCH = 100
	};
	TlbfRow    *rows = malloc(NROWS * sizeof(TlbfRow));
	Writer		writers[NWORKERS];
	int64_t    *keys = malloc(NROWS * sizeof(int64_t));
	TlbfRowCursor cursors[NWORKERS * MAX_RUNS];
	TlbfRowNext next[NWORKERS * MAX_RUNS];
	void	   *sources[NWORKERS * MAX_RUNS];
	TlbfRow		heads[NWORKERS * MAX_RUNS];
	int			heap[NWORKERS * MAX_RUNS];
	TlbfRowMerge merge = {0, 0, next, sources, heads, heap};
	int			nsources = 0;
	uint64_t	rng = 7;
	TestFilter	ordered;
	TestFilter	merged;
	TestFilter	batched;
	TlbfRow		row;
	int			start = 0;

	assert_non_null(rows);
	assert_non_null(keys);
	for (int i = 0; i < NROWS; i++)
	{
		keys[i] = (int64_t) (rng_next(&rng) % 100000);
		rows[i] = row_at(i * 10 * 1000, (uint64_t) keys[i]);	/* 10 ms apart */
	}

	/* one worker sends hashes, the others integer keys */
	for (int w = 0; w < NWORKERS; w++)
	{
		memset(&writers[w], 0, sizeof(Writer));
		writers[w].coding = coding_of(w == 0 ? TLBF_ROWS_HASHES : TLBF_ROWS_INT64);
		writers[w].bytes = malloc(NROWS * TLBF_ROW_MAX_BYTES);
		assert_non_null(writers[w].bytes);
	}

	/*
	 * Chunks of 1 to 3000 rows to random workers; the scan starts at row
	 * 150000 and wraps around.
	 */
	for (int pass = 0; pass < 2; pass++)
	{
		int			from = pass == 0 ? 150000 : 0;
		int			to = pass == 0 ? NROWS : 150000;

		for (start = from; start < to;)
		{
			int			w = (int) (rng_next(&rng) % NWORKERS);
			int			len = 1 + (int) (rng_next(&rng) % 3000);

			for (int i = start; i < start + len && i < to; i++)
			{
				TlbfRowKey	key = int_key(keys[i]);

				write_row(&writers[w], &rows[i], &key);
			}
			start += len;
		}
	}
	for (int w = 0; w < NWORKERS; w++)
	{
		Writer	   *wr = &writers[w];

		assert_true(wr->nruns <= 2);
		assert_true(tlbf_runs_check(wr->runs, wr->nruns, wr->len, wr->nrows));
		for (int r = 0; r < wr->nruns; r++)
		{
			tlbf_cursor_open_run(&cursors[nsources], wr->bytes, wr->len, wr->nrows,
								 wr->runs, wr->nruns, r);
			next[nsources] = tlbf_cursor_next;
			sources[nsources] = &cursors[nsources];
			nsources++;
		}
	}

	tf_create(&ordered, HOUR, 0.01, 1000);
	tf_create(&merged, HOUR, 0.01, 1000);
	for (int i = 0; i < NROWS; i++)
		assert_int_equal(tlbf_insert(&ordered.f, &ordered.memory, rows[i].hash, rows[i].at), TLBF_OK);
	tlbf_row_merge_start(&merge, nsources);
	while (tlbf_row_merge_fill(&merge, &row, 1) == 1)
		assert_int_equal(tlbf_insert(&merged.f, &merged.memory, row.hash, row.at), TLBF_OK);
	assert_int_equal(tlbf_size(merged.f), tlbf_size(ordered.f));
	assert_memory_equal((char *) merged.f + 4, (char *) ordered.f + 4, tlbf_size(ordered.f) - 4);

	/*
	 * The same merge a batch at a time, as the final aggregate adds it: the
	 * last rows of a batch only prefetched, and added with the next batch.
	 */
	nsources = 0;
	for (int w = 0; w < NWORKERS; w++)
		for (int r = 0; r < writers[w].nruns; r++, nsources++)
			tlbf_cursor_open_run(&cursors[nsources], writers[w].bytes, writers[w].len,
								 writers[w].nrows, writers[w].runs, writers[w].nruns, r);
	tf_create(&batched, HOUR, 0.01, 1000);
	tlbf_row_merge_start(&merge, nsources);
	{
		TlbfRow		batch_rows[BATCH];
		TlbfMergedBatch batch = {&merge, batch_rows, BATCH, 0, false};

		while (!batch.done)
			assert_int_equal(tlbf_insert_merged_batch(&batched.f, &batched.memory, &batch),
							 TLBF_OK);
		assert_int_equal(batched.f->inserted, NROWS);
	}
	for (int i = 0; i < nsources; i++)
		assert_false(cursors[i].failed);
	assert_int_equal(tlbf_size(batched.f), tlbf_size(ordered.f));
	assert_memory_equal((char *) batched.f + 4, (char *) ordered.f + 4, tlbf_size(ordered.f) - 4);

	tf_free(&ordered);
	tf_free(&merged);
	tf_free(&batched);
	for (int w = 0; w < NWORKERS; w++)
		free(writers[w].bytes);
	free(rows);
	free(keys);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_round_trip),
		cmocka_unit_test(test_rows_are_compact),
		cmocka_unit_test(test_rows_byte_keys),
		cmocka_unit_test(test_rows_bad_bytes_refused),
		cmocka_unit_test(test_rows_runs_noted_and_read),
		cmocka_unit_test(test_rows_take_checks_the_state),
		cmocka_unit_test(test_rows_random_bytes),
		cmocka_unit_test(test_merge_orders_ties_by_source),
		cmocka_unit_test(test_merged_filter_is_the_ordered_filter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
