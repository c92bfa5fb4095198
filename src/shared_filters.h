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

/* shared_functions.c */
extern bool tlbf_shared_insert(const char *name, const TlbfHash *hashes,
							   const TlbfTime *times, int n,
							   double prior, double *posterior);

#endif							/* TLBF_SHARED_FILTERS_H */
