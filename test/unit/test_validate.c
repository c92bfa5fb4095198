/*
 * test_validate.c
 *	  tlbf_validate() accepts what the core produces and rejects every
 *	  malformed field, short or long buffer; buffers it accepts are safe to
 *	  query, insert into, retire, truncate and merge, and whatever those
 *	  operations write from them is valid again.
 */
#include <math.h>

#include "edge_values.h"
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
	EXPECT_REJECTED(f->version = 3);
	EXPECT_REJECTED(f->version = 0);
	EXPECT_REJECTED(f->hash_scheme = 7);
	EXPECT_REJECTED(f->key_fields = 1);
	EXPECT_REJECTED(f->key_kinds = 1);
	EXPECT_REJECTED(f->key_fields = 1; f->key_kinds = TLBF_KEY_KIND_MAX + 1);
	EXPECT_REJECTED(f->key_fields = 1; f->key_kinds = 0x11);
	EXPECT_REJECTED(f->key_fields = 2; f->key_kinds = 0x01);
	EXPECT_REJECTED(f->key_fields = TLBF_MAX_KEY_FIELDS + 1; f->key_kinds = 0x11111111);
	EXPECT_REJECTED(f->version = TLBF_FORMAT_VERSION_1; f->key_fields = 1; f->key_kinds = 1);
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
	/* slices that took no insertion (a union would take another's seed for them) */
	EXPECT_REJECTED(f->inserted = 0; for (uint32_t i = 0; i < f->nslices; i++) s[i].bits_set = 0);
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
 * A small filter that merges with 'like' (same span and seed) but has k
 * hash functions, with a few keys added at 'at' (none if TLBF_NEVER).
 */
static Tlbf *
partner(const Tlbf *like, int k, TlbfTime at)
{
	TlbfParams	p = {like->span, 0.01, 100, k, 4, like->seed};
	TlbfProblem problem;
	TlbfMemory	memory;
	Tlbf	   *f;

	assert_true(tlbf_check_params(&p, &problem));
	f = heap_filter(&p, &memory);
	for (uint64_t key = 0; key < 3 && at != TLBF_NEVER; key++)
		assert_int_equal(tlbf_insert(&f, &memory, key_hash(ABSENT_BASE - key), at), TLBF_OK);
	return f;
}

/* The union of a and b, which must be a valid value. */
static Tlbf *
merge_checked(const Tlbf *a, const Tlbf *b)
{
	const Tlbf *inputs[2] = {a, b};
	Tlbf	   *out = malloc(tlbf_merge_bytes(inputs, 2));

	assert_null(tlbf_merge_mismatch(a, b));
	tlbf_merge(out, inputs, 2);
	assert_valid(out, "a union of valid filters");
	return out;
}

static Tlbf *
clone(const Tlbf *f)
{
	Tlbf	   *copy = malloc(tlbf_size(f));

	memcpy(copy, f, tlbf_size(f));
	return copy;
}

/* t + d, kept within the valid time range. */
static TlbfTime
moved(TlbfTime t, int64_t d)
{
	TlbfTime	sum;

	if (__builtin_add_overflow(t, d, &sum))
		return d > 0 ? TLBF_TIME_END - 1 : TLBF_TIME_MIN;
	return sum < TLBF_TIME_MIN ? TLBF_TIME_MIN : sum >= TLBF_TIME_END ? TLBF_TIME_END - 1 : sum;
}

/*
 * Insert a few keys at 'at' into a copy of f, in memory capped at
 * 'max_bytes', checking the result after each insertion.  A refusal
 * (the cap) is allowed; an invalid result is not.
 */
static void
insert_checked(const Tlbf *f, TlbfTime at, size_t max_bytes)
{
	Tlbf	   *copy = clone(f);
	TlbfMemory	memory = {heap_resize, NULL, tlbf_size(f), max_bytes, false};

	for (uint64_t key = 1; key <= 3; key++)
	{
		TlbfStatus	status = tlbf_insert(&copy, &memory, key_hash(key), at);

		assert_true(status == TLBF_OK || status == TLBF_OVER_LIMIT);
		assert_valid(copy, "a filter after tlbf_insert");
	}
	free(copy);
}

/*
 * Every operation that writes a value, on a valid value f: insert (at and
 * around its newest time, past the span, at the ends of the time range,
 * with room and under a cap it is already over), retire and truncate at
 * those times, and union with itself and with filters of fewer and more
 * hash functions written before and after it (or never), in both orders,
 * then insert into and truncate the union.  Every result must validate.
 */
static void
exercise_writers(const Tlbf *f)
{
	size_t		size = tlbf_size(f);
	size_t		room = 2 * size + 65536;
	TlbfTime	base = f->newest == TLBF_NEVER ? START : f->newest;
	TlbfTime	times[] = {base, moved(base, -1), moved(base, 1), moved(base, f->span),
		moved(base, f->span + 1), moved(base, -f->span - 1), TLBF_TIME_MIN, TLBF_TIME_END - 1};
	int			ks[] = {1, f->k > 1 ? f->k - 1 : 1, TLBF_MAX_K};
	TlbfTime	partner_times[] = {TLBF_NEVER, moved(base, -1), moved(base, 1)};

	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
	{
		Tlbf	   *copy;

		insert_checked(f, times[i], room);
		insert_checked(f, times[i], size / 2);

		copy = clone(f);
		tlbf_drop_expired(copy, times[i]);
		assert_valid(copy, "a filter after tlbf_drop_expired");
		free(copy);

		copy = clone(f);
		tlbf_truncate_to(copy, size / 2, times[i]);
		assert_valid(copy, "a filter after tlbf_truncate_to");
		tlbf_truncate_to(copy, 0, times[i]);
		assert_valid(copy, "a filter after tlbf_truncate_to");
		free(copy);
	}

	free(merge_checked(f, f));
	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
		for (size_t j = 0; j < sizeof(partner_times) / sizeof(partner_times[0]); j++)
		{
			Tlbf	   *other = partner(f, ks[i], partner_times[j]);
			Tlbf	   *u = merge_checked(f, other);

			insert_checked(u, u->newest == TLBF_NEVER ? base : u->newest, room);
			insert_checked(u, moved(base, f->span + 1), room);
			tlbf_truncate_to(u, tlbf_size(u) / 2, u->newest == TLBF_NEVER ? base : u->newest);
			assert_valid(u, "a union after tlbf_truncate_to");
			free(u);
			free(merge_checked(other, f));
			free(other);
		}
}

/* A filter of the given k and l after 'n' keys, 10 ms apart. */
static Tlbf *
base_filter(int k, int l, int n, TlbfTime retire_at)
{
	TestFilter	t;
	Tlbf	   *f;

	tf_create_kl(&t, SPAN, 0.01, 200, k, l);
	for (int i = 0; i < n; i++)
		tf_add(&t, (uint64_t) i, START + i * 10000);
	if (retire_at != TLBF_NEVER)
		tlbf_drop_expired(t.f, retire_at);
	f = clone(t.f);
	tf_free(&t);
	return f;
}

/*
 * Values at the edges of what validation accepts, one or two fields at an
 * end of their range, on filters of several shapes: whatever any operation
 * writes from them must validate too.  (A union with a smaller k once
 * turned gen_size = 1 into 0.)
 */
static void
test_edge_values(void **state)
{
	Tlbf	   *bases[] = {
		base_filter(10, 25, 3000, TLBF_NEVER),	/* many slices */
		base_filter(1, 1, 50, TLBF_NEVER),
		base_filter(3, 2, 400, TLBF_NEVER),
		base_filter(TLBF_MAX_K, 2, 20, TLBF_NEVER),
		base_filter(10, 25, 0, TLBF_NEVER), /* empty */
		base_filter(10, 25, 100, START + 10 * SPAN),	/* all retired */
	};
	long		tried = 0;
	long		accepted = 0;

	for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
		for (int first = -1; first < EDGE_COUNT; first++)
			for (int second = first; second < EDGE_COUNT; second++)
			{
				Tlbf	   *f = clone(bases[b]);

				if (first >= 0)
					edge_set(f, first);
				if (second >= 0 && second != first)
					edge_set(f, second);
				tried++;
				if (valid(f, tlbf_size(f)))
				{
					accepted++;
					exercise_writers(f);
				}
				free(f);
			}
	print_message("%ld of %ld edge values were valid, and every result of every operation on them\n",
				  accepted, tried);
	/* most edges are valid values: the test is not vacuous */
	assert_true(accepted > tried / 2);
	for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
		free(bases[b]);
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
	Tlbf	   *fewer = partner(original, 1, START);

	for (int trial = 0; trial < 200000; trial++)
	{
		Tlbf	   *f = malloc(size);
		TlbfMemory	memory = {heap_resize, NULL, size, 1 << 20, false};
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
			if (tlbf_merge_mismatch(f, fewer) == NULL)
			{
				free(merge_checked(f, fewer));
				free(merge_checked(fewer, f));
			}
			(void) tlbf_insert(&f, &memory, key_hash(8), START + 200 * SECOND);
			assert_valid(f, "a damaged filter after tlbf_insert");
			tlbf_drop_expired(copy, START + 300 * SECOND);
			assert_valid(copy, "a damaged filter after tlbf_drop_expired");
			tlbf_truncate_to(copy, tlbf_size(copy) / 2, START + 300 * SECOND);
			assert_valid(copy, "a damaged filter after tlbf_truncate_to");
			free(copy);
		}
		free(f);
	}
	print_message("%ld of 200000 damaged filters were still valid (and safe)\n", accepted);
	free(fewer);
	free(original);
}

/*
 * The walks over a whole value (merge, validation, statistics) call
 * tlbf_interrupt_check now and then, so that PostgreSQL can cancel one of
 * up to 1 GB; a merge left by a longjmp (a cancel) leaves its inputs as
 * they were.
 */
static int	interrupt_calls;
static int	interrupt_after = -1;	/* longjmp at this call; -1: never */
static jmp_buf interrupted;

static void
count_interrupt_check(void)
{
	if (interrupt_calls++ == interrupt_after)
		longjmp(interrupted, 1);
}

static void
test_long_walks_check_interrupts(void **state)
{
	TestFilter	a,
				b;
	const Tlbf *inputs[2];
	Tlbf	   *out;
	Tlbf	   *a_before;
	TlbfStats	stats;
	TlbfProblem problem;

	tf_create(&a, HOUR, 0.01, 100000);
	tf_create(&b, HOUR, 0.01, 100000);
	for (uint64_t k = 0; k < 1000; k++)
	{
		tf_add(&a, k, INT64_C(757382400000000) + (int64_t) k * SECOND);
		tf_add(&b, k + 5000, INT64_C(757382400000000) + (int64_t) k * SECOND);
	}
	inputs[0] = a.f;
	inputs[1] = b.f;
	out = malloc(tlbf_merge_bytes(inputs, 2));
	a_before = malloc(tlbf_size(a.f));
	memcpy(a_before, a.f, tlbf_size(a.f));

	tlbf_interrupt_check = count_interrupt_check;
	interrupt_calls = 0;
	tlbf_merge(out, inputs, 2);
	assert_true(interrupt_calls >= 2);	/* after each piece (16 MB) of each input */
	interrupt_calls = 0;
	assert_true(tlbf_validate(out, tlbf_size(out), &problem));
	assert_true(interrupt_calls >= 1);
	interrupt_calls = 0;
	tlbf_stats(out, INT64_C(757382400000000) + 1000 * SECOND, &stats);
	assert_true(interrupt_calls >= 1);

	/* cancelled after the first piece of the first input's bits */
	interrupt_calls = 0;
	interrupt_after = 0;
	if (setjmp(interrupted) == 0)
	{
		tlbf_merge(out, inputs, 2);
		fail_msg("the merge went on past its cancel");
	}
	assert_int_equal(interrupt_calls, 1);
	assert_memory_equal(a.f, a_before, tlbf_size(a.f));

	tlbf_interrupt_check = NULL;
	interrupt_after = -1;
	free(a_before);
	free(out);
	tf_free(&a);
	tf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts_core_output),
		cmocka_unit_test(test_rejects_wrong_lengths),
		cmocka_unit_test(test_rejects_bad_fields),
		cmocka_unit_test(test_edge_values),
		cmocka_unit_test(test_random_damage),
		cmocka_unit_test(test_long_walks_check_interrupts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
