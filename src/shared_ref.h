/*-------------------------------------------------------------------------
 *
 * shared_ref.h
 *	  What the layers of shared filters pass between them: a filter opened
 *	  for use.  The directory (shared_directory.h) opens it, the store
 *	  (shared_store.h) hands it to the SQL functions; a header of types
 *	  only, so that the store need not export the directory's functions.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_SHARED_REF_H
#define TLBF_SHARED_REF_H

#include "tlbf_pg.h"

#include "storage/lwlock.h"

/* A filter opened for use: the directory and filter locks are held. */
typedef struct SharedFilterRef
{
	int			slot;
	Tlbf	   *filter;			/* in shared memory */
	LWLockMode	mode;
} SharedFilterRef;

#endif							/* TLBF_SHARED_REF_H */
