/*-------------------------------------------------------------------------
 *
 * insert.c
 *	  Adding a key: setting its bits in the k newest slices, and the two
 *	  structural changes an insertion may trigger first:
 *
 *	  - starting afresh, when the filter has no slices or every slice has
 *		expired (a pause longer than the span): k new slices sized from the
 *		last known rate.  Reusing the old ones would bring their keys back.
 *	  - a shift, when the generation is used up: a new slice 0 sized for the
 *		observed rate, expired slices dropped from the old end, and the
 *		filter growing instead when the oldest slice is still live.
 *
 * Generations and slices are measured by the bits actually set (sizing.c):
 * a key repeated within a generation sets no new bit and only refreshes the
 * times, so streams with many repeats (a busy client's requests) get
 * filters sized for their distinct keys.
 *
 * Insertion times never go backwards: an older 'at' is moved up to the
 * newest time already seen.  A key then lives a little longer (a false
 * positive at worst) but every key stays in k consecutive slices whose
 * timestamps are at least its own, which is what makes it findable until
 * its time plus the span.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "bits.h"
#include "sizing.h"
#include "tlbf.h"

/* Make sure the buffer holds 'size' bytes, growing it if allowed. */
static TlbfStatus
ensure_room(Tlbf **fp, TlbfMemory *memory, size_t size)
{
	void	   *grown;

	if (size <= memory->allocated)
		return TLBF_OK;
	if (memory->resize == NULL)
		return TLBF_OUT_OF_MEMORY;
	grown = memory->resize(memory, *fp, size);
	if (grown == NULL)
		return TLBF_OUT_OF_MEMORY;
	*fp = grown;
	return TLBF_OK;
}

/*
 * Plan the generation that starts now: how much load the k newest slices
 * may take (eq. 4-5), and the load each of their new bits adds.
 */
static void
start_generation(Tlbf *f, TlbfTime now)
{
	TlbfSlice  *s = tlbf_slices(f);
	double		keys;

	f->gen_size = f->gen_left = tlbf_generation_size(f);
	f->gen_started = now;
	keys = (double) f->gen_size / f->k / TLBF_LOAD_ONE;
	for (int i = 0; i < f->k; i++)
		s[i].load_weight = tlbf_load_weight(&s[i], keys);
}

/* The largest slice, in words, for which 'nslices' slices holding 'words'
 * other words still fit under the cap; 0 if none fits. */
static uint64_t
room_for_slice(size_t max_bytes, uint64_t nslices, uint64_t words)
{
	size_t		used = tlbf_layout_bytes(nslices, words);

	return used >= max_bytes ? 0 : (max_bytes - used) / sizeof(uint64_t);
}

/*
 * Replace every slice (all expired, or none yet) by k empty ones sized for
 * k generations of target_gen insertions.
 */
static TlbfStatus
start_fresh(Tlbf **fp, TlbfMemory *memory, TlbfTime now)
{
	Tlbf	   *f = *fp;
	int			k = f->k;
	uint64_t	words = tlbf_words_for_capacity(k * f->target_gen);
	uint64_t	fit = room_for_slice(memory->max_bytes, k, 0) / k;
	TlbfSlice  *s;
	TlbfStatus	status;

	if (words > fit)
		words = fit;
	if (words < TLBF_MIN_SLICE_WORDS)
		return TLBF_OVER_LIMIT;
	status = ensure_room(fp, memory, tlbf_layout_bytes(k, k * words));
	if (status != TLBF_OK)
		return status;

	f = *fp;
	f->nslices = k;
	s = tlbf_slices(f);
	for (int i = 0; i < k; i++)
	{
		s[i].offset = (uint32_t) (i * words);
		s[i].nwords = (uint32_t) words;
		s[i].hash_index = (uint32_t) i;
		s[i].load_weight = TLBF_MIN_LOAD_WEIGHT;
		s[i].bits_set = 0;
		s[i].updated_at = TLBF_NEVER;
	}
	memset(tlbf_words(f), 0, k * words * sizeof(uint64_t));
	start_generation(f, now);
	return TLBF_OK;
}

/*
 * The hash index for a new slice 0: one that slices 1..k-1 do not use, so
 * that any k consecutive slices use k different functions.  In a filter
 * built by insertions alone this is (index of slice 1) - 1 mod k, as in the
 * paper; after a union of filters with different k it still picks a free one.
 */
static uint32_t
free_hash_index(const Tlbf *f)
{
	const TlbfSlice *s = tlbf_slices(f);
	uint64_t	used = 0;
	uint32_t	j = 0;

	for (uint32_t i = 1; i < f->k && i < f->nslices; i++)
		if (s[i].hash_index < 64)
			used |= UINT64_C(1) << s[i].hash_index;
	while (used & (UINT64_C(1) << j))
		j++;
	return j;
}

/* The keys the live slices hold, counted once per generation they came in. */
static double
live_items(const Tlbf *f, TlbfTime now)
{
	const TlbfSlice *s = tlbf_slices(f);
	double		load = 0.0;

	for (uint32_t i = 0; i < f->nslices; i++)
		if (!tlbf_is_expired(&s[i], now, f->span))
			load += tlbf_slice_load(&s[i]);
	return load / f->k;
}

/*
 * End the generation: add a new slice 0 sized for the observed rate, drop
 * expired slices from the old end, and drop live ones too (counting them in
 * 'truncated') only if the size cap leaves no other way and the caller
 * allows it (else TLBF_OVER_LIMIT, the filter unchanged).  Near the cap, the
 * new slice first gives up growing (it may be as small as the current
 * newest slice): a rate guessed from a burst must not push live keys out.
 */
static TlbfStatus
shift(Tlbf **fp, TlbfMemory *memory, TlbfTime now)
{
	Tlbf	   *f = *fp;
	TlbfSlice  *s = tlbf_slices(f);
	double		target_gen = tlbf_target_generation(f, now);
	uint64_t	words = tlbf_words_for_capacity(tlbf_next_slice_capacity(f, target_gen));
	uint32_t	keep = f->nslices;
	uint32_t	dropped_live = 0;
	uint64_t	kept_words;
	uint64_t	fit;
	char	   *base;
	TlbfStatus	status;

	/* Slices 0..k-2 are still written after the shift; the others may go. */
	while (keep > (uint32_t) f->k - 1 &&
		   tlbf_is_expired(&s[keep - 1], now, f->span))
		keep--;
	kept_words = keep == 0 ? 0 : (uint64_t) s[keep - 1].offset + s[keep - 1].nwords;

	fit = room_for_slice(memory->max_bytes, keep + 1, kept_words);
	if (words > fit)
	{
		/*
		 * A filter that may drop no live slice gives up growing only while
		 * it holds fewer keys than it was made for: a burst at one instant
		 * reads as a rate without bound, and must not make it refuse keys
		 * it has room for; past its capacity, it is full.
		 */
		if (memory->keep_live && live_items(f, now) >= (double) f->capacity)
			return TLBF_OVER_LIMIT;
		words = fit > s[0].nwords ? fit : s[0].nwords;
	}

	while (keep > (uint32_t) f->k - 1 &&
		   room_for_slice(memory->max_bytes, keep + 1, kept_words) < words)
	{
		if (memory->keep_live)
			return TLBF_OVER_LIMIT;
		keep--;
		dropped_live++;
		kept_words = s[keep].offset;
	}
	fit = room_for_slice(memory->max_bytes, keep + 1, kept_words);
	if (words > fit)
		words = fit;
	if (words < TLBF_MIN_SLICE_WORDS)
		return TLBF_OVER_LIMIT;
	if (keep + 1 > TLBF_MAX_SLICES)
		return TLBF_OVER_LIMIT;

	status = ensure_room(fp, memory, tlbf_layout_bytes(keep + 1, kept_words + words));
	if (status != TLBF_OK)
		return status;
	f = *fp;
	s = tlbf_slices(f);
	base = (char *) f;

	/*
	 * Move the kept bits behind the new slice's, then the directory down by
	 * one entry.  Neither move overwrites what the other still has to read:
	 * the bits land after the end of the new, longer directory.
	 */
	memmove(base + tlbf_layout_bytes(keep + 1, words),
			tlbf_words(f), kept_words * sizeof(uint64_t));
	memmove(&s[1], &s[0], keep * sizeof(TlbfSlice));
	f->nslices = keep + 1;
	for (uint32_t i = 1; i <= keep; i++)
		s[i].offset += (uint32_t) words;

	s[0].offset = 0;
	s[0].nwords = (uint32_t) words;
	s[0].hash_index = free_hash_index(f);
	s[0].load_weight = TLBF_MIN_LOAD_WEIGHT;
	s[0].bits_set = 0;
	s[0].updated_at = TLBF_NEVER;
	memset(tlbf_words(f), 0, words * sizeof(uint64_t));

	f->truncated = tlbf_add_saturating(f->truncated, dropped_live);
	f->target_gen = target_gen;
	start_generation(f, now);
	return TLBF_OK;
}

/*
 * A generation is planned to last span/l, but it ends only when its load is
 * used up: after a burst, slices sized for the burst's rate would take a
 * slower stream ages to fill, and all that time the burst's keys would stay
 * in slices still being written (never expiring) and the filter would stay
 * as large as the burst made it.  So a generation also ends once it has
 * lasted twice its planned time, and the next slice is sized for the rate
 * actually seen.  At a steady rate this never triggers.  It bounds how long
 * a slice is written after a key lands in it: k generations of at most
 * 2*span/l each.
 */
static bool
generation_overdue(const Tlbf *f, TlbfTime now)
{
	/*
	 * now - gen_started > factor * span / l, without a division per key.
	 * gen_started <= newest <= now, so the difference fits in 64 bits
	 * unsigned, and the product in 128.
	 */
	uint64_t	elapsed = (uint64_t) now - (uint64_t) f->gen_started;

	return (unsigned __int128) elapsed * f->l >
		(unsigned __int128) TLBF_OVERDUE_FACTOR * (uint64_t) f->span;
}

/*
 * Before adding a key at time 'now': start afresh or shift if the key
 * calls for it.  *moved says whether the slices changed (and the filter
 * may have moved): where a key's bits lie must then be found again.
 */
static inline TlbfStatus
make_room(Tlbf **fp, TlbfMemory *memory, TlbfTime now, bool *moved)
{
	Tlbf	   *f = *fp;

	if (f->nslices == 0 || f->newest < now - f->span)
	{
		*moved = true;
		return start_fresh(fp, memory, now);
	}
	if (f->gen_left == 0 || generation_overdue(f, now))
	{
		*moved = true;
		return shift(fp, memory, now);
	}
	return TLBF_OK;
}

/*
 * Count a key's bit in slice 's', set at time 'now' (was_clear: it was not
 * set before), and what it adds to the generation's load.
 */
static inline void
count_bit(TlbfSlice *s, bool was_clear, TlbfTime now, uint64_t *load)
{
	bool		below_size = s->bits_set < (uint64_t) s->nwords * 64;

	/*
	 * bits_set is a statistic, not recounted by validation: a crafted value
	 * may claim more bits than are set, so stop at the slice's size.  Added
	 * without a branch: was_clear is a coin toss in a half-full slice, and a
	 * mispredicted branch per slice costs more than the rest of the loop.
	 */
	s->bits_set += (uint64_t) (was_clear & below_size);
	s->updated_at = now;
	*load += (uint64_t) s->load_weight * was_clear;
}

/* After a key's k bits are set and counted. */
static inline void
count_key(Tlbf *f, uint64_t load, TlbfTime now)
{
	f->gen_left -= load < f->gen_left ? load : f->gen_left;
	f->inserted = tlbf_add_saturating(f->inserted, 1);
	f->newest = now;
}

/* A row's time as the filter takes it: never older than its newest. */
static inline TlbfTime
insertion_time(const Tlbf *f, TlbfTime at)
{
	return at < f->newest ? f->newest : at;
}

/*
 * Add a key at time 'at'.  On TLBF_OUT_OF_MEMORY or TLBF_OVER_LIMIT the
 * filter is unchanged (though it may have moved: *fp is always current).
 */
TlbfStatus
tlbf_insert(Tlbf **fp, TlbfMemory *memory, TlbfHash hash, TlbfTime at)
{
	TlbfTime	now = insertion_time(*fp, at);
	bool		moved = false;
	TlbfStatus	status = make_room(fp, memory, now, &moved);
	Tlbf	   *f;
	TlbfSlice  *s;
	uint64_t   *words;
	uint64_t	load = 0;		/* what the new bits add, 16.16 */

	if (status != TLBF_OK)
		return status;
	f = *fp;
	s = tlbf_slices(f);
	words = tlbf_words(f);
	for (int i = 0; i < f->k; i++)
		count_bit(&s[i], tlbf_set_bit(words, &s[i], hash), now, &load);
	count_key(f, load, now);
	return TLBF_OK;
}
