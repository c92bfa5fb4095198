/*
 * test_fuzz_findings.c
 *	  The core bugs the fuzzers found (test/fuzz/README.md, letters A to G)
 *	  and those found since (H), each as the smallest case that showed it.
 *	  The rule they all broke: tlbf_validate() accepts every buffer the core
 *	  writes from valid input.
 */
#include "harness.h"

#define START	INT64_C(757382400000000)

static bool
valid(const Tlbf *f)
{
	TlbfProblem problem;

	return tlbf_validate(f, tlbf_size(f), &problem);
}

/* A copy of a filter on the heap, which the test may damage. */
static Tlbf *
copy_of(const Tlbf *f)
{
	Tlbf	   *copy = malloc(tlbf_size(f));

	memcpy(copy, f, tlbf_size(f));
	return copy;
}

/* The union of two filters, checked to be a valid value. */
static Tlbf *
union_of(const Tlbf *a, const Tlbf *b)
{
	const Tlbf *inputs[2] = {a, b};
	Tlbf	   *out = malloc(tlbf_merge_bytes(inputs, 2));

	tlbf_merge(out, inputs, 2);
	assert_true(valid(out));
	return out;
}

/*
 * A: gen_size is in keys times k times 2^16; validation bounded it without
 * the 2^16, so filters with slices above ~1 MB were refused once written.
 */
static void
test_large_slices_validate(void **state)
{
	TestFilter	t;

	tf_create(&t, HOUR, 0.01, 16000000);
	tf_add(&t, 1, START);
	/* past the old bound */
	assert_true(t.f->gen_size > (uint64_t) TLBF_MAX_K * TLBF_MAX_SLICE_WORDS * 64);
	assert_true(valid(t.f));
	assert_true(tf_has(&t, 1, START));
	tf_free(&t);
}

/*
 * B: a value with slices and no generation start passed validation, and
 * its next shift computed now - INT64_MIN.  Valid times more than 2^63
 * microseconds apart must not overflow the generation clock either.
 */
static void
test_generation_start(void **state)
{
	TestFilter	t;
	TlbfProblem problem;
	TlbfMemory	memory;
	Tlbf	   *f;
	TlbfSlice  *s;

	tf_create_kl(&t, HOUR, 0.01, 10, 2, 2);
	tf_add(&t, 1, START);
	f = copy_of(t.f);
	f->gen_started = TLBF_NEVER;
	assert_false(tlbf_validate(f, tlbf_size(f), &problem));

	/* a generation from the first valid time to the last, ending now */
	f->gen_started = TLBF_TIME_MIN;
	f->newest = TLBF_TIME_END - 2 * SECOND;
	s = tlbf_slices(f);
	for (uint32_t i = 0; i < f->nslices; i++)
		s[i].updated_at = f->newest;
	f->gen_left = 0;
	assert_true(valid(f));
	memory = t.memory;
	memory.allocated = tlbf_size(f);
	assert_int_equal(tlbf_insert(&f, &memory, key_hash(2), TLBF_TIME_END - SECOND),
					 TLBF_OK);
	assert_true(f->nslices > t.f->nslices);	/* it shifted */
	assert_true(valid(f));
	assert_true(tlbf_query(f, key_hash(2), TLBF_TIME_END - SECOND, HOUR));
	free(f);
	tf_free(&t);
}

/*
 * C: the union took its header from the input with the newest insertion,
 * even with all its slices retired; its newest time then disagreed with the
 * slices in front.  The union must hold the older input's keys.
 */
static void
test_union_with_retired_filter(void **state)
{
	TestFilter	retired;
	TestFilter	older;
	Tlbf	   *u;

	tf_create(&retired, HOUR, 0.01, 100);
	tf_add(&retired, 1, START + HOUR);
	tlbf_drop_expired(retired.f, START + 3 * HOUR);
	assert_int_equal(retired.f->nslices, 0);

	tf_create(&older, HOUR, 0.01, 100);
	tf_add(&older, 2, START);

	u = union_of(retired.f, older.f);
	assert_true(tlbf_query(u, key_hash(2), START + HOUR, HOUR));
	free(u);
	u = union_of(older.f, retired.f);
	assert_true(tlbf_query(u, key_hash(2), START + HOUR, HOUR));
	free(u);
	tf_free(&retired);
	tf_free(&older);
}

/* D: the insertion count wrapped, in an insertion and in a union's sum. */
static void
test_insertion_count_saturates(void **state)
{
	TestFilter	t;
	TlbfMemory	memory;
	Tlbf	   *f;
	Tlbf	   *u;

	tf_create(&t, HOUR, 0.01, 100);
	tf_add(&t, 1, START);
	f = copy_of(t.f);
	f->inserted = UINT64_MAX;
	memory = t.memory;
	memory.allocated = tlbf_size(f);
	assert_int_equal(tlbf_insert(&f, &memory, key_hash(2), START), TLBF_OK);
	assert_true(f->inserted == UINT64_MAX);
	assert_true(valid(f));

	u = union_of(f, t.f);
	assert_true(u->inserted == UINT64_MAX);
	free(u);
	free(f);
	tf_free(&t);
}

/*
 * F: a union may hold more slices than the format allows; the oldest go,
 * counted as truncated, and the newest input's keys stay.
 */
static void
test_union_slice_limit(void **state)
{
	TestFilter	t;
	Tlbf	   *u;
	uint32_t	per_filter;

	tf_create(&t, HOUR, 0.01, 10);
	tf_add(&t, 1, START);
	per_filter = t.f->nslices;
	u = copy_of(t.f);
	while ((uint64_t) u->nslices + per_filter <= TLBF_MAX_SLICES)
	{
		Tlbf	   *next = union_of(u, t.f);

		free(u);
		u = next;
	}
	tf_add(&t, 2, START + SECOND);
	{
		Tlbf	   *next = union_of(u, t.f);

		free(u);
		u = next;
	}
	assert_true(u->nslices <= TLBF_MAX_SLICES);
	assert_true(u->truncated > 0);
	assert_true(tlbf_query(u, key_hash(1), START + SECOND, HOUR));
	assert_true(tlbf_query(u, key_hash(2), START + SECOND, HOUR));
	free(u);
	tf_free(&t);
}

/*
 * G: validation bounds a slice's bits_set but does not recount it; a value
 * claiming every bit set while some are clear must not be pushed past the
 * slice's size by an insertion.
 */
static void
test_bits_set_claim(void **state)
{
	TestFilter	t;
	TlbfMemory	memory;
	Tlbf	   *f;
	TlbfSlice  *s;

	tf_create(&t, HOUR, 0.01, 100);
	tf_add(&t, 1, START);
	f = copy_of(t.f);
	s = tlbf_slices(f);
	for (uint32_t i = 0; i < f->nslices; i++)
		s[i].bits_set = (uint64_t) s[i].nwords * 64;
	f->inserted = UINT64_MAX;
	assert_true(valid(f));
	memory = t.memory;
	memory.allocated = tlbf_size(f);
	for (uint64_t key = 2; key < 100; key++)
		assert_int_equal(tlbf_insert(&f, &memory, key_hash(key), START), TLBF_OK);
	assert_true(valid(f));
	for (uint64_t key = 1; key < 100; key++)
		assert_true(tlbf_query(f, key_hash(key), START, HOUR));
	free(f);
	tf_free(&t);
}

/*
 * H: the union scales the front filter's generation counters to a smaller
 * k.  Validation accepts any gen_size from 1 when there are slices; a
 * gen_size below the front's k was rounded down to 0, which validation
 * refuses ("Slices without insertions"): the union's output could not be
 * read back.
 */
static void
test_union_smallest_generation(void **state)
{
	TestFilter	front;
	TestFilter	fewer;
	TlbfMemory	memory;
	Tlbf	   *f;
	Tlbf	   *u;

	tf_create_kl(&front, HOUR, 0.01, 100, 3, 4);
	tf_add(&front, 1, START + SECOND);
	tf_create_kl(&fewer, HOUR, 0.01, 100, 1, 4);
	tf_add(&fewer, 2, START);

	/* the smallest generation counters a value may have */
	f = copy_of(front.f);
	f->gen_size = 1;
	f->gen_left = 0;
	assert_true(valid(f));

	u = union_of(f, fewer.f);
	assert_int_equal(u->k, 1);
	assert_true(u->gen_size >= 1 && u->gen_left <= u->gen_size);
	assert_true(tlbf_query(u, key_hash(1), START + SECOND, HOUR));
	assert_true(tlbf_query(u, key_hash(2), START + SECOND, HOUR));

	/* and it takes new keys: the used-up generation shifts */
	memory = front.memory;
	memory.allocated = tlbf_size(u);
	assert_int_equal(tlbf_insert(&u, &memory, key_hash(3), START + 2 * SECOND), TLBF_OK);
	assert_true(valid(u));
	for (uint64_t key = 1; key <= 3; key++)
		assert_true(tlbf_query(u, key_hash(key), START + 2 * SECOND, HOUR));
	free(u);

	/* every gen_size below the front's k, and gen_left up to it */
	for (uint64_t size = 1; size <= 3; size++)
		for (uint64_t left = 0; left <= size; left++)
		{
			f->gen_size = size;
			f->gen_left = left;
			assert_true(valid(f));
			free(union_of(f, fewer.f));
			free(union_of(fewer.f, f));
		}
	free(f);
	tf_free(&front);
	tf_free(&fewer);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_large_slices_validate),
		cmocka_unit_test(test_generation_start),
		cmocka_unit_test(test_union_with_retired_filter),
		cmocka_unit_test(test_insertion_count_saturates),
		cmocka_unit_test(test_union_slice_limit),
		cmocka_unit_test(test_bits_set_claim),
		cmocka_unit_test(test_union_smallest_generation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
