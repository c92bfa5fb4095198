/*-------------------------------------------------------------------------
 *
 * times.c
 *	  Times and intervals from SQL arguments, in the core's microseconds.
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"

#include "common/int.h"
#include "datatype/timestamp.h"

/* The core's time is PostgreSQL's TimestampTz; its range must be too. */
StaticAssertDecl(TLBF_TIME_MIN == MIN_TIMESTAMP, "tlbf time range differs from PostgreSQL's");
StaticAssertDecl(TLBF_TIME_END == END_TIMESTAMP, "tlbf time range differs from PostgreSQL's");
StaticAssertDecl(TLBF_USECS_PER_SEC == USECS_PER_SEC, "tlbf time unit differs from PostgreSQL's");

/* A time for a filter: only finite times have a place in one. */
TlbfTime
tlbf_check_time(TimestampTz at)
{
	if (TIMESTAMP_NOT_FINITE(at) || !IS_VALID_TIMESTAMP(at))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tlbf times must be finite"),
				 errhint("Pass the time the key was seen, for example now() or an event's timestamp.")));
	return at;
}

/* A timestamptz argument, checked. */
TlbfTime
tlbf_time_arg(FunctionCallInfo fcinfo, int argno)
{
	return tlbf_check_time(PG_GETARG_TIMESTAMPTZ(argno));
}

/*
 * An interval as microseconds.  Months have no fixed length, so they are
 * refused; a day counts as 24 hours.
 */
int64
tlbf_interval_usecs(const Interval *interval, const char *what)
{
	int64		usecs;

	if (interval->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not contain months or years", what),
				 errhint("Use days instead, for example '30 days'.")));
	if (pg_mul_s64_overflow(interval->day, USECS_PER_DAY, &usecs) ||
		pg_add_s64_overflow(usecs, interval->time, &usecs) ||
		usecs <= 0 || usecs > TLBF_MAX_SPAN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be positive and at most 100 years", what),
				 errhint("Give a duration such as '10 minutes' or '1 day'.")));
	return usecs;
}
