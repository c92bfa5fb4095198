/*-------------------------------------------------------------------------
 *
 * tlbf_format.h
 *	  The in-memory and on-disk layout of a Time-limited Bloom Filter.
 *
 * A filter is one contiguous buffer:
 *
 *	  Tlbf header | TlbfSlice directory[nslices] | uint64 bit words
 *
 * The same bytes are the payload of PostgreSQL's varlena value (the first
 * four bytes are reserved for its length word), the aggregate state, and a
 * shared-memory filter, so nothing is ever serialized or deserialized.
 * Slice 0 is the newest.  Its bits come first; every slice's bits are whole
 * 64-bit words, stored in directory order without gaps.
 *
 * Multi-byte fields are little-endian (the host order of every platform
 * PostgreSQL is built for in practice; see the static assertion in
 * validate.c).  Every field is checked by tlbf_validate() before a buffer
 * that came from outside is used.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_FORMAT_H
#define TLBF_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define TLBF_MAGIC			0x46424C54u /* "TLBF" read as little-endian */
#define TLBF_FORMAT_VERSION 2	/* 2 records the kind of key (1.4); 1 is read */
#define TLBF_FORMAT_VERSION_1 1 /* no key kinds: read, written back as it was */
#define TLBF_HASH_XXH3_DOUBLE 1 /* XXH3-128, double hashing, multiply-shift */

/* Limits enforced when a filter is created and when one is validated. */
#define TLBF_MAX_K			40
#define TLBF_MAX_L			1024
#define TLBF_MAX_SLICES		65536
#define TLBF_MIN_SLICE_WORDS 2	/* 128 bits */
#define TLBF_MAX_SLICE_WORDS (UINT32_C(1) << 27)	/* 1 GiB of bits */
#define TLBF_MAX_CAPACITY	(UINT64_C(1) << 40)
#define TLBF_MIN_ERROR_RATE 1e-9
#define TLBF_MAX_ERROR_RATE 0.5

/*
 * Time is PostgreSQL's TimestampTz: microseconds since 2000-01-01 UTC.  The
 * valid range is PostgreSQL's (MIN_TIMESTAMP .. END_TIMESTAMP); the glue
 * checks that the two definitions agree.  TLBF_NEVER marks a slice that was
 * never written; it is older than every valid time.
 */
typedef int64_t TlbfTime;

#define TLBF_TIME_MIN		INT64_C(-211813488000000000)
#define TLBF_TIME_END		INT64_C(9223371331200000000)
#define TLBF_NEVER			INT64_MIN
#define TLBF_USECS_PER_SEC	INT64_C(1000000)
#define TLBF_MAX_SPAN		(INT64_C(100) * 366 * 86400 * TLBF_USECS_PER_SEC)

typedef struct Tlbf
{
	uint32_t	length_word;	/* PostgreSQL's varlena length; never read
								 * here */
	uint32_t	magic;			/* TLBF_MAGIC */
	uint16_t	version;		/* TLBF_FORMAT_VERSION */
	uint8_t		hash_scheme;	/* TLBF_HASH_XXH3_DOUBLE */
	uint8_t		k;				/* slices written by each insertion */
	uint16_t	l;				/* planned full slices per span */
	uint16_t	key_fields;		/* values in a key (1, or a composite's
								 * fields); 0 while not recorded */
	uint32_t	nslices;		/* entries in the slice directory */
	uint32_t	key_kinds;		/* TlbfKeyKind of each field, 4 bits each,
								 * the first field lowest */
	uint64_t	seed;			/* hash seed; filters merge only if equal
								 * (the key's tag, see TlbfKeys) */
	int64_t		span;			/* microseconds a key must be remembered */
	double		error_rate;		/* target false-positive rate */
	uint64_t	capacity;		/* the creator's guess of keys per span */
	uint64_t	inserted;		/* insertions ever made */
	uint64_t	truncated;		/* unexpired slices dropped by a size limit */
	TlbfTime	newest;			/* latest insertion time, TLBF_NEVER if none */
	TlbfTime	gen_started;	/* time of the current generation's first
								 * insertion */
	uint64_t	gen_size;		/* load planned for this generation: keys per
								 * slice, times k, times 2^16 */
	uint64_t	gen_left;		/* load left before the next shift, same unit */
	double		target_gen;		/* keys per span/l at the observed rate */
} Tlbf;

/*
 * The kind of key a filter holds, recorded when its first key goes in, so
 * that a key of another type is converted to it or refused instead of
 * silently hashing differently (see key_match.c in the glue).  Each kind
 * has one way of hashing.
 */
typedef enum TlbfKeyKind
{
	TLBF_KEY_UNRECORDED = 0,
	TLBF_KEY_INTEGER,			/* int2, int4, int8 */
	TLBF_KEY_NUMERIC,
	TLBF_KEY_FLOAT,				/* float4 or float8: written by 1.4, or a
								 * union of the two below */
	TLBF_KEY_TEXT,				/* text, varchar, bpchar, name */
	TLBF_KEY_UUID,
	TLBF_KEY_BYTEA,
	TLBF_KEY_DATE,
	TLBF_KEY_TIMESTAMP,
	TLBF_KEY_TIMESTAMPTZ,
	TLBF_KEY_OTHER,				/* hashed by its type's hash function */
	TLBF_KEY_ENUM,				/* an enum, hashed by its label (1.5) */
	TLBF_KEY_FLOAT4,			/* float4 (1.5) */
	TLBF_KEY_FLOAT8,			/* float8 (1.5) */
	TLBF_KEY_CONTAINER			/* an array, range or row holding enums or
								 * rows, hashed element by element (1.5) */
} TlbfKeyKind;

#define TLBF_KEY_KIND_MAX	TLBF_KEY_CONTAINER
#define TLBF_MAX_KEY_FIELDS 8	/* 4 bits each in key_kinds */

typedef struct TlbfSlice
{
	uint32_t	offset;			/* first word, counted from the bit area */
	uint32_t	nwords;			/* length of the bit array in words */
	uint32_t	hash_index;		/* which double-hashing function it uses */
	uint32_t	load_weight;	/* keys one new bit stands for, times 2^16
								 * (see sizing.c) */
	uint64_t	bits_set;		/* bits that are one (kept as they are set) */
	TlbfTime	updated_at;		/* time of its last insertion (t_i) */
} TlbfSlice;

/* The layout has no padding, so the bytes are fully defined. */
_Static_assert(sizeof(Tlbf) == 112, "Tlbf header must be 112 bytes");
_Static_assert(sizeof(TlbfSlice) == 32, "TlbfSlice must be 32 bytes");

static inline TlbfSlice *
tlbf_slices(const Tlbf *f)
{
	return (TlbfSlice *) ((char *) f + sizeof(Tlbf));
}

static inline uint64_t *
tlbf_words(const Tlbf *f)
{
	return (uint64_t *) ((char *) f + sizeof(Tlbf) +
						 (size_t) f->nslices * sizeof(TlbfSlice));
}

static inline uint64_t
tlbf_total_words(const Tlbf *f)
{
	const TlbfSlice *s = tlbf_slices(f);

	return f->nslices == 0 ? 0 :
		(uint64_t) s[f->nslices - 1].offset + s[f->nslices - 1].nwords;
}

/* Bytes of a filter with the given directory length and bit words. */
static inline size_t
tlbf_layout_bytes(uint64_t nslices, uint64_t nwords)
{
	return sizeof(Tlbf) + nslices * sizeof(TlbfSlice) + nwords * sizeof(uint64_t);
}

/* Bytes the filter occupies. */
static inline size_t
tlbf_size(const Tlbf *f)
{
	return tlbf_layout_bytes(f->nslices, tlbf_total_words(f));
}

#endif							/* TLBF_FORMAT_H */
