/*
 * fuzz_rows.c
 *	  The input is the rows of a partial tlbf_agg state as the final
 *	  aggregate receives them from a parallel worker (rows.c): a byte for
 *	  their kind (hashes, integer keys, byte keys), eight for their count, then the
 *	  encoded rows.  They are split into ascending runs as the glue does,
 *	  and a stream it refuses is skipped.  A stream it takes is merged by
 *	  time (every run a source) and added to a filter, as the final function
 *	  does: the merge must give every row, in ascending time, and every
 *	  insertion must leave a valid filter.
 */
#include "fuzz_common.h"
#include "heap_memory.h"
#include "tlbf_rows.h"

#define MAX_RUNS 16				/* TLBF_MAX_SENT_RUNS */

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	FuzzInput	in = {data, len, 0};
	TlbfRowKind kind = (TlbfRowKind) (fuzz_take(&in, 1) % 3);
	uint64_t	nrows = fuzz_take(&in, 8) % 100000;
	const uint8_t *rows = data + (in.pos < len ? in.pos : len);
	size_t		rows_len = len - (size_t) (rows - data);
	uint8_t    *copy = fuzz_malloc(rows_len);
	TlbfRowCoding start;
	TlbfRun		runs[MAX_RUNS];
	TlbfRowCursor cursors[MAX_RUNS];
	TlbfRowNext next[MAX_RUNS];
	void	   *sources[MAX_RUNS];
	TlbfRow		heads[MAX_RUNS];
	int			heap[MAX_RUNS];
	TlbfRowMerge merge = {0, 0, next, sources, heads, heap};
	int			nruns;
	TlbfParams	params = {INT64_C(3600000000), 0.01, 1000, 0, 0, 0};
	TlbfProblem problem;
	TlbfMemory	memory;
	Tlbf	   *f;
	TlbfRow		row;
	TlbfTime	last = TLBF_NEVER;
	uint64_t	merged = 0;

	/* an exact-size copy, so that a read past the rows is reported */
	if (rows_len > 0)
		memcpy(copy, rows, rows_len);
	tlbf_row_coding_init(&start, kind, 0);
	if (!tlbf_rows_split(copy, rows_len, nrows, &start, runs, MAX_RUNS, &nruns))
	{
		free(copy);
		return 0;
	}
	for (int r = 0; r < nruns; r++)
	{
		tlbf_cursor_open(&cursors[r], copy, rows_len, &runs[r]);
		next[r] = tlbf_cursor_next;
		sources[r] = &cursors[r];
	}

	FUZZ_CHECK(tlbf_check_params(&params, &problem), "the aggregate's parameters");
	f = heap_filter(&params, &memory);
	tlbf_row_merge_start(&merge, nruns);
	while (tlbf_row_merge_next(&merge, &row))
	{
		FUZZ_CHECK(row.at >= last, "the merge gives rows in time order");
		last = row.at;
		merged++;
		FUZZ_CHECK(tlbf_insert(&f, &memory, row.hash, row.at) == TLBF_OK,
				   "an insertion into a filter without a size cap");
		if (merged % 1024 == 0)
			fuzz_check_valid(f, "a filter built from merged rows");
	}
	FUZZ_CHECK(merged == nrows, "the merge gives every row");
	fuzz_check_valid(f, "a filter built from merged rows");
	free(f);
	free(copy);
	return 0;
}
