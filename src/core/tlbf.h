/*-------------------------------------------------------------------------
 *
 * tlbf.h
 *	  The Time-limited Bloom Filter core: a pure C library over one flat
 *	  buffer (see tlbf_format.h).  It never includes postgres.h, never
 *	  allocates on its own and never raises errors: memory is passed in and
 *	  problems are returned, so the same code runs inside PostgreSQL, in unit
 *	  tests, fuzzers and benchmarks.
 *
 * The structure follows Rodrigues, Shtul, Baquero and Almeida, "Time-limited
 * Bloom Filter" (ACM SAC 2023): k+l slices, each insertion sets one bit in
 * each of the k newest slices, the slices shift when one of them would pass
 * its capacity, a new slice is sized from the observed insertion rate, and a
 * slice expires when its last insertion is older than the span.  A key added
 * at time t is found by every query at a time <= t + span.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_H
#define TLBF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tlbf_format.h"

/* The two 64-bit halves of a key's hash; slice functions are a + j*b. */
typedef struct TlbfHash
{
	uint64_t	a;
	uint64_t	b;
} TlbfHash;

/*
 * The kinds of a key's fields (tlbf_format.h); fields == 0: not recorded.
 * 'tag' is the filter's seed: 0, or where a field is of kind other or
 * container, a hash of those fields' types (see key_match.c in the glue),
 * so that a key of another such type is refused instead of hashed anew.
 */
typedef struct TlbfKeys
{
	uint16_t	fields;
	uint32_t	kinds;
	uint64_t	tag;
} TlbfKeys;

/* What the caller asks for when creating a filter. */
typedef struct TlbfParams
{
	TlbfTime	span;			/* microseconds, > 0 */
	double		error_rate;		/* in (0, 0.5] */
	uint64_t	capacity;		/* expected keys per span, a starting guess */
	int			k;				/* 0: choose from error_rate (with l) */
	int			l;				/* 0: choose from error_rate (with k) */
	uint64_t	seed;
} TlbfParams;

/* A rejected parameter or buffer: static strings, for an error report. */
typedef struct TlbfProblem
{
	const char *message;
	const char *hint;			/* may be NULL */
} TlbfProblem;

/*
 * How a filter may grow.  resize() must return a buffer of at least 'size'
 * bytes holding the old contents (like realloc) and set 'allocated' to its
 * usable size, or return NULL.  With resize NULL the filter must live within
 * 'allocated' bytes (a fixed region).
 */
typedef struct TlbfMemory
{
	void	   *(*resize) (struct TlbfMemory *memory, void *buffer, size_t size);
	void	   *context;		/* for resize() */
	size_t		allocated;		/* usable bytes at the buffer */
	size_t		max_bytes;		/* the size cap; slices are dropped to stay
								 * under it */
	bool		keep_live;		/* drop no live slice for the cap: fail with
								 * TLBF_OVER_LIMIT instead */
} TlbfMemory;

typedef enum TlbfStatus
{
	TLBF_OK = 0,
	TLBF_OUT_OF_MEMORY,			/* resize() failed or no room to grow */
	TLBF_OVER_LIMIT				/* the newest k slices alone exceed max_bytes */
} TlbfStatus;

/*
 * Counters that come from outside may already be near their limit; adding
 * to them sticks at the limit instead of wrapping to a small number.
 */
static inline uint64_t
tlbf_add_saturating(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* params.c */
/*
 * Called now and then by the operations that walk a whole value, which may
 * be up to 1 GB (merge, validation, statistics): the extension sets it to
 * PostgreSQL's CHECK_FOR_INTERRUPTS, so that such a walk can be cancelled.
 * It may not return (a longjmp): these operations write only to memory
 * their caller owns, and leave nothing to undo.  NULL: never called.
 */
extern void (*tlbf_interrupt_check) (void);

/* call tlbf_interrupt_check every this many slices, or bytes copied */
#define TLBF_CHECK_EVERY_SLICES	65536
#define TLBF_CHECK_EVERY_BYTES	((size_t) 16 << 20)

static inline void
tlbf_check_interrupts(void)
{
	if (tlbf_interrupt_check != NULL)
		tlbf_interrupt_check();
}

extern bool tlbf_check_params(TlbfParams *params, TlbfProblem *problem);
extern double tlbf_fpr(int k, int l);
extern void tlbf_choose_kl(double error_rate, int *k, int *l);

/* hash.c */
extern TlbfHash tlbf_hash_bytes(const void *data, size_t len, uint64_t seed);
extern TlbfHash tlbf_hash_int64(int64_t value, uint64_t seed);

/* create.c */
extern void tlbf_init(Tlbf *f, const TlbfParams *params);
extern size_t tlbf_first_generation_bytes(const TlbfParams *params);

/*
 * insert.c.  Times passed to the core must be valid PostgreSQL timestamps
 * (TLBF_TIME_MIN <= at < TLBF_TIME_END); the caller checks them.
 */
extern TlbfStatus tlbf_insert(Tlbf **f, TlbfMemory *memory,
							  TlbfHash hash, TlbfTime at);

/* query.c */
extern bool tlbf_query(const Tlbf *f, TlbfHash hash, TlbfTime at,
					   int64_t window);

/* infer.c (scratch: 2 * nslices bools) */
extern bool tlbf_last_seen(const Tlbf *f, TlbfHash hash, TlbfTime at, int64_t window,
						   bool *scratch, TlbfTime *lower, TlbfTime *upper);
extern double tlbf_posterior(const Tlbf *f, TlbfHash hash, TlbfTime at, int64_t window,
							 double prior, bool *scratch);

/* retire.c */
extern bool tlbf_is_expired(const TlbfSlice *s, TlbfTime at, int64_t window);
extern uint32_t tlbf_retirable_slices(const Tlbf *f, TlbfTime at);
extern size_t tlbf_drop_expired(Tlbf *f, TlbfTime at);
extern uint32_t tlbf_truncate_to(Tlbf *f, size_t max_bytes, TlbfTime at);

/* merge.c */
extern const char *tlbf_merge_mismatch(const Tlbf *a, const Tlbf *b);
extern size_t tlbf_merge_bytes(const Tlbf *const *inputs, int n);
extern void tlbf_merge(Tlbf *out, const Tlbf *const *inputs, int n);

/* keys.c */
extern TlbfKeys tlbf_keys_of(const Tlbf *f);
extern TlbfKeys tlbf_keys_make(const uint8_t *kinds, int nfields);
extern int	tlbf_key_kind(TlbfKeys keys, int field);
extern bool tlbf_keys_equal(TlbfKeys a, TlbfKeys b);
extern bool tlbf_keys_join(TlbfKeys a, TlbfKeys b, TlbfKeys *out);
extern bool tlbf_keys_valid(const Tlbf *f);
extern bool tlbf_keys_check(TlbfKeys keys);
extern void tlbf_record_keys(Tlbf *f, TlbfKeys keys);
extern bool tlbf_merge_keys(const Tlbf *const *inputs, int n, TlbfKeys *out);

/* validate.c */
extern bool tlbf_validate(const void *buffer, size_t len, TlbfProblem *problem);
extern bool tlbf_validate_directory(const void *prefix, size_t prefix_len,
									size_t len, TlbfProblem *problem);

/* stats.c */
typedef struct TlbfStats
{
	uint32_t	live_slices;
	uint64_t	bits;
	double		live_items;		/* live slices' distinct keys / k: a key
								 * counts once per k generations it was
								 * added in */
	double		live_keys;		/* estimate of the distinct keys the filter
								 * still finds */
	double		live_keys_low;	/* they are at least this (the fullest block
								 * of k generations) ... */
	double		live_keys_high; /* ... and at most this (no key in two
								 * blocks); both estimates too */
	TlbfTime	oldest_live;	/* TLBF_NEVER if no live slice */
} TlbfStats;

extern void tlbf_stats(const Tlbf *f, TlbfTime at, TlbfStats *stats);
extern double tlbf_fill_ratio(const TlbfSlice *s);
extern double tlbf_slice_load(const TlbfSlice *s);

#endif							/* TLBF_H */
