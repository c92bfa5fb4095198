/*
 * fuzz_deserialize.c
 *	  The input is an aggregate state as tlbf_agg_deserialize receives it
 *	  from a parallel worker (or a Citus worker): a value's payload, copied
 *	  and validated.  The combine and final functions then merge it with the
 *	  other partial states, which share its span, seed and parameters: with
 *	  itself, and with small filters written just before and just after its
 *	  newest insertion, in every order, as tlbf_merge_values does
 *	  (fuzz_merge.h checks the unions).
 */
#include "fuzz_common.h"
#include "fuzz_memory.h"
#include "fuzz_merge.h"

#define GLUE_MAX_FILTER_BYTES	(64 * 1024 * 1024)	/* tlbf.max_filter_bytes */

/* Another worker's state: a few probe keys added at 'at'. */
static Tlbf *
partial_state(const Tlbf *like, TlbfTime at)
{
	TlbfParams	params = {like->span, like->error_rate, 16, like->k, like->l, like->seed};
	TlbfProblem problem;
	FuzzMemory	memory;
	Tlbf	   *f;

	FUZZ_CHECK(tlbf_check_params(&params, &problem),
			   "a valid value's parameters make a filter");
	f = fuzz_malloc(sizeof(Tlbf));
	tlbf_init(f, &params);
	fuzz_memory_init(&memory, sizeof(Tlbf), GLUE_MAX_FILTER_BYTES, false, 0);
	for (uint64_t key = 0; key < 4; key++)
		FUZZ_CHECK(fuzz_insert(&f, &memory, fuzz_key_hash(key, like->seed), at) == TLBF_OK,
				   "a small filter takes a few keys");
	return f;
}

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

	if (x == NULL)
		return 0;
	base = fuzz_base_time(x);
	older = partial_state(x, fuzz_add_time(base, -x->span / 3));
	newer = partial_state(x, fuzz_add_time(base, 1));

	combine((const Tlbf *[]) {x, x}, 2, GLUE_MAX_FILTER_BYTES);
	combine((const Tlbf *[]) {x, x}, 2, size);	/* a cap the union passes */
	combine((const Tlbf *[]) {x, older}, 2, GLUE_MAX_FILTER_BYTES);
	combine((const Tlbf *[]) {older, x}, 2, GLUE_MAX_FILTER_BYTES);
	combine((const Tlbf *[]) {x, newer}, 2, GLUE_MAX_FILTER_BYTES);
	combine((const Tlbf *[]) {newer, x}, 2, GLUE_MAX_FILTER_BYTES);
	combine((const Tlbf *[]) {older, x, newer}, 3, GLUE_MAX_FILTER_BYTES);

	free(newer);
	free(older);
	free(x);
	return 0;
}
