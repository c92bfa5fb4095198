/*-------------------------------------------------------------------------
 *
 * keys.c
 *	  The kind of key a filter holds (tlbf_format.h): checking it, and what
 *	  a union of filters holds.
 *
 * A filter records the kinds of its key's fields with its first key.
 * Until then (no insertion yet) any key may go in.  A filter that holds
 * keys but records no kind was written before kinds were recorded (format
 * version 1), or is the union of such a filter with others: nobody knows
 * what it holds, so keys are hashed by their own type, as then.
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf.h"

TlbfKeys
tlbf_keys_of(const Tlbf *f)
{
	TlbfKeys	keys = {f->key_fields, f->key_kinds, f->seed};

	return keys;
}

TlbfKeys
tlbf_keys_make(const uint8_t *kinds, int nfields)
{
	TlbfKeys	keys = {0, 0, 0};

	if (nfields < 1 || nfields > TLBF_MAX_KEY_FIELDS)
		return keys;
	for (int i = 0; i < nfields; i++)
	{
		if (kinds[i] == TLBF_KEY_UNRECORDED || kinds[i] > TLBF_KEY_KIND_MAX)
		{
			keys.fields = 0;
			keys.kinds = 0;
			return keys;
		}
		keys.kinds |= (uint32_t) kinds[i] << (4 * i);
	}
	keys.fields = (uint16_t) nfields;
	return keys;
}

int
tlbf_key_kind(TlbfKeys keys, int field)
{
	return field < keys.fields ? (int) ((keys.kinds >> (4 * field)) & 0xF) : 0;
}

bool
tlbf_keys_equal(TlbfKeys a, TlbfKeys b)
{
	return a.fields == b.fields && a.kinds == b.kinds && a.tag == b.tag;
}

static bool
is_float_kind(int kind)
{
	return kind == TLBF_KEY_FLOAT || kind == TLBF_KEY_FLOAT4 || kind == TLBF_KEY_FLOAT8;
}

/*
 * The kinds a union of filters of kinds a and b holds (both recorded): the
 * same kinds, where a field of float4 keys meets one of float8 keys "float"
 * (either; all three hash a number as its float8 value).  False if they
 * differ otherwise, or their tags (seeds) differ: a key would be converted,
 * and hashed, as one side's kind only.
 */
bool
tlbf_keys_join(TlbfKeys a, TlbfKeys b, TlbfKeys *out)
{
	uint8_t		kinds[TLBF_MAX_KEY_FIELDS];

	if (a.fields != b.fields || a.tag != b.tag)
		return false;
	for (int i = 0; i < a.fields; i++)
	{
		int			ka = tlbf_key_kind(a, i);
		int			kb = tlbf_key_kind(b, i);

		if (ka == kb)
			kinds[i] = (uint8_t) ka;
		else if (is_float_kind(ka) && is_float_kind(kb))
			kinds[i] = TLBF_KEY_FLOAT;
		else
			return false;
	}
	*out = tlbf_keys_make(kinds, a.fields);
	out->tag = a.tag;
	return true;
}

/* Are the key fields of a header well formed for its format version? */
bool
tlbf_keys_valid(const Tlbf *f)
{
	TlbfKeys	keys = tlbf_keys_of(f);

	if (f->version == TLBF_FORMAT_VERSION_1)
		return keys.fields == 0 && keys.kinds == 0;
	return tlbf_keys_check(keys);
}

/* Are these kinds well formed (or none)? */
bool
tlbf_keys_check(TlbfKeys keys)
{
	if (keys.fields == 0)
		return keys.kinds == 0;
	if (keys.fields > TLBF_MAX_KEY_FIELDS)
		return false;
	for (int i = 0; i < TLBF_MAX_KEY_FIELDS; i++)
	{
		uint32_t	kind = (keys.kinds >> (4 * i)) & 0xF;

		if (i < keys.fields ? (kind == 0 || kind > TLBF_KEY_KIND_MAX) : kind != 0)
			return false;
	}
	return true;
}

/* Record the kind of key (and its tag) of a filter that holds none yet. */
void
tlbf_record_keys(Tlbf *f, TlbfKeys keys)
{
	if (f->inserted == 0)
	{
		f->key_fields = keys.fields;
		f->key_kinds = keys.kinds;
		f->seed = keys.tag;
		f->version = TLBF_FORMAT_VERSION;
	}
}

/*
 * What the union of inputs[0..n-1] holds: the kinds they record, joined
 * (tlbf_keys_join) over every input that holds keys; unrecorded if one
 * holds keys of no recorded kind.  False if two record kinds that do not
 * join: a key of one kind would be converted, and hashed, as the other's.  An input without
 * keys does not count, unless no input has any.
 */
bool
tlbf_merge_keys(const Tlbf *const *inputs, int n, TlbfKeys *out)
{
	bool		legacy = false;
	bool		found = false;

	out->fields = 0;
	out->kinds = 0;
	out->tag = 0;
	for (int i = 0; i < n; i++)
	{
		TlbfKeys	keys = tlbf_keys_of(inputs[i]);

		if (inputs[i]->inserted == 0)
			continue;
		if (keys.fields == 0)
			legacy = true;
		else if (!found)
		{
			*out = keys;
			found = true;
		}
		else if (!tlbf_keys_join(*out, keys, out))
			return false;
	}
	if (legacy)
	{
		out->fields = 0;
		out->kinds = 0;
		out->tag = 0;
	}
	else if (!found)
		for (int i = 0; i < n && out->fields == 0; i++)
			*out = tlbf_keys_of(inputs[i]);
	return true;
}
