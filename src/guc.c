/*-------------------------------------------------------------------------
 *
 * guc.c
 *	  The module's entry point and its configuration parameters.
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"

#include "utils/guc.h"
#include "utils/memutils.h"

PG_MODULE_MAGIC;

/* Largest filter value, in bytes, that insertions and unions may produce. */
int			tlbf_max_filter_bytes = 64 * 1024 * 1024;

void		_PG_init(void);

void
_PG_init(void)
{
	DefineCustomIntVariable("tlbf.max_filter_bytes",
							"Largest size a tlbf filter may grow to.",
							"Past it, insertions drop the oldest unexpired slices "
							"(counted in tlbf_info's \"truncated\") instead of growing.",
							&tlbf_max_filter_bytes,
							64 * 1024 * 1024,
							8 * 1024,
							(int) MaxAllocSize,
							PGC_USERSET,
							GUC_UNIT_BYTE,
							NULL, NULL, NULL);
	MarkGUCPrefixReserved("tlbf");
}
