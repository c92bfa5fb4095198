/*-------------------------------------------------------------------------
 *
 * inference.h
 *	  inference.c: tlbf_last_seen and tlbf_probability, and what they share
 *	  with the shared filters' forms.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_INFERENCE_H
#define TLBF_INFERENCE_H

#include "tlbf_pg.h"

extern bool *tlbf_inference_scratch(const Tlbf *f);
extern Datum tlbf_time_range(TlbfTime lower, TlbfTime upper);
extern double tlbf_check_prior(double prior);
extern int64 tlbf_window_arg(FunctionCallInfo fcinfo, int argno, int64 span);

#endif							/* TLBF_INFERENCE_H */
