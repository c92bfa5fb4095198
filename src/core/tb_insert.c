/*-------------------------------------------------------------------------
 *
 * tb_insert.c
 *	  Adding a key to a format 3 filter: k bits in its group's piece of the
 *	  slot of its generation, in the newest band holding that generation;
 *	  starting the generation, or a band for it, first if needed.  Many
 *	  keys at once (tb_insert_many) give the same bytes, with their cache
 *	  misses overlapped.
 *
 * Insertions may come in any order of time (an aggregate's rows do): a key
 * goes to its own generation whatever was added before.  A key older than
 * the span before the newest time seen is not added: no query at or after
 * that time asks its generation.  The generations that fell out of the
 * span are emptied when a generation starts (its slot may be theirs);
 * until then no query asks them either.
 *
 * A generation needs room for as many keys as a declared capacity gives
 * it, or else as the nearest generation the filter holds took over its
 * interval at the rate of its keys (the one before, on a steady stream; a
 * first generation covers only part of its interval), or else the
 * creator's guess.  It takes its
 * slot in the newest band if that band's size is within [3/4, 17/16] of
 * what it needs; otherwise a new band of the size it needs starts, which
 * the next generations share.  When a generation's piece has taken a
 * sixteenth more keys than its band was sized for, it goes on in a new
 * band sized for a whole generation at the rate since the full piece's
 * earliest key, at least twice the piece (so a rising rate keeps the error
 * rate, at the price of another line to read until the old band's
 * generations leave the span).  Keys are counted when they set a bit: a repeated key takes no
 * room.  A band that would pass memory->max_bytes is not started (with
 * memory->keep_live; without, the oldest bands make room): the generation
 * takes its slot in the newest band whatever its size, and the error rate
 * rises instead.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "tb_bits.h"

/*
 * Keys generation 'n' would take over its whole interval at the rate of
 * the keys it holds, over the time from its earliest key to its end (or
 * to the newest time, for the newest generation): a filter's first
 * generation, or one after a pause, covers only part of its interval (at
 * least a sixteenth of it is assumed).  0 if it holds none.
 */
static uint64_t
rate_keys(const TbFilter *f, int64_t n)
{
	const TbBand *b = tb_bands(f);
	int			s = tb_slot_of(f, n);
	uint64_t	keys = 0;
	TlbfTime	earliest = TLBF_TIME_END;
	TlbfTime	end;
	double		scaled;

	for (int i = 0; i < f->nbands; i++)
		if (b[i].slot[s].generation == n)
		{
			keys = tlbf_add_saturating(keys, tb_keys_of_bits(f, b[i].slot[s].bits,
															 b[i].nlines));
			if (b[i].slot[s].started < earliest)
				earliest = b[i].slot[s].started;
		}
	if (keys == 0)
		return 0;
	/* (n * length + length cannot pass the newest time unless n is its generation) */
	end = tb_generation_of(f->newest, f->length) == n ? f->newest + 1 : n * f->length + f->length;
	/* a rate over less than 1/16 of the interval says little: at most 16 times the keys */
	scaled = (double) keys * (double) f->length / fmax((double) (end - earliest), f->length / 16.0);
	return scaled < (double) TLBF_MAX_CAPACITY ? (uint64_t) scaled + 1 : TLBF_MAX_CAPACITY;
}

/* Keys a new generation 'g' needs room for. */
static uint64_t
expected_keys(const TbFilter *f, int64_t g)
{
	if ((f->flags & TB_DECLARED) != 0)
		return f->capacity / f->generations + 1;
	/* the nearest generation held, the older one first */
	for (int64_t d = 1; d <= f->generations + 1; d++)
	{
		uint64_t	keys = rate_keys(f, g - d);

		if (keys == 0)
			keys = rate_keys(f, g + d);
		if (keys > 0)
			return keys;
	}
	/* none: the newest band's size, or the guess */
	if (f->nbands > 0)
		return tb_capacity_of(f, tb_bands(f)[f->nbands - 1].nlines);
	return f->capacity / f->generations + 1;
}

static bool
fits(const TbFilter *f, uint64_t keys, uint64_t nlines)
{
	uint64_t	capacity = tb_capacity_of(f, nlines);

	return keys <= capacity + capacity / 16;
}

/*
 * Keys a generation needs at the rate since its full piece's earliest key
 * (slot 'slot' of a band of 'nlines'): at least twice the piece, so that a
 * burst's bands grow geometrically, at most 64 times (a burst within one
 * microsecond has no rate).
 */
static uint64_t
split_keys(const TbFilter *f, const TbSlot *slot, uint64_t nlines, TlbfTime at)
{
	double		capacity = (double) tb_capacity_of(f, nlines);
	double		elapsed = (double) (at - slot->started);
	double		keys = elapsed > 0 ?
		tb_keys_of_bits(f, slot->bits, nlines) * (double) f->length / elapsed : 0;

	if (keys > 64 * capacity)
		keys = 64 * capacity;
	if (keys < 2 * capacity)
		keys = 2 * capacity;
	return keys < (double) TLBF_MAX_CAPACITY ? (uint64_t) keys : TLBF_MAX_CAPACITY;
}

/*
 * Append a band of 'nlines' groups (there are fewer than TB_MAX_BANDS),
 * keeping under memory->max_bytes by dropping the oldest bands (never one
 * holding 'g', nor any after it) unless memory->keep_live; nothing is
 * dropped unless dropping makes room.
 */
static TlbfStatus
start_band(TbFilter **fp, TlbfMemory *memory, uint64_t nlines, int64_t g, bool drop_any)
{
	TbFilter   *f = *fp;
	int			droppable = 0;
	uint64_t	groups = tb_total_groups(f);

	/*
	 * The oldest bands that may go, and whether their going makes room
	 * (with 'drop_any', those holding g too: its keys there are lost)
	 */
	while (droppable < f->nbands && !memory->keep_live &&
		   (drop_any || tb_bands(f)[droppable].slot[tb_slot_of(f, g)].generation != g))
		groups -= tb_bands(f)[droppable++].nlines;
	if (tb_layout_bytes(f, (uint64_t) (f->nbands - droppable) + 1, groups + nlines) > memory->max_bytes)
		return TLBF_OVER_LIMIT;
	while (tb_layout_bytes(f, (uint64_t) f->nbands + 1, tb_total_groups(f) + nlines) > memory->max_bytes)
	{
		/* (tb_insert emptied the generations that left the span: it held live ones) */
		f->truncated = tlbf_add_saturating(f->truncated, 1);
		tb_remove_band(f, 0);
	}
	return tb_add_band(fp, memory, nlines);
}

/*
 * Groups a new band could have beside the others under memory->max_bytes,
 * rounded down as tb_lines_for rounds up (m * 2^j, m in 32 .. 63), so that
 * it can fold; 0 if none.
 */
static uint64_t
room_lines(const TbFilter *f, const TlbfMemory *memory)
{
	size_t		used = tb_layout_bytes(f, (uint64_t) f->nbands + 1, tb_total_groups(f));
	uint64_t	n,
				unit = 1;

	if (used >= memory->max_bytes)
		return 0;
	n = (memory->max_bytes - used) / (tb_group_words(f) * sizeof(uint64_t));
	if (n > TB_MAX_GROUP_LINES)
		n = TB_MAX_GROUP_LINES;
	while (n >= 64 * unit)
		unit *= 2;
	return n / unit * unit;
}

/*
 * Strict, dropping allowed (a shared filter's 'on_full=drop'), when no band
 * for a full piece fits: the oldest bands go, g's too (its keys there are
 * lost, counted in 'truncated'), rather than the key, and the new band is
 * at most what the cap holds alone.
 */
static TlbfStatus
drop_for_band(TbFilter **fp, TlbfMemory *memory, uint64_t keys, int64_t g)
{
	TbFilter   *f = *fp;

	while (keys > 1 && tb_layout_bytes(f, 1, tb_lines_for(f, keys)) > memory->max_bytes)
		keys /= 2;
	if (f->nbands == TB_MAX_BANDS)
	{
		f->truncated = tlbf_add_saturating(f->truncated, 1);
		tb_remove_band(f, 0);
	}
	return start_band(fp, memory, tb_lines_for(f, keys), g, true);
}

/*
 * Halve band 'index' while 'keys' (a generation to come) and each of its
 * generations fit the half: a band sized for a higher rate gives its room
 * back without a new band.
 */
static void
fold_while_fits(TbFilter *f, int index, uint64_t keys)
{
	TbBand	   *b = &tb_bands(f)[index];
	uint64_t	divisor = 1;

	while ((b->nlines / divisor) % 2 == 0 &&
		   keys <= tb_capacity_of(f, b->nlines / divisor / 2))
	{
		bool		all = true;

		for (int s = 0; s < tb_slots(f); s++)
			all &= b->slot[s].generation == TB_NO_GENERATION ||
				fits(f, tb_keys_of_bits(f, b->slot[s].bits, b->nlines), b->nlines / divisor / 2);
		if (!all)
			break;
		divisor *= 2;
	}
	tb_fold_band(f, index, divisor);
}

/* Take slot 's' of the newest band for generation 'g' (the slot holds none). */
static void
claim(TbFilter *f, int s, int64_t g, TlbfTime at)
{
	TbSlot	   *slot = &tb_bands(f)[f->nbands - 1].slot[s];

	slot->generation = g;
	slot->started = at;
	slot->bits = 0;
}

/* The slot of band 'b' whose generation contains 'at', or -1 (compared by times). */
static inline int
slot_holding(const TbFilter *f, const TbBand *b, TlbfTime at)
{
	for (int s = 0; s < tb_slots(f); s++)
	{
		TlbfTime	start;

		if (b->slot[s].generation == TB_NO_GENERATION)
			continue;
		start = b->slot[s].generation * f->length;
		if (start <= at && at - start < f->length)
			return s;
	}
	return -1;
}

/*
 * The bits that make a piece of a band of 'nlines' groups full: once they
 * stand for a sixteenth more keys than its capacity (counted so,
 * order-free); 0 (always full) if it has none.  Every insertion asks it,
 * and it takes a division and a search: the last answer is remembered,
 * with all it depends on.
 */
static uint64_t
full_bits(const TbFilter *f, uint64_t nlines)
{
	static uint64_t last_nlines,
				last_bits;
	static double last_bits_per_key;
	static int	last_k,
				last_piece;
	uint64_t	capacity;
	uint64_t	limit;

	if (nlines == last_nlines && f->bits_per_key == last_bits_per_key && f->k == last_k &&
		tb_piece_words(f) == last_piece && last_nlines != 0)
		return last_bits;
	capacity = tb_capacity_of(f, nlines);
	limit = capacity + capacity / 16;
	last_bits = limit == 0 ? 0 : tb_bits_over(f, limit - 1, nlines);
	last_nlines = nlines;
	last_bits_per_key = f->bits_per_key;
	last_k = f->k;
	last_piece = tb_piece_words(f);
	return last_bits;
}

static inline bool
full(const TbFilter *f, const TbBand *b, int s)
{
	return b->slot[s].bits >= full_bits(f, b->nlines);
}

/*
 * Where a key added at 'at' goes when the newest band has no room for it:
 * empty the generations that left the span, then find the newest band
 * holding its generation, or start the generation, or go on in another
 * band if its piece is full.  *band = -1: the key is older than the span.
 */
static TlbfStatus
place(TbFilter **fp, TlbfMemory *memory, TlbfTime at, bool strict, int *bandp, int *slotp)
{
	TbFilter   *f = *fp;
	int64_t		g = tb_generation_of(at, f->length);
	int			s = tb_slot_of(f, g);
	int			band = -1;

	*bandp = -1;
	if (g < tb_oldest_kept(f, f->newest))
		return TLBF_OK;
	tb_retire(f, f->newest);
	for (int i = f->nbands - 1; i >= 0 && band < 0; i--)
		if (tb_bands(f)[i].slot[s].generation == g)
			band = i;
	if (band < 0)
	{
		uint64_t	keys = expected_keys(f, g);
		TbBand	   *newest = f->nbands > 0 ? &tb_bands(f)[f->nbands - 1] : NULL;

		/*
		 * The slot holds no generation in any band: two kept generations
		 * are fewer than 'slots' apart.  The newest band takes it if it
		 * fits, halved first (exactly, every generation in it kept) while
		 * it and the band's generations fit half; else a band with room
		 * for the noise of its count as well (3 / sqrt(keys) more, at most
		 * a quarter), so that a rate's noise does not start one band
		 * after another.
		 */
		if (newest != NULL && fits(f, keys, newest->nlines))
			fold_while_fits(f, f->nbands - 1, keys);
		else
		{
			/* (the rate's noise: three standard deviations of a Poisson count) */
			double		headroom = newest != NULL ? fmin(0.25, 3 / sqrt((double) keys)) : 0;
			uint64_t	room = keys + (uint64_t) (keys * headroom);
			TlbfStatus	status = f->nbands < TB_MAX_BANDS ?
				start_band(fp, memory, tb_lines_for(f, room), g, false) : TLBF_OVER_LIMIT;

			f = *fp;
			/* no room for it: the newest band takes the generation anyway */
			if (status != TLBF_OK && (f->nbands == 0 || status == TLBF_OUT_OF_MEMORY))
				return status;
		}
		claim(f, s, g, at);
		band = f->nbands - 1;
	}
	else if (full(f, &tb_bands(f)[band], s))
	{
		TbBand	   *b = &tb_bands(f)[band];

		if (band < f->nbands - 1)
		{
			/* a newer band exists (another generation's split): go on there */
			claim(f, s, g, at);
			band = f->nbands - 1;
		}
		else if (f->nbands < TB_MAX_BANDS)
		{
			uint64_t	keys = split_keys(f, &b->slot[s], b->nlines, at);
			uint64_t	nlines = tb_lines_for(f, keys);
			TlbfStatus	status;

			/*
			 * strict: the largest band that fits beside the others, down
			 * to an eighth of the full one, rather than none (or than
			 * dropping older bands for a large one).  A dedup trigger's
			 * keys come back together a span after they came: the
			 * generation they land in needs several times its share.
			 */
			if (strict)
			{
				uint64_t	room = room_lines(f, memory);

				if (room < nlines && room >= (b->nlines + 7) / 8)
					nlines = room;
			}
			/* (b is not read past here: start_band may drop bands and move them) */
			status = start_band(fp, memory, nlines, g, false);
			if (strict && status == TLBF_OVER_LIMIT && !memory->keep_live)
				status = drop_for_band(fp, memory, keys, g);
			if (status == TLBF_OK)
			{
				/* the generation goes on in a band for the rate since */
				f = *fp;
				claim(f, s, g, at);
				band = f->nbands - 1;
			}
			else if (strict)
				return TLBF_OVER_LIMIT;
			else
			{
				/*
				 * No room for another band: the full piece takes the key,
				 * wherever it is now (older bands may have gone for the
				 * cap; never one holding g).
				 */
				f = *fp;
				band = -1;
				for (int i = f->nbands - 1; i >= 0 && band < 0; i--)
					if (tb_bands(f)[i].slot[s].generation == g)
						band = i;
			}
		}
		else if (strict && !memory->keep_live &&
				 drop_for_band(fp, memory, split_keys(f, &b->slot[s], b->nlines, at), g) == TLBF_OK)
		{
			f = *fp;
			claim(f, s, g, at);
			band = f->nbands - 1;
		}
		else if (strict)
			return TLBF_OVER_LIMIT;
		/* else (TB_MAX_BANDS) the full piece takes the key */
	}
	*bandp = band;
	*slotp = s;
	return TLBF_OK;
}

static TlbfStatus
insert(TbFilter **fp, TlbfMemory *memory, TlbfHash hash, TlbfTime at, bool strict)
{
	TbFilter   *f = *fp;
	int			band = f->nbands - 1;
	int			s = -1;
	int			piece;

	f->inserted = tlbf_add_saturating(f->inserted, 1);
	if (f->newest == TLBF_NEVER || at > f->newest)
		f->newest = at;
	/* most keys go to a generation the newest band holds, with room */
	if (band >= 0 && at >= f->newest - f->span)
		s = slot_holding(f, &tb_bands(f)[band], at);
	if (s < 0 || full(f, &tb_bands(f)[band], s))
	{
		TlbfStatus	status = place(fp, memory, at, strict, &band, &s);

		if (status != TLBF_OK || band < 0)
			return status;
		f = *fp;
	}
	piece = tb_piece_words(f);
	if (piece == 2 && f->k == 8)
		tb_set_bits(f, band, s, hash, at, 2, 8);
	else
		tb_set_bits(f, band, s, hash, at, piece, f->k);
	return TLBF_OK;
}

TlbfStatus
tb_insert(TbFilter **fp, TlbfMemory *memory, TlbfHash hash, TlbfTime at)
{
	return insert(fp, memory, hash, at, false);
}

/*
 * The same, but where tb_insert, finding no room for a band, would put the
 * key in a piece already full (its error rate rising), fail with
 * TLBF_OVER_LIMIT instead, the key's bits not set: a shared filter's
 * region is all it gets, and a dedup trigger must not reject rows for
 * false positives (shared_value.c).  As any insertion, it has moved the
 * newest time to 'at' and counted the key (emptying the generations that
 * left the span then, as tb_retire at 'at' would).
 */
TlbfStatus
tb_insert_or_fail(TbFilter **fp, TlbfMemory *memory, TlbfHash hash, TlbfTime at)
{
	return insert(fp, memory, hash, at, true);
}

/* Keys whose lines tb_insert_many prefetches ahead of the one being set. */
#define TB_MANY_AHEAD 16

/*
 * Set the bits of a run of keys in band 'band' (keys[i].at holds the key's
 * slot there, set by tb_insert_many), each line prefetched a few keys
 * ahead; then each slot that took a key counts the bits they found new
 * (summed over the run: the same sum in any order, the bits of the union),
 * capped as tb_set_bits caps it.
 */
static inline __attribute__((always_inline)) void
set_run(TbFilter *f, int band, const TbKey *keys, size_t n, const int piece, const int k)
{
	TbBand	   *b = &tb_bands(f)[band];
	uint64_t   *words = tb_words(f) + tb_band_word(f, band);
	uint64_t	group_words = tb_group_words(f);
	uint64_t	fresh[TB_MAX_SLOTS] = {0};
	bool		took[TB_MAX_SLOTS] = {false};

	for (size_t i = 0; i < n; i++)
	{
		int			s = (int) keys[i].at;
		uint64_t   *p = words + tb_group_of(keys[i].hash, b->nlines) * group_words +
			(uint64_t) s * piece;

		if (i + TB_MANY_AHEAD < n)
			__builtin_prefetch(words + tb_group_of(keys[i + TB_MANY_AHEAD].hash, b->nlines) *
							   group_words + (uint64_t) keys[i + TB_MANY_AHEAD].at * piece, 1);
		fresh[s] += tb_or_key(p, keys[i].hash, piece, k);
		took[s] = true;
	}
	for (int s = 0; s < tb_slots(f); s++)
		if (took[s])
		{
			b->slot[s].bits += fresh[s];
			if (b->slot[s].bits > b->nlines * 64 * (uint64_t) piece)
				b->slot[s].bits = b->nlines * 64 * (uint64_t) piece;
		}
}

/*
 * Insert keys[0 .. n) as tb_insert would one after the other, in that
 * order, into the same bytes; faster when the filter is larger than the
 * cache, where one key at a time waits for its line.
 *
 * A run of keys that tb_insert would each put in a generation of the
 * newest band, in a piece with room, is set together, a line prefetched
 * while another is set.  A piece is taken to have room for the run while
 * its bits, with k for each key of the run before (at most what they set),
 * stay below the count that makes it full: so no key of a run could have
 * found its piece full one by one either.  Inside a run only the bits are
 * deferred; the newest time, the count of insertions and each slot's
 * earliest time move key by key, as tb_insert moves them.  Any other key
 * (a generation to start, a piece that may be full, a key older than the
 * span) ends the run and goes in by tb_insert alone, after the run's bits
 * are set.
 *
 * keys[].at is overwritten (a run keeps its keys' slots there).  On a
 * status other than TLBF_OK, the keys before the one tb_insert refused are
 * in, none after it.
 */
TlbfStatus
tb_insert_many(TbFilter **fp, TlbfMemory *memory, TbKey *keys, size_t n)
{
	size_t		i = 0;

	while (i < n)
	{
		TbFilter   *f = *fp;
		int			band = f->nbands - 1;
		size_t		start = i;
		uint64_t	pending[TB_MAX_SLOTS] = {0};
		/* the bits that make a piece of the newest band full, as full() counts them */
		uint64_t	limit = band >= 0 ? full_bits(f, tb_bands(f)[band].nlines) : 0;
		TlbfStatus	status;

		while (band >= 0 && i < n)
		{
			TbSlot	   *slot;
			TlbfTime	at = keys[i].at;
			TlbfTime	newest = f->newest == TLBF_NEVER || at > f->newest ? at : f->newest;
			int			s;

			if (at < newest - f->span)
				break;
			s = slot_holding(f, &tb_bands(f)[band], at);
			if (s < 0)
				break;
			slot = &tb_bands(f)[band].slot[s];
			if (slot->bits >= limit || (uint64_t) f->k * pending[s] >= limit - slot->bits)
				break;
			f->inserted = tlbf_add_saturating(f->inserted, 1);
			f->newest = newest;
			if (at < slot->started)
				slot->started = at;
			pending[s]++;
			keys[i++].at = s;
		}
		if (i > start)
		{
			if (tb_piece_words(f) == 2 && f->k == 8)
				set_run(f, band, keys + start, i - start, 2, 8);
			else
				set_run(f, band, keys + start, i - start, tb_piece_words(f), f->k);
		}
		if (i == n)
			break;
		status = tb_insert(fp, memory, keys[i].hash, keys[i].at);
		if (status != TLBF_OK)
			return status;
		i++;
	}
	return TLBF_OK;
}
