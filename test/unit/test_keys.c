/*
 * test_keys.c
 *	  The kind of key a filter records (keys.c): recorded with the first key
 *	  only, validated, and carried by a union only when the inputs agree.
 */
#include "harness.h"

#define START	INT64_C(757382400000000)
#define SPAN	(60 * SECOND)

static const uint8_t integer_kind[] = {TLBF_KEY_INTEGER};
static const uint8_t text_kind[] = {TLBF_KEY_TEXT};
static const uint8_t pair_kinds[] = {TLBF_KEY_INTEGER, TLBF_KEY_TEXT};

static bool
valid(const Tlbf *f)
{
	TlbfProblem problem;

	return tlbf_validate(f, tlbf_size(f), &problem);
}

static void
test_make(void **state)
{
	uint8_t		too_many[TLBF_MAX_KEY_FIELDS + 1];
	uint8_t		bad[] = {TLBF_KEY_INTEGER, TLBF_KEY_KIND_MAX + 1};
	TlbfKeys	pair = tlbf_keys_make(pair_kinds, 2);

	assert_int_equal(pair.fields, 2);
	assert_int_equal(tlbf_key_kind(pair, 0), TLBF_KEY_INTEGER);
	assert_int_equal(tlbf_key_kind(pair, 1), TLBF_KEY_TEXT);
	assert_int_equal(tlbf_key_kind(pair, 2), TLBF_KEY_UNRECORDED);
	memset(too_many, TLBF_KEY_INTEGER, sizeof(too_many));
	assert_int_equal(tlbf_keys_make(too_many, TLBF_MAX_KEY_FIELDS + 1).fields, 0);
	assert_int_equal(tlbf_keys_make(too_many, TLBF_MAX_KEY_FIELDS).fields,
					 TLBF_MAX_KEY_FIELDS);
	assert_int_equal(tlbf_keys_make(bad, 2).fields, 0);
	assert_int_equal(tlbf_keys_make(bad, 0).fields, 0);
}

/* Recorded only while the filter holds no key, and then valid. */
static void
test_record_first_key_only(void **state)
{
	TestFilter	t;

	tf_create(&t, SPAN, 0.01, 100);
	tlbf_record_keys(t.f, tlbf_keys_make(integer_kind, 1));
	assert_int_equal(t.f->key_fields, 1);
	tlbf_record_keys(t.f, tlbf_keys_make(text_kind, 1));
	assert_int_equal(tlbf_key_kind(tlbf_keys_of(t.f), 0), TLBF_KEY_TEXT);
	tf_add(&t, 1, START);
	tlbf_record_keys(t.f, tlbf_keys_make(integer_kind, 1));
	assert_int_equal(tlbf_key_kind(tlbf_keys_of(t.f), 0), TLBF_KEY_TEXT);
	assert_true(valid(t.f));
	tf_free(&t);
}

/* A format-1 value (no kinds) is still read; it cannot claim kinds. */
static void
test_version_1(void **state)
{
	TestFilter	t;

	tf_create(&t, SPAN, 0.01, 100);
	tf_add(&t, 1, START);
	t.f->version = TLBF_FORMAT_VERSION_1;
	assert_true(valid(t.f));
	t.f->key_fields = 1;
	t.f->key_kinds = TLBF_KEY_INTEGER;
	assert_false(valid(t.f));
	tf_free(&t);
}

static Tlbf *
filter_of(const uint8_t *kinds, int nfields, int keys)
{
	TestFilter	t;

	tf_create(&t, SPAN, 0.01, 100);
	if (kinds != NULL)
		tlbf_record_keys(t.f, tlbf_keys_make(kinds, nfields));
	for (int i = 0; i < keys; i++)
		tf_add(&t, (uint64_t) i, START + i * SECOND);
	return t.f;
}

static TlbfKeys
union_keys(Tlbf *a, Tlbf *b, bool *merged)
{
	const Tlbf *inputs[2] = {a, b};
	Tlbf	   *out;
	TlbfKeys	keys;

	*merged = tlbf_merge_mismatch(a, b) == NULL;
	out = malloc(tlbf_merge_bytes(inputs, 2));
	tlbf_merge(out, inputs, 2);
	assert_true(valid(out));
	keys = tlbf_keys_of(out);
	free(out);
	free(a);
	free(b);
	return keys;
}

static void
test_union(void **state)
{
	bool		merged;
	TlbfKeys	keys;

	/* the same kind: kept */
	keys = union_keys(filter_of(pair_kinds, 2, 5), filter_of(pair_kinds, 2, 5), &merged);
	assert_true(merged);
	assert_true(tlbf_keys_equal(keys, tlbf_keys_make(pair_kinds, 2)));

	/* different kinds: refused (and a forced merge trusts neither) */
	keys = union_keys(filter_of(integer_kind, 1, 5), filter_of(text_kind, 1, 5), &merged);
	assert_false(merged);
	assert_int_equal(keys.fields, 0);

	/* a filter without keys does not count, whatever it records */
	keys = union_keys(filter_of(text_kind, 1, 0), filter_of(integer_kind, 1, 5), &merged);
	assert_true(merged);
	assert_true(tlbf_keys_equal(keys, tlbf_keys_make(integer_kind, 1)));

	/* keys of no recorded kind: the union records none */
	keys = union_keys(filter_of(NULL, 0, 5), filter_of(integer_kind, 1, 5), &merged);
	assert_true(merged);
	assert_int_equal(keys.fields, 0);

	/* no keys at all: a recorded kind is kept */
	keys = union_keys(filter_of(NULL, 0, 0), filter_of(text_kind, 1, 0), &merged);
	assert_true(merged);
	assert_true(tlbf_keys_equal(keys, tlbf_keys_make(text_kind, 1)));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_make),
		cmocka_unit_test(test_record_first_key_only),
		cmocka_unit_test(test_version_1),
		cmocka_unit_test(test_union),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
