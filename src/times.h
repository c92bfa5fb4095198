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

extern TlbfTime tlbf_check_time(TimestampTz at);
extern TlbfTime tlbf_time_arg(FunctionCallInfo fcinfo, int argno);
extern TlbfTime tlbf_check_insert_time(TimestampTz at);
extern TlbfTime tlbf_insert_time_arg(FunctionCallInfo fcinfo, int argno);
extern int64 tlbf_interval_usecs(const Interval *interval, const char *what);

#endif							/* TLBF_TIMES_H */
