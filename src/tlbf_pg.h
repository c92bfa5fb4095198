/*-------------------------------------------------------------------------
 *
 * tlbf_pg.h
 *	  What the PostgreSQL glue files share: reading tlbf arguments, hashing
 *	  items, checking times, and turning the core's results into errors.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_PG_H
#define TLBF_PG_H

#include "compat.h"

#include "fmgr.h"
#include "nodes/pg_list.h"
#include "utils/array.h"
#include "utils/timestamp.h"

#include "core/tlbf.h"

typedef struct ItemHasher ItemHasher;
typedef struct KeyMatcher KeyMatcher;

/* The SQL defaults of tlbf_create, also used by tlbf_agg (filter_params.c). */
#define TLBF_DEFAULT_ERROR_RATE 0.01
#define TLBF_DEFAULT_CAPACITY	1000

/* Every filter made here hashes with this seed, so that any two can merge. */
#define TLBF_DEFAULT_SEED	0

/* settings.c */
extern int	tlbf_max_filter_bytes;
extern int	tlbf_agg_send_limit;
extern int	tlbf_naptime;
extern bool tlbf_worker_enabled;
extern int	tlbf_snapshot_interval;
extern int	tlbf_cache_memory;
extern int	tlbf_max_future;
extern void tlbf_define_settings(void);
extern void tlbf_define_preloaded_settings(void);

/* settings.c defines these two, shared_directory.c holds them */
extern int	tlbf_shared_memory;
extern int	tlbf_max_shared_filters;

/*
 * Per-call-site state kept in fn_extra: the item hasher, and the detoasted
 * copies of TOASTed filter arguments (value_cache.c), so that a filter
 * read in a scan or a join is fetched and checked once per query instead
 * of once per row.
 */
typedef struct ValueCache ValueCache;

typedef struct SharedKeyGuess SharedKeyGuess;

typedef struct CallCache
{
	KeyMatcher *matcher;
	ValueCache *values;
	SharedKeyGuess *shared_guess;	/* for a shared filter (shared_functions.h) */
} CallCache;

/* huge_pages.c */
extern void tlbf_advise_huge_pages(void *p, Size size, bool now);

/* value_cache.c */
extern MemoryContext tlbf_value_cache_memory(ValueCache **cache, MemoryContext parent);
extern struct varlena *tlbf_value_cache_find(ValueCache *cache, const struct varatt_external *id);
extern struct varlena *tlbf_value_cache_keep(ValueCache *cache, const struct varatt_external *id,
											 struct varlena *filter);

/* filter_args.c */

/* Where a value checked by tlbf_validated_copy came from, for its error. */
typedef enum TlbfValueSource
{
	TLBF_VALUE_ARGUMENT,		/* a function's argument */
	TLBF_VALUE_TEXT_INPUT,		/* tlbf_in */
	TLBF_VALUE_BINARY_INPUT,	/* tlbf_recv */
	TLBF_VALUE_BYTEA_CAST,		/* CAST (bytea AS tlbf) */
	TLBF_VALUE_AGG_STATE		/* a partial tlbf_agg state */
} TlbfValueSource;

/* The limit that made a filter drop live slices, for its warning. */
typedef enum TlbfLimit
{
	TLBF_LIMIT_VALUE_SIZE,		/* the largest value PostgreSQL stores */
	TLBF_LIMIT_SLICES			/* the format's 65536 slices, in a union */
} TlbfLimit;

/* A validated value of either layout: exactly one of the two is set. */
typedef struct TlbfValue
{
	Tlbf	   *v2;				/* formats 1 and 2 (core/tlbf.h) */
	struct TbFilter *v3;		/* format 3 (core/tb.h) */
} TlbfValue;

extern CallCache *tlbf_call_cache(FunctionCallInfo fcinfo);
extern Tlbf *tlbf_readonly_value(FunctionCallInfo fcinfo, struct varlena *raw);
extern TlbfValue tlbf_value_of(struct varlena *value);
extern TlbfValue tlbf_arg_value(FunctionCallInfo fcinfo, int argno);
extern TlbfValue tlbf_arg_value_copy(FunctionCallInfo fcinfo, int argno);
extern struct varlena *tlbf_validated_copy_any(const char *data, Size len, int sqlstate,
											   TlbfValueSource source, Node *escontext);
extern Tlbf *tlbf_arg_readonly(FunctionCallInfo fcinfo, int argno);
extern Tlbf *tlbf_arg_copy(FunctionCallInfo fcinfo, int argno);
extern Size tlbf_filter_bytes_cap(void);
extern void tlbf_check_filter_bytes(const Tlbf *f);
extern void tlbf_memory_for(TlbfMemory *memory, const void *value, MemoryContext context);
extern void tlbf_check_status(TlbfStatus status, uint64 truncated_before,
							  const Tlbf *f);
extern void tlbf_check_core_status(TlbfStatus status, uint64 truncated_before,
								   uint64 truncated_after);
extern void tlbf_check_status_for(TlbfStatus status, uint64 truncated_before,
								  const Tlbf *f, TlbfLimit limit);
extern void tlbf_set_length(Tlbf *f);

/* filter_params.c */
struct TbParams;
extern bool tlbf_params_from_args(FunctionCallInfo fcinfo, int first, int count,
								  TlbfParams *params);
extern void tlbf_agg_params(TlbfParams *params, int64 span, double error_rate);
extern void tlbf_params_check(TlbfParams *params);
extern void tlbf_params_check_value(TlbfParams *params);
extern void tlbf_format3_params(struct TbParams *params, const Interval *span,
								double error_rate, int64 capacity, bool declared);

/* type_io.c */
extern char *tlbf_base64_decode(const char *text, int *decoded_len, const char *type_name,
								Node *escontext);
extern char *tlbf_base64_encode(const char *data, int len);

/* info.c */
extern Datum tlbf_info_jsonb(const Tlbf *f, TlbfTime at);

/* inference.c */
extern bool *tlbf_inference_scratch(const Tlbf *f);
extern Datum tlbf_time_range(TlbfTime lower, TlbfTime upper);
extern double tlbf_check_prior(double prior);
extern int64 tlbf_window_arg(FunctionCallInfo fcinfo, int argno, int64 span);

/* union.c */
extern Tlbf *tlbf_merge_values(const Tlbf *const *inputs, int n);
extern struct TbFilter *tlbf_union_format3_into(struct TbFilter *into, const struct TbFilter *b,
												TlbfMemory *memory);
extern void tlbf_refuse_mixed_formats(void);	/* raises an ERROR */

/* The fields of a composite value (datum_hash.c). */
typedef struct RowFields
{
	int			n;
	Oid		   *types;
	Oid		   *collations;
	Datum	   *values;
	bool	   *nulls;
	Oid			row_type;
	int32		row_typmod;
} RowFields;

/* datum_hash.c */
extern Oid	tlbf_arg_type(FunctionCallInfo fcinfo, int argno);
extern bool tlbf_int64_item(const ItemHasher *hasher, Datum item, int64 *value);
extern bool tlbf_bytes_item(const ItemHasher *hasher, Datum item,
							const uint8 **bytes, uint32 *len);
extern ItemHasher *tlbf_item_hasher(Oid type, Oid collation, MemoryContext context);
extern ItemHasher *tlbf_legacy_item_hasher(Oid type, Oid collation, MemoryContext context);
extern int	tlbf_key_kind_of_type(Oid type);
extern void tlbf_type_signature(struct StringInfoData *out, Oid type, Datum value, bool isnull);
extern void tlbf_row_fields(Datum row, RowFields *out);
extern TlbfHash tlbf_combine_hashes(const TlbfHash *hashes, const bool *nulls, int n,
									uint64 seed);
extern TlbfHash tlbf_hash_item(ItemHasher *hasher, Datum value, uint64 seed);
extern TlbfHash tlbf_hash_key(ItemHasher **hashers, const Datum *values,
							  const bool *nulls, int n, uint64 seed);

/* A key: one value, or a composite value's fields (key_match.c). */
typedef struct KeyFields
{
	int			n;
	Oid			types[TLBF_MAX_KEY_FIELDS];
	Oid			collations[TLBF_MAX_KEY_FIELDS];
	Datum		values[TLBF_MAX_KEY_FIELDS];
	bool		nulls[TLBF_MAX_KEY_FIELDS];
} KeyFields;

/* key_match.c */
extern KeyMatcher *tlbf_key_matcher(MemoryContext context);
extern const char *tlbf_key_kind_name(int kind);
extern char *tlbf_keys_description(TlbfKeys keys);
extern void tlbf_key_from_value(KeyMatcher *matcher, KeyFields *key, Oid type,
								Oid collation, Datum value);
extern TlbfKeys tlbf_key_own_kinds(KeyMatcher *matcher, const KeyFields *key);
extern TlbfKeys tlbf_key_basis(KeyMatcher *matcher, const KeyFields *key,
							   TlbfKeys filter_keys, bool holds_keys);
extern bool tlbf_key_hash(KeyMatcher *matcher, const KeyFields *key, TlbfKeys filter_keys,
						  bool adding, TlbfHash *hash);
extern bool tlbf_key_arg_hash(FunctionCallInfo fcinfo, int argno, const Tlbf *f,
							  TlbfHash *hash);
extern TlbfHash tlbf_key_arg_hash_for_add(FunctionCallInfo fcinfo, int argno, Tlbf *f);
extern bool tlbf_key_arg_legacy_fields_hash(FunctionCallInfo fcinfo, int argno, uint64 seed,
											TlbfHash *hash);
extern bool tlbf_key_arg_hash_shared(FunctionCallInfo fcinfo, int argno,
									 TlbfKeys filter_keys, bool holds_keys, bool adding,
									 TlbfHash *hash, TlbfKeys *basis);
extern bool tlbf_key_arg_hash_query(FunctionCallInfo fcinfo, int argno, TlbfKeys filter_keys,
									bool holds_keys, TlbfHash *hash);
extern ItemHasher *tlbf_key_arg_plain_hasher(FunctionCallInfo fcinfo, int argno,
											 TlbfKeys filter_keys, MemoryContext context);
extern bool tlbf_key_text_fields_hash_shared(FunctionCallInfo fcinfo, ArrayType *fields,
											 TlbfKeys filter_keys, bool holds_keys,
											 TlbfHash *hash, TlbfKeys *basis);

/* times.c */
extern TlbfTime tlbf_check_time(TimestampTz at);
extern TlbfTime tlbf_time_arg(FunctionCallInfo fcinfo, int argno);
extern TlbfTime tlbf_check_insert_time(TimestampTz at);
extern TlbfTime tlbf_insert_time_arg(FunctionCallInfo fcinfo, int argno);
extern int64 tlbf_interval_usecs(const Interval *interval, const char *what);

#endif							/* TLBF_PG_H */
