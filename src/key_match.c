/*-------------------------------------------------------------------------
 *
 * key_match.c
 *	  Matching a key to the kind of key a filter holds: a key of another
 *	  type is converted to the filter's kind, as SQL would compare them, or
 *	  refused; never hashed differently in silence.
 *
 * A filter records the kind of each field of its key with its first key
 * (tlbf_format.h, keys.c).  A key of a composite type is its fields; any
 * other key is one field.  Each kind hashes one way (datum_hash.c), so a
 * key is first turned into a value of the kind's own type:
 *
 *	  integer		int2, int4, int8; numeric and float values that are whole
 *					numbers; text parsed as bigint
 *	  numeric		numeric; integers; floats (float8 to numeric); text
 *	  float			float4, float8; integers; numeric; text
 *	  text			text, varchar, bpchar, name and untyped literals only
 *	  uuid, bytea	their own type; text parsed as one
 *	  date			date; text is refused (its parsing depends on DateStyle)
 *	  timestamp		timestamp; date (midnight)
 *	  timestamptz	timestamptz only
 *	  other			any type of this kind: not checked further
 *
 * Conversions that depend on a setting (the time zone, DateStyle) are
 * refused, so that tlbf_contains stays IMMUTABLE.  A numeric or float
 * value that is not a whole number equals no integer: a query answers
 * "absent" for it, as 42 = 42.5 is false, and an insertion is refused.
 * Filters that hold keys but record no kind (written before kinds were
 * recorded) hash keys by their own type, as they always did.
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

/* The hashers a call site needs, by type and collation (a few at most). */
typedef struct CachedHasher
{
	Oid			type;
	Oid			collation;
	bool		legacy;
	ItemHasher *hasher;
} CachedHasher;

#define CACHED_HASHERS 16

/* What a call site needs to know of a type, looked up once. */
typedef struct TypeFacts
{
	Oid			type;
	bool		is_row;			/* a composite type: a key of its fields */
	int			kind;			/* as a field: tlbf_key_kind_of_type() */
} TypeFacts;

#define CACHED_TYPES 16

struct KeyMatcher
{
	MemoryContext context;
	int			nhashers;
	CachedHasher hashers[CACHED_HASHERS];
	int			ntypes;
	TypeFacts	types[CACHED_TYPES];
};

KeyMatcher *
tlbf_key_matcher(MemoryContext context)
{
	KeyMatcher *matcher = MemoryContextAllocZero(context, sizeof(KeyMatcher));

	matcher->context = context;
	return matcher;
}

static ItemHasher *
hasher_for(KeyMatcher *matcher, Oid type, Oid collation, bool legacy)
{
	CachedHasher *slot;

	for (int i = 0; i < matcher->nhashers; i++)
	{
		slot = &matcher->hashers[i];
		if (slot->type == type && slot->collation == collation && slot->legacy == legacy)
			return slot->hasher;
	}
	if (matcher->nhashers == CACHED_HASHERS)
		matcher->nhashers = 0;	/* more types than any key has: start over */
	slot = &matcher->hashers[matcher->nhashers++];
	slot->type = type;
	slot->collation = collation;
	slot->legacy = legacy;
	slot->hasher = legacy ? tlbf_legacy_item_hasher(type, collation, matcher->context) :
		tlbf_item_hasher(type, collation, matcher->context);
	return slot->hasher;
}

static const TypeFacts *
facts_of(KeyMatcher *matcher, Oid type)
{
	TypeFacts  *facts;

	for (int i = 0; i < matcher->ntypes; i++)
		if (matcher->types[i].type == type)
			return &matcher->types[i];
	if (matcher->ntypes == CACHED_TYPES)
		matcher->ntypes = 0;	/* more types than any key has: start over */
	facts = &matcher->types[matcher->ntypes++];
	facts->type = type;
	facts->is_row = type_is_rowtype(type);
	facts->kind = tlbf_key_kind_of_type(type);
	return facts;
}

const char *
tlbf_key_kind_name(int kind)
{
	switch (kind)
	{
		case TLBF_KEY_INTEGER:
			return "integer";
		case TLBF_KEY_NUMERIC:
			return "numeric";
		case TLBF_KEY_FLOAT:
			return "float";
		case TLBF_KEY_TEXT:
			return "text";
		case TLBF_KEY_UUID:
			return "uuid";
		case TLBF_KEY_BYTEA:
			return "bytea";
		case TLBF_KEY_DATE:
			return "date";
		case TLBF_KEY_TIMESTAMP:
			return "timestamp";
		case TLBF_KEY_TIMESTAMPTZ:
			return "timestamptz";
		case TLBF_KEY_OTHER:
			return "other";
	}
	return "unrecorded";
}

/* "(integer, text)", or "integer" for a key of one field. */
static char *
keys_text(TlbfKeys keys)
{
	StringInfoData out;

	initStringInfo(&out);
	for (int i = 0; i < keys.fields; i++)
		appendStringInfo(&out, "%s%s", i == 0 ? "" : ", ", tlbf_key_kind_name(tlbf_key_kind(keys, i)));
	return keys.fields > 1 ? psprintf("(%s)", out.data) : out.data;
}

char *
tlbf_keys_description(TlbfKeys keys)
{
	return keys.fields == 0 ? NULL : keys_text(keys);
}

/* A key from one SQL value: a composite value's fields, else the value. */
void
tlbf_key_from_value(KeyMatcher *matcher, KeyFields *key, Oid type, Oid collation,
					Datum value)
{
	if (facts_of(matcher, type)->is_row)
	{
		RowFields	row;

		tlbf_row_fields(value, &row);
		if (row.n > TLBF_MAX_KEY_FIELDS || row.n < 1)
			ereport(ERROR,
					(errcode(ERRCODE_TOO_MANY_COLUMNS),
					 errmsg("a tlbf key has 1 to %d fields, not %d", TLBF_MAX_KEY_FIELDS, row.n)));
		key->n = row.n;
		for (int i = 0; i < row.n; i++)
		{
			key->types[i] = row.types[i];
			key->collations[i] = row.collations[i];
			key->values[i] = row.values[i];
			key->nulls[i] = row.nulls[i];
		}
		/* the values point into the row, not into these arrays */
		pfree(row.types);
		pfree(row.collations);
		pfree(row.values);
		pfree(row.nulls);
		return;
	}
	key->n = 1;
	key->types[0] = type;
	key->collations[0] = collation;
	key->values[0] = value;
	key->nulls[0] = false;
}

/* The kinds of the key's fields as they are, recorded by a first key. */
TlbfKeys
tlbf_key_own_kinds(KeyMatcher *matcher, const KeyFields *key)
{
	uint8		kinds[TLBF_MAX_KEY_FIELDS];

	for (int i = 0; i < key->n; i++)
		kinds[i] = (uint8) facts_of(matcher, key->types[i])->kind;
	return tlbf_keys_make(kinds, key->n);
}

/*
 * The kinds a key is hashed as for a filter that records 'filter_keys' and
 * holds keys or not: the filter's, or the key's own while it holds none.
 */
TlbfKeys
tlbf_key_basis(KeyMatcher *matcher, const KeyFields *key, TlbfKeys filter_keys,
			   bool holds_keys)
{
	return holds_keys ? filter_keys : tlbf_key_own_kinds(matcher, key);
}

static char *
text_of(Oid type, Datum value)
{
	Oid			output;
	bool		varlena;

	getTypeOutputInfo(type, &output, &varlena);
	return OidOutputFunctionCall(output, value);
}

/* A whole number that fits int64, from its decimal digits; else false. */
static bool
parse_whole_number(const char *digits, int64 *value)
{
	const char *p = digits + (digits[0] == '-');
	char	   *end;

	if (*p == '\0' || strspn(p, "0123456789") != strlen(p))
		return false;
	errno = 0;
	*value = strtoll(digits, &end, 10);
	return errno == 0 && *end == '\0';
}

static bool
whole_float(double d, int64 *value)
{
	/* 2^63 is exact as a double; every whole double below it fits int64 */
	if (!isfinite(d) || d != floor(d) || d < -9223372036854775808.0 ||
		d >= 9223372036854775808.0)
		return false;
	*value = (int64) d;
	return true;
}

static int64
integer_of(Oid type, Datum value)
{
	switch (getBaseType(type))
	{
		case INT2OID:
			return DatumGetInt16(value);
		case INT4OID:
			return DatumGetInt32(value);
		default:
			return DatumGetInt64(value);
	}
}

static double
float_of(Oid type, Datum value)
{
	return getBaseType(type) == FLOAT4OID ? (double) DatumGetFloat4(value) :
		DatumGetFloat8(value);
}

/*
 * The value of a field of kind 'from' as a value of kind 'to' (a
 * conversion the table above allows), in *out of type *out_type.  False if
 * no value of that kind equals it.
 */
static bool
convert(int from, int to, Oid type, Datum value, Datum *out, Oid *out_type)
{
	int64		whole;

	switch (to)
	{
		case TLBF_KEY_INTEGER:
			*out_type = INT8OID;
			if (from == TLBF_KEY_NUMERIC)
			{
				char	   *digits = numeric_normalize(DatumGetNumeric(value));

				if (!parse_whole_number(digits, &whole))
					return false;
			}
			else if (from == TLBF_KEY_FLOAT)
			{
				if (!whole_float(float_of(type, value), &whole))
					return false;
			}
			else
				whole = DatumGetInt64(DirectFunctionCall1(int8in,
														  CStringGetDatum(text_of(type, value))));
			*out = Int64GetDatum(whole);
			return true;
		case TLBF_KEY_NUMERIC:
			*out_type = NUMERICOID;
			if (from == TLBF_KEY_INTEGER)
				*out = NumericGetDatum(int64_to_numeric(integer_of(type, value)));
			else if (from == TLBF_KEY_FLOAT)
				*out = DirectFunctionCall1(float8_numeric,
										   Float8GetDatum(float_of(type, value)));
			else
				*out = DirectFunctionCall3(numeric_in, CStringGetDatum(text_of(type, value)),
										   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
			return true;
		case TLBF_KEY_FLOAT:
			*out_type = FLOAT8OID;
			if (from == TLBF_KEY_INTEGER)
				*out = Float8GetDatum((double) integer_of(type, value));
			else if (from == TLBF_KEY_NUMERIC)
				*out = DirectFunctionCall1(numeric_float8, value);
			else
				*out = DirectFunctionCall1(float8in, CStringGetDatum(text_of(type, value)));
			return true;
		case TLBF_KEY_UUID:
			*out_type = UUIDOID;
			*out = DirectFunctionCall1(uuid_in, CStringGetDatum(text_of(type, value)));
			return true;
		case TLBF_KEY_BYTEA:
			*out_type = BYTEAOID;
			*out = DirectFunctionCall1(byteain, CStringGetDatum(text_of(type, value)));
			return true;
		case TLBF_KEY_TIMESTAMP:
			*out_type = TIMESTAMPOID;
			*out = DirectFunctionCall1(date_timestamp, value);
			return true;
	}
	pg_unreachable();
}

/* May a field of kind 'from' be matched with a filter's field of kind 'to'? */
static bool
convertible(int from, int to)
{
	switch (to)
	{
		case TLBF_KEY_INTEGER:
		case TLBF_KEY_NUMERIC:
		case TLBF_KEY_FLOAT:
			return from == TLBF_KEY_INTEGER || from == TLBF_KEY_NUMERIC ||
				from == TLBF_KEY_FLOAT || from == TLBF_KEY_TEXT;
		case TLBF_KEY_UUID:
		case TLBF_KEY_BYTEA:
			return from == TLBF_KEY_TEXT;
		case TLBF_KEY_TIMESTAMP:
			return from == TLBF_KEY_DATE;
		default:
			return false;
	}
}

static void
refuse(const KeyFields *key, int field, int to, TlbfKeys filter_keys)
{
	Oid			type = key->types[field];
	bool		untyped = type == UNKNOWNOID || type == TEXTOID;

	if (key->n == 1 && to == TLBF_KEY_OTHER)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("tlbf filter holds keys of a type hashed by its own hash function, not %s",
						format_type_be(type)),
				 errhint("Pass the key as a value of the type the filter was built from%s.",
						 untyped ? ", with a cast" : "")));
	if (key->n == 1)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("tlbf filter holds %s keys, not %s", tlbf_key_kind_name(to),
						format_type_be(type)),
				 errhint("Cast the key to %s, or build the filter from keys of type %s.",
						 tlbf_key_kind_name(to), format_type_be(type))));
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("field %d of the key is %s, but the tlbf filter holds %s keys there",
					field + 1, format_type_be(type), tlbf_key_kind_name(to)),
			 errdetail("The filter holds keys of kinds %s.", keys_text(filter_keys)),
			 errhint("Cast field %d to %s.", field + 1, tlbf_key_kind_name(to))));
}

/* Where a conversion's own error (bad text for the kind) comes from. */
static void
conversion_context(void *arg)
{
	errcontext("converting the key to the tlbf filter's %s keys",
			   tlbf_key_kind_name(*(int *) arg));
}

/*
 * The hash of one field as a field of kind 'to' (0: as it is).  False if no
 * key of that kind equals it: a query answers "absent", an insertion is
 * refused.
 */
static bool
hash_field(KeyMatcher *matcher, const KeyFields *key, int field, TlbfKeys filter_keys,
		   bool adding, uint64 seed, TlbfHash *hash)
{
	Oid			type = key->types[field];
	Oid			collation = key->collations[field];
	int			from = facts_of(matcher, type)->kind;
	int			to = tlbf_key_kind(filter_keys, field);
	Datum		value = key->values[field];
	Oid			converted_type;
	ErrorContextCallback context;
	bool		representable;

	if (to == TLBF_KEY_UNRECORDED || to == from)
	{
		*hash = tlbf_hash_item(hasher_for(matcher, type, collation, false), value, seed);
		return true;
	}
	if (!convertible(from, to))
		refuse(key, field, to, filter_keys);
	context.callback = conversion_context;
	context.arg = &to;
	context.previous = error_context_stack;
	error_context_stack = &context;
	representable = convert(from, to, type, value, &value, &converted_type);
	error_context_stack = context.previous;
	if (!representable)
	{
		if (adding)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("key %s is not an integer, and the tlbf filter holds integer keys",
							text_of(type, key->values[field])),
					 errhint("Round the key, or build the filter from %s keys.",
							 tlbf_key_kind_name(from))));
		return false;
	}
	*hash = tlbf_hash_item(hasher_for(matcher, converted_type, InvalidOid, false), value, seed);
	return true;
}

/*
 * The hash of a key for a filter recording 'filter_keys' (none: hashed as
 * it is).  False if the key cannot be one of the filter's keys (see
 * hash_field); an insertion ('adding') is refused instead.
 */
bool
tlbf_key_hash(KeyMatcher *matcher, const KeyFields *key, TlbfKeys filter_keys,
			  bool adding, uint64 seed, TlbfHash *hash)
{
	TlbfHash	hashes[TLBF_MAX_KEY_FIELDS];

	if (filter_keys.fields != 0 && filter_keys.fields != key->n)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the key has %d field%s, but the tlbf filter holds keys of %d",
						key->n, key->n == 1 ? "" : "s", filter_keys.fields),
				 errdetail("The filter holds keys of kinds %s.", keys_text(filter_keys)),
				 errhint("Pass a key of %d fields as ROW(...).", filter_keys.fields)));
	for (int i = 0; i < key->n; i++)
	{
		memset(&hashes[i], 0, sizeof(TlbfHash));
		if (!key->nulls[i] &&
			!hash_field(matcher, key, i, filter_keys, adding, seed, &hashes[i]))
			return false;
	}
	*hash = tlbf_combine_hashes(hashes, key->nulls, key->n, seed);
	return true;
}

/*
 * How a key is hashed for a filter: as the filter's recorded kinds; as the
 * key's own kinds if the filter holds no key yet; or if it records none
 * but holds keys, as they were hashed before kinds were recorded (by the
 * key's own type, a composite value as one value).  *basis is set to the
 * kinds the hash is for (none for the last).
 */
static bool
key_hash_for(KeyMatcher *matcher, Oid type, Oid collation, Datum value,
			 TlbfKeys filter_keys, bool holds_keys, bool adding, uint64 seed,
			 TlbfHash *hash, TlbfKeys *basis)
{
	KeyFields	key;

	if (filter_keys.fields == 0 && holds_keys)
	{
		*hash = tlbf_hash_item(hasher_for(matcher, type, collation, true), value, seed);
		basis->fields = 0;
		basis->kinds = 0;
		return true;
	}
	tlbf_key_from_value(matcher, &key, type, collation, value);
	*basis = tlbf_key_basis(matcher, &key, filter_keys, holds_keys);
	return tlbf_key_hash(matcher, &key, *basis, adding, seed, hash);
}

static KeyMatcher *
call_site_matcher(FunctionCallInfo fcinfo)
{
	CallCache  *cache = tlbf_call_cache(fcinfo);

	if (cache->matcher == NULL)
		cache->matcher = tlbf_key_matcher(fcinfo->flinfo->fn_mcxt);
	return cache->matcher;
}

/*
 * The hash of argument 'argno' as a key of filter f; false if it cannot be
 * one of f's keys (the answer is "absent").
 */
bool
tlbf_key_arg_hash(FunctionCallInfo fcinfo, int argno, const Tlbf *f, TlbfHash *hash)
{
	TlbfKeys	basis;

	return key_hash_for(call_site_matcher(fcinfo), tlbf_arg_type(fcinfo, argno),
						PG_GET_COLLATION(), PG_GETARG_DATUM(argno), tlbf_keys_of(f),
						f->inserted > 0, false, f->seed, hash, &basis);
}

/*
 * The same for adding the key to f, a private copy: a filter that holds no
 * key yet records the key's kinds.
 */
TlbfHash
tlbf_key_arg_hash_for_add(FunctionCallInfo fcinfo, int argno, Tlbf *f)
{
	TlbfHash	hash;
	TlbfKeys	basis;

	(void) key_hash_for(call_site_matcher(fcinfo), tlbf_arg_type(fcinfo, argno),
						PG_GET_COLLATION(), PG_GETARG_DATUM(argno), tlbf_keys_of(f),
						f->inserted > 0, true, f->seed, &hash, &basis);
	tlbf_record_keys(f, basis);
	return hash;
}

/*
 * For a shared filter, whose kinds are read under one lock and written
 * under another: the hash of argument 'argno' for a filter recording
 * 'filter_keys' and holding keys or not, with in *basis the kinds the hash
 * is for, which the insertion checks and records (shared_functions.c).
 */
bool
tlbf_key_arg_hash_shared(FunctionCallInfo fcinfo, int argno, TlbfKeys filter_keys,
						 bool holds_keys, bool adding, TlbfHash *hash, TlbfKeys *basis)
{
	return key_hash_for(call_site_matcher(fcinfo), tlbf_arg_type(fcinfo, argno),
						PG_GET_COLLATION(), PG_GETARG_DATUM(argno), filter_keys,
						holds_keys, adding, TLBF_DEFAULT_SEED, hash, basis);
}
