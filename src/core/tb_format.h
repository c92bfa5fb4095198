/*-------------------------------------------------------------------------
 *
 * tb_format.h
 *	  The layout of format 3 (issue 36): generations aligned to time, all
 *	  of a key's live generations in one cache line (the choice and its
 *	  figures: docs/format.md).
 *
 * Time is cut into generations of 'length' = ceil(span / generations)
 * microseconds: a key added at time t belongs to generation g = floor(t /
 * length).  A query over the span asks at most generations + 1 of them,
 * so that many *slots* take turns: generation g lives in slot g mod slots.
 *
 * The bits live in *bands*.  A band is an array of nlines groups of
 * lines_per_key cache lines (64 bytes); each group is cut into one piece
 * per slot.  A key's group is the same in every slot (chosen from the hash
 * alone), so one read brings every live generation of the key: a query
 * reads lines_per_key lines per band.  A key sets k bits in its piece of
 * its generation's slot.  A filter has one band while the rate is steady;
 * when a generation fills up (or the rate moves the size it needs out of
 * [3/4, 17/16] of its band's), a new band of another size takes it and the
 * generations after it, and the old band goes once its generations have
 * left the span (until then a query reads a line of each).
 *
 * A key's bits depend on its hash and its generation only, not on the
 * order of insertions: bands of one size merge by OR, and a band of n
 * groups folds exactly onto n / d of them.
 *
 * A filter is one contiguous buffer, as formats 1 and 2 (tlbf_format.h):
 *
 *	  TbFilter header | TbBand directory[nbands] | zeros to a multiple of
 *	  64 bytes | band 0's lines, band 1's, ... without gaps
 *
 * so a buffer placed on a 64-byte boundary has every line on a cache line
 * of its own.  The magic and the version lie where formats 1 and 2 keep
 * theirs: a reader tells the formats apart by the version.  Multi-byte
 * fields are little-endian; the layout has no padding, so every byte is
 * defined (a slot holding no generation is all zeros, its pieces too).
 * tb_validate() checks every field of a buffer from outside.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TB_FORMAT_H
#define TB_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "tlbf_format.h"

#define TB_FORMAT_VERSION	3

#define TB_LINE_WORDS		8	/* a cache line: 8 words of 64 bits */
#define TB_LINE_BYTES		64
#define TB_ALIGN			64	/* the lines start this far into the buffer */

/* Limits enforced when a filter is created and when one is validated. */
#define TB_MAX_SLOTS		8
#define TB_DEFAULT_GENERATIONS 3	/* 4 slots of 128 bits in a line */
#define TB_MAX_LINES_PER_KEY 4
#define TB_MAX_K			64
#define TB_MAX_BANDS		8
#define TB_MAX_GROUP_LINES	(UINT64_C(1) << 24) /* lines in one band */
#define TB_MIN_BITS_PER_KEY 1.0
#define TB_MAX_BITS_PER_KEY 4096.0
#define TB_NO_GENERATION	INT64_MIN	/* a slot that holds none */

#define TB_DECLARED			0x01	/* flags: the capacity was declared */
#define TB_CARRIES			0x02	/* flags: the value goes on past its bands, at
									 * tb_carried_offset(), with a frozen value of
									 * format 1 or 2 (the glue's: value_carry.c);
									 * the core reads the bands only, and is never
									 * given such a value to change */

typedef struct TbFilter
{
	uint32_t	length_word;	/* PostgreSQL's varlena length; never read
								 * here */
	uint32_t	magic;			/* TLBF_MAGIC */
	uint16_t	version;		/* TB_FORMAT_VERSION */
	uint8_t		hash_scheme;	/* TLBF_HASH_XXH3_DOUBLE: a picks the group,
								 * b the bits in the piece */
	uint8_t		lines_per_key;	/* lines in a group: 1, 2 or 4 */
	uint16_t	generations;	/* per span: 1, 3 or 7 (slots - 1) */
	uint16_t	nbands;			/* entries in the directory */
	TlbfTime	span;			/* microseconds a key must be remembered */
	TlbfTime	length;			/* of a generation: ceil(span / generations) */
	double		error_rate;		/* target false-positive rate */
	double		bits_per_key;	/* a generation's bits per key at its share
								 * of the target (tb_sizing.c) */
	uint64_t	capacity;		/* keys per span: a promise every generation
								 * is sized from (TB_DECLARED), or else the
								 * first generation's guess */
	uint64_t	seed;			/* hash seed, and the key's tag (TlbfKeys);
								 * filters merge only if equal */
	TlbfTime	newest;			/* latest time seen, TLBF_NEVER if none */
	uint16_t	key_fields;		/* as Tlbf's: the kind of key, recorded with
								 * the first (its tag is the seed) */
	uint8_t		k;				/* bits a key sets in its piece */
	uint8_t		flags;			/* TB_DECLARED; other bits zero */
	uint32_t	key_kinds;
	uint64_t	inserted;		/* insertions ever made (summed by a union) */
	uint64_t	truncated;		/* bands holding generations within the span
								 * dropped to stay under a size cap */
} TbFilter;

typedef struct TbSlot
{
	int64_t		generation;		/* TB_NO_GENERATION: none (all zeros then,
								 * but for this field) */
	TlbfTime	started;		/* time of its earliest key, to size a band
								 * from the rate since */
	uint64_t	bits;			/* bits set in its pieces: the same whatever
								 * the order of insertions, and exact after
								 * a union (OR) or a fold; the keys they
								 * stand for: tb_keys_of_bits() */
} TbSlot;

typedef struct TbBand
{
	uint64_t	nlines;			/* groups of lines_per_key lines */
	TbSlot		slot[TB_MAX_SLOTS]; /* the first 'slots' used; the rest
									 * hold no generation */
} TbBand;

_Static_assert(sizeof(TbFilter) == 96, "TbFilter header must be 96 bytes");
_Static_assert(sizeof(TbBand) == 200, "TbBand must be 200 bytes");

static inline int
tb_slots(const TbFilter *f)
{
	return f->generations + 1;
}

/* Words of one piece: a group's words shared by the slots (a power of two). */
static inline int
tb_piece_words(const TbFilter *f)
{
	return (TB_LINE_WORDS * f->lines_per_key) >> __builtin_ctz((unsigned) tb_slots(f));
}

static inline uint64_t
tb_group_words(const TbFilter *f)
{
	return (uint64_t) TB_LINE_WORDS * f->lines_per_key;
}

static inline TbBand *
tb_bands(const TbFilter *f)
{
	return (TbBand *) ((char *) f + sizeof(TbFilter));
}

/* Offset of the first line: the directory rounded up to TB_ALIGN. */
static inline size_t
tb_lines_offset(uint64_t nbands)
{
	size_t		end = sizeof(TbFilter) + nbands * sizeof(TbBand);

	return (end + TB_ALIGN - 1) / TB_ALIGN * TB_ALIGN;
}

static inline uint64_t *
tb_words(const TbFilter *f)
{
	return (uint64_t *) ((char *) f + tb_lines_offset(f->nbands));
}

static inline uint64_t
tb_total_groups(const TbFilter *f)
{
	const TbBand *b = tb_bands(f);
	uint64_t	n = 0;

	for (int i = 0; i < f->nbands; i++)
		n += b[i].nlines;
	return n;
}

static inline size_t
tb_layout_bytes(const TbFilter *f, uint64_t nbands, uint64_t groups)
{
	return tb_lines_offset(nbands) + groups * tb_group_words(f) * sizeof(uint64_t);
}

/* Bytes the filter occupies. */
static inline size_t
tb_size(const TbFilter *f)
{
	return tb_layout_bytes(f, f->nbands, tb_total_groups(f));
}

/* Where a value with TB_CARRIES goes on: past its bands, 8-byte aligned. */
static inline size_t
tb_carried_offset(const TbFilter *f)
{
	return (tb_size(f) + 7) & ~(size_t) 7;
}

/* The first word of band 'index', counted from tb_words(). */
static inline uint64_t
tb_band_word(const TbFilter *f, int index)
{
	const TbBand *b = tb_bands(f);
	uint64_t	groups = 0;

	for (int i = 0; i < index; i++)
		groups += b[i].nlines;
	return groups * tb_group_words(f);
}

/* floor(t / length), for negative times too */
static inline int64_t
tb_generation_of(TlbfTime t, TlbfTime length)
{
	int64_t		q = t / length;

	return (t % length != 0 && t < 0) ? q - 1 : q;
}

/* generation mod slots, for negative generations too (slots: a power of two) */
static inline int
tb_slot_of(const TbFilter *f, int64_t generation)
{
	return (int) ((uint64_t) generation & (uint64_t) (tb_slots(f) - 1));
}

#endif							/* TB_FORMAT_H */
