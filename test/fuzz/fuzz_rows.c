/*
 * fuzz_rows.c
 *	  The input is the rows of a partial tlbf_agg state as the final
 *	  aggregate receives them from a parallel worker (rows.c): a byte for
 *	  their kind (hashes, integer keys, byte keys), eight for their count, a
 *	  byte for the number of runs the sender says they come in and, for each
 *	  run after the first, where it starts (as steps in bytes and rows from
 *	  the run before) and what its first row is encoded against, then the
 *	  encoded rows.  Runs the glue refuses are skipped.  Runs it takes are
 *	  merged by time (every run a source): unless a cursor says the rows did
 *	  not match their runs, the merge must give every row, in ascending
 *	  time.  The same merge is then added to a filter a batch at a time, as
 *	  the final function does: every batch must leave a valid filter.
 */
#include "fuzz_common.h"
#include "heap_memory.h"
#include "tlbf_rows.h"

#define MAX_RUNS 16				/* TLBF_MAX_SENT_RUNS */
#define BATCH 64

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	FuzzInput	in = {data, len, 0};
	TlbfRowKind kind = (TlbfRowKind) (fuzz_take(&in, 1) % 3);
	uint64_t	nrows = fuzz_take(&in, 8) % 100000;
	int			nruns = (int) (fuzz_take(&in, 1) % (MAX_RUNS + 1));
	TlbfRun		runs[MAX_RUNS];
	const uint8_t *rows;
	size_t		rows_len;
	uint8_t    *copy;
	TlbfRowCursor cursors[MAX_RUNS];
	TlbfRowNext next[MAX_RUNS];
	void	   *sources[MAX_RUNS];
	TlbfRow		heads[MAX_RUNS];
	int			heap[MAX_RUNS];
	TlbfRowMerge merge = {0, 0, next, sources, heads, heap};
	TlbfParams	params = {INT64_C(3600000000), 0.01, 1000, 0, 0, 0};
	TlbfProblem problem;
	TlbfMemory	memory;
	Tlbf	   *f;
	TlbfRow		batch[BATCH];
	size_t		n;
	bool		out_of_order = false;
	bool		failed = false;
	TlbfTime	last = TLBF_NEVER;
	uint64_t	merged = 0;

	for (int r = 0; r < nruns; r++)
	{
		tlbf_row_coding_init(&runs[r].start, kind, 0);
		runs[r].offset = r == 0 ? 0 : runs[r - 1].offset + fuzz_take(&in, 2);
		runs[r].first_row = r == 0 ? 0 : runs[r - 1].first_row + fuzz_take(&in, 1);
		if (r > 0)
		{
			runs[r].start.prev_at = (TlbfTime) fuzz_take(&in, 8);
			runs[r].start.prev_item = (int64_t) fuzz_take(&in, 8);
		}
	}
	rows = data + (in.pos < len ? in.pos : len);
	rows_len = len - (size_t) (rows - data);
	if (!tlbf_runs_check(runs, nruns, rows_len, nrows))
		return 0;

	/* an exact-size copy, so that a read past the rows is reported */
	copy = fuzz_malloc(rows_len);
	if (rows_len > 0)
		memcpy(copy, rows, rows_len);
	for (int r = 0; r < nruns; r++)
	{
		tlbf_cursor_open_run(&cursors[r], copy, rows_len, nrows, runs, nruns, r);
		next[r] = tlbf_cursor_next;
		sources[r] = &cursors[r];
	}

	/* the merge alone: every row of runs that match, in time order */
	tlbf_row_merge_start(&merge, nruns);
	while ((n = tlbf_row_merge_fill(&merge, batch, BATCH)) > 0)
		for (size_t i = 0; i < n; i++)
		{
			out_of_order |= batch[i].at < last;
			last = batch[i].at;
			merged++;
		}
	for (int r = 0; r < nruns; r++)
		failed |= cursors[r].failed;
	if (!failed)
	{
		FUZZ_CHECK(merged == nrows, "the merge gives every row of runs that match");
		FUZZ_CHECK(!out_of_order, "the merge gives rows that match in time order");
	}

	/* the same merge added to a filter a batch at a time, as the glue does */
	for (int r = 0; r < nruns; r++)
		tlbf_cursor_open_run(&cursors[r], copy, rows_len, nrows, runs, nruns, r);
	FUZZ_CHECK(tlbf_check_params(&params, &problem), "the aggregate's parameters");
	f = heap_filter(&params, &memory);
	tlbf_row_merge_start(&merge, nruns);
	{
		TlbfMergedBatch merged_batch = {&merge, batch, BATCH, 0, false};

		while (!merged_batch.done)
		{
			FUZZ_CHECK(tlbf_insert_merged_batch(&f, &memory, &merged_batch) == TLBF_OK,
					   "an insertion into a filter without a size cap");
			fuzz_check_valid(f, "a filter built from merged rows");
		}
	}
	FUZZ_CHECK(failed || f->inserted == nrows, "the filter holds every row of runs that match");
	free(f);
	free(copy);
	return 0;
}
