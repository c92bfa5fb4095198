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
 *	  composite types			their fields, combined as tlbf_hash_key
 *								combines a key of several values
 *
 * Strings are compared by bytes: under a nondeterministic collation two
 * strings that compare equal may hash differently (normalise them first).
 * Domains hash as their base type.  Any other type goes through its extended
 * hash support function, when it has one (so did composite types before
 * filters recorded their kind of key: a "legacy" hasher still hashes them
 * so, for the filters of that time).
 *
 * Which values of different types may be compared, and how they are
 * converted first, is key_match.c's business.
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
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
	ITEM_TIMESTAMPTZ,
	ITEM_COMPOSITE,
	ITEM_EXTENDED_HASH
} ItemKind;

struct ItemHasher
{
	ItemKind	kind;
	Oid			collation;
	FmgrInfo	extended_hash;	/* for ITEM_EXTENDED_HASH */
	MemoryContext context;		/* for ITEM_COMPOSITE's field hashers */
	Oid			row_type;		/* ITEM_COMPOSITE: the row type they are for */
	int32		row_typmod;
	int			nfields;
	ItemHasher **fields;		/* NULL for a dropped column */
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
			return ITEM_TIMESTAMP;
		case TIMESTAMPTZOID:
			return ITEM_TIMESTAMPTZ;
		default:
			return type_is_rowtype(base_type) ? ITEM_COMPOSITE : ITEM_EXTENDED_HASH;
	}
}

/*
 * The kind of key (tlbf_format.h) a value of this type is, as it is: a
 * composite type is TLBF_KEY_OTHER here, as a field of a key (a key of a
 * composite type is its fields, see key_match.c).
 */
int
tlbf_key_kind_of_type(Oid type)
{
	switch (kind_of(getBaseType(type)))
	{
		case ITEM_INT2:
		case ITEM_INT4:
		case ITEM_INT8:
			return TLBF_KEY_INTEGER;
		case ITEM_TEXT:
		case ITEM_BPCHAR:
		case ITEM_NAME:
		case ITEM_CSTRING:
			return TLBF_KEY_TEXT;
		case ITEM_NUMERIC:
			return TLBF_KEY_NUMERIC;
		case ITEM_FLOAT4:
		case ITEM_FLOAT8:
			return TLBF_KEY_FLOAT;
		case ITEM_UUID:
			return TLBF_KEY_UUID;
		case ITEM_BYTEA:
			return TLBF_KEY_BYTEA;
		case ITEM_DATE:
			return TLBF_KEY_DATE;
		case ITEM_TIMESTAMP:
			return TLBF_KEY_TIMESTAMP;
		case ITEM_TIMESTAMPTZ:
			return TLBF_KEY_TIMESTAMPTZ;
		case ITEM_COMPOSITE:
		case ITEM_EXTENDED_HASH:
			return TLBF_KEY_OTHER;
	}
	pg_unreachable();
}

/* Hash values of 'type' with the type's extended hash function. */
static void
use_extended_hash(ItemHasher *hasher, Oid type, Oid base_type, MemoryContext context)
{
	TypeCacheEntry *entry = lookup_type_cache(base_type, TYPECACHE_HASH_EXTENDED_PROC);

	if (!OidIsValid(entry->hash_extended_proc))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("could not identify an extended hash function for type %s",
						format_type_be(type)),
				 errhint("tlbf hashes types that have a hash operator class; cast the item to text.")));
	hasher->kind = ITEM_EXTENDED_HASH;
	fmgr_info_cxt(entry->hash_extended_proc, &hasher->extended_hash, context);
}

ItemHasher *
tlbf_item_hasher(Oid type, Oid collation, MemoryContext context)
{
	ItemHasher *hasher = MemoryContextAllocZero(context, sizeof(ItemHasher));
	Oid			base_type = getBaseType(type);

	hasher->collation = collation;
	hasher->context = context;
	hasher->kind = kind_of(base_type);
	if (hasher->kind == ITEM_EXTENDED_HASH)
		use_extended_hash(hasher, type, base_type, context);
	return hasher;
}

/*
 * A hasher as filters that record no kind of key were written with: a
 * composite value through its type's hash function.
 */
ItemHasher *
tlbf_legacy_item_hasher(Oid type, Oid collation, MemoryContext context)
{
	ItemHasher *hasher = tlbf_item_hasher(type, collation, context);

	if (hasher->kind == ITEM_COMPOSITE)
		use_extended_hash(hasher, type, getBaseType(type), context);
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

/*
 * The fields of a composite value, without dropped columns, in arrays
 * palloc'd in the current memory context (the values point into the row).
 */
void
tlbf_row_fields(Datum row, RowFields *out)
{
	HeapTupleHeader header = DatumGetHeapTupleHeader(row);
	TupleDesc	desc = lookup_rowtype_tupdesc(HeapTupleHeaderGetTypeId(header),
											  HeapTupleHeaderGetTypMod(header));
	HeapTupleData tuple;
	Datum	   *values = palloc(Max(desc->natts, 1) * sizeof(Datum));
	bool	   *nulls = palloc(Max(desc->natts, 1) * sizeof(bool));

	tuple.t_len = HeapTupleHeaderGetDatumLength(header);
	ItemPointerSetInvalid(&tuple.t_self);
	tuple.t_tableOid = InvalidOid;
	tuple.t_data = header;
	heap_deform_tuple(&tuple, desc, values, nulls);

	out->n = 0;
	out->types = palloc(Max(desc->natts, 1) * sizeof(Oid));
	out->collations = palloc(Max(desc->natts, 1) * sizeof(Oid));
	out->values = values;
	out->nulls = nulls;
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, i);

		if (attr->attisdropped)
			continue;
		out->types[out->n] = attr->atttypid;
		out->collations[out->n] = attr->attcollation;
		out->values[out->n] = values[i];
		out->nulls[out->n] = nulls[i];
		out->n++;
	}
	out->row_type = desc->tdtypeid;
	out->row_typmod = desc->tdtypmod;
	ReleaseTupleDesc(desc);
}

/* A composite value: its fields, combined as a key of several values. */
static TlbfHash
hash_composite(ItemHasher *hasher, Datum value, uint64 seed)
{
	RowFields	row;
	TlbfHash	h;

	check_stack_depth();		/* a field may be a row again */
	tlbf_row_fields(value, &row);
	if (hasher->fields == NULL || hasher->row_type != row.row_type ||
		hasher->row_typmod != row.row_typmod || hasher->nfields != row.n)
	{
		hasher->fields = MemoryContextAllocZero(hasher->context,
												Max(row.n, 1) * sizeof(ItemHasher *));
		for (int i = 0; i < row.n; i++)
			hasher->fields[i] = tlbf_item_hasher(row.types[i], row.collations[i],
												 hasher->context);
		hasher->row_type = row.row_type;
		hasher->row_typmod = row.row_typmod;
		hasher->nfields = row.n;
	}
	h = tlbf_hash_key(hasher->fields, row.values, row.nulls, row.n, seed);
	pfree(row.types);
	pfree(row.collations);
	pfree(row.values);
	pfree(row.nulls);
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
		case ITEM_TIMESTAMPTZ:
			return hash_int64(DatumGetTimestamp(value), seed);
		case ITEM_COMPOSITE:
			return hash_composite(hasher, value, seed);
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
	TlbfHash   *hashes;
	TlbfHash	h;

	if (n == 1 && !nulls[0])
		return tlbf_hash_item(hashers[0], values[0], seed);
	hashes = palloc0(Max(n, 1) * sizeof(TlbfHash));
	for (int i = 0; i < n; i++)
		if (!nulls[i])
			hashes[i] = tlbf_hash_item(hashers[i], values[i], seed);
	h = tlbf_combine_hashes(hashes, nulls, n, seed);
	pfree(hashes);
	return h;
}

/*
 * The hash of a key of several values from the hashes of its values (those
 * of NULLs are ignored).  One non-NULL value is the key by itself.
 */
TlbfHash
tlbf_combine_hashes(const TlbfHash *hashes, const bool *nulls, int n, uint64 seed)
{
	unsigned char *buffer;
	Size		len = 0;
	TlbfHash	h;

	if (n == 1 && !nulls[0])
		return hashes[0];
	buffer = palloc(Max(n, 1) * (1 + sizeof(TlbfHash)));
	for (int i = 0; i < n; i++)
	{
		TlbfHash	zero = {0, 0};

		buffer[len++] = nulls[i] ? 0 : 1;
		memcpy(buffer + len, nulls[i] ? &zero : &hashes[i], sizeof(TlbfHash));
		len += sizeof(TlbfHash);
	}
	h = tlbf_hash_bytes(buffer, len, seed);
	pfree(buffer);
	return h;
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
		case ITEM_TIMESTAMPTZ:
			*value = DatumGetTimestamp(item);
			return true;
		default:
			return false;
	}
}
