/*-------------------------------------------------------------------------
 *
 * settings.c
 *	  The extension's settings (tlbf.*), defined when the library loads
 *	  (module.c); those of shared memory and the workers only when it is
 *	  preloaded.
 *
 *-------------------------------------------------------------------------
 */
#include "background.h"
#include "settings.h"
#include "shared_pending.h"
#include "shared_wal.h"

#include "access/rmgr.h"
#include "utils/guc.h"
#include "utils/plancache.h"

/*
 * Largest filter value, in bytes, that insertions and unions may produce.
 * Read it through tlbf_filter_bytes_cap(): '1GB', its maximum, is one byte
 * more than a value can have.
 */
int			tlbf_max_filter_bytes = 256 * 1024 * 1024;

/* The most a partial tlbf_agg sends as rows, in kB; past it, a filter. */
int			tlbf_agg_send_limit = 256 * 1024;

/* The most memory, in kB, the TOASTed filters one call site keeps take. */
int			tlbf_cache_memory = 256 * 1024;
int			tlbf_max_future = 300;

/* Seconds between two maintenance passes. */
int			tlbf_naptime = 60;

/* Whether the background worker runs passes at all. */
bool		tlbf_worker_enabled = true;

/* Whether a maintenance pass moves values of formats 1 and 2 to format 3. */
bool		tlbf_maintenance_to_format3 = true;

/*
 * tlbf_agg sets a band larger than this bucket by bucket (kB): one that
 * fits the last-level cache is set faster as it comes.  A developer's
 * setting, so that tests reach both ways with small filters; the bytes
 * are the same either way.
 */
int			tlbf_agg_bucketed_band = 32768;

/*
 * The most bytes of hashes a partial tlbf_agg passes to the final step
 * (kB; past MaxAllocSize, MaxAllocSize: a value's limit).  A developer's
 * setting, so that tests reach the limit with small states.
 */
int			tlbf_agg_pass_limit = 1024 * 1024;

/* The format tlbf_shared_create makes: 3, or 2 (as before 1.5). */
int			tlbf_shared_format = 3;

/* Seconds between two saves of the shared filters that changed. */
int			tlbf_snapshot_interval = 30;

/*
 * tlbf.max_filter_bytes and tlbf.max_future can make IMMUTABLE functions
 * (tlbf_add, tlbf_create, tlbf_union) fail, never change what they
 * return.  A call with constant arguments is folded when its statement is
 * planned, so a plan kept (a prepared statement's generic plan, a PL/pgSQL
 * function's) would keep the check of the value it was made with: when
 * either changes, this session's kept plans are made again.
 */
static void
assign_max_filter_bytes(int newval, void *extra)
{
	if (newval != tlbf_max_filter_bytes)
		ResetPlanCache();
}

static void
assign_max_future(int newval, void *extra)
{
	if (newval != tlbf_max_future)
		ResetPlanCache();
}

/* The settings every session has. */
void
tlbf_define_settings(void)
{
	DefineCustomIntVariable("tlbf.max_filter_bytes",
							"Largest size a tlbf filter may grow to.",
							"An insertion or union that would grow a filter past it "
							"fails; below it the setting changes nothing.",
							&tlbf_max_filter_bytes,
							256 * 1024 * 1024,
							8 * 1024,
							1024 * 1024 * 1024,
							PGC_USERSET,
							GUC_UNIT_BYTE,
							NULL, assign_max_filter_bytes, NULL);
	DefineCustomIntVariable("tlbf.agg_send_limit",
							"No effect since 1.5 (kept so that settings naming it stay valid).",
							"Until 1.5: the most rows a partial tlbf_agg sent to the final "
							"aggregation before it sent a filter of its rows.",
							&tlbf_agg_send_limit,
							256 * 1024,
							64,
							512 * 1024,
							PGC_USERSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("tlbf.max_future",
							"How far ahead of the server's clock a key's time may be.",
							"A key dated later is refused: it would keep its filter "
							"from forgetting until then.  -1 accepts any time.",
							&tlbf_max_future,
							300,
							-1,
							INT_MAX / 1000,
							PGC_USERSET,
							GUC_UNIT_S,
							NULL, assign_max_future, NULL);
	DefineCustomIntVariable("tlbf.cache_memory",
							"Memory for the stored filters one expression of a query reads.",
							"Each is fetched and checked once per query; past this, the least "
							"recently used go (the two used last always stay).",
							&tlbf_cache_memory,
							256 * 1024,
							0,
							MAX_KILOBYTES,
							PGC_USERSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("tlbf.naptime",
							"Time between two passes of the tlbf maintenance worker.",
							NULL,
							&tlbf_naptime,
							60,
							1,
							86400,
							PGC_SIGHUP,
							GUC_UNIT_S,
							NULL, NULL, NULL);
	DefineCustomBoolVariable("tlbf.worker_enabled",
							 "Whether the tlbf maintenance worker retires expired slices.",
							 NULL,
							 &tlbf_worker_enabled,
							 true,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("tlbf.maintenance_to_format3",
							 "Whether a tlbf maintenance pass moves the values of formats 1 and 2 it tends to format 3.",
							 "Each becomes a value of format 3 carrying the old one until its keys expire "
							 "(tlbf_to_format3); off keeps them as they are.",
							 &tlbf_maintenance_to_format3,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("tlbf.agg_bucketed_band",
							"Size above which tlbf_agg sets its filter's keys in the order of their place in it.",
							"A developer's setting: the filter is the same either way.",
							&tlbf_agg_bucketed_band,
							32768,
							0,
							MAX_KILOBYTES,
							PGC_USERSET,
							GUC_UNIT_KB | GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							NULL, NULL, NULL);
	DefineCustomIntVariable("tlbf.agg_pass_limit",
							"Most bytes of hashes a partial tlbf_agg passes to the final step.",
							"A developer's setting: at most 1GB, the largest value.",
							&tlbf_agg_pass_limit,
							1024 * 1024,
							64,
							1024 * 1024,
							PGC_USERSET,
							GUC_UNIT_KB | GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							NULL, NULL, NULL);
	DefineCustomIntVariable("tlbf.shared_format",
							"The format of the filters tlbf_shared_create makes: 3, or 2.",
							"While the server's setting is 3, the launcher moves filters of format 2 to format 3.",
							&tlbf_shared_format,
							3,
							2,
							3,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("tlbf.snapshot_interval",
							"Time between two saves of the shared tlbf filters that changed.",
							"After a crash, the insertions since the last save are lost.",
							&tlbf_snapshot_interval,
							30,
							1,
							86400,
							PGC_SIGHUP,
							GUC_UNIT_S,
							NULL, NULL, NULL);
}

/* The settings of what exists only when the library is preloaded. */
/* 0 (off), or an ID of the custom range */
static bool
check_wal_resource_manager(int *newval, void **extra, GucSource source)
{
	if (*newval == 0 || (*newval >= RM_MIN_CUSTOM_ID && *newval <= RM_MAX_CUSTOM_ID))
		return true;
	GUC_check_errdetail("It is 0 (keys are not written to the WAL) or a custom resource manager ID, %d to %d.",
						RM_MIN_CUSTOM_ID, RM_MAX_CUSTOM_ID);
	return false;
}

void
tlbf_define_preloaded_settings(void)
{
	DefineCustomIntVariable("tlbf.wal_resource_manager",
							"ID of the WAL resource manager that writes the keys committed to shared tlbf filters.",
							"0 writes no keys to the WAL: a crash then forgets the keys added since the last save. Never change it while the WAL holds records of the old ID.",
							&tlbf_wal_resource_manager,
							RM_EXPERIMENTAL_ID,
							0,
							RM_MAX_CUSTOM_ID,
							PGC_POSTMASTER,
							0,
							check_wal_resource_manager, NULL, NULL);
	DefineCustomIntVariable("tlbf.shared_memory",
							"Shared memory for the named tlbf filters.",
							NULL,
							&tlbf_shared_memory,
							64 * 1024 * 1024,
							64 * 1024,
							INT_MAX,		/* not palloc'd: up to 2GB */
							PGC_POSTMASTER,
							GUC_UNIT_BYTE,
							NULL, NULL, NULL);
	DefineCustomIntVariable("tlbf.max_shared_filters",
							"Largest number of named tlbf filters in shared memory.",
							NULL,
							&tlbf_max_shared_filters,
							64,
							1,
							10000,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("tlbf.max_pending_keys",
							"Largest number of keys of open transactions waiting for shared tlbf filters.",
							"A key enters a shared filter when its transaction commits; until then it waits in shared memory (48 bytes a key). One transaction may take a quarter of them.",
							&tlbf_max_pending_keys,
							200000,
							1024,
							INT_MAX / 64,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);
}
