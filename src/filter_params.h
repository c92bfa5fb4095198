/*-------------------------------------------------------------------------
 *
 * filter_params.h
 *	  filter_params.c: a filter's parameters from the SQL arguments that give
 *	  them, with their defaults, checked.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_FILTER_PARAMS_H
#define TLBF_FILTER_PARAMS_H

#include "tlbf_pg.h"

struct TbParams;
extern bool tlbf_params_from_args(FunctionCallInfo fcinfo, int first, int count,
								  TlbfParams *params);
extern void tlbf_agg_params(TlbfParams *params, int64 span, double error_rate);
extern void tlbf_params_check(TlbfParams *params);
extern void tlbf_params_check_value(TlbfParams *params);
extern void tlbf_format3_params(struct TbParams *params, const Interval *span,
								double error_rate, int64 capacity, bool declared);
extern void tlbf_format3_check(struct TbParams *params);
extern Size tlbf_format3_first_band(const struct TbParams *params);

#endif							/* TLBF_FILTER_PARAMS_H */
