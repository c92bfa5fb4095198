/*
 * fuzz_rows.c
 *	  The input is a partial tlbf_agg state as the final aggregate receives
 *	  it from a parallel worker, after its length word (rows.c): a header,
 *	  the encoded rows (hashes, integer keys or byte keys), then the runs the
 *	  sender says they come in.  A state tlbf_rows_take refuses is skipped.
 *	  The runs of one it takes are merged by time (every run a source):
 *	  unless a cursor says the rows did not match their runs, the merge must
 *	  give every row, in ascending time.  The same merge is then added to a
 *	  filter a batch at a time, as the final function does: every batch must
 *	  leave a valid filter.
 */
#include "fuzz_common.h"
#include "heap_memory.h"
#include "tlbf_rows.h"

#define BATCH 64

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	uint8_t    *copy = fuzz_malloc(len);
	TlbfSentRows sent;
	TlbfRowCursor cursors[TLBF_MAX_SENT_RUNS];
	TlbfRowNext next[TLBF_MAX_SENT_RUNS];
	void	   *sources[TLBF_MAX_SENT_RUNS];
	TlbfRow		heads[TLBF_MAX_SENT_RUNS];
	int			heap[TLBF_MAX_SENT_RUNS];
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
	int			nruns;

	/* an exact-size copy, so that a read past the state is reported */
	if (len > 0)
		memcpy(copy, data, len);
	if (tlbf_rows_take(copy, len, 0, &sent) != NULL)
	{
		free(copy);
		return 0;
	}
	nruns = sent.nruns;
	for (int r = 0; r < nruns; r++)
	{
		tlbf_cursor_open_run(&cursors[r], sent.rows, sent.len, sent.nrows, sent.runs, nruns, r);
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
		FUZZ_CHECK(merged == sent.nrows, "the merge gives every row of runs that match");
		FUZZ_CHECK(!out_of_order, "the merge gives rows that match in time order");
	}

	/* the same merge added to a filter a batch at a time, as the glue does */
	for (int r = 0; r < nruns; r++)
		tlbf_cursor_open_run(&cursors[r], sent.rows, sent.len, sent.nrows, sent.runs, nruns, r);
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
	FUZZ_CHECK(failed || f->inserted == sent.nrows,
			   "the filter holds every row of runs that match");
	free(f);
	free(copy);
	return 0;
}
