/*-------------------------------------------------------------------------
 *
 * shared_value.c
 *	  A shared filter's value, of format 2 or 3.  tlbf_shared_create makes
 *	  format 2, or format 3 (one cache line per key: a trigger's test-and-
 *	  add reads one line) under tlbf.shared_format = 3, while the region
 *	  format 3 needs under a dedup trigger's bursts is measured (issue 36);
 *	  a saved filter loads in its own format.  The shared layers pass a 'Tlbf *'
 *	  either way and read nothing of it but through these functions: the
 *	  two formats keep their magic and version at the same offsets, and
 *	  nothing else.
 *
 * A shared filter is never a carrier (a value of format 3 carrying an older
 * one, value_carry.c): its region is fixed, and the core is never given a
 * carrier to change.  shared_value_validate refuses one.
 *
 *-------------------------------------------------------------------------
 */
#include "shared_value.h"
#include "filter_args.h"
#include "filter_params.h"
#include "info.h"
#include "inference.h"
#include "settings.h"

#include <math.h>

#include "core/tb.h"

/* The least region a filter gets, whatever its parameters. */
#define MIN_REGION_BYTES	(64 * 1024)

static bool
shared_value_is_format3(const Tlbf *f)
{
	return f->version == TB_FORMAT_VERSION;
}

#define V3(f) ((const TbFilter *) (f))

/* Format 3's parameters for format 2's (the shared functions take those). */
static void
format3_params(const TlbfParams *params, TbParams *out)
{
	out->span = params->span;
	out->error_rate = params->error_rate;
	out->capacity = params->capacity;
	/*
	 * Declared: every generation is sized for its share of the capacity,
	 * not for the rate of the one before.  A dedup trigger adds a key once
	 * a span, so after a burst (every key new at once) the rate would size
	 * each next generation for the whole capacity.
	 */
	out->declared = true;
	out->generations = 0;
	out->seed = TLBF_DEFAULT_SEED;
	tlbf_format3_check(out);
}

Size
shared_value_header_bytes(void)
{
	return Max(tb_lines_offset(0), sizeof(Tlbf));
}

/* A new empty filter, of the format tlbf.shared_format says, in 'buffer'. */
void
shared_value_init(Tlbf *buffer, const TlbfParams *params)
{
	TbParams	p;

	if (tlbf_shared_format != TB_FORMAT_VERSION)
	{
		tlbf_init(buffer, params);
		tlbf_set_length(buffer);
		return;
	}
	format3_params(params, &p);
	tb_init((TbFilter *) buffer, &p);
	SET_VARSIZE(buffer, tb_size((TbFilter *) buffer));
}

/*
 * The bytes of the first generation's band: what the capacity needs (past
 * the largest band the lines stop growing: what it would need).
 */
static double
first_band_bytes(const TlbfParams *params)
{
	TbParams	p;
	TbFilter   *header = palloc(tb_lines_offset(0));
	double		beyond;

	format3_params(params, &p);
	tb_init(header, &p);
	beyond = (double) p.capacity / p.generations * header->bits_per_key * tb_slots(header) / 8;
	pfree(header);
	return fmax((double) tlbf_format3_first_band(&p), beyond);
}

/*
 * The bytes a filter with these parameters gets.  Format 3: 5x its first
 * band.  A band holds every slot, so a generation that takes r times its
 * share (a dedup trigger's keys that came in one burst expire together and
 * come back in one generation; a stream r times faster than the capacity)
 * needs a band of r first bands beside the first one until the first
 * one's generations leave the span: 5x keeps bursts and overloads up to 4x
 * the capacity, where format 2's region of 4x its steady size does (20% more
 * bytes than format 2's; test_dedup_pattern, docs/operating.md).  A double,
 * so that a size far beyond the pool can be reported as it is.
 */
double
shared_value_region_for(const TlbfParams *params)
{
	double		bits_per_key,
				steady;

	if (tlbf_shared_format == TB_FORMAT_VERSION)
		return fmax(5.0 * first_band_bytes(params), MIN_REGION_BYTES);
	/* format 2: 4x its steady size, at least twice its first generation */
	bits_per_key = (double) (params->k + params->l) * params->k / (params->l * log(2.0));
	steady = bits_per_key * params->capacity / 8 +
		(double) (params->k + params->l + 2) * sizeof(TlbfSlice) + sizeof(Tlbf);
	return fmax(fmax(4 * steady, 2.0 * tlbf_first_generation_bytes(params)), MIN_REGION_BYTES);
}

/* The least region a filter of these parameters may have: its first generation, twice. */
Size
shared_value_min_region(const TlbfParams *params)
{
	double		first = tlbf_shared_format == TB_FORMAT_VERSION ?
		first_band_bytes(params) : (double) tlbf_first_generation_bytes(params);

	return (Size) fmax(2.0 * first, MIN_REGION_BYTES);
}

Size
shared_value_size(const Tlbf *f)
{
	return shared_value_is_format3(f) ? tb_size(V3(f)) : tlbf_size(f);
}

void
shared_value_set_length(Tlbf *f)
{
	SET_VARSIZE(f, shared_value_size(f));
}

/*
 * Is a buffer from outside (a saved row, an image, a WAL record) a valid
 * shared filter: a filter of format 1, 2 or 3, not a carrier?
 */
bool
shared_value_validate(const void *buffer, Size len, TlbfProblem *problem)
{
	const Tlbf *f = buffer;

	if (len >= tb_lines_offset(0) && f->magic == TLBF_MAGIC && shared_value_is_format3(f))
	{
		if (!tb_validate(buffer, len, problem))
			return false;
		if ((V3(f)->flags & TB_CARRIES) != 0)
		{
			problem->message = "a shared filter cannot carry an older value";
			problem->hint = NULL;
			return false;
		}
		return true;
	}
	return tlbf_validate(buffer, len, problem);
}

/*
 * A cheap check of an image read back, before the load validates it
 * whole: its directory fits its bytes, which are what it adds up to.
 */
bool
shared_value_plausible(const Tlbf *f, Size bytes)
{
	if (bytes >= tb_lines_offset(0) && shared_value_is_format3(f))
		return V3(f)->nbands <= TB_MAX_BANDS && bytes >= tb_lines_offset(V3(f)->nbands) &&
			tb_size(V3(f)) == bytes;
	return bytes >= sizeof(Tlbf) && !shared_value_is_format3(f) &&
		f->nslices <= (bytes - sizeof(Tlbf)) / sizeof(TlbfSlice) && tlbf_size(f) == bytes;
}

int64
shared_value_span(const Tlbf *f)
{
	return shared_value_is_format3(f) ? V3(f)->span : f->span;
}

uint64
shared_value_truncated(const Tlbf *f)
{
	return shared_value_is_format3(f) ? V3(f)->truncated : f->truncated;
}

/* Has it taken a key, or recorded a kind of key? */
bool
shared_value_holds_keys(const Tlbf *f)
{
	if (shared_value_is_format3(f))
		return V3(f)->inserted > 0 || V3(f)->key_fields > 0;
	return f->inserted > 0 || f->key_fields > 0;
}

TlbfKeys
shared_value_keys(const Tlbf *f)
{
	return shared_value_is_format3(f) ? tb_keys_of(V3(f)) : tlbf_keys_of(f);
}

/* Record the kind of keys a filter that holds none takes. */
void
shared_value_record_keys(Tlbf *f, TlbfKeys keys)
{
	if (shared_value_is_format3(f))
		tb_record_keys((TbFilter *) f, keys);
	else
		tlbf_record_keys(f, keys);
}

/*
 * Keys added without a recorded kind (a filter of format 1, or one of
 * kind-less keys written by 1.4): a composite key may have been hashed as
 * its fields.  Never so in format 3, which records the kind.
 */
bool
shared_value_unkinded(const Tlbf *f)
{
	return !shared_value_is_format3(f) && f->key_fields == 0 && f->inserted > 0 &&
		f->seed == 0;
}

/* Would a key added at 'at' have expired already, by newer keys? */
bool
shared_value_expired(const Tlbf *f, TlbfTime at)
{
	if (shared_value_is_format3(f))
		return V3(f)->newest != TLBF_NEVER && at <= V3(f)->newest - V3(f)->span;
	return f->nslices > 0 && at <= f->newest - f->span;
}

TlbfStatus
shared_value_insert(Tlbf **f, TlbfMemory *memory, TlbfHash hash, TlbfTime at)
{
	TlbfStatus	status;

	if (!shared_value_is_format3(*f))
		return tlbf_insert(f, memory, hash, at);
	status = tb_insert_or_fail((TbFilter **) f, memory, hash, at);
	SET_VARSIZE(*f, tb_size(V3(*f)));
	return status;
}

bool
shared_value_query(const Tlbf *f, TlbfHash hash, TlbfTime at, int64 window)
{
	return shared_value_is_format3(f) ? tb_query(V3(f), hash, at, window) :
		tlbf_query(f, hash, at, window);
}

bool
shared_value_last_seen(const Tlbf *f, TlbfHash hash, TlbfTime at, int64 window,
					   TlbfTime *lower, TlbfTime *upper)
{
	if (shared_value_is_format3(f))
		return tb_last_seen(V3(f), hash, at, window, lower, upper);
	return tlbf_last_seen(f, hash, at, window, tlbf_inference_scratch(f), lower, upper);
}

double
shared_value_posterior(const Tlbf *f, TlbfHash hash, TlbfTime at, int64 window, double prior)
{
	if (shared_value_is_format3(f))
		return tb_posterior(V3(f), hash, at, window, prior);
	return tlbf_posterior(f, hash, at, window, prior, tlbf_inference_scratch(f));
}

/* Drop what expired at 'at', in place; did anything change? */
bool
shared_value_retire(Tlbf *f, TlbfTime at)
{
	if (shared_value_is_format3(f))
	{
		/*
		 * A filter left with no generation shrinks to its header, as one of
		 * format 2 keeps no slice: its saves and images are small again
		 * (its capacity, declared, sizes the next band).
		 */
		if (!tb_retirable(V3(f), at) && !tb_releasable(V3(f)))
			return false;
		(void) tb_retire((TbFilter *) f, at);
		(void) tb_release((TbFilter *) f);
		SET_VARSIZE(f, tb_size(V3(f)));
		return true;
	}
	if (tlbf_retirable_slices(f, at) == 0)
		return false;
	tlbf_drop_expired(f, at);
	return true;
}

Datum
shared_value_info(const Tlbf *f, TlbfTime at)
{
	if (shared_value_is_format3(f))
		return tlbf_info_jsonb_format3(V3(f), NULL, at);
	return tlbf_info_jsonb(f, at);
}
