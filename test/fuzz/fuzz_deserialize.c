/*
 * fuzz_deserialize.c
 *	  The input is an aggregate state as tlbf_agg_deserialize receives it
 *	  from a parallel worker (or a Citus worker): a value's payload, copied
 *	  and validated.  The combine and final functions then merge it with the
 *	  other partial states, which share its span, seed and parameters: with
 *	  itself, and with small filters written just before and just after its
 *	  newest insertion, in every order, as tlbf_merge_values does
 *	  (fuzz_merge.h checks the unions).  tlbf_union_agg's states may hold
 *	  filters of other error rates, hence other k: it is also merged with
 *	  filters of one hash function and of the most.
 */
#include "fuzz_common.h"
#include "fuzz_merge.h"

static void
combine(const Tlbf *const *inputs, int n, size_t cap)
{
	size_t		size;
	bool		may_lose;

	for (int i = 1; i < n; i++)
		FUZZ_CHECK(tlbf_merge_mismatch(inputs[0], inputs[i]) == NULL,
				   "partial states of one aggregate merge");
	free(fuzz_merge_values(inputs, n, cap, &size, &may_lose));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	size_t		size;
	Tlbf	   *x = fuzz_decode(data, len, &size);
	TlbfTime	base;
	Tlbf	   *older;
	Tlbf	   *newer;
	Tlbf	   *fewer;
	Tlbf	   *more;

	if (x == NULL)
		return 0;
	base = fuzz_base_time(x);
	older = fuzz_small_filter(x, x->k, fuzz_add_time(base, -x->span / 3));
	newer = fuzz_small_filter(x, x->k, fuzz_add_time(base, 1));
	fewer = fuzz_small_filter(x, 1, fuzz_add_time(base, -1));
	more = fuzz_small_filter(x, TLBF_MAX_K, fuzz_add_time(base, 1));

	combine((const Tlbf *[]) {x, x}, 2, GLUE_MAX_FILTER_BYTES);
	combine((const Tlbf *[]) {x, x}, 2, size);	/* a cap the union passes */
	combine((const Tlbf *[]) {x, older}, 2, GLUE_MAX_FILTER_BYTES);
	combine((const Tlbf *[]) {older, x}, 2, GLUE_MAX_FILTER_BYTES);
	combine((const Tlbf *[]) {x, newer}, 2, GLUE_MAX_FILTER_BYTES);
	combine((const Tlbf *[]) {newer, x}, 2, GLUE_MAX_FILTER_BYTES);
	combine((const Tlbf *[]) {older, x, newer}, 3, GLUE_MAX_FILTER_BYTES);
	combine((const Tlbf *[]) {x, fewer}, 2, GLUE_MAX_FILTER_BYTES);
	combine((const Tlbf *[]) {fewer, x}, 2, GLUE_MAX_FILTER_BYTES);
	combine((const Tlbf *[]) {more, x, fewer}, 3, GLUE_MAX_FILTER_BYTES);

	free(more);
	free(fewer);
	free(newer);
	free(older);
	free(x);
	return 0;
}
