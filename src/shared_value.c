/*-------------------------------------------------------------------------
 *
 * shared_value.c
 *	  A shared filter's value, of format 2 or 3.  tlbf_shared_create makes
 *	  format 3 (one cache line per key: a trigger's test-and-add reads one
 *	  line), or format 2 under tlbf.shared_format = 2; a saved filter loads
 *	  in its own format.  The shared layers pass a 'Tlbf *' either way and
 *	  read nothing of it but through these functions: the two formats keep
 *	  their magic and version at the same offsets, and nothing else.
 *
 * A filter of format 2 moves to format 3 on its own (issue 36): the pass
 * that retires expired keys makes it a carrier (value_carry.c), in place
 * in its region: empty bands of its span, error rate, capacity and kind of
 * key, then the format 2 value, frozen, 8-byte aligned after them.  New
 * keys go to the bands; queries ask both parts with one hash (the bands
 * hash keys as the carried value does: tlbf_carrier_shares_keys); the
 * carried value loses its expired slices at each pass and goes with its
 * last one, at most a span after the move.  The core changes the bands
 * only: when they grow, the carried value moves up first (the resize of
 * the core's memory), and after any change it moves back to just after
 * them (settle_carried).
 *
 * The value in shared memory may have a stale length word;
 * shared_value_size computes the size from the structure.
 *
 *-------------------------------------------------------------------------
 */
#include "shared_value.h"
#include "filter_args.h"
#include "value_carry.h"
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

/* The carried value of a settled shared filter, or NULL (format 2: none). */
static Tlbf *
carried_of(const Tlbf *f)
{
	return shared_value_is_format3(f) ? tlbf_carried(V3(f)) : NULL;
}

/* Where a carried value is while the core changes the bands before it. */
typedef struct CarriedPlace
{
	Size		pos;			/* its offset in the value */
	Size		bytes;			/* its size */
	Size		limit;			/* the region's end */
} CarriedPlace;

static void
carried_place(const Tlbf *f, Size region, CarriedPlace *place)
{
	Tlbf	   *carried = carried_of(f);

	place->pos = tb_carried_offset(V3(f));
	place->bytes = carried != NULL ? tlbf_size(carried) : 0;
	place->limit = region;
}

/*
 * The core's memory for the bands of a carrier: growing to 'size' moves
 * the carried value up to just past it first (the core then moves the
 * bands' lines up into what it leaves).
 */
static void *
move_carried_up(TlbfMemory *memory, void *buffer, size_t size)
{
	CarriedPlace *place = memory->context;
	Size		pos = TYPEALIGN(8, size);

	if (pos + place->bytes > place->limit)
		return NULL;
	memmove((char *) buffer + pos, (char *) buffer + place->pos, place->bytes);
	place->pos = pos;
	memory->allocated = size;
	return buffer;
}

/* Put the carried value back just after the bands, the padding zeroed. */
static void
settle_carried(Tlbf *f, const CarriedPlace *place)
{
	Size		end = tb_size(V3(f));
	Size		offset = tb_carried_offset(V3(f));

	if (place->pos != offset)
		memmove((char *) f + offset, (char *) f + place->pos, place->bytes);
	memset((char *) f + end, 0, offset - end);
	SET_VARSIZE((char *) f + offset, place->bytes);
	SET_VARSIZE(f, offset + place->bytes);
}

/* Format 3's parameters for format 2's, unchecked. */
static void
format3_params_soft(const TlbfParams *params, TbParams *out)
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
}

/* The same, checked (the shared functions take format 2's parameters). */
static void
format3_params(const TlbfParams *params, TbParams *out)
{
	format3_params_soft(params, out);
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
	Tlbf	   *carried = carried_of(f);

	if (carried != NULL)
		return tb_carried_offset(V3(f)) + tlbf_size(carried);
	return shared_value_is_format3(f) ? tb_size(V3(f)) : tlbf_size(f);
}

void
shared_value_set_length(Tlbf *f)
{
	SET_VARSIZE(f, shared_value_size(f));
}

/* A copy of a filter (in shared memory: its length word may be stale), as a value of its own. */
Tlbf *
shared_value_copy(const Tlbf *f)
{
	Size		size = shared_value_size(f);
	Tlbf	   *copy = palloc(size);

	memcpy(copy, f, size);
	shared_value_set_length(copy);
	return copy;
}

/*
 * Is a buffer from outside (a saved row, an image, a WAL record) a valid
 * shared filter: a filter of format 1, 2 or 3, or one of format 3 carrying
 * one of format 2 that hashes keys as its bands do (what the move to
 * format 3 writes)?
 */
bool
shared_value_validate(const void *buffer, Size len, TlbfProblem *problem)
{
	const Tlbf *f = buffer;

	if (len >= tb_lines_offset(0) && f->magic == TLBF_MAGIC && shared_value_is_format3(f))
	{
		if (!tb_validate(buffer, len, problem))
			return false;
		if ((V3(f)->flags & TB_CARRIES) == 0)
			return true;
		if (!tlbf_carried_validate(V3(f), len, problem))
			return false;
		if (!tlbf_carrier_shares_keys(V3(f)))
		{
			problem->message = "a shared filter's carried value must hash keys as its bands do";
			problem->hint = NULL;
			return false;
		}
		return true;
	}
	return tlbf_validate(buffer, len, problem);
}

/* Does a value of format 1 or 2 of 'bytes' bytes have a directory that fits them, and add up to them? */
static bool
plausible_format2(const Tlbf *f, Size bytes)
{
	return bytes >= sizeof(Tlbf) && !shared_value_is_format3(f) &&
		f->nslices <= (bytes - sizeof(Tlbf)) / sizeof(TlbfSlice) && tlbf_size(f) == bytes;
}

/*
 * A cheap check of an image read back, before the load validates it
 * whole: its directory fits its bytes, which are what it adds up to.
 */
bool
shared_value_plausible(const Tlbf *f, Size bytes)
{
	if (bytes >= tb_lines_offset(0) && shared_value_is_format3(f))
	{
		Size		offset;

		if (V3(f)->nbands > TB_MAX_BANDS || bytes < tb_lines_offset(V3(f)->nbands))
			return false;
		if ((V3(f)->flags & TB_CARRIES) == 0)
			return tb_size(V3(f)) == bytes;
		/* a carrier: its carried value, of format 2, fills the rest */
		offset = tb_carried_offset(V3(f));
		return offset < bytes && plausible_format2(tlbf_carried(V3(f)), bytes - offset);
	}
	return plausible_format2(f, bytes);
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
	CarriedPlace place;
	TlbfMemory	bands;

	if (!shared_value_is_format3(*f))
		return tlbf_insert(f, memory, hash, at);
	if (carried_of(*f) == NULL)
	{
		status = tb_insert_or_fail((TbFilter **) f, memory, hash, at);
		SET_VARSIZE(*f, tb_size(V3(*f)));
		return status;
	}
	/* a carrier: the bands take the region but the carried value's room */
	carried_place(*f, memory->max_bytes, &place);
	bands = *memory;
	bands.resize = move_carried_up;
	bands.context = &place;
	bands.allocated = tb_size(V3(*f));
	bands.max_bytes = memory->max_bytes > place.bytes + 7 ? memory->max_bytes - place.bytes - 7 : 0;
	status = tb_insert_or_fail((TbFilter **) f, &bands, hash, at);
	settle_carried(*f, &place);
	return status;
}

bool
shared_value_query(const Tlbf *f, TlbfHash hash, TlbfTime at, int64 window)
{
	Tlbf	   *carried = carried_of(f);

	if (!shared_value_is_format3(f))
		return tlbf_query(f, hash, at, window);
	return tb_query(V3(f), hash, at, window) ||
		(carried != NULL && tlbf_query(carried, hash, at, window));
}

bool
shared_value_last_seen(const Tlbf *f, TlbfHash hash, TlbfTime at, int64 window,
					   TlbfTime *lower, TlbfTime *upper)
{
	Tlbf	   *carried = carried_of(f);
	bool		found;
	TlbfTime	lower2,
				upper2;

	if (!shared_value_is_format3(f))
		return tlbf_last_seen(f, hash, at, window, tlbf_inference_scratch(f), lower, upper);
	found = tb_last_seen(V3(f), hash, at, window, lower, upper);
	/* of a carrier, the newer of the two answers (as tlbf_last_seen) */
	if (carried != NULL &&
		tlbf_last_seen(carried, hash, at, window, tlbf_inference_scratch(carried), &lower2, &upper2) &&
		(!found || upper2 > *upper || (upper2 == *upper && lower2 > *lower)))
	{
		*lower = lower2;
		*upper = upper2;
		found = true;
	}
	return found;
}

double
shared_value_posterior(const Tlbf *f, TlbfHash hash, TlbfTime at, int64 window, double prior)
{
	Tlbf	   *carried = carried_of(f);
	double		p;

	if (!shared_value_is_format3(f))
		return tlbf_posterior(f, hash, at, window, prior, tlbf_inference_scratch(f));
	p = tb_posterior(V3(f), hash, at, window, prior);
	/* of a carrier, added to either part, as if independent (as tlbf_probability) */
	if (carried != NULL)
		p = 1.0 - (1.0 - p) *
			(1.0 - tlbf_posterior(carried, hash, at, window, prior, tlbf_inference_scratch(carried)));
	return p;
}

/* Drop what expired at 'at', in place; did anything change? */
bool
shared_value_retire(Tlbf *f, TlbfTime at)
{
	if (shared_value_is_format3(f))
	{
		Tlbf	   *carried = carried_of(f);
		CarriedPlace place;
		bool		changed = false;

		carried_place(f, 0, &place);
		/*
		 * A filter left with no generation shrinks to its header, as one of
		 * format 2 keeps no slice: its saves and images are small again
		 * (its capacity, declared, sizes the next band).
		 */
		if (tb_retirable(V3(f), at) || tb_releasable(V3(f)))
		{
			(void) tb_retire((TbFilter *) f, at);
			(void) tb_release((TbFilter *) f);
			changed = true;
		}
		/*
		 * a carried value drops the slices no query asks any more (older
		 * than the span before the bands' newest time, or before 'at'), and
		 * goes with its last
		 */
		if (V3(f)->newest != TLBF_NEVER && V3(f)->newest > at)
			at = V3(f)->newest;
		if (carried != NULL && tlbf_carried_retirable(carried, at))
		{
			tlbf_drop_expired(carried, at);
			place.bytes = tlbf_size(carried);
			if (carried->nslices == 0)
			{
				((TbFilter *) f)->flags &= ~TB_CARRIES;
				carried = NULL;
			}
			changed = true;
		}
		if (carried != NULL)
			settle_carried(f, &place);
		else
			SET_VARSIZE(f, tb_size(V3(f)));
		return changed;
	}
	if (tlbf_retirable_slices(f, at) == 0)
		return false;
	tlbf_drop_expired(f, at);
	return true;
}

/*
 * Move a filter of format 2 to format 3 in place, in its region of
 * 'region' bytes, when tlbf.shared_format is 3 (the default) and the region
 * has room for two first bands beside what it holds (a region made small
 * for format 2 may have none: the filter stays of format 2 and keeps
 * working; one holding many slices, a later pass tries again as they
 * expire): one that holds no slice becomes empty bands (keeping its kind
 * of key); one with slices, a carrier of it.
 * The bands are those tlbf_shared_create would make for its span, error
 * rate and capacity, and take its kind of key and newest time.  A value of
 * format 1, or of keys without a recorded kind (a composite key may have
 * been hashed as its fields), moves only once it holds no slice.  Did it
 * move?
 */
bool
shared_value_move_to_format3(Tlbf *f, Size region)
{
	TlbfParams	old;
	TbParams	p;
	TlbfProblem problem;
	TbFilter   *bands;
	Size		first,
				offset,
				bytes;
	bool		moved = false;

	if (tlbf_shared_format != TB_FORMAT_VERSION || shared_value_is_format3(f) ||
		(f->nslices > 0 && (f->version != 2 || f->key_fields == 0)))
		return false;
	bytes = tlbf_size(f);
	old.span = f->span;
	old.error_rate = f->error_rate;
	old.capacity = Max(f->capacity, 1);
	old.k = old.l = 0;
	old.seed = TLBF_DEFAULT_SEED;
	format3_params_soft(&old, &p);
	if (!tb_check_params(&p, &problem))
		return false;
	bands = palloc0(tb_lines_offset(0));
	tb_init(bands, &p);
	if (f->key_fields > 0)
		tb_record_keys(bands, tlbf_keys_of(f));
	bands->newest = f->newest;
	first = tb_layout_bytes(bands, 1, tb_lines_for(bands, p.capacity / p.generations + 1));
	offset = tb_carried_offset(bands);
	if (f->nslices == 0 && 2 * first <= region)
	{
		memcpy(f, bands, tb_size(bands));
		SET_VARSIZE(f, tb_size(bands));
		moved = true;
	}
	else if (f->nslices > 0 && offset + bytes + 2 * first <= region)
	{
		bands->flags |= TB_CARRIES;
		memmove((char *) f + offset, f, bytes);
		SET_VARSIZE((char *) f + offset, bytes);
		memcpy(f, bands, tb_size(bands));
		memset((char *) f + tb_size(bands), 0, offset - tb_size(bands));
		SET_VARSIZE(f, offset + bytes);
		moved = true;
	}
	pfree(bands);
	return moved;
}

Datum
shared_value_info(const Tlbf *f, TlbfTime at)
{
	if (shared_value_is_format3(f))
		return tlbf_info_jsonb_format3(V3(f), carried_of(f), at);
	return tlbf_info_jsonb(f, at);
}
