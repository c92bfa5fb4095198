/*-------------------------------------------------------------------------
 *
 * value_carry.c
 *	  A value of format 3 that carries a frozen value of format 1 or 2
 *	  (issue 36): how values of the older formats move to format 3 within
 *	  one span.
 *
 * Bits of the two formats cannot be merged (their slices and generations
 * differ in size, age and hashing), so a union of a value of format 3 with
 * one of format 1 or 2 keeps the older one whole, read-only, behind the
 * bands: the flag TB_CARRIES, then at tb_carried_offset() the older value
 * with its own length word.  Queries ask both parts (each hashes the key
 * its own way); new keys go to the bands only; the carried value is
 * dropped once tlbf_retire or tlbf_add moves past its span (all its keys
 * have expired), at most one span later, and the value is then a plain
 * one of format 3.
 *
 * The core reads a carrier's bands and nothing else, and is never given
 * one to change: a function that changes a value takes the bands apart
 * (tlbf_bands_copy), changes them, and puts the carried value back
 * (tlbf_carry).
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "value_carry.h"
#include "filter_args.h"
#include "union.h"

#include "utils/memutils.h"

/* The carried value of a validated format 3 value, or NULL. */
Tlbf *
tlbf_carried(const TbFilter *f)
{
	if (!(f->flags & TB_CARRIES))
		return NULL;
	return (Tlbf *) ((char *) f + tb_carried_offset(f));
}

static bool
fail(TlbfProblem *problem, const char *message)
{
	problem->message = message;
	problem->hint = NULL;
	return false;
}

/*
 * The rest of a value with TB_CARRIES whose bands the core validated
 * ('len' bytes in all): zero padding, then a valid value of format 1 or 2
 * that fills the rest exactly, with the same span.
 */
bool
tlbf_carried_validate(const TbFilter *f, size_t len, TlbfProblem *problem)
{
	size_t		offset = tb_carried_offset(f);
	const char *bytes = (const char *) f;
	const Tlbf *carried = (const Tlbf *) (bytes + offset);

	for (size_t i = tb_size(f); i < offset; i++)
		if (bytes[i] != 0)
			return fail(problem, "Padding bytes are not zero");
	if (len - offset < offsetof(Tlbf, hash_scheme))
		return fail(problem, "A carried value is too short");
	if (VARSIZE(carried) != len - offset)
		return fail(problem, "A carried value's length does not match the rest of the value");
	if (carried->version == TB_FORMAT_VERSION)
		return fail(problem, "A carried value is of format 3");
	if (!tlbf_validate(carried, len - offset, problem))
		return false;
	if (carried->span != f->span)
		return fail(problem, "A carried value's span differs");
	return true;
}

/*
 * Does a validated carrier hash keys as its carried value does (one hash
 * asks both parts): the carried value is of format 2 with a recorded kind
 * of key, and the bands record the same kind and seed?  A shared filter
 * moved to format 3 is such a carrier (shared_value.c); a union's may not
 * be (each part hashes a key its own way there).
 */
bool
tlbf_carrier_shares_keys(const TbFilter *f)
{
	const Tlbf *carried = tlbf_carried(f);

	return carried != NULL && carried->version == 2 && carried->key_fields > 0 &&
		tlbf_keys_equal(tb_keys_of(f), tlbf_keys_of(carried));
}

/* A modifiable copy of a format 3 value's bands alone (what the core changes). */
TbFilter *
tlbf_bands_copy(const TbFilter *f)
{
	size_t		size = tb_size(f);
	TbFilter   *copy = palloc(size);

	memcpy(copy, f, size);
	copy->flags &= ~TB_CARRIES;
	SET_VARSIZE(copy, size);
	return copy;
}

/*
 * A new value: the bands of 'bands' (a value of format 3; anything it
 * carries is not taken) carrying 'frozen', a value of format 1 or 2, or
 * carrying nothing if 'frozen' is NULL.  The caller has checked that they
 * may be united.
 */
TbFilter *
tlbf_carry(const TbFilter *bands, const Tlbf *frozen)
{
	size_t		size = tb_size(bands);
	size_t		offset = tb_carried_offset(bands);
	size_t		total = frozen != NULL ? offset + VARSIZE(frozen) : size;
	TbFilter   *out;

	if (total > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a tlbf value carrying one of format 2 would take %zu bytes", total),
				 errhint("Retire expired slices first (tlbf_retire).")));
	out = palloc0(total);
	memcpy(out, bands, size);
	if (frozen != NULL)
	{
		out->flags |= TB_CARRIES;
		memcpy((char *) out + offset, frozen, VARSIZE(frozen));
	}
	else
		out->flags &= ~TB_CARRIES;
	SET_VARSIZE(out, total);
	return out;
}

/*
 * What a carried value keeps at 'at': itself, its expired slices dropped
 * (a copy if any were), or NULL once it has no slice left.
 */
Tlbf *
tlbf_carried_after(const Tlbf *frozen, TlbfTime at)
{
	Tlbf	   *copy;

	if (tlbf_retirable_slices(frozen, at) == 0)
		return frozen->nslices == 0 ? NULL : (Tlbf *) frozen;
	copy = palloc(VARSIZE(frozen));
	memcpy(copy, frozen, VARSIZE(frozen));
	tlbf_drop_expired(copy, at);
	tlbf_set_length(copy);
	return copy->nslices == 0 ? NULL : copy;
}

/* Would tlbf_carried_after change it? */
bool
tlbf_carried_retirable(const Tlbf *frozen, TlbfTime at)
{
	return frozen->nslices == 0 || tlbf_retirable_slices(frozen, at) > 0;
}

/*
 * 'old', a value of format 1 or 2, as a value of format 3 carrying it
 * while it has keys (tlbf_to_format3, the maintenance pass): empty bands of
 * its span and error rate, their first generation sized for the rate it
 * observed (its creator's guess before it saw one), halved until that
 * generation's band fits in the largest value (not tlbf.max_filter_bytes:
 * a setting may make an IMMUTABLE function fail, never change what it
 * returns; past the setting, the first tlbf_add fails as a growing value
 * does).  The bands record no kind of key: the first key tlbf_add gives
 * them takes the carried value's (scalar_functions.c), and each part
 * hashes a key its own way.
 */
TbFilter *
tlbf_format3_carrying(const Tlbf *old)
{
	TbParams	params;
	TlbfProblem problem;
	TbFilter   *bands = palloc(tb_lines_offset(0));
	double		rate = old->target_gen * old->l;

	params.span = old->span;
	params.error_rate = old->error_rate;
	params.capacity = rate >= 1 && rate < (double) TLBF_MAX_CAPACITY ?
		(uint64) ceil(rate) : Max(old->capacity, 1);
	params.capacity = Min(params.capacity, TLBF_MAX_CAPACITY);
	params.declared = false;
	params.generations = 0;
	params.seed = TLBF_DEFAULT_SEED;
	/* a valid value's span and error rate are format 3's too */
	if (!tb_check_params(&params, &problem))
		elog(ERROR, "cannot move a tlbf value to format 3: %s", problem.message);
	tb_init(bands, &params);
	while (params.capacity > 1 &&
		   tb_layout_bytes(bands, 1, tb_lines_for(bands, params.capacity / params.generations + 1)) >
		   MaxAllocSize)
	{
		params.capacity /= 2;
		tb_init(bands, &params);
	}
	SET_VARSIZE(bands, tb_size(bands));
	tlbf_check_carry(bands, old);
	return tlbf_carry(bands, old->nslices > 0 ? old : NULL);
}
