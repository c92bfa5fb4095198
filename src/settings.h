/*-------------------------------------------------------------------------
 *
 * settings.h
 *	  settings.c: the extension's settings (tlbf.*).
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_SETTINGS_H
#define TLBF_SETTINGS_H

#include "tlbf_pg.h"

extern int	tlbf_max_filter_bytes;
extern int	tlbf_agg_send_limit;
extern int	tlbf_naptime;
extern bool tlbf_worker_enabled;
extern bool tlbf_maintenance_to_format3;
extern int	tlbf_agg_bucketed_band;
extern int	tlbf_agg_pass_limit;
extern int	tlbf_shared_format;
extern int	tlbf_snapshot_interval;
extern int	tlbf_cache_memory;
extern int	tlbf_max_future;
extern void tlbf_define_settings(void);
extern void tlbf_define_preloaded_settings(void);

/* settings.c defines these two, shared_directory.c holds them */
extern int	tlbf_shared_memory;
extern int	tlbf_max_shared_filters;

#endif							/* TLBF_SETTINGS_H */
