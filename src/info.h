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

extern Datum tlbf_info_jsonb(const Tlbf *f, TlbfTime at);

#endif							/* TLBF_INFO_H */
