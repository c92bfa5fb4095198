/*-------------------------------------------------------------------------
 *
 * shared_filters.h
 *	  What the SQL functions of shared filters and their trigger share.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_SHARED_FILTERS_H
#define TLBF_SHARED_FILTERS_H

#include "shared_store.h"

/* What an insertion does when its filter is full and the pool has no room. */
typedef enum SharedWhenFull
{
	SHARED_FULL_ERROR,			/* fail: the filter stays as it was */
	SHARED_FULL_DROP_OLDEST		/* drop its oldest slices, with a WARNING */
} SharedWhenFull;

/* shared_functions.c */
extern bool tlbf_shared_insert(const char *name, const TlbfHash *hashes,
							   const TlbfTime *times, int n);
extern bool tlbf_shared_accept(const char *name, TlbfHash hash, TlbfTime at,
							   double threshold, double prior, SharedWhenFull when_full);

#endif							/* TLBF_SHARED_FILTERS_H */
