/*-------------------------------------------------------------------------
 *
 * datum_hash.c
 *	  Hashing an item of any type, so that values that compare equal hash
 *	  equal and the common types hash the same on every PostgreSQL version.
 *
 * The pinned types are turned into canonical bytes here and hashed with
 * XXH3 by the core, never through PostgreSQL's own hash functions (which
 * may change between major versions):
 *
 *	  int2, int4, int8			the value as 8 little-endian bytes
 *	  text, varchar, bpchar,	the characters' bytes (bpchar without its
 *	  name, unknown literals	trailing blanks)
 *	  numeric					its decimal text without insignificant zeros
 *	  float4, float8			the value as a float8 (-0 as 0, one NaN)
 *	  uuid, bytea				their bytes
 *	  date, timestamp(tz)		their integer value
 *
 * Strings are compared by bytes: under a nondeterministic collation two
 * strings that compare equal may hash differently (normalise them first).
 * Domains hash as their base type.  Any other type goes through its extended
 * hash support function, when it has one.
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/typcache.h"
#include "utils/uuid.h"

typedef enum ItemKind
{
	ITEM_INT2,
	ITEM_INT4,
	ITEM_INT8,
	ITEM_TEXT,
	ITEM_BPCHAR,
	ITEM_NAME,
	ITEM_CSTRING,
	ITEM_NUMERIC,
	ITEM_FLOAT4,
	ITEM_FLOAT8,
	ITEM_UUID,
	ITEM_BYTEA,
	ITEM_DATE,
	ITEM_TIMESTAMP,
	ITEM_EXTENDED_HASH
} ItemKind;

struct ItemHasher
{
	ItemKind	kind;
	Oid			collation;
	FmgrInfo	extended_hash;	/* for ITEM_EXTENDED_HASH */
};

static ItemKind
kind_of(Oid base_type)
{
	switch (base_type)
	{
		case INT2OID:
			return ITEM_INT2;
		case INT4OID:
			return ITEM_INT4;
		case INT8OID:
			return ITEM_INT8;
		case TEXTOID:
		case VARCHAROID:
			return ITEM_TEXT;
		case BPCHAROID:
			return ITEM_BPCHAR;
		case NAMEOID:
			return ITEM_NAME;
		case UNKNOWNOID:
		case CSTRINGOID:
			return ITEM_CSTRING;
		case NUMERICOID:
			return ITEM_NUMERIC;
		case FLOAT4OID:
			return ITEM_FLOAT4;
		case FLOAT8OID:
			return ITEM_FLOAT8;
		case UUIDOID:
			return ITEM_UUID;
		case BYTEAOID:
			return ITEM_BYTEA;
		case DATEOID:
			return ITEM_DATE;
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return ITEM_TIMESTAMP;
		default:
			return ITEM_EXTENDED_HASH;
	}
}

ItemHasher *
tlbf_item_hasher(Oid type, Oid collation, MemoryContext context)
{
	ItemHasher *hasher = MemoryContextAllocZero(context, sizeof(ItemHasher));
	Oid			base_type = getBaseType(type);

	hasher->collation = collation;
	hasher->kind = kind_of(base_type);
	if (hasher->kind == ITEM_EXTENDED_HASH)
	{
		TypeCacheEntry *entry = lookup_type_cache(base_type,
												  TYPECACHE_HASH_EXTENDED_PROC);

		if (!OidIsValid(entry->hash_extended_proc))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("could not identify an extended hash function for type %s",
							format_type_be(type)),
					 errhint("tlbf hashes types that have a hash operator class; cast the item to text.")));
		fmgr_info_cxt(entry->hash_extended_proc, &hasher->extended_hash, context);
	}
	return hasher;
}

static TlbfHash
hash_float8_value(float8 value, uint64 seed)
{
	uint64		bits;

	if (value == 0.0)
		value = 0.0;			/* -0 equals 0 */
	if (isnan(value))
		value = get_float8_nan();	/* every NaN equals every other */
	memcpy(&bits, &value, sizeof(bits));
	return tlbf_hash_bytes(&bits, sizeof(bits), seed);
}

static TlbfHash
hash_int64(int64 value, uint64 seed)
{
	return tlbf_hash_int64(value, seed);
}

static TlbfHash
hash_numeric_value(Datum value, uint64 seed)
{
	char	   *text = numeric_normalize(DatumGetNumeric(value));
	TlbfHash	h = tlbf_hash_bytes(text, strlen(text), seed);

	pfree(text);
	return h;
}

/*
 * The bytes a key of a string type hashes as: text and bytea their
 * contents, bpchar without its trailing spaces, name and cstring up to
 * their terminator.  *copy is a detoasted copy the caller may free (or
 * NULL).  False for other kinds.
 */
static bool
string_bytes(ItemKind kind, Datum value, const uint8 **bytes, uint32 *len, void **copy)
{
	*copy = NULL;
	switch (kind)
	{
		case ITEM_TEXT:
		case ITEM_BYTEA:
		case ITEM_BPCHAR:
			{
				struct varlena *v = PG_DETOAST_DATUM_PACKED(value);
				uint32		n = VARSIZE_ANY_EXHDR(v);

				if ((Pointer) v != DatumGetPointer(value))
					*copy = v;
				*bytes = (const uint8 *) VARDATA_ANY(v);
				if (kind == ITEM_BPCHAR)
					while (n > 0 && (*bytes)[n - 1] == ' ')
						n--;
				*len = n;
				return true;
			}
		case ITEM_NAME:
			*bytes = (const uint8 *) NameStr(*DatumGetName(value));
			*len = strlen((const char *) *bytes);
			return true;
		case ITEM_CSTRING:
			*bytes = (const uint8 *) DatumGetCString(value);
			*len = strlen((const char *) *bytes);
			return true;
		default:
			return false;
	}
}

static TlbfHash
hash_string(ItemKind kind, Datum value, uint64 seed)
{
	const uint8 *bytes;
	uint32		len;
	void	   *copy;
	TlbfHash	h;

	(void) string_bytes(kind, value, &bytes, &len, &copy);
	h = tlbf_hash_bytes(bytes, len, seed);
	if (copy != NULL)
		pfree(copy);
	return h;
}

TlbfHash
tlbf_hash_item(ItemHasher *hasher, Datum value, uint64 seed)
{
	switch (hasher->kind)
	{
		case ITEM_INT2:
			return hash_int64(DatumGetInt16(value), seed);
		case ITEM_INT4:
			return hash_int64(DatumGetInt32(value), seed);
		case ITEM_INT8:
			return hash_int64(DatumGetInt64(value), seed);
		case ITEM_TEXT:
		case ITEM_BYTEA:
		case ITEM_BPCHAR:
		case ITEM_NAME:
		case ITEM_CSTRING:
			return hash_string(hasher->kind, value, seed);
		case ITEM_NUMERIC:
			return hash_numeric_value(value, seed);
		case ITEM_FLOAT4:
			return hash_float8_value((float8) DatumGetFloat4(value), seed);
		case ITEM_FLOAT8:
			return hash_float8_value(DatumGetFloat8(value), seed);
		case ITEM_UUID:
			return tlbf_hash_bytes(DatumGetUUIDP(value)->data, UUID_LEN, seed);
		case ITEM_DATE:
			{
				int32		days = DatumGetDateADT(value);

				return tlbf_hash_bytes(&days, sizeof(days), seed);
			}
		case ITEM_TIMESTAMP:
			return hash_int64(DatumGetTimestamp(value), seed);
		case ITEM_EXTENDED_HASH:
			{
				uint64		h = DatumGetUInt64(FunctionCall2Coll(&hasher->extended_hash,
																 hasher->collation,
																 value,
																 UInt64GetDatum(seed)));

				return tlbf_hash_bytes(&h, sizeof(h), seed);
			}
	}
	pg_unreachable();
}

/*
 * The hash of a key made of several values, NULL-safe (NULL is a value).
 * A key of one non-NULL value hashes as that value alone.
 */
TlbfHash
tlbf_hash_key(ItemHasher **hashers, const Datum *values, const bool *nulls, int n,
			  uint64 seed)
{
	unsigned char *buffer;
	Size		len = 0;

	if (n == 1 && !nulls[0])
		return tlbf_hash_item(hashers[0], values[0], seed);
	buffer = palloc(n * (1 + sizeof(TlbfHash)));
	for (int i = 0; i < n; i++)
	{
		TlbfHash	h = {0, 0};

		if (!nulls[i])
			h = tlbf_hash_item(hashers[i], values[i], seed);
		buffer[len++] = nulls[i] ? 0 : 1;
		memcpy(buffer + len, &h, sizeof(h));
		len += sizeof(h);
	}
	return tlbf_hash_bytes(buffer, len, seed);
}

/*
 * The type of argument 'argno' of a function call: the type of the
 * expression the call site passes, or, for a caller that calls the
 * function without one (Citus runs a transition function through a
 * FmgrInfo of its own), the declared type, when it is a real type.
 */
Oid
tlbf_arg_type(FunctionCallInfo fcinfo, int argno)
{
	Oid			type = get_fn_expr_argtype(fcinfo->flinfo, argno);

	if (!OidIsValid(type) && OidIsValid(fcinfo->flinfo->fn_oid))
	{
		Oid		   *declared;
		int			nargs;

		(void) get_func_signature(fcinfo->flinfo->fn_oid, &declared, &nargs);
		if (argno < nargs && get_typtype(declared[argno]) != TYPTYPE_PSEUDO)
			type = declared[argno];
		pfree(declared);
	}
	if (!OidIsValid(type))
		ereport(ERROR,
				(errcode(ERRCODE_INDETERMINATE_DATATYPE),
				 errmsg("could not determine the type of the tlbf item")));
	return type;
}

/*
 * The hasher of argument 'argno' (declared "any", so that untyped literals
 * work) of a function call, made on its first call and kept in fn_extra.
 */
static ItemHasher *
call_site_hasher(FunctionCallInfo fcinfo, int argno)
{
	CallCache  *cache = tlbf_call_cache(fcinfo);

	/* a call site's argument expression, hence its type, never changes */
	if (cache->hasher == NULL)
		cache->hasher = tlbf_item_hasher(tlbf_arg_type(fcinfo, argno),
										 PG_GET_COLLATION(),
										 fcinfo->flinfo->fn_mcxt);
	return cache->hasher;
}

/* Hash argument 'argno' of a function call. */
TlbfHash
tlbf_hash_arg(FunctionCallInfo fcinfo, int argno, uint64 seed)
{
	return tlbf_hash_item(call_site_hasher(fcinfo, argno), PG_GETARG_DATUM(argno), seed);
}

/*
 * If the item is of a string type, point *bytes at the bytes its hash
 * hashes: tlbf_hash_bytes(*bytes, *len, seed).  A detoasted copy lives in
 * the current memory context.
 */
bool
tlbf_bytes_item(const ItemHasher *hasher, Datum item, const uint8 **bytes, uint32 *len)
{
	void	   *copy;

	return string_bytes(hasher->kind, item, bytes, len, &copy);
}

/*
 * If the item is of an integer or timestamp type, set *value to it: its
 * hash is tlbf_hash_int64(*value, seed).
 */
bool
tlbf_int64_item(const ItemHasher *hasher, Datum item, int64 *value)
{
	switch (hasher->kind)
	{
		case ITEM_INT2:
			*value = DatumGetInt16(item);
			return true;
		case ITEM_INT4:
			*value = DatumGetInt32(item);
			return true;
		case ITEM_INT8:
			*value = DatumGetInt64(item);
			return true;
		case ITEM_TIMESTAMP:
			*value = DatumGetTimestamp(item);
			return true;
		default:
			return false;
	}
}
