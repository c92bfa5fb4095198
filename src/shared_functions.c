/*-------------------------------------------------------------------------
 *
 * shared_functions.c
 *	  The SQL functions of named filters in shared memory: create, drop,
 *	  adopt, add (an atomic test-and-add), contains, get, list and rebuild.
 *
 * Every function first makes sure the library was preloaded.  Items are
 * hashed before a filter's lock is taken: nothing but the filter is
 * touched while it is held.  During recovery (a hot standby) the functions
 * that change a filter raise 25006, and those that read one read its
 * saved copy, replicated from the primary with the snapshot table.
 *
 *-------------------------------------------------------------------------
 */
#include "shared_functions.h"
#include "filter_args.h"
#include "filter_params.h"
#include "inference.h"
#include "info.h"
#include "key_match.h"
#include "shared_value.h"
#include "times.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(tlbf_shared_create);
PG_FUNCTION_INFO_V1(tlbf_shared_drop);
PG_FUNCTION_INFO_V1(tlbf_shared_adopt);
PG_FUNCTION_INFO_V1(tlbf_shared_add);
PG_FUNCTION_INFO_V1(tlbf_shared_contains);
PG_FUNCTION_INFO_V1(tlbf_shared_contains_fields);
PG_FUNCTION_INFO_V1(tlbf_shared_get);
PG_FUNCTION_INFO_V1(tlbf_shared_list);
PG_FUNCTION_INFO_V1(tlbf_shared_stats);
PG_FUNCTION_INFO_V1(tlbf_shared_stats_reset);
PG_FUNCTION_INFO_V1(tlbf_shared_rebuild);
PG_FUNCTION_INFO_V1(tlbf_shared_last_seen);
PG_FUNCTION_INFO_V1(tlbf_shared_probability);

#define REBUILD_BATCH 1000

static char *
filter_name(FunctionCallInfo fcinfo, int argno)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(argno));

	tlbf_store_require();
	if (name[0] == '\0' || strlen(name) >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("invalid shared tlbf filter name \"%s\"", name),
				 errdetail("A name has 1 to %d bytes.", NAMEDATALEN - 1)));
	return name;
}

/*
 * tlbf_shared_create(name, span, error_rate, capacity, max_bytes): a new
 * empty filter in shared memory, in a region of max_bytes (NULL: what its
 * capacity needs) it never grows past, and its row in the snapshot table.
 * NULL when a parameter but max_bytes is NULL, as if STRICT.
 */
Datum
tlbf_shared_create(PG_FUNCTION_ARGS)
{
	char	   *name;
	TlbfParams	params;

	for (int i = 0; i < 4; i++)
		if (PG_ARGISNULL(i))
			PG_RETURN_NULL();
	name = filter_name(fcinfo, 0);
	PreventCommandDuringRecovery("tlbf_shared_create()");
	(void) tlbf_params_from_args(fcinfo, 1, 3, &params);
	tlbf_params_check(&params);
	/* the store checks its size against the pool (not tlbf.max_filter_bytes) */
	tlbf_store_create(name, &params, PG_NARGS() > 4 && !PG_ARGISNULL(4) ? PG_GETARG_INT64(4) : 0);
	PG_RETURN_VOID();
}

/* tlbf_shared_drop(name): the filter and its saved copy go at commit. */
Datum
tlbf_shared_drop(PG_FUNCTION_ARGS)
{
	char	   *name = filter_name(fcinfo, 0);

	PreventCommandDuringRecovery("tlbf_shared_drop()");
	tlbf_store_drop(name);
	PG_RETURN_VOID();
}

/*
 * tlbf_shared_adopt(): in a copy of a database, the saved filters it
 * copied become its own, loaded on their next use.  Returns how many.
 */
Datum
tlbf_shared_adopt(PG_FUNCTION_ARGS)
{
	tlbf_store_require();
	PreventCommandDuringRecovery("tlbf_shared_adopt()");
	PG_RETURN_INT64(tlbf_store_adopt());
}

/*
 * Add hashes[0..n) at times[0..n) to the filter 'ref' holds exclusively.
 * When its region has no room for them, 'when_full' says whether the
 * insertion fails (the filter unchanged: the core changes nothing it
 * cannot finish) or the filter drops its oldest slices to fit.
 */
static TlbfStatus
insert_locked(SharedFilterRef *ref, const TlbfHash *hashes, const TlbfTime *times, int n,
			  SharedWhenFull when_full)
{
	TlbfMemory	memory;
	TlbfStatus	status = TLBF_OK;

	tlbf_store_filter_memory(ref, &memory);
	for (int i = 0; i < n && status == TLBF_OK; i++)
	{
		status = shared_value_insert(&ref->filter, &memory, hashes[i], times[i]);
		if (status != TLBF_OK && when_full == SHARED_FULL_DROP_OLDEST)
		{
			TlbfMemory	dropping = memory;

			dropping.keep_live = false;
			status = shared_value_insert(&ref->filter, &dropping, hashes[i], times[i]);
		}
	}
	tlbf_store_count_change(ref);
	return status;
}

/*
 * After the filter is closed: an insertion that found the filter's region
 * full fails (it changed nothing), and one that dropped live slices says so
 * at WARNING, which the server log keeps.
 */
static void
report_full(const char *name, TlbfStatus status, uint64 truncated_before,
			uint64 truncated_after, Size region)
{
	if (status != TLBF_OK)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("shared tlbf filter \"%s\" is full", name),
				 errdetail("Its keys need more than its region of %zu bytes, which it was created with (max_bytes) and never outgrows.",
						   region),
				 errhint("Drop it and create it again with a larger max_bytes or capacity (tlbf_shared_create(..., max_bytes => ...)), and refill it with tlbf_shared_rebuild().  A tlbf_reject_recent trigger with 'on_full=drop' drops the filter's oldest keys instead.")));
	if (truncated_after > truncated_before)
		ereport(WARNING,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("shared tlbf filter \"%s\" was full and dropped unexpired slices", name),
				 errdetail("Keys in the dropped slices may now be reported absent, and their repeats accepted; tlbf_shared_list() counts such slices in \"truncated\" (now " UINT64_FORMAT ").",
						   truncated_after),
				 errhint("Create the filter again with a larger max_bytes or capacity, and refill it with tlbf_shared_rebuild().")));
}

/*
 * The guess for shared filter 'name': the one kept, if it is for that
 * name, else "no key yet" (hash as the key is; checked under the lock).
 */
void
tlbf_shared_guess_for(SharedKeyGuess *guess, const char *name)
{
	if (strcmp(guess->name, name) == 0)
		return;
	strlcpy(guess->name, name, NAMEDATALEN);
	guess->keys.fields = 0;
	guess->keys.kinds = 0;
	guess->keys.tag = 0;
	guess->holds_keys = false;
}

/*
 * Were keys hashed for 'basis' (the kinds they were hashed as) hashed as
 * filter f hashes its keys?  If not, mend the guess from f.  A filter that
 * holds no key and records no kind takes any (and records 'basis' with the
 * first, even if that key's transaction then rolls back: the filter's
 * kinds come from its trigger's columns).
 */
static bool
hashed_as_filter(const Tlbf *f, TlbfKeys basis, SharedKeyGuess *guess)
{
	if (!shared_value_holds_keys(f) || tlbf_keys_equal(shared_value_keys(f), basis))
		return true;
	guess->keys = shared_value_keys(f);
	guess->holds_keys = true;
	return false;
}

static void
remember_filter(const Tlbf *f, SharedKeyGuess *guess)
{
	guess->keys = shared_value_keys(f);
	guess->holds_keys = shared_value_holds_keys(f);
}

/*
 * Count what an insertion into the open filter did: refused for room, or
 * took more of its region than the 'size_before' it had.
 */
static void
count_insertion(const SharedFilterRef *ref, TlbfStatus status, Size size_before)
{
	if (status != TLBF_OK)
		tlbf_store_count(ref, SHARED_FULL, 1);
	else if (shared_value_size(ref->filter) > size_before)
		tlbf_store_count(ref, SHARED_GROWN, 1);
}

/*
 * Under one exclusive lock on shared filter 'name': add hashes[0..n) at
 * times[0..n) to its bits at once, not waiting for this transaction to
 * commit: tlbf_shared_rebuild adds the keys of rows already stored.
 * ERROR if the pool has no room for them.  Returns false, changing
 * nothing, if the keys were hashed as kinds other than the filter's
 * ('basis'): hash them again as the mended guess says.
 */
static bool
insert_now(const char *name, const TlbfHash *hashes, const TlbfTime *times, int n,
		   TlbfKeys basis, SharedKeyGuess *guess)
{
	SharedFilterRef ref;
	TlbfStatus	status;
	uint64		truncated_before;
	uint64		truncated_after;
	Size		size_before;
	Size		region;
	XLogRecPtr	logged;

	PreventCommandDuringRecovery("an insertion into a shared tlbf filter");
	tlbf_store_open(name, LW_EXCLUSIVE, &ref);
	if (!hashed_as_filter(ref.filter, basis, guess))
	{
		tlbf_store_close(&ref);
		return false;
	}
	truncated_before = shared_value_truncated(ref.filter);
	size_before = shared_value_size(ref.filter);
	if (!shared_value_holds_keys(ref.filter))
		shared_value_record_keys(ref.filter, basis);
	status = insert_locked(&ref, hashes, times, n, SHARED_FULL_ERROR);
	/* in the WAL as they are in the bits, whether all went in or some */
	logged = tlbf_store_log_added(&ref, hashes, times, n);
	count_insertion(&ref, status, size_before);
	if (status == TLBF_OK)
		tlbf_store_count(&ref, SHARED_ADDED, n);
	truncated_after = shared_value_truncated(ref.filter);
	region = tlbf_store_region(&ref);
	remember_filter(ref.filter, guess);
	tlbf_store_close(&ref);
	tlbf_store_flush(logged);

	report_full(name, status, truncated_before, truncated_after, region);
	return true;
}

/*
 * One try of a test-and-add that follows the transaction (the dedup
 * trigger's, tlbf_shared_add's), under one lock on shared filter 'name':
 * was the key seen within the span before 'at' (by the filter's bits, or
 * among the keys of committed transactions not folded into them yet; with
 * a threshold: is the probability that it was at least 'threshold', given
 * 'prior'), or added by this transaction?  If not, and no other open
 * transaction added it, it is added as this (sub)transaction's, 'stored'
 * or to be confirmed (tlbf_shared_confirm): it enters the bits only if
 * the transaction commits.  If another open transaction added it, the
 * caller waits for that one (*wait_for) and tries again, as an insertion
 * into a unique index does.  The filter is taken exclusively when it must
 * record its kind of key, or when enough keys wait for it to be folded
 * ('when_full' then says what a fold does when the pool has no room).
 * *unseen_in: the version of the filter whose bits did not have the key,
 * if a try found that (an invalid slot if not): a try again of the same
 * key on the same version need not look at the bits again.
 */
static AddTry
try_add(const char *name, TlbfHash hash, TlbfTime at, double threshold, double prior,
		bool stored, SharedWhenFull when_full, TlbfKeys basis, SharedKeyGuess *guess,
		TransactionId *wait_for, StoreVersion *unseen_in)
{
	SharedFilterRef ref;
	LWLockMode	mode = LW_SHARED;
	TlbfStatus	status = TLBF_OK;
	uint64		truncated_before = 0;
	uint64		truncated_after = 0;
	Size		region = 0;
	bool		seen;
	TlbfTime	pending_at;

	PreventCommandDuringRecovery("an insertion into a shared tlbf filter");
	tlbf_store_fold_if_crowded();
	for (;;)
	{
		tlbf_store_open(name, mode, &ref);
		if (!hashed_as_filter(ref.filter, basis, guess))
		{
			tlbf_store_close(&ref);
			return TRY_REHASH;
		}
		if (mode == LW_EXCLUSIVE ||
			(shared_value_holds_keys(ref.filter) && !tlbf_store_fold_due(&ref)))
			break;
		tlbf_store_close(&ref);
		mode = LW_EXCLUSIVE;
	}
	if (mode == LW_EXCLUSIVE)
	{
		if (!shared_value_holds_keys(ref.filter))
			shared_value_record_keys(ref.filter, basis);
		truncated_before = shared_value_truncated(ref.filter);
		status = tlbf_store_fold(&ref, when_full == SHARED_FULL_DROP_OLDEST);
		if (status != TLBF_OK)
			tlbf_store_count(&ref, SHARED_FULL, 1);
		truncated_after = shared_value_truncated(ref.filter);
		region = tlbf_store_region(&ref);
		if (status != TLBF_OK)
		{
			tlbf_store_close(&ref);
			report_full(name, status, truncated_before, truncated_after, region);
		}
	}
	if (unseen_in->id.slot >= 0 && tlbf_store_same_version(*unseen_in, tlbf_store_version(&ref)))
		seen = false;
	else
		seen = shared_value_query(ref.filter, hash, at, shared_value_span(ref.filter)) &&
			(threshold <= 0 ||
			 shared_value_posterior(ref.filter, hash, at, shared_value_span(ref.filter),
									prior) >= threshold);
	/*
	 * A key to add needs this (sub)transaction's XID, which is taken before
	 * the filter's lock, and only then: a row that is skipped leaves its
	 * transaction without one, which then writes nothing at all.
	 */
	if (!seen && !TransactionIdIsValid(GetCurrentTransactionIdIfAny()))
	{
		PendingFound found = tlbf_store_pending_find(&ref, hash, wait_for, &pending_at);

		if (found == PENDING_NONE)
		{
			*unseen_in = tlbf_store_version(&ref);
			tlbf_store_close(&ref);
			(void) GetCurrentTransactionId();
			return TRY_AGAIN;
		}
		if (found == PENDING_WAIT)
		{
			tlbf_store_close(&ref);
			return TRY_WAIT;
		}
		seen = !(threshold > 0 && prior <= 0);
		if (!seen)
		{
			tlbf_store_close(&ref);
			(void) GetCurrentTransactionId();
			return TRY_AGAIN;
		}
	}
	/* (an error here, a full table of pending keys, releases the locks) */
	if (!seen)
	{
		/* one step: of two transactions claiming the key, one finds the other's */
		PendingFound found = tlbf_store_pending_claim(&ref, hash, at, stored, wait_for,
													  &pending_at);

		if (found == PENDING_WAIT)
		{
			tlbf_store_close(&ref);
			return TRY_WAIT;
		}

		/*
		 * A key pending is known for sure: its probability is 1, unless the
		 * prior says no key can have been seen (the posterior is then 0),
		 * and the row is accepted: it adds its key.
		 */
		seen = found == PENDING_STORED;
		if (seen && threshold > 0 && prior <= 0)
		{
			tlbf_store_pending_reserve(&ref, hash, at, stored);
			seen = false;
		}
	}
	remember_filter(ref.filter, guess);
	tlbf_store_count(&ref, seen ? SHARED_REJECTED : SHARED_ADDED, 1);
	tlbf_store_close(&ref);
	report_full(name, TLBF_OK, truncated_before, truncated_after, region);
	return seen ? TRY_SEEN : TRY_ADDED;
}

/*
 * The transactional test-and-add: tries (try_add), waiting for the open
 * transactions that added the key meanwhile.  *is_new: the key was not
 * seen, and is now this transaction's.  False if the key must be hashed
 * again as the mended guess says.
 */
static bool
add_following_transaction(const char *name, TlbfHash hash, TlbfTime at, double threshold,
						  double prior, bool stored, SharedWhenFull when_full,
						  TlbfKeys basis, SharedKeyGuess *guess, bool *is_new)
{
	StoreVersion unseen_in = {{-1, 0}, 0};

	for (;;)
	{
		TransactionId wait_for;

		switch (try_add(name, hash, at, threshold, prior, stored, when_full, basis, guess,
						&wait_for, &unseen_in))
		{
			case TRY_REHASH:
				return false;
			case TRY_WAIT:
				XactLockTableWait(wait_for, NULL, NULL, XLTW_None);
				continue;
			case TRY_AGAIN:
				continue;
			case TRY_ADDED:
				*is_new = true;
				return true;
			case TRY_SEEN:
				*is_new = false;
				return true;
		}
	}
}

/*
 * Insert hashes[0..n-1] seen at times[0..n-1] into shared filter 'name' at
 * once (tlbf_shared_rebuild); ERROR if the pool has no room for them.
 * False if they must be hashed again (insert_now).
 */
bool
tlbf_shared_insert(const char *name, const TlbfHash *hashes, const TlbfTime *times, int n,
				   TlbfKeys basis, SharedKeyGuess *guess)
{
	return insert_now(name, hashes, times, n, basis, guess);
}

/*
 * The dedup trigger's step (its BEFORE trigger): is this a key the filter
 * saw within its span, or one a committed or open transaction added (with
 * a threshold: is the probability that it was at least 'threshold', given
 * 'prior')?  If not, the row is accepted and its key added at 'at' for
 * this transaction, as stored, or ('stored' false) reserved until the
 * AFTER trigger confirms the row was stored (tlbf_shared_confirm); *is_new
 * is true.  A rejected key is not added
 * again: it keeps the time of the row accepted last, so that a key is held
 * once per span however often it comes back, and a filter's capacity is
 * the keys it accepts per span.  False if the key must be hashed again.
 */
bool
tlbf_shared_accept(const char *name, TlbfHash hash, TlbfTime at, double threshold,
				   double prior, SharedWhenFull when_full, bool stored, TlbfKeys basis,
				   SharedKeyGuess *guess, bool *is_new)
{
	return add_following_transaction(name, hash, at, threshold, prior, stored, when_full,
									 basis, guess, is_new);
}

/*
 * The dedup trigger's AFTER step: the row whose key the BEFORE trigger
 * reserved was stored, so the key enters the filter if the transaction
 * commits.  ERROR if this transaction reserved no such key: the two
 * triggers do not match.  False if the key must be hashed again.
 */
bool
tlbf_shared_confirm(const char *name, TlbfHash hash, TlbfKeys basis, SharedKeyGuess *guess)
{
	SharedFilterRef ref;
	bool		confirmed;

	tlbf_store_open(name, LW_SHARED, &ref);
	if (!hashed_as_filter(ref.filter, basis, guess))
	{
		tlbf_store_close(&ref);
		return false;
	}
	confirmed = tlbf_store_pending_confirm(&ref, hash);
	tlbf_store_close(&ref);
	if (!confirmed)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the AFTER INSERT trigger tlbf_reject_recent found no key its BEFORE INSERT trigger reserved in shared tlbf filter \"%s\"",
						name),
				 errdetail("The stored row's key is not one the BEFORE trigger let through in this transaction."),
				 errhint("Create the two triggers on the same table with the same arguments, the BEFORE one last among the table's BEFORE INSERT triggers.")));
	return true;
}

static SharedKeyGuess *
call_site_guess(FunctionCallInfo fcinfo, const char *name)
{
	CallCache  *cache = tlbf_call_cache(fcinfo);

	if (cache->shared_guess == NULL)
		cache->shared_guess = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt,
													 sizeof(SharedKeyGuess));
	tlbf_shared_guess_for(cache->shared_guess, name);
	return cache->shared_guess;
}

/*
 * tlbf_shared_add(name, item, at): add item, seen at 'at'; true when it was
 * not already present.  The key enters the filter when the transaction
 * commits: until then other transactions adding it wait for this one, as
 * for a unique index, so that of sessions adding the same new key at
 * once, exactly one gets true (and another one if it rolls back).
 */
Datum
tlbf_shared_add(PG_FUNCTION_ARGS)
{
	char	   *name = filter_name(fcinfo, 0);
	TlbfTime	at = tlbf_insert_time_arg(fcinfo, 2);
	SharedKeyGuess *guess = call_site_guess(fcinfo, name);
	TlbfHash	hash;
	TlbfKeys	basis;
	bool		is_new;

	do
	{
		(void) tlbf_key_arg_hash_shared(fcinfo, 1, guess->keys, guess->holds_keys, true,
										&hash, &basis);
	} while (!add_following_transaction(name, hash, at, 0.0, 0.0, true, SHARED_FULL_ERROR,
										basis, guess, &is_new));
	PG_RETURN_BOOL(is_new);
}

/*
 * Open a filter to read it: shared memory, or during recovery its saved
 * copy (ref->filter set, no lock held: *from_saved true).
 */
static Tlbf *
open_for_reading(FunctionCallInfo fcinfo, const char *name, SharedFilterRef *ref,
				 bool *from_saved)
{
	*from_saved = RecoveryInProgress();
	if (*from_saved)
		return tlbf_store_saved_filter(fcinfo, name);
	tlbf_store_open(name, LW_SHARED, ref);
	return ref->filter;
}

static void
close_after_reading(SharedFilterRef *ref, bool from_saved)
{
	if (!from_saved)
		tlbf_store_close(ref);
}

/*
 * Open a filter to read it, with the hash of argument 1 as the filter
 * hashes its keys (or of 'text_fields', a key given as its fields' text).
 * *possible is false if the item equals none of them.
 */
static Tlbf *
open_with_key(FunctionCallInfo fcinfo, const char *name, ArrayType *text_fields,
			  SharedFilterRef *ref, bool *from_saved, TlbfHash *hash, bool *possible)
{
	SharedKeyGuess *guess = call_site_guess(fcinfo, name);

	for (;;)
	{
		TlbfKeys	basis;
		Tlbf	   *f;

		if (text_fields != NULL)
			*possible = tlbf_key_text_fields_hash_shared(fcinfo, text_fields, guess->keys,
														 guess->holds_keys, hash, &basis);
		else
			*possible = tlbf_key_arg_hash_shared(fcinfo, 1, guess->keys, guess->holds_keys,
												 false, hash, &basis);
		f = open_for_reading(fcinfo, name, ref, from_saved);
		if (hashed_as_filter(f, basis, guess))
			return f;
		close_after_reading(ref, *from_saved);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Was the key added by a transaction that committed (or by this one) and
 * is not folded into the filter's bits yet, within 'window' before 'at'?
 * Keys of other open transactions are not seen, as their rows are not.
 * (A standby reads the saved copy: the keys committed since are those its
 * replay of the WAL found.)
 */
static bool
committed_pending(const SharedFilterRef *ref, const char *name, bool from_saved, TlbfHash hash,
				  TlbfTime at, int64 window, TlbfTime *added)
{
	TransactionId other;

	if (from_saved)
		return tlbf_store_replayed_find(name, hash, added) &&
			*added <= at && *added > at - window;
	return tlbf_store_pending_find(ref, hash, &other, added) == PENDING_STORED &&
		*added <= at && *added > at - window;
}

/* Count a key asked of the filter, found or not (not of a saved copy). */
static void
count_lookup(const SharedFilterRef *ref, bool from_saved, bool found)
{
	if (from_saved)
		return;
	tlbf_store_count(ref, SHARED_LOOKUPS, 1);
	if (found)
		tlbf_store_count(ref, SHARED_FOUND, 1);
}

Datum
tlbf_shared_contains(PG_FUNCTION_ARGS)
{
	char	   *name = filter_name(fcinfo, 0);
	TlbfTime	at = tlbf_time_arg(fcinfo, 2);
	TlbfHash	hash;
	SharedFilterRef ref;
	bool		from_saved;
	bool		possible;
	TlbfHash	fields;

	/* (hashed before the filter's lock is taken: it may read the catalog) */
	bool		as_fields = tlbf_key_arg_legacy_fields_hash(fcinfo, 1, 0, &fields);
	Tlbf	   *f = open_with_key(fcinfo, name, NULL, &ref, &from_saved, &hash, &possible);
	TlbfTime	pending_at;
	bool		found = possible &&
		(shared_value_query(f, hash, at, shared_value_span(f)) ||
		 committed_pending(&ref, name, from_saved, hash, at, shared_value_span(f), &pending_at));

	/*
	 * A filter written before 1.4 holds a trigger's keys of several
	 * columns as their fields combined, and tlbf_shared_add's rows as one
	 * value: a row asked of it is either.
	 */
	if (!found && as_fields && shared_value_unkinded(f))
		found = shared_value_query(f, fields, at, shared_value_span(f));
	count_lookup(&ref, from_saved, found);
	close_after_reading(&ref, from_saved);
	PG_RETURN_BOOL(found);
}

/*
 * tlbf_shared_contains_fields(name, VARIADIC fields text[]): as
 * tlbf_shared_contains(name, ROW(...)) at the transaction's start, for a key
 * of several columns given as text: drivers send untyped parameters, which
 * ROW($1, $2) cannot take.
 */
Datum
tlbf_shared_contains_fields(PG_FUNCTION_ARGS)
{
	char	   *name = filter_name(fcinfo, 0);
	ArrayType  *fields = PG_GETARG_ARRAYTYPE_P(1);
	TlbfTime	at = tlbf_check_time(GetCurrentTransactionStartTimestamp());
	TlbfHash	hash;
	SharedFilterRef ref;
	bool		from_saved;
	bool		possible;
	TlbfTime	pending_at;
	Tlbf	   *f = open_with_key(fcinfo, name, fields, &ref, &from_saved, &hash, &possible);
	bool		found = possible &&
		(shared_value_query(f, hash, at, shared_value_span(f)) ||
		 committed_pending(&ref, name, from_saved, hash, at, shared_value_span(f), &pending_at));

	count_lookup(&ref, from_saved, found);
	close_after_reading(&ref, from_saved);
	PG_RETURN_BOOL(found);
}

/* tlbf_shared_last_seen(name, item, at): as tlbf_last_seen. */
Datum
tlbf_shared_last_seen(PG_FUNCTION_ARGS)
{
	char	   *name = filter_name(fcinfo, 0);
	TlbfTime	at = tlbf_time_arg(fcinfo, 2);
	TlbfHash	hash;
	SharedFilterRef ref;
	bool		from_saved;
	bool		possible;
	Tlbf	   *f = open_with_key(fcinfo, name, NULL, &ref, &from_saved, &hash, &possible);
	TlbfTime	lower,
				upper;
	TlbfTime	pending_at;
	bool		found;

	found = possible &&
		shared_value_last_seen(f, hash, at, shared_value_span(f), &lower, &upper);
	if (possible && committed_pending(&ref, name, from_saved, hash, at, shared_value_span(f), &pending_at) &&
		(!found || pending_at > upper))
	{
		/* added by a transaction that committed, not folded yet: then */
		lower = upper = pending_at;
		found = true;
	}
	count_lookup(&ref, from_saved, found);
	close_after_reading(&ref, from_saved);
	if (!found)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(tlbf_time_range(lower, upper));
}

/* tlbf_shared_probability(name, item, at, within, prior): as tlbf_probability. */
Datum
tlbf_shared_probability(PG_FUNCTION_ARGS)
{
	char	   *name;
	TlbfHash	hash;
	TlbfTime	at;
	double		prior;
	SharedFilterRef ref;
	bool		from_saved;
	bool		possible;
	Tlbf	   *f;
	int64		window;
	double		p;
	TlbfTime	pending_at;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(4))
		PG_RETURN_NULL();
	name = filter_name(fcinfo, 0);
	at = tlbf_time_arg(fcinfo, 2);
	prior = tlbf_check_prior(PG_GETARG_FLOAT8(4));
	f = open_with_key(fcinfo, name, NULL, &ref, &from_saved, &hash, &possible);
	/* (an error releases the filter's locks with the transaction) */
	window = tlbf_window_arg(fcinfo, 3, shared_value_span(f));
	if (possible && committed_pending(&ref, name, from_saved, hash, at, window, &pending_at))
		p = 1.0;
	else
		p = possible ? shared_value_posterior(f, hash, at, window, prior) : 0.0;
	/* found: the filter holds the key (all its bits set), as contains says */
	count_lookup(&ref, from_saved, p > 0.0);
	close_after_reading(&ref, from_saved);
	PG_RETURN_FLOAT8(p);
}

/*
 * A copy of shared filter 'name', taken in pieces of 16 MB, each under the
 * filter's shared lock, with a chance to cancel between them: a filter of
 * up to 1 GB is neither held locked, nor uncancellable, for the whole
 * copy.  A change of the filter meanwhile (a fold, a retirement) starts
 * the copy again; after three, it is copied under one lock.
 */
static Tlbf *
copy_in_pieces(const char *name)
{
	const Size	piece = (Size) 16 << 20;

	for (int attempt = 0;; attempt++)
	{
		SharedFilterRef ref;
		StoreVersion version;
		Size		size;
		Size		done;
		char	   *copy;

		tlbf_store_open(name, LW_SHARED, &ref);
		if (attempt == 3)
		{
			copy = (char *) shared_value_copy(ref.filter);
			tlbf_store_close(&ref);
			return (Tlbf *) copy;
		}
		version = tlbf_store_version(&ref);
		size = shared_value_size(ref.filter);
		tlbf_store_close(&ref);
		copy = palloc(size);
		for (done = 0; done < size; done += piece)
		{
			CHECK_FOR_INTERRUPTS();
			tlbf_store_open(name, LW_SHARED, &ref);
			if (!tlbf_store_same_version(version, tlbf_store_version(&ref)))
			{
				tlbf_store_close(&ref);
				break;
			}
			memcpy(copy + done, (const char *) ref.filter + done, Min(piece, size - done));
			tlbf_store_close(&ref);
		}
		if (done >= size)
		{
			shared_value_set_length((Tlbf *) copy);
			return (Tlbf *) copy;
		}
		pfree(copy);
	}
}

/*
 * tlbf_shared_get(name): a snapshot of the filter, usable as any tlbf:
 * with the keys of committed transactions folded into it first.
 */
Datum
tlbf_shared_get(PG_FUNCTION_ARGS)
{
	char	   *name = filter_name(fcinfo, 0);
	SharedFilterRef ref;
	TlbfStatus	status;
	uint64		truncated;
	Size		region;

	if (RecoveryInProgress())
		PG_RETURN_POINTER(shared_value_copy(tlbf_store_saved_filter(fcinfo, name)));
	tlbf_store_open(name, LW_EXCLUSIVE, &ref);
	truncated = shared_value_truncated(ref.filter);
	status = tlbf_store_fold(&ref, false);
	region = tlbf_store_region(&ref);
	/* without the keys that could not be folded, it would miss them */
	if (status != TLBF_OK)
	{
		tlbf_store_close(&ref);
		report_full(name, status, truncated, truncated, region);
	}
	tlbf_store_close(&ref);
	PG_RETURN_POINTER(copy_in_pieces(name));
}

/* One row of tlbf_shared_list(). */
static void
list_row(ReturnSetInfo *rsinfo, const char *name, const Tlbf *f, Size region,
		 bool unsaved)
{
	char	   *extra = psprintf("{\"region_bytes\": %zu, \"unsaved_changes\": %s}",
								 region, unsaved ? "true" : "false");
	Datum		values[2];
	bool		nulls[2] = {false, false};

	values[0] = CStringGetTextDatum(name);
	values[1] = DirectFunctionCall2(jsonb_concat,
									shared_value_info(f, GetCurrentTransactionStartTimestamp()),
									DirectFunctionCall1(jsonb_in, CStringGetDatum(extra)));
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * tlbf_shared_stats(): the counters of this database's shared filters
 * (SharedCounter), with when each was last saved and since when it counts.
 */
Datum
tlbf_shared_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ListCell   *cell;

	tlbf_store_require();
	InitMaterializedSRF(fcinfo, 0);
	foreach(cell, tlbf_store_counts())
	{
		SavedCounts *c = lfirst(cell);
		Datum		values[3 + SHARED_COUNTERS];
		bool		nulls[3 + SHARED_COUNTERS] = {0};

		values[0] = CStringGetTextDatum(c->name);
		for (int i = 0; i < SHARED_COUNTERS; i++)
			values[1 + i] = Int64GetDatum((int64) c->counts.values[i]);
		values[1 + SHARED_COUNTERS] = TimestampTzGetDatum(c->counts.saved_at);
		nulls[1 + SHARED_COUNTERS] = c->counts.saved_at == 0;
		values[2 + SHARED_COUNTERS] = TimestampTzGetDatum(c->counts.reset_at);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * tlbf_shared_stats_reset(name): count from zero again for filter 'name',
 * or for every filter of this database (NULL).  Returns how many.
 */
Datum
tlbf_shared_stats_reset(PG_FUNCTION_ARGS)
{
	char	   *name = PG_ARGISNULL(0) ? NULL : filter_name(fcinfo, 0);

	tlbf_store_require();
	PG_RETURN_INT32(tlbf_store_reset_counts(name));
}

/* tlbf_shared_list(): this database's filters, with tlbf_info and more. */
Datum
tlbf_shared_list(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	List	   *filters;
	ListCell   *cell;

	tlbf_store_require();
	InitMaterializedSRF(fcinfo, 0);
	if (RecoveryInProgress())
		filters = tlbf_store_saved_filters();
	else
	{
		/* e.g. after pg_restore; ERROR for a filter that cannot be loaded */
		tlbf_store_load();
		filters = tlbf_store_copies();
	}
	foreach(cell, filters)
	{
		SavedFilter *f = lfirst(cell);

		list_row(rsinfo, f->name, f->filter, f->region, f->unsaved);
	}
	return (Datum) 0;
}

/* The rebuild query's row shape: key column(s), then a timestamptz. */
static int
rebuild_keys(TupleDesc desc)
{
	int			nkeys = desc->natts - 1;

	if (nkeys < 1 || SPI_gettypeid(desc, desc->natts) != TIMESTAMPTZOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the rebuild query must return the key column(s), then a timestamptz")));
	if (nkeys > TLBF_MAX_KEY_FIELDS)
		ereport(ERROR,
				(errcode(ERRCODE_TOO_MANY_COLUMNS),
				 errmsg("the rebuild query returns %d key columns; at most %d are allowed",
						nkeys, TLBF_MAX_KEY_FIELDS)));
	return nkeys;
}

/*
 * Add the rows SPI fetched: the key column(s), then the time.  The keys are
 * hashed as the guess says, and again if the filter says otherwise.
 * Returns the rows added.
 */
static int
rebuild_batch(const char *name, KeyMatcher *matcher, SharedKeyGuess *guess)
{
	TupleDesc	desc = SPI_tuptable->tupdesc;
	int			nkeys = rebuild_keys(desc);
	TlbfHash	hashes[REBUILD_BATCH];
	TlbfTime	times[REBUILD_BATCH];
	TlbfKeys	basis;
	int			n;

	do
	{
		n = 0;
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			KeyFields	key;
			bool		time_null;
			Datum		at = SPI_getbinval(SPI_tuptable->vals[i], desc, desc->natts, &time_null);

			if (time_null)
				continue;
			key.n = nkeys;
			for (int c = 0; c < nkeys; c++)
			{
				key.types[c] = SPI_gettypeid(desc, c + 1);
				key.collations[c] = TupleDescAttr(desc, c)->attcollation;
				key.values[c] = SPI_getbinval(SPI_tuptable->vals[i], desc, c + 1, &key.nulls[c]);
			}
			basis = tlbf_key_basis(matcher, &key, guess->keys, guess->holds_keys);
			(void) tlbf_key_hash(matcher, &key, basis, true, &hashes[n]);
			times[n] = tlbf_check_insert_time(DatumGetTimestampTz(at));
			n++;
		}
	} while (n > 0 && !tlbf_shared_insert(name, hashes, times, n, basis, guess));
	return n;
}

/*
 * tlbf_shared_rebuild(name, query): add every row of the query to the
 * filter, to refill it from the rows it came from after a crash.  The last
 * column is the time (timestamptz); the others are the key, combined as
 * tlbf_reject_recent combines its columns.  Rows with a NULL time are
 * skipped, as tlbf_agg skips them.  Returns the rows added.
 */
Datum
tlbf_shared_rebuild(PG_FUNCTION_ARGS)
{
	char	   *name = filter_name(fcinfo, 0);
	char	   *query = text_to_cstring(PG_GETARG_TEXT_PP(1));
	SharedKeyGuess *guess = call_site_guess(fcinfo, name);
	KeyMatcher *matcher = tlbf_key_matcher(CurrentMemoryContext);
	SPIPlanPtr	plan;
	Portal		cursor;
	int64		added = 0;

	PreventCommandDuringRecovery("tlbf_shared_rebuild()");
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = SPI_prepare(query, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "could not prepare the rebuild query: %s", SPI_result_code_string(SPI_result));
	if (!SPI_is_cursor_plan(plan))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("the rebuild query must return rows"),
				 errhint("Pass a SELECT of the key column(s), then a timestamptz.")));
	/* the caller's own query, run with the caller's rights as it is written */
	cursor = SPI_cursor_open(NULL, plan, NULL, NULL, false);
	for (;;)
	{
		SPI_cursor_fetch(cursor, true, REBUILD_BATCH);
		if (SPI_processed == 0)
			break;
		added += rebuild_batch(name, matcher, guess);
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(cursor);
	SPI_finish();
	PG_RETURN_INT64(added);
}
