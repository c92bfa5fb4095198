/*
 * test_rows.c
 *	  Rows kept for tlbf_agg (rows.c): encoding, checking bytes that come
 *	  from outside, splitting a stream into ascending runs, and merging runs
 *	  so that a filter built from the merge is the filter built in time
 *	  order.
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
test_rows_split_into_runs(void **unused)
{
	/* three runs: 1 2 2 3 | 0 5 | 4; equal times stay in a run */
	TlbfTime	times[] = {1, 2, 2, 3, 0, 5, 4};
	TlbfRow		rows[7];
	uint8_t		bytes[7 * TLBF_ROW_MAX_BYTES];
	size_t		len;
	TlbfRun		runs[MAX_RUNS];
	int			nruns = 0;

	for (int i = 0; i < 7; i++)
		rows[i] = row_at(times[i], (uint64_t) i);
	len = encode_all(bytes, rows, 7);
	TlbfRowCoding start = coding_of(TLBF_ROWS_HASHES);

	assert_true(tlbf_rows_split(bytes, len, 7, &start, runs, MAX_RUNS, &nruns));
	assert_int_equal(nruns, 3);
	assert_int_equal(runs[0].rows, 4);
	assert_int_equal(runs[1].rows, 2);
	assert_int_equal(runs[2].rows, 1);

	/* the count and the length must match the bytes exactly */
	assert_false(tlbf_rows_split(bytes, len, 6, &start, runs, MAX_RUNS, &nruns));
	assert_false(tlbf_rows_split(bytes, len, 8, &start, runs, MAX_RUNS, &nruns));
	assert_false(tlbf_rows_split(bytes, len - 1, 7, &start, runs, MAX_RUNS, &nruns));
	/* more runs than allowed */
	assert_false(tlbf_rows_split(bytes, len, 7, &start, runs, 2, &nruns));
	/* no rows: no runs */
	assert_true(tlbf_rows_split(bytes, 0, 0, &start, runs, MAX_RUNS, &nruns));
	assert_int_equal(nruns, 0);
}

/* Random bytes never read past the end (run under the sanitizers too). */
static void
test_rows_random_bytes(void **unused)
{
	uint64_t	rng = 42;
	uint8_t    *bytes = malloc(4096);
	TlbfRun		runs[MAX_RUNS];
	int			nruns;

	assert_non_null(bytes);
	for (int round = 0; round < 20000; round++)
	{
		size_t		len = (size_t) (rng_next(&rng) % 4096);
		uint8_t    *copy;

		for (size_t i = 0; i < len; i++)
			bytes[i] = (uint8_t) rng_next(&rng);
		/* often a plausible first byte, so that decoding goes further */
		if (len > 0 && round % 2 == 0)
			bytes[0] &= 0x7f;
		copy = malloc(len + 1);
		assert_non_null(copy);
		memcpy(copy, bytes, len);
		{
			TlbfRowCoding start = coding_of((TlbfRowKind) (round % 3));

			(void) tlbf_rows_split(copy, len, rng_next(&rng) % 300, &start, runs, MAX_RUNS, &nruns);
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
		assert_true(tlbf_row_merge_next(&merge, &row));
		assert_int_equal(row.at, expected[i]->at);
		assert_memory_equal(&row.hash, &expected[i]->hash, sizeof(TlbfHash));
	}
	assert_false(tlbf_row_merge_next(&merge, &row));
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
		NROWS = 200000, NWORKERS = 3
	};
	TlbfRow    *rows = malloc(NROWS * sizeof(TlbfRow));
	uint8_t    *streams[NWORKERS];
	size_t		lens[NWORKERS] = {0};
	uint64_t	counts[NWORKERS] = {0};
	TlbfRowCoding codings[NWORKERS];
	int64_t    *keys = malloc(NROWS * sizeof(int64_t));
	TlbfRun		runs[NWORKERS][MAX_RUNS];
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
		tlbf_row_coding_init(&codings[w], w == 0 ? TLBF_ROWS_HASHES : TLBF_ROWS_INT64, 0);
		streams[w] = malloc(NROWS * TLBF_ROW_MAX_BYTES);
		assert_non_null(streams[w]);
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

				lens[w] += tlbf_row_encode(streams[w] + lens[w], &codings[w], &rows[i], &key);
				counts[w]++;
			}
			start += len;
		}
	}
	for (int w = 0; w < NWORKERS; w++)
	{
		int			nruns;

		TlbfRowCoding start;

		tlbf_row_coding_init(&start, codings[w].kind, 0);
		assert_true(tlbf_rows_split(streams[w], lens[w], counts[w], &start, runs[w], MAX_RUNS, &nruns));
		assert_true(nruns <= 2);
		for (int r = 0; r < nruns; r++)
		{
			tlbf_cursor_open(&cursors[nsources], streams[w], lens[w], &runs[w][r]);
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
	while (tlbf_row_merge_next(&merge, &row))
		assert_int_equal(tlbf_insert(&merged.f, &merged.memory, row.hash, row.at), TLBF_OK);
	assert_int_equal(tlbf_size(merged.f), tlbf_size(ordered.f));
	assert_memory_equal((char *) merged.f + 4, (char *) ordered.f + 4, tlbf_size(ordered.f) - 4);

	tf_free(&ordered);
	tf_free(&merged);
	for (int w = 0; w < NWORKERS; w++)
		free(streams[w]);
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
		cmocka_unit_test(test_rows_split_into_runs),
		cmocka_unit_test(test_rows_random_bytes),
		cmocka_unit_test(test_merge_orders_ties_by_source),
		cmocka_unit_test(test_merged_filter_is_the_ordered_filter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
