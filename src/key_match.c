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
 * key is first turned into a value of the kind's own type, as SQL's = would
 * compare the two types (an untyped literal or driver parameter arrives as
 * text and is read as a value of the filter's kind, as SQL reads it as the
 * column's type):
 *
 *	  integer		int2, int4, int8; numeric values that are whole
 *					numbers; floats that are whole numbers, below 2^53 when
 *					asked (SQL compares integers with floats as float8, and
 *					from 2^53 on several integers are one float8); text
 *					parsed as bigint
 *	  numeric		numeric; integers; text.  Floats are refused: SQL
 *					compares them with numeric as float8, where countless
 *					numeric values equal one float8
 *	  float4		float4; float8, integers and numeric compared as float8
 *					when asked, rounded to float4 when added; text parsed
 *					as float4
 *	  float8		float8; float4, integers, numeric as float8; text
 *	  float			either (a union of the two, or written by 1.4): numbers
 *					as float8; text only where it is the same number as
 *					float4 and as float8
 *	  text			text, varchar, bpchar, name and untyped literals only
 *	  enum			enums (by label); text, read as a label
 *	  uuid, bytea	their own type; text parsed as one
 *	  date			date; a timestamp at midnight (any other equals no date);
 *					text is refused (its parsing depends on DateStyle)
 *	  timestamp		timestamp; date (midnight)
 *	  timestamptz	timestamptz only
 *	  other			any type of this kind: each is hashed by its own hash
 *					function, which agrees across types SQL compares
 *					(inet and cidr)
 *	  container		values of this kind only
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
#include "datum_hash.h"
#include "filter_args.h"
#include "key_match.h"

#include <math.h>

#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
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
	/* a query's plain path (tlbf_key_arg_hash_query): for these kinds and type */
	bool		plain_known;
	TlbfKeys	plain_keys;
	Oid			plain_type;
	ItemHasher *plain;			/* NULL: the general path */
	/* the type of the call site's argument arg_argno (its expression's, for life) */
	int			arg_argno;		/* -1: none read yet */
	Oid			arg_type;
};

KeyMatcher *
tlbf_key_matcher(MemoryContext context)
{
	KeyMatcher *matcher = MemoryContextAllocZero(context, sizeof(KeyMatcher));

	matcher->context = context;
	matcher->arg_argno = -1;
	return matcher;
}

static ItemHasher *
hasher_for(KeyMatcher *matcher, Oid type, Oid collation, bool legacy)
{
	CachedHasher *slot;
	ItemHasher *hasher;

	for (int i = 0; i < matcher->nhashers; i++)
	{
		slot = &matcher->hashers[i];
		if (slot->type == type && slot->collation == collation && slot->legacy == legacy)
			return slot->hasher;
	}
	/* (a type refused leaves no slot: a matcher may outlive the error) */
	hasher = legacy ? tlbf_legacy_item_hasher(type, collation, matcher->context) :
		tlbf_item_hasher(type, collation, matcher->context);
	if (matcher->nhashers == CACHED_HASHERS)
		matcher->nhashers = 0;	/* more types than any key has: start over */
	slot = &matcher->hashers[matcher->nhashers++];
	slot->type = type;
	slot->collation = collation;
	slot->legacy = legacy;
	slot->hasher = hasher;
	return hasher;
}

static const TypeFacts *
facts_of(KeyMatcher *matcher, Oid type)
{
	TypeFacts  *facts;
	bool		is_row;
	int			kind;

	for (int i = 0; i < matcher->ntypes; i++)
		if (matcher->types[i].type == type)
			return &matcher->types[i];
	is_row = type_is_rowtype(type);
	kind = tlbf_key_kind_of_type(type);
	if (matcher->ntypes == CACHED_TYPES)
		matcher->ntypes = 0;	/* more types than any key has: start over */
	facts = &matcher->types[matcher->ntypes++];
	facts->type = type;
	facts->is_row = is_row;
	facts->kind = kind;
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
		case TLBF_KEY_FLOAT4:
			return "real";
		case TLBF_KEY_FLOAT8:
			return "double precision";
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
		case TLBF_KEY_ENUM:
			return "enum";
		case TLBF_KEY_CONTAINER:
			return "container";
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

static bool
hashed_by_type(int kind)
{
	return kind == TLBF_KEY_OTHER || kind == TLBF_KEY_CONTAINER;
}

/*
 * The tag of a key whose fields are hashed as 'keys' (TlbfKeys): 0 if none
 * is of kind other or container, else a hash of those fields' types'
 * signatures (datum_hash.c), never 0.  Two keys of such types that hash a
 * value alike get the same tag; a filter hashes with its tag as the seed,
 * and refuses a key of another tag instead of answering "absent".
 */
static uint64
key_tag(const KeyFields *key, TlbfKeys keys)
{
	StringInfoData signature;
	uint64		tag;

	initStringInfo(&signature);
	for (int i = 0; i < key->n; i++)
		if (hashed_by_type(tlbf_key_kind(keys, i)))
		{
			appendStringInfo(&signature, "%d:", i + 1);
			tlbf_type_signature(&signature, key->types[i], key->values[i], key->nulls[i]);
			appendStringInfoChar(&signature, ';');
		}
	if (signature.len == 0)
		tag = 0;
	else
	{
		tag = tlbf_hash_bytes(signature.data, signature.len, 0).a;
		if (tag == 0)
			tag = 1;
	}
	pfree(signature.data);
	return tag;
}

/* The kinds of the key's fields as they are, recorded by a first key. */
TlbfKeys
tlbf_key_own_kinds(KeyMatcher *matcher, const KeyFields *key)
{
	uint8		kinds[TLBF_MAX_KEY_FIELDS];
	TlbfKeys	keys;

	for (int i = 0; i < key->n; i++)
		kinds[i] = (uint8) facts_of(matcher, key->types[i])->kind;
	keys = tlbf_keys_make(kinds, key->n);
	keys.tag = key_tag(key, keys);
	return keys;
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

static bool
is_float_kind(int kind)
{
	return kind == TLBF_KEY_FLOAT || kind == TLBF_KEY_FLOAT4 || kind == TLBF_KEY_FLOAT8;
}

/*
 * A number of kind integer, numeric or float as SQL compares it with a
 * float: its float8 value (int8 to float8 rounds as SQL's cast does; a
 * numeric goes through numeric_float8, SQL's cast).
 */
static double
double_of(int from, Oid type, Datum value)
{
	if (from == TLBF_KEY_INTEGER)
		return (double) integer_of(type, value);
	if (from == TLBF_KEY_NUMERIC)
		return DatumGetFloat8(DirectFunctionCall1(numeric_float8, value));
	return getBaseType(type) == FLOAT4OID ? (double) DatumGetFloat4(value) :
		DatumGetFloat8(value);
}

/*
 * A number added to a filter of float4 keys, as an assignment to a float4
 * column rounds it: straight to float4, not through float8 (which could
 * round twice).
 */
static Datum
float4_of(int from, Oid type, Datum value)
{
	if (from == TLBF_KEY_INTEGER)
		return Float4GetDatum((float4) integer_of(type, value));
	if (from == TLBF_KEY_NUMERIC)
		return DirectFunctionCall1(numeric_float4, value);
	if (getBaseType(type) == FLOAT4OID)
		return value;
	return DirectFunctionCall1(dtof, value);
}

/*
 * Text asked of (or added to) a filter of kind "float": its float4 and
 * float8 keys cannot be told apart, so text is taken only where it is one
 * number both ways ('0.5', '42'), never '0.1'.  Out of float4's range, it
 * can only be a float8.
 */
static double
unambiguous_float_text(const char *text)
{
	double		d = DatumGetFloat8(DirectFunctionCall1(float8in, CStringGetDatum(text)));
	float		f;

	if (isnan(d) || isinf(d))
		return d;
	errno = 0;
	f = strtof(text, NULL);
	if (errno == ERANGE || (double) f == d)
		return d;
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("text \"%s\" is a different number as real and as double precision", text),
			 errdetail("The tlbf filter holds keys of both types, or of either (it was written by tlbf 1.4), and cannot tell which."),
			 errhint("Cast the key to the type of the filter's keys, real or double precision.")));
	return d;					/* keep the compiler quiet */
}

/*
 * The value of a field of kind 'from' as a value of kind 'to' (a
 * conversion convertible() allows), to be added ('adding') or asked, in
 * *out of type *out_type.  False if no value of that kind equals it.
 */
static bool
convert(int from, int to, Oid type, Datum value, bool adding, Datum *out, Oid *out_type)
{
	int64		whole;
	double		d;

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
			else if (is_float_kind(from))
			{
				d = double_of(from, type, value);
				if (!whole_float(d, &whole))
					return false;
				/* 2^53 + 1 = 2^53::float8 in SQL: both would be keys */
				if (!adding && fabs(d) >= 9007199254740992.0)
					ereport(ERROR,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("%s value %s equals more than one integer",
									format_type_be(type), text_of(type, value)),
							 errdetail("SQL compares integers with floating-point numbers as double precision, where from 2^53 on several integers round to one number."),
							 errhint("Ask with a bigint or numeric key.")));
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
			else
				*out = DirectFunctionCall3(numeric_in, CStringGetDatum(text_of(type, value)),
										   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
			return true;
		case TLBF_KEY_FLOAT4:
			/* keys of float4 hash as their float8 value; so do questions */
			*out_type = FLOAT8OID;
			if (from == TLBF_KEY_TEXT)
				*out = Float8GetDatum((double) DatumGetFloat4(DirectFunctionCall1(float4in,
																				  CStringGetDatum(text_of(type, value)))));
			else if (adding)
				*out = Float8GetDatum((double) DatumGetFloat4(float4_of(from, type, value)));
			else
				*out = Float8GetDatum(double_of(from, type, value));
			return true;
		case TLBF_KEY_FLOAT8:
			*out_type = FLOAT8OID;
			if (from == TLBF_KEY_TEXT)
				*out = DirectFunctionCall1(float8in, CStringGetDatum(text_of(type, value)));
			else
				*out = Float8GetDatum(double_of(from, type, value));
			return true;
		case TLBF_KEY_FLOAT:
			*out_type = FLOAT8OID;
			if (from == TLBF_KEY_TEXT)
				*out = Float8GetDatum(unambiguous_float_text(text_of(type, value)));
			else
				*out = Float8GetDatum(double_of(from, type, value));
			return true;
		case TLBF_KEY_ENUM:
			/* an enum hashes as its label's text */
			*out_type = TEXTOID;
			*out = value;
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
		case TLBF_KEY_DATE:
			{
				/* SQL compares a date with a timestamp as the date's midnight */
				Timestamp	at = DatumGetTimestamp(value);

				*out_type = DATEOID;
				if (TIMESTAMP_NOT_FINITE(at) || at % USECS_PER_DAY != 0)
					return false;
				*out = DirectFunctionCall1(timestamp_date, value);
				return true;
			}
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
		case TLBF_KEY_FLOAT:
		case TLBF_KEY_FLOAT4:
		case TLBF_KEY_FLOAT8:
			return from == TLBF_KEY_INTEGER || from == TLBF_KEY_NUMERIC ||
				is_float_kind(from) || from == TLBF_KEY_TEXT;
		case TLBF_KEY_NUMERIC:
			return from == TLBF_KEY_INTEGER || from == TLBF_KEY_TEXT;
		case TLBF_KEY_UUID:
		case TLBF_KEY_BYTEA:
		case TLBF_KEY_ENUM:
			return from == TLBF_KEY_TEXT;
		case TLBF_KEY_TIMESTAMP:
			return from == TLBF_KEY_DATE;
		case TLBF_KEY_DATE:
			return from == TLBF_KEY_TIMESTAMP;
		default:
			return false;
	}
}

/* Is the kind's name that of the SQL type its keys are (integer, real)? */
static bool
kind_is_type_name(int kind)
{
	return kind != TLBF_KEY_FLOAT && kind != TLBF_KEY_ENUM && !hashed_by_type(kind);
}

static void
refuse(const KeyFields *key, int field, int from, int to, TlbfKeys filter_keys)
{
	Oid			type = key->types[field];
	bool		untyped = type == UNKNOWNOID || type == TEXTOID;

	if (to == TLBF_KEY_NUMERIC && is_float_kind(from))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("tlbf filter holds numeric keys, not %s", format_type_be(type)),
				 errdetail("SQL compares numeric with %s values as double precision, where countless numeric values equal one double precision value.",
						   format_type_be(type)),
				 errhint("Cast the key to numeric.")));
	if (to == TLBF_KEY_OTHER && (from == TLBF_KEY_ENUM || from == TLBF_KEY_CONTAINER))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("tlbf filter holds keys hashed by their type's hash function, not %s",
						format_type_be(type)),
				 errdetail("tlbf 1.4 hashed enums by their OID, which differs between databases and nodes; keys of type %s are now hashed by label.",
						   format_type_be(type)),
				 errhint("Rebuild the filter from its keys, or build a new one.")));
	if (key->n == 1 && (to == TLBF_KEY_OTHER || to == TLBF_KEY_CONTAINER))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("tlbf filter holds keys of a type hashed by its own hash function, not %s",
						format_type_be(type)),
				 untyped ?
				 errhint("Pass the key as a value of the type the filter was built from, with a cast.") :
				 errhint("Pass the key as a value of the type the filter was built from.")));
	if (key->n == 1 && to == TLBF_KEY_ENUM)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("tlbf filter holds enum keys, not %s", format_type_be(type)),
				 errhint("Pass the key as text (its label) or as a value of the enum.")));
	if (key->n == 1)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("tlbf filter holds %s keys, not %s", tlbf_key_kind_name(to),
						format_type_be(type)),
				 kind_is_type_name(to) ?
				 errhint("Cast the key to %s, or build the filter from keys of type %s.",
						 tlbf_key_kind_name(to), format_type_be(type)) :
				 errhint("Cast the key to real or double precision, or build the filter from keys of type %s.",
						 format_type_be(type))));
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("field %d of the key is %s, but the tlbf filter holds %s keys there",
					field + 1, format_type_be(type), tlbf_key_kind_name(to)),
			 errdetail("The filter holds keys of kinds %s.", keys_text(filter_keys)),
			 kind_is_type_name(to) ?
			 errhint("Cast field %d to %s.", field + 1, tlbf_key_kind_name(to)) :
			 errhint("Cast field %d to the type of the filter's keys there.", field + 1)));
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

	/* float4 and float8 hash alike: a float's kind matters for text only */
	if (to == TLBF_KEY_UNRECORDED || to == from ||
		(is_float_kind(to) && is_float_kind(from) && !(adding && to == TLBF_KEY_FLOAT4)))
	{
		*hash = tlbf_hash_item(hasher_for(matcher, type, collation, false), value, seed);
		return true;
	}
	if (!convertible(from, to))
		refuse(key, field, from, to, filter_keys);
	context.callback = conversion_context;
	context.arg = &to;
	context.previous = error_context_stack;
	error_context_stack = &context;
	representable = convert(from, to, type, value, adding, &value, &converted_type);
	error_context_stack = context.previous;
	if (!representable)
	{
		if (adding && to == TLBF_KEY_DATE)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("key %s is not a date, and the tlbf filter holds date keys",
							text_of(type, key->values[field])),
					 errhint("Cast the key to date, or build the filter from timestamp keys.")));
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

/* "integer" or "(integer, inet)": the types of a key's fields. */
static char *
key_types_text(const KeyFields *key)
{
	StringInfoData out;

	initStringInfo(&out);
	for (int i = 0; i < key->n; i++)
		appendStringInfo(&out, "%s%s", i == 0 ? "" : ", ", format_type_be(key->types[i]));
	return key->n > 1 ? psprintf("(%s)", out.data) : out.data;
}

/*
 * Refuse a key whose fields of kind other or container are of types that
 * hash unlike the filter's (another tag): the answer would be "absent"
 * where SQL might call the two equal (time and timetz, int[] and float8[]).
 * A filter of tag 0 was written by 1.4, before tags: it checks nothing.
 */
static void
check_tag(const KeyFields *key, TlbfKeys filter_keys)
{
	if (filter_keys.tag == 0 || key_tag(key, filter_keys) == filter_keys.tag)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("tlbf filter holds keys of another type than %s", key_types_text(key)),
			 errdetail("The filter's keys of kind other or container are hashed by their type's hash function, and %s hashes values unlike them.",
					   key_types_text(key)),
			 errhint("Pass the key as a value of the type the filter was built from, with a cast.")));
}

/*
 * The hash of a key for a filter recording 'filter_keys' (none: hashed as
 * it is), with the filter's seed (its tag).  False if the key cannot be one
 * of the filter's keys (see hash_field); an insertion ('adding') is refused
 * instead.
 */
bool
tlbf_key_hash(KeyMatcher *matcher, const KeyFields *key, TlbfKeys filter_keys,
			  bool adding, TlbfHash *hash)
{
	TlbfHash	hashes[TLBF_MAX_KEY_FIELDS];
	uint64		seed = filter_keys.tag;

	if (filter_keys.fields != 0 && filter_keys.fields != key->n)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg_plural("the key has %d field, but the tlbf filter holds keys of %d",
							   "the key has %d fields, but the tlbf filter holds keys of %d",
							   key->n, key->n, filter_keys.fields),
				 errdetail_plural("The filter holds keys of kind %s.",
								  "The filter holds keys of kinds %s.",
								  filter_keys.fields, keys_text(filter_keys)),
				 errhint_plural("Pass a key of %d field as ROW(...).",
								"Pass a key of %d fields as ROW(...).",
								filter_keys.fields, filter_keys.fields)));
	for (int i = 0; i < key->n; i++)
	{
		memset(&hashes[i], 0, sizeof(TlbfHash));
		if (!key->nulls[i] &&
			!hash_field(matcher, key, i, filter_keys, adding, seed, &hashes[i]))
			return false;
	}
	check_tag(key, filter_keys);
	*hash = tlbf_combine_hashes(hashes, key->nulls, key->n, seed);
	return true;
}

/*
 * How a key is hashed for a filter: as the filter's recorded kinds; as the
 * key's own kinds if the filter holds no key yet; or if it records none
 * but holds keys, as they were hashed before kinds were recorded (by the
 * key's own type, a composite value as one value).  *basis is set to the
 * kinds the hash is for (none for the last), with the seed in its tag.
 */
static bool
key_hash_for(KeyMatcher *matcher, Oid type, Oid collation, Datum value,
			 TlbfKeys filter_keys, bool holds_keys, bool adding,
			 TlbfHash *hash, TlbfKeys *basis)
{
	KeyFields	key;

	if (filter_keys.fields == 0 && holds_keys)
	{
		/*
		 * A row of type record had no hash function then: such a filter
		 * holds rows only as a trigger combined its key columns.
		 */
		if (getBaseType(type) == RECORDOID)
		{
			ItemHasher *hashers[TLBF_MAX_KEY_FIELDS];

			tlbf_key_from_value(matcher, &key, type, collation, value);
			for (int i = 0; i < key.n; i++)
				hashers[i] = hasher_for(matcher, key.types[i], key.collations[i], true);
			*hash = tlbf_hash_key(hashers, key.values, key.nulls, key.n, filter_keys.tag);
		}
		else
			*hash = tlbf_hash_item(hasher_for(matcher, type, collation, true), value,
								   filter_keys.tag);
		*basis = filter_keys;
		return true;
	}
	tlbf_key_from_value(matcher, &key, type, collation, value);
	*basis = tlbf_key_basis(matcher, &key, filter_keys, holds_keys);
	return tlbf_key_hash(matcher, &key, *basis, adding, hash);
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
						f->inserted > 0, false, hash, &basis);
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
						f->inserted > 0, true, &hash, &basis);
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
						holds_keys, adding, hash, basis);
}

/*
 * For a call site that hashes many keys of one type for filters of one
 * kind (an aggregate's rows, a query's probes): a hasher, new in
 * 'context', that gives argument 'argno' the hash the general path gives
 * it, tlbf_hash_item(hasher, value, filter_keys.tag), when the key is one
 * value of a type that is not a row and the filter records that type's own
 * kind (so no conversion); NULL when the general path must be taken.  Its
 * caller keeps it as long as it needs (a call site's memory may last one
 * call only: Citus calls a transition function through a new FmgrInfo per
 * row).
 */
ItemHasher *
tlbf_key_arg_plain_hasher(FunctionCallInfo fcinfo, int argno, TlbfKeys filter_keys,
						  MemoryContext context)
{
	KeyMatcher *matcher = call_site_matcher(fcinfo);
	Oid			type = tlbf_arg_type(fcinfo, argno);
	const TypeFacts *facts = facts_of(matcher, type);

	if (facts->is_row || filter_keys.fields != 1 ||
		facts->kind == TLBF_KEY_UNRECORDED || tlbf_key_kind(filter_keys, 0) != facts->kind)
		return NULL;
	return tlbf_item_hasher(type, PG_GET_COLLATION(), context);
}

/*
 * The hash of argument 'argno' for a query of a filter recording
 * 'filter_keys' and holding keys or not (tlbf_contains, of either format):
 * false if it cannot be one of the filter's keys.  A call site asks many
 * filters of the same kinds, often one filter many times: once the general
 * path has hashed a key for them, and its type's hasher alone gave the
 * same hash (tlbf_key_arg_plain_hasher), later keys take that hasher.
 */
bool
tlbf_key_arg_hash_query(FunctionCallInfo fcinfo, int argno, TlbfKeys filter_keys,
						bool holds_keys, TlbfHash *hash)
{
	KeyMatcher *matcher = call_site_matcher(fcinfo);
	Oid			type;
	TlbfKeys	basis;
	bool		same_keys;

	/* (looked up once: it walks the call's expression, a share of a probe) */
	if (matcher->arg_argno != argno)
	{
		matcher->arg_type = tlbf_arg_type(fcinfo, argno);
		matcher->arg_argno = argno;
	}
	type = matcher->arg_type;
	same_keys = matcher->plain_known && matcher->plain_type == type &&
		matcher->plain_keys.fields == filter_keys.fields &&
		matcher->plain_keys.kinds == filter_keys.kinds &&
		matcher->plain_keys.tag == filter_keys.tag;

	if (same_keys && holds_keys && matcher->plain != NULL)
	{
		*hash = tlbf_hash_item(matcher->plain, PG_GETARG_DATUM(argno), filter_keys.tag);
		return true;
	}
	if (!key_hash_for(matcher, type, PG_GET_COLLATION(), PG_GETARG_DATUM(argno), filter_keys,
					  holds_keys, false, hash, &basis))
		return false;
	if (!same_keys && holds_keys)
	{
		ItemHasher *plain = tlbf_key_arg_plain_hasher(fcinfo, argno, filter_keys,
													  matcher->context);
		TlbfHash	again;

		if (plain != NULL)
		{
			again = tlbf_hash_item(plain, PG_GETARG_DATUM(argno), filter_keys.tag);
			if (again.a != hash->a || again.b != hash->b)
				plain = NULL;
		}
		matcher->plain_known = true;
		matcher->plain_keys = filter_keys;
		matcher->plain_type = type;
		matcher->plain = plain;
	}
	return true;
}

/*
 * The same for a key given as the text of each of its fields, as drivers
 * send untyped parameters (tlbf_shared_contains_fields): each field is read
 * as the kind the filter records for it, as a key of type text is.  A
 * filter that records no kinds (written before 1.4) cannot say how to read
 * them: refused rather than answered "absent".
 */
bool
tlbf_key_text_fields_hash_shared(FunctionCallInfo fcinfo, ArrayType *fields,
								 TlbfKeys filter_keys, bool holds_keys,
								 TlbfHash *hash, TlbfKeys *basis)
{
	KeyMatcher *matcher = call_site_matcher(fcinfo);
	KeyFields	key;
	Datum	   *values;
	bool	   *nulls;
	int			n;

	if (ARR_NDIM(fields) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("the fields of a tlbf key must be a one-dimensional array")));
	deconstruct_array(fields, TEXTOID, -1, false, TYPALIGN_INT, &values, &nulls, &n);
	if (n < 1 || n > TLBF_MAX_KEY_FIELDS)
		ereport(ERROR,
				(errcode(ERRCODE_TOO_MANY_COLUMNS),
				 errmsg("a tlbf key has 1 to %d fields, not %d", TLBF_MAX_KEY_FIELDS, n)));
	if (filter_keys.fields == 0 && holds_keys)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the shared tlbf filter does not record the kinds of its keys"),
				 errdetail("It was written before version 1.4, so text cannot be read as its keys' types."),
				 errhint("Pass the key with its types, as ROW($1::int, $2::bigint).")));
	key.n = n;
	for (int i = 0; i < n; i++)
	{
		key.types[i] = TEXTOID;
		key.collations[i] = OidIsValid(PG_GET_COLLATION()) ? PG_GET_COLLATION() : DEFAULT_COLLATION_OID;
		key.values[i] = values[i];
		key.nulls[i] = nulls[i];
	}
	*basis = tlbf_key_basis(matcher, &key, filter_keys, holds_keys);
	return tlbf_key_hash(matcher, &key, *basis, false, hash);
}

/*
 * A filter written before kinds were recorded (format 1) by a trigger
 * keyed on several columns holds each row's fields combined
 * (tlbf_hash_key), where a row asked of it hashes as one value of type
 * record: the hash of argument 'argno' as such a trigger combined it, if it
 * is a row.  False if it is not.
 */
bool
tlbf_key_arg_legacy_fields_hash(FunctionCallInfo fcinfo, int argno, uint64 seed,
								TlbfHash *hash)
{
	KeyMatcher *matcher = call_site_matcher(fcinfo);
	Oid			type = tlbf_arg_type(fcinfo, argno);
	KeyFields	key;
	ItemHasher *hashers[TLBF_MAX_KEY_FIELDS];

	if (!facts_of(matcher, type)->is_row)
		return false;
	tlbf_key_from_value(matcher, &key, type, PG_GET_COLLATION(), PG_GETARG_DATUM(argno));
	for (int i = 0; i < key.n; i++)
		hashers[i] = hasher_for(matcher, key.types[i], key.collations[i], true);
	*hash = tlbf_hash_key(hashers, key.values, key.nulls, key.n, seed);
	return true;
}
