/*
 * test_params.c
 *	  Choosing (k, l) from an error rate, the false-positive recursion, and
 *	  rejecting bad parameters.
 */
#include <math.h>

#include "harness.h"

/* F(0,0) of the APBF recursion, computed independently (Python, memoised). */
static void
test_fpr_recursion(void **state)
{
	static const struct
	{
		int			k,
					l;
		double		fpr;
	}			known[] = {
		{7, 28, 0.0990331535681103},
		{10, 25, 0.010075607428633422},
		{13, 23, 0.0009895053281140651},
		{17, 36, 9.86394168988883e-05},
		{20, 33, 9.676734900618496e-06},
		{4, 3, 0.1005859375},
		{1, 1, 0.75},
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		assert_true(fabs(tlbf_fpr(known[i].k, known[i].l) - known[i].fpr) <=
					1e-12 * known[i].fpr);
}

/* More slices mean more windows: the rate grows with l (the search relies on it). */
static void
test_fpr_grows_with_l(void **state)
{
	for (int k = 1; k <= TLBF_MAX_K; k += 3)
		for (int l = 1; l < 300; l++)
			assert_true(tlbf_fpr(k, l) <= tlbf_fpr(k, l + 1));
}

/* The APBF table's rates get its recommended (bold) configuration. */
static void
test_table_rates(void **state)
{
	static const struct
	{
		double		rate;
		int			k,
					l;
	}			table[] = {
		{0.1, 7, 28}, {0.01, 10, 25}, {0.001, 13, 23}, {1e-4, 17, 36}, {1e-5, 20, 33},
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
	{
		int			k,
					l;

		tlbf_choose_kl(table[i].rate, &k, &l);
		assert_int_equal(k, table[i].k);
		assert_int_equal(l, table[i].l);
	}
}

/*
 * Between the rows: the configuration meets the target, probes no more
 * blocks of k slices than the neighbouring defaults (at most 5, the 0.1
 * row's), and a tighter target never costs less memory.
 */
static void
test_rates_between_rows(void **state)
{
	double		previous_bits = 0.0;

	for (double rate = 0.5; rate >= 1e-9; rate /= 1.3)
	{
		int			k,
					l;
		double		bits;

		tlbf_choose_kl(rate, &k, &l);
		bits = (double) (k + l) * k / (l * 0.6931471805599453);
		assert_true(tlbf_fpr(k, l) <= rate);
		assert_true((double) (k + l) / k <= 5.0 + 1e-9);
		assert_true(bits >= previous_bits - 0.5);
		previous_bits = bits;
	}
}

static void
assert_rejected(TlbfParams p, const char *expected)
{
	TlbfProblem problem;

	assert_false(tlbf_check_params(&p, &problem));
	assert_string_equal(problem.message, expected);
	assert_non_null(problem.hint);
}

static void
test_bad_params(void **state)
{
	TlbfParams	good = {HOUR, 0.01, 1000, 0, 0, 0};
	TlbfParams	p;
	TlbfProblem problem;

	p = good;
	assert_true(tlbf_check_params(&p, &problem));
	assert_int_equal(p.k, 10);
	assert_int_equal(p.l, 25);

	p = good, p.span = 0;
	assert_rejected(p, "span must be positive and at most 100 years");
	p = good, p.span = -HOUR;
	assert_rejected(p, "span must be positive and at most 100 years");
	p = good, p.span = INT64_C(101) * 366 * 24 * HOUR;
	assert_rejected(p, "span must be positive and at most 100 years");
	p = good, p.error_rate = 0.0;
	assert_rejected(p, "error_rate must be greater than 0 and at most 0.5");
	p = good, p.error_rate = 0.51;
	assert_rejected(p, "error_rate must be greater than 0 and at most 0.5");
	p = good, p.error_rate = NAN;
	assert_rejected(p, "error_rate must be greater than 0 and at most 0.5");
	p = good, p.error_rate = INFINITY;
	assert_rejected(p, "error_rate must be greater than 0 and at most 0.5");
	p = good, p.error_rate = 1e-10;
	assert_rejected(p, "error_rate must be at least 1e-9");
	p = good, p.capacity = 0;
	assert_rejected(p, "capacity must be between 1 and 2^40");
	p = good, p.capacity = UINT64_MAX;
	assert_rejected(p, "capacity must be between 1 and 2^40");
	p = good, p.k = 5;
	assert_rejected(p, "k and l must be given together");
	p = good, p.k = 41, p.l = 10;
	assert_rejected(p, "k must be between 1 and 40 and l between 1 and 1024");
	p = good, p.k = 10, p.l = 1025;
	assert_rejected(p, "k must be between 1 and 40 and l between 1 and 1024");
	p = good, p.k = -1, p.l = 3;
	assert_rejected(p, "k must be between 1 and 40 and l between 1 and 1024");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fpr_recursion),
		cmocka_unit_test(test_fpr_grows_with_l),
		cmocka_unit_test(test_table_rates),
		cmocka_unit_test(test_rates_between_rows),
		cmocka_unit_test(test_bad_params),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
