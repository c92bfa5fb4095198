/*-------------------------------------------------------------------------
 *
 * inference.c
 *	  What a filter says about a key beyond yes and no, in SQL:
 *	  tlbf_last_seen (when was it last added) and tlbf_probability (how
 *	  likely a "yes" is true).  The core computes both (core/infer.c); the
 *	  derivation is in docs/inference.md.
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"
#include "filter_args.h"
#include "inference.h"
#include "key_match.h"
#include "times.h"

#include "core/tb.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/rangetypes.h"
#include "utils/typcache.h"

PG_FUNCTION_INFO_V1(tlbf_last_seen_range);
PG_FUNCTION_INFO_V1(tlbf_probability);

/* The core's scratch space for a filter's slices. */
bool *
tlbf_inference_scratch(const Tlbf *f)
{
	return palloc(2 * (Size) f->nslices + 1);
}

/*
 * [lower, upper] as a tstzrange; a lower bound of TLBF_NEVER is left open
 * (-infinity).
 */
Datum
tlbf_time_range(TlbfTime lower, TlbfTime upper)
{
	TypeCacheEntry *typcache = lookup_type_cache(TSTZRANGEOID, TYPECACHE_RANGE_INFO);
	RangeBound	low = {0},
				high = {0};

	low.val = TimestampTzGetDatum(lower);
	low.infinite = lower == TLBF_NEVER;
	low.inclusive = !low.infinite;
	low.lower = true;
	high.val = TimestampTzGetDatum(upper);
	high.inclusive = true;
	high.lower = false;
	return RangeTypePGetDatum(tlbf_make_range(typcache, &low, &high));
}

/* A prior probability from SQL: in [0, 1]. */
double
tlbf_check_prior(double prior)
{
	if (isnan(prior) || prior < 0.0 || prior > 1.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("prior must be between 0 and 1"),
				 errhint("It is the probability, before the filter is read, that the key was added within the window.")));
	return prior;
}

/* A window from SQL: NULL is the filter's span; longer is refused. */
int64
tlbf_window_arg(FunctionCallInfo fcinfo, int argno, int64 span)
{
	int64		within;

	if (PG_ARGISNULL(argno))
		return span;
	within = tlbf_interval_usecs(PG_GETARG_INTERVAL_P(argno), "within");
	if (within > span)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("within must not be longer than the filter's span"),
				 errhint("The filter forgets keys older than its span; build it with a longer span.")));
	return within;
}

/*
 * tlbf_last_seen(f, item, at): the interval in which item was last added,
 * NULL if the filter says it was not added within the span before at.  Of
 * format 3, the interval of a generation (a third of the span), cut at
 * 'at' and at the newest insertion.
 */
Datum
tlbf_last_seen_range(PG_FUNCTION_ARGS)
{
	TlbfValue	v = tlbf_arg_value(fcinfo, 0);
	Tlbf	   *f = v.v2;
	TlbfTime	at = tlbf_time_arg(fcinfo, 2);
	TlbfTime	lower,
				upper;
	TlbfHash	hash;
	TlbfKeys	basis;

	/*
	 * format 3: the interval of the newest generation that holds it; of a
	 * value it carries (value_carry.c), the newer of the two answers
	 */
	if (v.v3 != NULL)
	{
		bool		found;

		found = tlbf_key_arg_hash_shared(fcinfo, 1, tb_keys_of(v.v3), v.v3->inserted > 0, false,
										 &hash, &basis) &&
			tb_last_seen(v.v3, hash, at, v.v3->span, &lower, &upper);
		f = v.carried;
		if (f != NULL)
		{
			TlbfTime	lower2,
						upper2;

			if (tlbf_key_arg_hash(fcinfo, 1, f, &hash) &&
				tlbf_last_seen(f, hash, at, f->span, tlbf_inference_scratch(f), &lower2, &upper2) &&
				(!found || upper2 > upper || (upper2 == upper && lower2 > lower)))
			{
				found = true;
				lower = lower2;
				upper = upper2;
			}
		}
		if (!found)
			PG_RETURN_NULL();
		PG_RETURN_DATUM(tlbf_time_range(lower, upper));
	}
	if (!tlbf_key_arg_hash(fcinfo, 1, f, &hash) ||
		!tlbf_last_seen(f, hash, at, f->span, tlbf_inference_scratch(f), &lower, &upper))
		PG_RETURN_NULL();
	PG_RETURN_DATUM(tlbf_time_range(lower, upper));
}

/*
 * tlbf_probability(f, item, at, within, prior): the probability that item
 * was added within 'within' (NULL: the span) before at, given the bits the
 * query reads and the prior probability that it was.  Of format 3, the
 * model of core/tb_infer.c.
 */
Datum
tlbf_probability(PG_FUNCTION_ARGS)
{
	TlbfValue	v;
	Tlbf	   *f;
	TlbfTime	at;
	int64		window;
	double		prior;
	TlbfHash	hash;
	TlbfKeys	basis;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(4))
		PG_RETURN_NULL();
	v = tlbf_arg_value(fcinfo, 0);
	at = tlbf_time_arg(fcinfo, 2);

	/*
	 * format 3: its own model (core/tb_infer.c); with a carried value
	 * (value_carry.c), the key was added to either part: 1 - (1 - p)(1 - q)
	 * of the two parts' answers, as if independent
	 */
	if (v.v3 != NULL)
	{
		double		p = 0.0;

		window = tlbf_window_arg(fcinfo, 3, v.v3->span);
		prior = tlbf_check_prior(PG_GETARG_FLOAT8(4));
		if (tlbf_key_arg_hash_shared(fcinfo, 1, tb_keys_of(v.v3), v.v3->inserted > 0, false,
									 &hash, &basis))
			p = tb_posterior(v.v3, hash, at, window, prior);
		f = v.carried;
		if (f != NULL && tlbf_key_arg_hash(fcinfo, 1, f, &hash))
			p = 1.0 - (1.0 - p) *
				(1.0 - tlbf_posterior(f, hash, at, window, prior, tlbf_inference_scratch(f)));
		PG_RETURN_FLOAT8(p);
	}
	f = v.v2;
	window = tlbf_window_arg(fcinfo, 3, f->span);
	prior = tlbf_check_prior(PG_GETARG_FLOAT8(4));
	if (!tlbf_key_arg_hash(fcinfo, 1, f, &hash))
		PG_RETURN_FLOAT8(0.0);
	PG_RETURN_FLOAT8(tlbf_posterior(f, hash, at, window, prior, tlbf_inference_scratch(f)));
}
