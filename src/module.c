/*-------------------------------------------------------------------------
 *
 * module.c
 *	  The module's entry point: its settings, and when it is preloaded its
 *	  shared memory, its hooks and the launcher of its background workers.
 *
 *-------------------------------------------------------------------------
 */
#include "background.h"
#include "settings.h"
#include "shared_directory.h"
#include "shared_functions.h"
#include "shared_pending.h"
#include "shared_standby.h"
#include "shared_store.h"
#include "shared_wal.h"
#include "statements.h"

#include "miscadmin.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* The core's long walks (merge, validation, statistics) may be cancelled. */
static void
check_for_interrupts(void)
{
	CHECK_FOR_INTERRUPTS();
}

void
_PG_init(void)
{
	tlbf_interrupt_check = check_for_interrupts;
	tlbf_define_settings();
	if (process_shared_preload_libraries_in_progress)
	{
		tlbf_define_preloaded_settings();
		tlbf_wal_init();
		tlbf_directory_init();
		tlbf_pending_init();
		tlbf_standby_init();
		tlbf_store_init();
		tlbf_statements_init();
		tlbf_register_launcher();
	}
	/* after every definition: placeholders of undefined names are removed */
	MarkGUCPrefixReserved("tlbf");
}
