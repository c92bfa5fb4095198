/*-------------------------------------------------------------------------
 *
 * times.c
 *	  Times and intervals from SQL arguments, in the core's microseconds.
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"
#include "settings.h"
#include "times.h"

#include "common/int.h"
#include "datatype/timestamp.h"
#include "utils/builtins.h"

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

static char *
time_text(TimestampTz t)
{
	return DatumGetCString(DirectFunctionCall1(timestamptz_out, TimestampTzGetDatum(t)));
}

/* The limit last computed, and the tlbf.max_future it was made with (times.h). */
TimestampTz tlbf_insert_time_limit = DT_NOBEGIN;
int			tlbf_insert_time_limit_setting = -1;

/*
 * A time a key is added at: finite, and not more than tlbf.max_future
 * ahead of the server's clock.  A filter's slices keep the newest time
 * they were written at, and a key added earlier than a filter's newest
 * insertion counts as added then: one key dated a year ahead (a client's
 * clock, a typo in a replayed log) would keep every later key, and the
 * slices holding them, until a year after.  The clock is read again only
 * when a time passes the limit last computed, so an aggregate over
 * millions of rows reads it rarely.
 */
TlbfTime
tlbf_check_insert_time(TimestampTz at)
{
	(void) tlbf_check_time(at);
	if (tlbf_max_future < 0)
		return at;
	if (tlbf_insert_time_limit_setting != tlbf_max_future)
	{
		/* a lowered setting must not be outlived by the limit of the old one */
		tlbf_insert_time_limit = DT_NOBEGIN;
		tlbf_insert_time_limit_setting = tlbf_max_future;
	}
	if (at <= tlbf_insert_time_limit)
		return at;
	tlbf_insert_time_limit = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
														 (int64) tlbf_max_future * 1000);
	if (at > tlbf_insert_time_limit)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("tlbf key time %s is ahead of the server's clock", time_text(at)),
				 errdetail("Keys are refused if dated more than tlbf.max_future (%d s) ahead: one key dated in the future keeps its filter from forgetting until then.",
						   tlbf_max_future),
				 errhint("Fix the time, or raise tlbf.max_future (-1 accepts any time).")));
	return at;
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
