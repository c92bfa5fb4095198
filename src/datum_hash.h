/*-------------------------------------------------------------------------
 *
 * datum_hash.h
 *	  datum_hash.c: hashing an item of any type by its value alone.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_DATUM_HASH_H
#define TLBF_DATUM_HASH_H

#include "tlbf_pg.h"

/* The fields of a composite value. */
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

extern Oid	tlbf_arg_type(FunctionCallInfo fcinfo, int argno);
extern bool tlbf_int64_item(const ItemHasher *hasher, Datum item, int64 *value);
extern int	tlbf_int_item_bytes(const ItemHasher *hasher);
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

#endif							/* TLBF_DATUM_HASH_H */
