/*-------------------------------------------------------------------------
 *
 * info.h
 *	  info.c: tlbf_info and tlbf_summary.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_INFO_H
#define TLBF_INFO_H

#include "tlbf_pg.h"
#include "core/tb.h"

extern Datum tlbf_info_jsonb(const Tlbf *f, TlbfTime at);
extern Datum tlbf_info_jsonb_format3(const TbFilter *f, const Tlbf *carried, TlbfTime at);

#endif							/* TLBF_INFO_H */
