/*-------------------------------------------------------------------------
 *
 * datum_hash.c
 *	  Hashing an item of any type, so that values SQL calls equal hash
 *	  equal, and a value's hash depends on the value alone: the same on
 *	  every PostgreSQL version, node and database, before and after a dump.
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
 *	  enums						the label's bytes (as text): an enum's OID
 *								differs between databases and nodes
 *	  composite types			their fields, combined as tlbf_hash_key
 *								combines a key of several values
 *
 * Domains hash as their base type.  Arrays, ranges and multiranges that
 * hold an enum or an anonymous row somewhere inside are hashed here too,
 * element by element (their dimensions and bounds with them), because
 * PostgreSQL's functions would hash the enum by its OID; any other type goes
 * through its extended hash support function, which hashes the value (hash
 * partitioning relies on that, across pg_upgrade).  Refused, with an error
 * when the hasher is made: types whose values are OIDs of objects (regclass
 * and the other reg* types) or hold them (aclitem), which a dump or another
 * node turns into other numbers; strings under a nondeterministic
 * collation, which calls strings with different bytes equal (and whose
 * sort keys depend on the ICU library's version); types without a hash
 * function.
 *
 * Filters written before kinds were recorded (format 1) are asked with a
 * "legacy" hasher, which hashes as they were written: anything not pinned
 * (composite values and enums too) through its type's hash function.
 *
 * Which values of different types may be compared, and how they are
 * converted first, is key_match.c's business.
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"
#include "datum_hash.h"
#include "key_match.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_enum.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "lib/stringinfo.h"
#include "utils/date.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/multirangetypes.h"
#include "utils/numeric.h"
#include "utils/rangetypes.h"
#include "utils/syscache.h"
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
	ITEM_ENUM,
	ITEM_COMPOSITE,
	ITEM_ARRAY,					/* these three: holding enums or rows */
	ITEM_RANGE,
	ITEM_MULTIRANGE,
	ITEM_EXTENDED_HASH,
	ITEM_HASH32					/* a hash operator class without an extended
								 * hash function */
} ItemKind;

struct ItemHasher
{
	ItemKind	kind;
	Oid			collation;
	FmgrInfo	extended_hash;	/* for ITEM_EXTENDED_HASH, ITEM_HASH32 */
	MemoryContext context;		/* for the hashers below */
	Oid			row_type;		/* ITEM_COMPOSITE: the row type they are for */
	int32		row_typmod;
	int			nfields;
	ItemHasher **fields;		/* NULL for a dropped column */
	ItemHasher *element;		/* ITEM_ARRAY: of the elements; ITEM_RANGE: of
								 * the bounds; ITEM_MULTIRANGE: of the ranges */
	Oid			element_type;	/* ITEM_ARRAY */
	int16		element_len;
	bool		element_byval;
	char		element_align;
	TypeCacheEntry *typcache;	/* ITEM_RANGE, ITEM_MULTIRANGE */
};

/* The kind of a type hashed to canonical bytes here, else EXTENDED_HASH. */
static ItemKind
pinned_kind(Oid base_type)
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
			return ITEM_EXTENDED_HASH;
	}
}

/*
 * Does a value of this type hold an enum, or a row whose fields only the
 * value knows (type record), anywhere inside?  PostgreSQL's hash functions
 * would hash such an enum by its OID, so these values are hashed here.
 */
static bool
holds_labels(Oid type)
{
	Oid			base = getBaseType(type);
	Oid			element;

	check_stack_depth();		/* a type holds types */
	switch (get_typtype(base))
	{
		case TYPTYPE_ENUM:
			return true;
		case TYPTYPE_RANGE:
			return holds_labels(get_range_subtype(base));
		case TYPTYPE_MULTIRANGE:
			return holds_labels(get_multirange_range(base));
		case TYPTYPE_PSEUDO:
			return base == RECORDOID;
		case TYPTYPE_COMPOSITE:
			{
				TupleDesc	desc = lookup_rowtype_tupdesc(base, -1);
				bool		found = false;

				for (int i = 0; i < desc->natts && !found; i++)
				{
					Form_pg_attribute attr = TupleDescAttr(desc, i);

					found = !attr->attisdropped && holds_labels(attr->atttypid);
				}
				ReleaseTupleDesc(desc);
				return found;
			}
	}
	element = get_element_type(base);
	return OidIsValid(element) && holds_labels(element);
}

/* Why a type is refused as a key, or as part of one. */
typedef enum RefusedType
{
	REFUSED_RECORD_ARRAY,		/* an array of rows of type record */
	REFUSED_OID,				/* OIDs of database objects */
	REFUSED_ACLITEM				/* OIDs of roles */
} RefusedType;

static void
refuse_type(Oid type, Oid key_type, RefusedType why)
{
	const char *key_type_name = format_type_be(key_type);
	const char *type_name = format_type_be(type);

	switch (why)
	{
		case REFUSED_RECORD_ARRAY:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("tlbf cannot hash keys of type %s", key_type_name),
					 type == key_type ? 0 :
					 errdetail("It holds values of type %s.", type_name),
					 errhint("Its elements are rows whose fields only each value knows: use an array of a composite type (CREATE TYPE ... AS).")));
			break;
		case REFUSED_OID:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("tlbf cannot hash keys of type %s", key_type_name),
					 type == key_type ? 0 :
					 errdetail("It holds values of type %s.", type_name),
					 errhint("Its values are OIDs of database objects, which differ between databases and nodes and change on dump and restore: cast the key to text, the object's name.")));
			break;
		case REFUSED_ACLITEM:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("tlbf cannot hash keys of type %s", key_type_name),
					 type == key_type ? 0 :
					 errdetail("It holds values of type %s.", type_name),
					 errhint("Its values hold OIDs of roles, which differ between clusters and change on dump and restore: cast the key to text.")));
			break;
	}
}

/*
 * Refuse a type whose values SQL compares by something other than the
 * value's bytes that a dump or another node keeps: OIDs of objects, or
 * strings under a nondeterministic collation.  'collation' is the one the
 * value is compared under; 'key_type' the type the user passed, for the
 * message.
 */
static void
check_keyable(Oid type, Oid collation, Oid key_type)
{
	Oid			base = getBaseType(type);
	Oid			element;
	Oid			hash_proc;

	check_stack_depth();
	switch (get_typtype(base))
	{
		case TYPTYPE_ENUM:
			return;
		case TYPTYPE_RANGE:
			check_keyable(get_range_subtype(base), get_range_collation(base), key_type);
			return;
		case TYPTYPE_MULTIRANGE:
			check_keyable(get_multirange_range(base), InvalidOid, key_type);
			return;
		case TYPTYPE_COMPOSITE:
			{
				TupleDesc	desc = lookup_rowtype_tupdesc_copy(base, -1);

				for (int i = 0; i < desc->natts; i++)
				{
					Form_pg_attribute attr = TupleDescAttr(desc, i);

					if (!attr->attisdropped)
						check_keyable(attr->atttypid, attr->attcollation, key_type);
				}
				FreeTupleDesc(desc);
				return;
			}
	}
	element = get_element_type(base);
	if (OidIsValid(element))
	{
		if (getBaseType(element) == RECORDOID)
			refuse_type(base, key_type, REFUSED_RECORD_ARRAY);
		check_keyable(element, collation, key_type);	/* the array's collation */
		return;
	}
	if (OidIsValid(collation) && type_is_collatable(base) &&
		!get_collation_isdeterministic(collation))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("tlbf cannot hash keys under nondeterministic collation \"%s\"",
						get_collation_name(collation)),
				 errdetail("The collation calls strings with different bytes equal, and its sort keys depend on the version of the ICU library."),
				 errhint("Normalize the key first, as in lower(email), or compare it under a deterministic collation, as in email COLLATE \"C\".")));
	if (pinned_kind(base) != ITEM_EXTENDED_HASH || base == RECORDOID)
		return;
	hash_proc = lookup_type_cache(base, TYPECACHE_HASH_EXTENDED_PROC)->hash_extended_proc;
	if (hash_proc == F_HASHOIDEXTENDED && base != OIDOID)
		refuse_type(base, key_type, REFUSED_OID);
	if (hash_proc == F_HASH_ACLITEM_EXTENDED)
		refuse_type(base, key_type, REFUSED_ACLITEM);
}

/*
 * The kind of key (tlbf_format.h) a value of this type is, as it is: a
 * composite type is TLBF_KEY_OTHER here, as a field of a key (a key of a
 * composite type is its fields, see key_match.c), or TLBF_KEY_CONTAINER if
 * it holds enums.
 */
int
tlbf_key_kind_of_type(Oid type)
{
	Oid			base = getBaseType(type);

	switch (pinned_kind(base))
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
			return TLBF_KEY_FLOAT4;
		case ITEM_FLOAT8:
			return TLBF_KEY_FLOAT8;
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
		default:
			break;
	}
	if (get_typtype(base) == TYPTYPE_ENUM)
		return TLBF_KEY_ENUM;
	return holds_labels(base) ? TLBF_KEY_CONTAINER : TLBF_KEY_OTHER;
}

/*
 * Append to 'out' what a hash of a value of this type depends on besides
 * the value: two types with the same signature hash equal values alike, so
 * a filter records a hash of its key's signature (key_match.c) and refuses
 * a key of another.  A type hashed by its hash function (kind other) is its
 * hash operator family, whose members hash equal values equally; a pinned
 * type is its kind (float4 and float8 alike); arrays, ranges, multiranges
 * and rows are theirs with their elements'.  A row of type record is
 * described by 'value', if not 'isnull'.
 */
void
tlbf_type_signature(StringInfo out, Oid type, Datum value, bool isnull)
{
	Oid			base = getBaseType(type);
	Oid			element;
	int			kind = tlbf_key_kind_of_type(base);

	check_stack_depth();
	if (kind != TLBF_KEY_OTHER && kind != TLBF_KEY_CONTAINER)
	{
		appendStringInfoString(out, kind == TLBF_KEY_FLOAT4 || kind == TLBF_KEY_FLOAT8 ?
							   "float" : tlbf_key_kind_name(kind));
		return;
	}
	if (type_is_rowtype(base))
	{
		TupleDesc	desc;
		bool		first = true;

		if (base == RECORDOID && isnull)
		{
			appendStringInfoString(out, "record");
			return;
		}
		desc = base == RECORDOID ?
			lookup_rowtype_tupdesc_copy(HeapTupleHeaderGetTypeId(DatumGetHeapTupleHeader(value)),
										HeapTupleHeaderGetTypMod(DatumGetHeapTupleHeader(value))) :
			lookup_rowtype_tupdesc_copy(base, -1);
		appendStringInfoString(out, "row(");
		for (int i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute attr = TupleDescAttr(desc, i);

			if (attr->attisdropped)
				continue;
			if (!first)
				appendStringInfoChar(out, ',');
			tlbf_type_signature(out, attr->atttypid, (Datum) 0, true);
			first = false;
		}
		appendStringInfoChar(out, ')');
		FreeTupleDesc(desc);
		return;
	}
	switch (get_typtype(base))
	{
		case TYPTYPE_RANGE:
			appendStringInfoString(out, "range(");
			tlbf_type_signature(out, get_range_subtype(base), (Datum) 0, true);
			appendStringInfoChar(out, ')');
			return;
		case TYPTYPE_MULTIRANGE:
			appendStringInfoString(out, "multirange(");
			tlbf_type_signature(out, get_multirange_range(base), (Datum) 0, true);
			appendStringInfoChar(out, ')');
			return;
	}
	element = get_element_type(base);
	if (OidIsValid(element))
	{
		appendStringInfoString(out, "array(");
		tlbf_type_signature(out, element, (Datum) 0, true);
		appendStringInfoChar(out, ')');
		return;
	}
	{
		Oid			family = lookup_type_cache(base, TYPECACHE_HASH_OPFAMILY)->hash_opf;
		HeapTuple	tuple = SearchSysCache1(OPFAMILYOID, ObjectIdGetDatum(family));

		if (!HeapTupleIsValid(tuple))
		{
			/* no hash function: hashing it fails; this is for the message */
			appendStringInfo(out, "type %s", format_type_be(base));
			return;
		}
		appendStringInfo(out, "%s.%s",
						 get_namespace_name(((Form_pg_opfamily) GETSTRUCT(tuple))->opfnamespace),
						 NameStr(((Form_pg_opfamily) GETSTRUCT(tuple))->opfname));
		ReleaseSysCache(tuple);
	}
}

/*
 * Hash values of 'type' with the type's extended hash function, or, for a
 * type whose hash operator class has only the 32-bit one (ltree, isn), with
 * that: its value-based hash, with more collisions (about n / 2^32 of a
 * filter's n keys, well under its error rate).
 */
static void
use_extended_hash(ItemHasher *hasher, Oid type, Oid base_type, MemoryContext context)
{
	TypeCacheEntry *entry = lookup_type_cache(base_type, TYPECACHE_HASH_EXTENDED_PROC |
											  TYPECACHE_HASH_PROC);

	if (OidIsValid(entry->hash_extended_proc))
	{
		hasher->kind = ITEM_EXTENDED_HASH;
		fmgr_info_cxt(entry->hash_extended_proc, &hasher->extended_hash, context);
		return;
	}
	if (!OidIsValid(entry->hash_proc))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("could not identify a hash function for type %s",
						format_type_be(type)),
				 errhint("tlbf hashes types that have a hash operator class; cast the item to text.")));
	hasher->kind = ITEM_HASH32;
	fmgr_info_cxt(entry->hash_proc, &hasher->extended_hash, context);
}

/* How a value of a type that is not pinned is hashed (see the top). */
static void
choose_unpinned(ItemHasher *hasher, Oid type, Oid base, MemoryContext context)
{
	Oid			element;

	switch (get_typtype(base))
	{
		case TYPTYPE_ENUM:
			hasher->kind = ITEM_ENUM;
			return;
		case TYPTYPE_COMPOSITE:
			hasher->kind = ITEM_COMPOSITE;
			return;
		case TYPTYPE_PSEUDO:
			if (base == RECORDOID)
			{
				hasher->kind = ITEM_COMPOSITE;
				return;
			}
			break;
		case TYPTYPE_RANGE:
			if (holds_labels(base))
			{
				hasher->kind = ITEM_RANGE;
				hasher->typcache = lookup_type_cache(base, TYPECACHE_RANGE_INFO);
				hasher->element = tlbf_item_hasher(get_range_subtype(base),
												   get_range_collation(base), context);
				return;
			}
			break;
		case TYPTYPE_MULTIRANGE:
			if (holds_labels(base))
			{
				hasher->kind = ITEM_MULTIRANGE;
				hasher->typcache = lookup_type_cache(base, TYPECACHE_MULTIRANGE_INFO);
				hasher->element = tlbf_item_hasher(get_multirange_range(base), InvalidOid,
												   context);
				return;
			}
			break;
	}
	element = get_element_type(base);
	if (OidIsValid(element) && holds_labels(element))
	{
		hasher->kind = ITEM_ARRAY;
		hasher->element_type = element;
		get_typlenbyvalalign(element, &hasher->element_len, &hasher->element_byval,
							 &hasher->element_align);
		hasher->element = tlbf_item_hasher(element, hasher->collation, context);
		return;
	}
	use_extended_hash(hasher, type, base, context);
}

/*
 * A hasher for values of 'type', compared under 'collation'.  Refuses the
 * types no filter can hold (see the top).
 */
ItemHasher *
tlbf_item_hasher(Oid type, Oid collation, MemoryContext context)
{
	ItemHasher *hasher = MemoryContextAllocZero(context, sizeof(ItemHasher));
	Oid			base_type = getBaseType(type);

	check_keyable(type, collation, type);
	hasher->collation = collation;
	hasher->context = context;
	hasher->kind = pinned_kind(base_type);
	if (hasher->kind == ITEM_EXTENDED_HASH)
		choose_unpinned(hasher, type, base_type, context);
	return hasher;
}

/*
 * A hasher as filters that record no kind of key were written with: a
 * value of a type that is not pinned through its type's hash function.
 */
ItemHasher *
tlbf_legacy_item_hasher(Oid type, Oid collation, MemoryContext context)
{
	ItemHasher *hasher = MemoryContextAllocZero(context, sizeof(ItemHasher));
	Oid			base_type = getBaseType(type);

	hasher->collation = collation;
	hasher->context = context;
	hasher->kind = pinned_kind(base_type);
	if (hasher->kind == ITEM_EXTENDED_HASH)
		use_extended_hash(hasher, type, base_type, context);
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

/*
 * An enum value: its label, hashed as text, so that it is the same key in
 * every database and after a dump (renaming the value makes it another).
 */
static TlbfHash
hash_enum(Datum value, uint64 seed)
{
	HeapTuple	tuple = SearchSysCache1(ENUMOID, value);
	const char *label;
	TlbfHash	h;

	if (!HeapTupleIsValid(tuple))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid internal value for enum: %u", DatumGetObjectId(value))));
	label = NameStr(((Form_pg_enum) GETSTRUCT(tuple))->enumlabel);
	h = tlbf_hash_bytes(label, strlen(label), seed);
	ReleaseSysCache(tuple);
	return h;
}

/*
 * The hash of a value made of parts: 'head' (flags, dimensions), then each
 * part's hash, or none for a NULL part.
 */
static TlbfHash
hash_parts(const void *head, Size head_len, const TlbfHash *hashes, const bool *nulls,
		   int n, uint64 seed)
{
	Size		len = head_len + (Size) n * (1 + sizeof(TlbfHash));
	unsigned char *buffer = palloc(Max(len, 1));
	Size		at = head_len;
	TlbfHash	h;

	memcpy(buffer, head, head_len);
	for (int i = 0; i < n; i++)
	{
		bool		null = nulls != NULL && nulls[i];

		buffer[at++] = null ? 0 : 1;
		if (null)
			memset(buffer + at, 0, sizeof(TlbfHash));
		else
			memcpy(buffer + at, &hashes[i], sizeof(TlbfHash));
		at += sizeof(TlbfHash);
	}
	h = tlbf_hash_bytes(buffer, len, seed);
	pfree(buffer);
	return h;
}

/*
 * An array holding enums or rows: its dimensions and lower bounds (which
 * array equality compares) and its elements' hashes.
 */
static TlbfHash
hash_array_value(ItemHasher *hasher, Datum value, uint64 seed)
{
	ArrayType  *array = DatumGetArrayTypeP(value);
	int			ndims = ARR_NDIM(array);
	int32	   *head = palloc((1 + 2 * ndims) * sizeof(int32));
	Datum	   *elements;
	bool	   *nulls;
	int			n;
	TlbfHash   *hashes;
	TlbfHash	h;

	check_stack_depth();
	head[0] = ndims;
	for (int i = 0; i < ndims; i++)
	{
		head[1 + i] = ARR_DIMS(array)[i];
		head[1 + ndims + i] = ARR_LBOUND(array)[i];
	}
	deconstruct_array(array, hasher->element_type, hasher->element_len,
					  hasher->element_byval, hasher->element_align, &elements, &nulls, &n);
	hashes = palloc(Max(n, 1) * sizeof(TlbfHash));
	for (int i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		if (!nulls[i])
			hashes[i] = tlbf_hash_item(hasher->element, elements[i], seed);
	}
	h = hash_parts(head, (1 + 2 * ndims) * sizeof(int32), hashes, nulls, n, seed);
	pfree(hashes);
	pfree(head);
	return h;
}

/* A range of enums: whether it is empty, its bounds' flags and values. */
static TlbfHash
hash_range_value(ItemHasher *hasher, Datum value, uint64 seed)
{
	RangeType  *range = DatumGetRangeTypeP(value);
	RangeBound	lower,
				upper;
	bool		empty;
	uint8		flags[5];
	TlbfHash	hashes[2];
	bool		absent[2];

	check_stack_depth();
	range_deserialize(hasher->typcache, range, &lower, &upper, &empty);
	flags[0] = empty;
	flags[1] = !empty && lower.infinite;
	flags[2] = !empty && lower.inclusive;
	flags[3] = !empty && upper.infinite;
	flags[4] = !empty && upper.inclusive;
	absent[0] = empty || lower.infinite;
	absent[1] = empty || upper.infinite;
	if (!absent[0])
		hashes[0] = tlbf_hash_item(hasher->element, lower.val, seed);
	if (!absent[1])
		hashes[1] = tlbf_hash_item(hasher->element, upper.val, seed);
	return hash_parts(flags, sizeof(flags), hashes, absent, 2, seed);
}

/* A multirange of enums: its ranges, in order. */
static TlbfHash
hash_multirange_value(ItemHasher *hasher, Datum value, uint64 seed)
{
	MultirangeType *multirange = DatumGetMultirangeTypeP(value);
	int32		n;
	RangeType **ranges;
	TlbfHash   *hashes;
	TlbfHash	h;

	check_stack_depth();
	multirange_deserialize(hasher->typcache->rngtype, multirange, &n, &ranges);
	hashes = palloc(Max(n, 1) * sizeof(TlbfHash));
	for (int i = 0; i < n; i++)
		hashes[i] = tlbf_hash_item(hasher->element, RangeTypePGetDatum(ranges[i]), seed);
	h = hash_parts(&n, sizeof(n), hashes, NULL, n, seed);
	pfree(hashes);
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
		case ITEM_ENUM:
			return hash_enum(value, seed);
		case ITEM_COMPOSITE:
			return hash_composite(hasher, value, seed);
		case ITEM_ARRAY:
			return hash_array_value(hasher, value, seed);
		case ITEM_RANGE:
			return hash_range_value(hasher, value, seed);
		case ITEM_MULTIRANGE:
			return hash_multirange_value(hasher, value, seed);
		case ITEM_EXTENDED_HASH:
			{
				uint64		h = DatumGetUInt64(FunctionCall2Coll(&hasher->extended_hash,
																 hasher->collation,
																 value,
																 UInt64GetDatum(seed)));

				return tlbf_hash_bytes(&h, sizeof(h), seed);
			}
		case ITEM_HASH32:
			{
				uint32		h = DatumGetUInt32(FunctionCall1Coll(&hasher->extended_hash,
																 hasher->collation,
																 value));

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
 * The width of an item of an integer or timestamp type (2, 4 or 8 bytes):
 * its hash is tlbf_hash_int64 of its value.  0 for other kinds.
 */
int
tlbf_int_item_bytes(const ItemHasher *hasher)
{
	switch (hasher->kind)
	{
		case ITEM_INT2:
			return 2;
		case ITEM_INT4:
			return 4;
		case ITEM_INT8:
		case ITEM_TIMESTAMP:
		case ITEM_TIMESTAMPTZ:
			return 8;
		default:
			return 0;
	}
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
