/*-------------------------------------------------------------------------
 *
 * tb.h
 *	  Format 3's core (issue 36), beside the paper's layout (tlbf.h, formats
 *	  1 and 2).  Pure C, like tlbf.h: no postgres.h, no allocation of its own
 *	  (memory is a TlbfMemory), no errors raised.  The layout and how it
 *	  works: tb_format.h.
 *
 * A key added at time t is found by every query at a time in [t, t + span]
 * whose window reaches back to t, as long as t is within the span before
 * the newest time the filter has seen (an insertion or a retirement at a
 * later time makes older keys expire).  Generations wholly older than the
 * span before the newest time are never asked, and emptied when a
 * generation starts (tb_retire empties them at once).
 *
 *-------------------------------------------------------------------------
 */
#ifndef TB_H
#define TB_H

#include <stdbool.h>

#include "tb_format.h"
#include "tlbf.h"

typedef struct TbParams
{
	TlbfTime	span;			/* microseconds, > 0 */
	double		error_rate;		/* in [TLBF_MIN_ERROR_RATE, TLBF_MAX_ERROR_RATE] */
	uint64_t	capacity;		/* keys per span: sizes every generation when
								 * 'declared', else the first one's guess */
	bool		declared;		/* the capacity is a promise, not a guess */
	int			generations;	/* per span, 1, 3 or 7; 0: the default */
	uint64_t	seed;
} TbParams;

/* tb_sizing.c */
extern bool tb_check_params(TbParams *params, TlbfProblem *problem);
extern void tb_choose_layout(double error_rate, int generations, int *lines_per_key,
							 int *k, double *bits_per_key);
extern uint64_t tb_lines_for(const TbFilter *f, uint64_t keys);
extern uint64_t tb_capacity_of(const TbFilter *f, uint64_t nlines);
extern double tb_keys_estimate(const TbFilter *f, double set, uint64_t nlines);
extern uint64_t tb_keys_of_bits(const TbFilter *f, uint64_t set, uint64_t nlines);
extern double tb_bits_sd(const TbFilter *f, double keys, uint64_t nlines);
extern uint64_t tb_bits_over(const TbFilter *f, uint64_t keys, uint64_t nlines);

/* tb_create.c */
extern void tb_init(TbFilter *f, const TbParams *params);
extern TlbfKeys tb_keys_of(const TbFilter *f);
extern void tb_record_keys(TbFilter *f, TlbfKeys keys);

/* tb_bands.c: the directory and its lines */
extern TlbfStatus tb_add_band(TbFilter **f, TlbfMemory *memory, uint64_t nlines);
extern void tb_remove_band(TbFilter *f, int index);
extern void tb_clear_slot(TbFilter *f, int band, int slot);
extern void tb_fold_band(TbFilter *f, int index, uint64_t divisor);

/* tb_insert.c */
extern TlbfStatus tb_insert(TbFilter **f, TlbfMemory *memory, TlbfHash hash,
							TlbfTime at);
extern TlbfStatus tb_insert_or_fail(TbFilter **f, TlbfMemory *memory, TlbfHash hash,
									TlbfTime at);

/* A key to insert, for tb_insert_many (which overwrites 'at': tb_insert.c). */
typedef struct TbKey
{
	TlbfHash	hash;
	TlbfTime	at;
} TbKey;

extern TlbfStatus tb_insert_many(TbFilter **f, TlbfMemory *memory, TbKey *keys, size_t n);

/* tb_build.c: a filter built at once from keys known in advance */
#define TB_COUNT_BITS		14
#define TB_COUNT_EXACT		4096	/* hashes counted exactly, not sketched */
#define TB_COUNT_REGISTERS	(1 << TB_COUNT_BITS)

typedef struct TbCounter
{
	uint8_t		reg[TB_COUNT_REGISTERS];	/* HyperLogLog: the highest rank
											 * seen in each register */
} TbCounter;

/*
 * Count one hash: a register from the top bits of its second half, the
 * rank of the first one bit after them (the group is chosen from the first
 * half).  Inline: an aggregate counts each row as it comes.
 */
static inline void
tb_count_one(TbCounter *c, TlbfHash hash)
{
	uint64_t	x = hash.b;
	uint64_t	rest = (x << TB_COUNT_BITS) | (UINT64_C(1) << (TB_COUNT_BITS - 1));
	uint8_t		rank = (uint8_t) (__builtin_clzll(rest) + 1);
	uint8_t    *r = &c->reg[x >> (64 - TB_COUNT_BITS)];

	if (rank > *r)
		*r = rank;
}

extern void tb_count_init(TbCounter *c);
extern void tb_count_add(TbCounter *c, const TlbfHash *hashes, size_t n);
extern void tb_count_merge(TbCounter *into, const TbCounter *from);
extern double tb_count_estimate(const TbCounter *c);
extern double tb_count_distinct(TlbfHash *hashes, size_t n);
extern TlbfStatus tb_build_band(TbFilter **f, TlbfMemory *memory, double keys);
extern void tb_build_generation(TbFilter *f, int64_t g, TlbfTime earliest);
extern void tb_build_finish(TbFilter *f);
extern void tb_build_add(TbFilter *f, int64_t g, const TlbfHash *hashes, size_t n);
#define TB_BUILD_BUCKETS	256		/* tb_build_bucket: by the top byte of a */
extern void tb_build_bucket(TlbfHash *hashes, size_t n, TlbfHash *scratch,
							size_t offsets[TB_BUILD_BUCKETS + 1]);

/* tb_query.c */
extern bool tb_query(const TbFilter *f, TlbfHash hash, TlbfTime at,
					 int64_t window);
extern bool tb_last_seen(const TbFilter *f, TlbfHash hash, TlbfTime at,
						 int64_t window, TlbfTime *lower, TlbfTime *upper);

/* tb_infer.c */
extern double tb_posterior(const TbFilter *f, TlbfHash hash, TlbfTime at, int64_t window,
						   double prior);

/* tb_retire.c */
extern int64_t tb_oldest_kept(const TbFilter *f, TlbfTime at);
extern int	tb_retire(TbFilter *f, TlbfTime at);
extern bool tb_retirable(const TbFilter *f, TlbfTime at);
extern bool tb_releasable(const TbFilter *f);
extern bool tb_release(TbFilter *f);

/* tb_merge.c: why two filters cannot be united (the glue words it) */
typedef enum TbMismatch
{
	TB_MERGE_OK = 0,
	TB_MERGE_SPAN,				/* spans differ */
	TB_MERGE_GENERATIONS,		/* generations per span differ */
	TB_MERGE_ERROR_RATE,		/* error rate, bits per key, k or lines per key */
	TB_MERGE_HASH_SCHEME,
	TB_MERGE_SEED,				/* both hold keys, with different seeds */
	TB_MERGE_KINDS				/* both hold keys, of kinds that do not join */
} TbMismatch;

extern TbMismatch tb_merge_mismatch(const TbFilter *a, const TbFilter *b);
extern TlbfStatus tb_union(TbFilter **dst, TlbfMemory *memory, const TbFilter *src);
extern void tb_fold_to_fit(TbFilter *f);

/* tb_stats.c */
typedef struct TbLiveKeys
{
	double		estimate;		/* distinct keys a query at 'at' finds */
	double		low;			/* the range the count lies in */
	double		high;
	TlbfTime	oldest_live;	/* start of the oldest generation asked,
								 * TLBF_NEVER if none */
} TbLiveKeys;

extern bool tb_generation_is_live(const TbFilter *f, int64_t generation, TlbfTime at);
extern void tb_live_keys(const TbFilter *f, TlbfTime at, TbLiveKeys *out);

/* tb_validate.c */
extern bool tb_validate(const void *buffer, size_t len, TlbfProblem *problem);

#endif							/* TB_H */
