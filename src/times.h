/*-------------------------------------------------------------------------
 *
 * times.h
 *	  times.c: times and intervals from SQL arguments, in microseconds.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_TIMES_H
#define TLBF_TIMES_H

#include "tlbf_pg.h"
#include "settings.h"

#include "datatype/timestamp.h"

extern TlbfTime tlbf_check_time(TimestampTz at);
extern TlbfTime tlbf_time_arg(FunctionCallInfo fcinfo, int argno);
extern TlbfTime tlbf_check_insert_time(TimestampTz at);

/* tlbf_check_insert_time's limit, and the tlbf.max_future it was made with */
extern PGDLLIMPORT TimestampTz tlbf_insert_time_limit;
extern PGDLLIMPORT int tlbf_insert_time_limit_setting;

/*
 * A timestamptz argument a key is added at, checked
 * (tlbf_check_insert_time).  Inline: a time that is finite and within the
 * limit already computed for the current setting, as nearly every row of
 * an aggregate's, passes without a call.
 */
static inline TlbfTime
tlbf_insert_time_arg(FunctionCallInfo fcinfo, int argno)
{
	TimestampTz at = PG_GETARG_TIMESTAMPTZ(argno);

	if (likely(at >= MIN_TIMESTAMP && at <= tlbf_insert_time_limit &&
			   tlbf_insert_time_limit_setting == tlbf_max_future &&
			   tlbf_max_future >= 0))
		return at;
	return tlbf_check_insert_time(at);
}
extern int64 tlbf_interval_usecs(const Interval *interval, const char *what);

#endif							/* TLBF_TIMES_H */
