/*-------------------------------------------------------------------------
 *
 * tlbf_pg.h
 *	  What every PostgreSQL glue file starts from: PostgreSQL's and the
 *	  core's headers, and the defaults every filter made here shares.  What
 *	  a file offers the others is declared in its own header (filter_args.h,
 *	  key_match.h, ...).
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_PG_H
#define TLBF_PG_H

#include "compat.h"

#include "fmgr.h"
#include "nodes/pg_list.h"
#include "utils/array.h"
#include "utils/timestamp.h"

#include "core/tlbf.h"

typedef struct ItemHasher ItemHasher;
typedef struct KeyMatcher KeyMatcher;

/* The SQL defaults of tlbf_create, also used by tlbf_agg (filter_params.c). */
#define TLBF_DEFAULT_ERROR_RATE 0.01
#define TLBF_DEFAULT_CAPACITY	1000

/* Every filter made here hashes with this seed, so that any two can merge. */
#define TLBF_DEFAULT_SEED	0

#endif							/* TLBF_PG_H */
