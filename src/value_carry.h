/*-------------------------------------------------------------------------
 *
 * value_carry.h
 *	  Values of format 3 that carry a frozen value of format 1 or 2
 *	  (value_carry.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_VALUE_CARRY_H
#define TLBF_VALUE_CARRY_H

#include "tlbf_pg.h"

#include "core/tb.h"

extern Tlbf *tlbf_carried(const TbFilter *f);
extern bool tlbf_carried_validate(const TbFilter *f, size_t len, TlbfProblem *problem);
extern bool tlbf_carrier_shares_keys(const TbFilter *f);
extern TbFilter *tlbf_bands_copy(const TbFilter *f);
extern TbFilter *tlbf_carry(const TbFilter *bands, const Tlbf *frozen);
extern Tlbf *tlbf_carried_after(const Tlbf *frozen, TlbfTime at);
extern bool tlbf_carried_retirable(const Tlbf *frozen, TlbfTime at);
extern TbFilter *tlbf_format3_carrying(const Tlbf *old);

#endif							/* TLBF_VALUE_CARRY_H */
