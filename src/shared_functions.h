/*-------------------------------------------------------------------------
 *
 * shared_functions.h
 *	  What the SQL functions of shared filters and their trigger share.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_SHARED_FUNCTIONS_H
#define TLBF_SHARED_FUNCTIONS_H

#include "shared_store.h"
#include "filter_args.h"

/* What one try of a test-and-add that follows the transaction found. */
typedef enum AddTry
{
	TRY_ADDED,					/* new: added for this transaction */
	TRY_SEEN,					/* seen, or added by a committed transaction
								 * or by this one */
	TRY_WAIT,					/* added by another open transaction: wait */
	TRY_AGAIN,					/* (an XID was taken): try again */
	TRY_REHASH					/* hashed as other kinds than the filter's */
} AddTry;

/* What an insertion does when its filter is full and the pool has no room. */
typedef enum SharedWhenFull
{
	SHARED_FULL_ERROR,			/* fail: the filter stays as it was */
	SHARED_FULL_DROP_OLDEST		/* drop its oldest slices, with a WARNING */
} SharedWhenFull;

/*
 * What a call site last saw of a shared filter's kind of key.  Keys are
 * hashed before the filter's lock is taken, as this guess says; under the
 * lock the guess is checked, and if the filter records other kinds, the
 * guess is mended and the keys hashed again (a filter records its kinds
 * once, with its first key, so that happens at most once a filter).
 */
typedef struct SharedKeyGuess
{
	char		name[NAMEDATALEN];
	TlbfKeys	keys;
	bool		holds_keys;
} SharedKeyGuess;

/* shared_functions.c */
extern void tlbf_shared_guess_for(SharedKeyGuess *guess, const char *name);
extern bool tlbf_shared_insert(const char *name, const TlbfHash *hashes,
							   const TlbfTime *times, int n, TlbfKeys basis,
							   SharedKeyGuess *guess);
extern bool tlbf_shared_accept(const char *name, TlbfHash hash, TlbfTime at,
							   double threshold, double prior, SharedWhenFull when_full,
							   bool stored, TlbfKeys basis, SharedKeyGuess *guess,
							   bool *is_new);
extern bool tlbf_shared_confirm(const char *name, TlbfHash hash, TlbfKeys basis,
								SharedKeyGuess *guess);

/* shared_trigger.c */

#endif							/* TLBF_SHARED_FUNCTIONS_H */
