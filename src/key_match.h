/*-------------------------------------------------------------------------
 *
 * key_match.h
 *	  key_match.c: matching a key to the kind of key a filter holds.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_KEY_MATCH_H
#define TLBF_KEY_MATCH_H

#include "tlbf_pg.h"

/* A key: one value, or a composite value's fields. */
typedef struct KeyFields
{
	int			n;
	Oid			types[TLBF_MAX_KEY_FIELDS];
	Oid			collations[TLBF_MAX_KEY_FIELDS];
	Datum		values[TLBF_MAX_KEY_FIELDS];
	bool		nulls[TLBF_MAX_KEY_FIELDS];
} KeyFields;

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

#endif							/* TLBF_KEY_MATCH_H */
