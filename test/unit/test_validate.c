/*
 * test_validate.c
 *	  tlbf_validate() accepts what the core produces and rejects every
 *	  malformed field, short or long buffer; buffers it accepts are safe to
 *	  query, insert into, retire and merge.
 */
#include <math.h>

#include "harness.h"

#define START	INT64_C(757382400000000)
#define SPAN	(60 * SECOND)

static Tlbf *
sample_filter(size_t *size)
{
	TestFilter	t;
	Tlbf	   *copy;

	tf_create(&t, SPAN, 0.01, 500);
	for (int i = 0; i < 20000; i++)
		tf_add(&t, (uint64_t) i, START + i * 5000);
	*size = tlbf_size(t.f);
	copy = malloc(*size);
	memcpy(copy, t.f, *size);
	tf_free(&t);
	return copy;
}

static bool
valid(const void *buffer, size_t len)
{
	TlbfProblem problem;

	return tlbf_validate(buffer, len, &problem);
}

static void
test_accepts_core_output(void **state)
{
	size_t		size;
	Tlbf	   *f = sample_filter(&size);
	TestFilter	empty;

	assert_true(valid(f, size));
	tf_create(&empty, SPAN, 0.01, 500);
	assert_true(valid(empty.f, sizeof(Tlbf)));
	tf_free(&empty);
	free(f);
}

static void
test_rejects_wrong_lengths(void **state)
{
	size_t		size;
	Tlbf	   *f = sample_filter(&size);
	char	   *longer = calloc(1, size + 8);

	for (size_t len = 0; len < size; len++)
		assert_false(valid(f, len));
	memcpy(longer, f, size);
	assert_false(valid(longer, size + 8));
	free(longer);
	free(f);
}

/* One field changed from a valid filter must make it invalid. */
#define EXPECT_REJECTED(change) \
	do { \
		memcpy(f, original, size); \
		change; \
		assert_false(valid(f, size)); \
	} while (0)

static void
test_rejects_bad_fields(void **state)
{
	size_t		size;
	Tlbf	   *original = sample_filter(&size);
	Tlbf	   *f = malloc(size);
	TlbfSlice  *s = tlbf_slices(f);

	EXPECT_REJECTED(f->magic ^= 1);
	EXPECT_REJECTED(f->version = 2);
	EXPECT_REJECTED(f->version = 0);
	EXPECT_REJECTED(f->hash_scheme = 7);
	EXPECT_REJECTED(f->reserved0 = 1);
	EXPECT_REJECTED(f->reserved1 = 1);
	EXPECT_REJECTED(f->k = 0);
	EXPECT_REJECTED(f->k = TLBF_MAX_K + 1);
	EXPECT_REJECTED(f->l = 0);
	EXPECT_REJECTED(f->l = TLBF_MAX_L + 1);
	EXPECT_REJECTED(f->span = 0);
	EXPECT_REJECTED(f->span = -1);
	EXPECT_REJECTED(f->span = TLBF_MAX_SPAN + 1);
	EXPECT_REJECTED(f->error_rate = NAN);
	EXPECT_REJECTED(f->error_rate = INFINITY);
	EXPECT_REJECTED(f->error_rate = 0.0);
	EXPECT_REJECTED(f->error_rate = 0.75);
	EXPECT_REJECTED(f->capacity = 0);
	EXPECT_REJECTED(f->capacity = UINT64_MAX);
	EXPECT_REJECTED(f->target_gen = NAN);
	EXPECT_REJECTED(f->target_gen = 0.0);
	EXPECT_REJECTED(f->target_gen = 1e300);
	EXPECT_REJECTED(f->nslices += 1);
	EXPECT_REJECTED(f->nslices -= 1);
	EXPECT_REJECTED(f->nslices = UINT32_MAX);
	EXPECT_REJECTED(f->nslices = f->k - 1);
	EXPECT_REJECTED(f->newest = TLBF_TIME_END);
	EXPECT_REJECTED(f->newest = INT64_MAX);
	EXPECT_REJECTED(f->newest = TLBF_NEVER);
	EXPECT_REJECTED(f->gen_started = f->newest + 1);
	EXPECT_REJECTED(f->gen_left = f->gen_size + 1);
	EXPECT_REJECTED((f->gen_size = 0, f->gen_left = 0));
	EXPECT_REJECTED(f->gen_size = UINT64_MAX);
	EXPECT_REJECTED(s[0].offset = 1);
	EXPECT_REJECTED(s[3].offset += 1);
	EXPECT_REJECTED(s[0].nwords = 0);
	EXPECT_REJECTED(s[0].nwords = 1);
	EXPECT_REJECTED(s[2].nwords += 1);
	EXPECT_REJECTED(s[2].nwords = UINT32_MAX);
	EXPECT_REJECTED(s[1].hash_index = TLBF_MAX_K);
	EXPECT_REJECTED(s[1].load_weight = 0);
	EXPECT_REJECTED(s[1].load_weight = UINT32_MAX);
	EXPECT_REJECTED(s[4].bits_set = (uint64_t) s[4].nwords * 64 + 1);
	EXPECT_REJECTED(s[f->nslices - 1].updated_at = f->newest + 1);
	EXPECT_REJECTED(s[f->nslices - 1].updated_at = INT64_MAX);
	EXPECT_REJECTED(s[0].updated_at = f->newest - 1);
	free(f);
	free(original);
}

/*
 * Random damage to the header and directory, 200,000 times: whatever is
 * accepted must be safe to use (under the sanitizer build this also proves
 * that nothing reads out of bounds).
 */
static void
test_random_damage(void **state)
{
	size_t		size;
	Tlbf	   *original = sample_filter(&size);
	size_t		directory_end = sizeof(Tlbf) + original->nslices * sizeof(TlbfSlice);
	uint64_t	rng = 1234;
	long		accepted = 0;

	for (int trial = 0; trial < 200000; trial++)
	{
		Tlbf	   *f = malloc(size);
		TlbfMemory	memory = {heap_resize, NULL, size, 1 << 20};
		int			flips = 1 + (int) (rng_next(&rng) % 4);

		memcpy(f, original, size);
		for (int i = 0; i < flips; i++)
			((unsigned char *) f)[4 + rng_next(&rng) % (directory_end - 4)] ^=
				(unsigned char) (1u << (rng_next(&rng) % 8));
		if (valid(f, size))
		{
			Tlbf	   *copy = malloc(size);

			accepted++;
			memcpy(copy, f, size);
			(void) tlbf_query(f, key_hash(7), f->newest == TLBF_NEVER ? START : f->newest, f->span);
			(void) tlbf_insert(&f, &memory, key_hash(8), START + 200 * SECOND);
			assert_true(valid(f, tlbf_size(f)));
			tlbf_drop_expired(copy, START + 300 * SECOND);
			assert_true(valid(copy, tlbf_size(copy)));
			free(copy);
		}
		free(f);
	}
	print_message("%ld of 200000 damaged filters were still valid (and safe)\n", accepted);
	free(original);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts_core_output),
		cmocka_unit_test(test_rejects_wrong_lengths),
		cmocka_unit_test(test_rejects_bad_fields),
		cmocka_unit_test(test_random_damage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
