/*-------------------------------------------------------------------------
 *
 * filter_params.c
 *	  A filter's parameters (span, error_rate, capacity, k, l): read from
 *	  the SQL arguments that give them, given their defaults, and checked,
 *	  with the one error every function raises for them.
 *
 * Every SQL function that makes a filter takes its parameters in the same
 * order, (span, error_rate, capacity, k, l), and the first few of them:
 * tlbf_create all five, tlbf_shared_create three, tlbf_agg one or two.
 * So a new parameter goes at the end of that order, and here: the
 * functions that do not take it get its default.
 *
 * Filters held in values (tlbf_create, tlbf_agg) must also start under
 * tlbf.max_filter_bytes; shared filters are held instead to the region
 * the pool can give them, which the store checks (tlbf_store_create).
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"
#include "filter_args.h"
#include "filter_params.h"
#include "times.h"

#include "core/tb.h"

/* The order the SQL functions take the parameters in. */
typedef enum ParamArg
{
	PARAM_SPAN,
	PARAM_ERROR_RATE,
	PARAM_CAPACITY,
	PARAM_K,
	PARAM_L,
	PARAM_COUNT
} ParamArg;

/* What a parameter is when no argument gives it. */
static void
default_params(TlbfParams *params)
{
	params->span = 0;
	params->error_rate = TLBF_DEFAULT_ERROR_RATE;
	params->capacity = TLBF_DEFAULT_CAPACITY;
	params->k = 0;
	params->l = 0;
	/* never an argument: every filter made here must merge with any other */
	params->seed = TLBF_DEFAULT_SEED;
}

/* A capacity below 1 is 0, which the core refuses with its message. */
static uint64
capacity_arg(FunctionCallInfo fcinfo, int argno)
{
	int64		capacity = PG_GETARG_INT64(argno);

	return capacity < 1 ? 0 : (uint64) capacity;
}

/* An optional int argument: NULL is 0 ("choose"), and 0 itself is invalid. */
static int
optional_count(FunctionCallInfo fcinfo, int argno)
{
	int32		value;

	if (PG_ARGISNULL(argno))
		return 0;
	value = PG_GETARG_INT32(argno);
	return value < 1 ? -1 : value;
}

/*
 * Read a filter's parameters from 'count' arguments starting at 'first':
 * the first 'count' of (span, error_rate, capacity, k, l); the others get
 * their defaults.  False, with nothing read, if span, error_rate or
 * capacity is NULL (each caller says what that means); a NULL k or l is
 * chosen from error_rate.  The span is checked as an interval (no months,
 * a day is 24 hours); the rest is left to tlbf_params_check.
 */
bool
tlbf_params_from_args(FunctionCallInfo fcinfo, int first, int count, TlbfParams *params)
{
	Assert(count >= 1 && count <= PARAM_COUNT && first + count <= PG_NARGS());

	default_params(params);
	for (int i = 0; i < Min(count, PARAM_K); i++)
		if (PG_ARGISNULL(first + i))
			return false;
	params->span = tlbf_interval_usecs(PG_GETARG_INTERVAL_P(first + PARAM_SPAN), "span");
	if (count > PARAM_ERROR_RATE)
		params->error_rate = PG_GETARG_FLOAT8(first + PARAM_ERROR_RATE);
	if (count > PARAM_CAPACITY)
		params->capacity = capacity_arg(fcinfo, first + PARAM_CAPACITY);
	if (count > PARAM_K)
		params->k = optional_count(fcinfo, first + PARAM_K);
	if (count > PARAM_L)
		params->l = optional_count(fcinfo, first + PARAM_L);
	return true;
}

/*
 * The parameters of a filter tlbf_agg builds, or one a parallel worker's
 * rows are for: the span and error rate it was given, the defaults else.
 */
void
tlbf_agg_params(TlbfParams *params, int64 span, double error_rate)
{
	default_params(params);
	params->span = span;
	params->error_rate = error_rate;
}

/* Parameters the core refused, as every function reports them. */
static void
report_bad_params(const TlbfProblem *problem)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid tlbf parameters: %s", problem->message),
			 problem->hint ? errhint("%s", problem->hint) : 0));
}

/*
 * Check what was asked for, choosing k and l if both are 0: the core says
 * what is wrong, and every function reports it alike.
 */
void
tlbf_params_check(TlbfParams *params)
{
	TlbfProblem problem;

	if (!tlbf_check_params(params, &problem))
		report_bad_params(&problem);
}

/*
 * The same for a filter held in a value (tlbf_create, tlbf_agg), whose
 * first slices must also fit under the size cap: better refused now than
 * at its first key.
 */
void
tlbf_params_check_value(TlbfParams *params)
{
	tlbf_params_check(params);
	if (tlbf_first_generation_bytes(params) > tlbf_filter_bytes_cap())
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a tlbf filter for this capacity would exceed tlbf.max_filter_bytes (%zu bytes)",
						tlbf_filter_bytes_cap()),
				 errhint("Raise tlbf.max_filter_bytes or lower the capacity; the filter grows as keys arrive.")));
}

/*
 * Check a filter of format 3's parameters as tlbf_params_check checks
 * format 2's (filling in the default generations).
 */
void
tlbf_format3_check(struct TbParams *params)
{
	TlbfProblem problem;

	if (!tb_check_params(params, &problem))
		report_bad_params(&problem);
}

/* The bytes of a checked filter of format 3 with its first generation's band. */
Size
tlbf_format3_first_band(const struct TbParams *params)
{
	TbFilter   *header = palloc(tb_lines_offset(0));
	Size		bytes;

	tb_init(header, params);
	bytes = tb_layout_bytes(header, 1, tb_lines_for(header, params->capacity / params->generations + 1));
	pfree(header);
	return bytes;
}

/*
 * The parameters of a filter of format 3 (tlbf_create_format3,
 * tlbf_agg_format3), checked as those of format 2 are: by its core, and its
 * first band under tlbf.max_filter_bytes.  The seed is the default one, as
 * for every filter made here; the first key's kind replaces it with its tag.
 */
void
tlbf_format3_params(TbParams *params, const Interval *span, double error_rate,
					int64 capacity, bool declared)
{
	Size		first_band;

	params->span = tlbf_interval_usecs(span, "span");
	params->error_rate = error_rate;
	params->capacity = capacity < 1 ? 0 : (uint64) capacity;
	params->declared = declared;
	params->generations = 0;
	params->seed = TLBF_DEFAULT_SEED;
	if (!declared && params->capacity == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid tlbf parameters: %s", "capacity must be positive")));
	tlbf_format3_check(params);
	first_band = tlbf_format3_first_band(params);
	if (first_band > tlbf_filter_bytes_cap())
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a tlbf filter for this capacity would exceed tlbf.max_filter_bytes (%zu bytes)",
						tlbf_filter_bytes_cap()),
				 errdetail("Its first generation's band alone takes %zu bytes.", first_band),
				 errhint("Raise tlbf.max_filter_bytes or lower the capacity.")));
}
