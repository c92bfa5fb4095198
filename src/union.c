/*-------------------------------------------------------------------------
 *
 * union.c
 *	  Merging filters: tlbf_union(a, b) and a || b, and the merge the
 *	  aggregates use to combine partial states.
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"
#include "filter_args.h"
#include "key_match.h"
#include "union.h"
#include "value_carry.h"

#include "utils/builtins.h"
#include "utils/memutils.h"

#include "core/tb.h"

PG_FUNCTION_INFO_V1(tlbf_union);

static char *
span_text(int64 span)
{
	Interval	interval = {.time = span, .day = 0, .month = 0};

	return DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(&interval)));
}

/*
 * Why filters do not merge, worded once for every format: the span, the
 * kinds of key (42804: as a type mismatch), the types behind two seeds.
 */
static void
report_spans(int64 a, int64 b)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("cannot merge tlbf filters with different span"),
			 errdetail("One remembers keys for %s, the other for %s.",
					   span_text(a), span_text(b))));
}

static void
report_kinds(TlbfKeys a, TlbfKeys b)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("cannot merge tlbf filters that hold different kinds of key"),
			 errdetail("One holds %s keys, another %s keys.",
					   tlbf_keys_description(a), tlbf_keys_description(b)),
			 errhint("Build the filters from keys of the same type.")));
}

static void
report_types(TlbfKeys keys)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("cannot merge tlbf filters that hold keys of different types"),
			 errdetail("Both hold %s keys, hashed by the hash functions of types that hash values unlike each other (their seeds differ).",
					   tlbf_keys_description(keys)),
			 errhint("Build the filters from keys of the same type.")));
}

/* A filter written before 1.4 hashes keys by their own type; 'keys' are the other's. */
static void
report_legacy(TlbfKeys keys)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("cannot merge a tlbf filter written before version 1.4 with one that records its kind of key"),
			 errdetail("The older filter records no kind of key; the other holds %s keys.",
					   tlbf_keys_description(keys)),
			 errhint("Rebuild the older filter, or merge once its keys have expired (one span).")));
}

static void
report_hashing(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("cannot merge tlbf filters with different %s", what),
			 errdetail("Filters hash keys differently, so neither can answer for the other's keys.")));
}

/*
 * Filters that hold keys of recorded kinds that do not join
 * (tlbf_keys_join) cannot be merged: a key would be converted, and hashed,
 * as one filter's kind only.  Nor can a filter that holds keys of no
 * recorded kind (written before 1.4) merge with one that records a kind.
 */
static void
check_same_keys(const Tlbf *const *inputs, int n)
{
	const Tlbf *first = NULL;
	TlbfKeys	joined = {0, 0};
	bool		legacy = false;

	for (int i = 0; i < n; i++)
	{
		TlbfKeys	keys = tlbf_keys_of(inputs[i]);

		if (inputs[i]->inserted == 0)
			continue;
		if (keys.fields == 0)
		{
			legacy = true;
			continue;
		}
		keys.tag = joined.tag;	/* the seeds are checked apart */
		if (first == NULL)
		{
			first = inputs[i];
			joined = keys;
		}
		else if (!tlbf_keys_join(joined, keys, &joined))
			report_kinds(tlbf_keys_of(first), keys);
	}

	/*
	 * A filter written before 1.4 hashes keys by their own type, one that
	 * records its kind converts them: the union could answer neither way.
	 */
	if (legacy && first != NULL)
		report_legacy(tlbf_keys_of(first));
}

/*
 * The union of filters as a new value in the current memory context.
 * Past the format's 65,536 slices the oldest slices go (counted and warned
 * about, as when a filter grows); past tlbf.max_filter_bytes it fails.
 */
Tlbf *
tlbf_merge_values(const Tlbf *const *inputs, int n)
{
	Size		size;
	Tlbf	   *out;
	uint64		truncated = 0;

	check_same_keys(inputs, n);
	for (int i = 1; i < n; i++)
	{
		const char *differs = tlbf_merge_mismatch(inputs[0], inputs[i]);

		if (differs == NULL)
			continue;
		if (inputs[0]->span != inputs[i]->span)
			report_spans(inputs[0]->span, inputs[i]->span);
		if (strcmp(differs, "hash seed") == 0 && inputs[0]->seed != 0 && inputs[i]->seed != 0)
			report_types(tlbf_keys_of(inputs[i]));
		if (strcmp(differs, "hash scheme") == 0 || strcmp(differs, "hash seed") == 0 ||
			strcmp(differs, "key kind") == 0)
			report_hashing(differs);
		elog(ERROR, "cannot merge tlbf filters with different %s", differs);
	}

	size = tlbf_merge_bytes(inputs, n);
	if (size > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the union of these tlbf filters would take %zu bytes", size),
				 errhint("Retire expired slices first (tlbf_retire), or merge fewer filters.")));
	out = palloc(size);
	for (int i = 0; i < n; i++)
		truncated = tlbf_add_saturating(truncated, inputs[i]->truncated);
	tlbf_merge(out, inputs, n);
	tlbf_check_status_for(TLBF_OK, truncated, out, TLBF_LIMIT_SLICES);
	tlbf_set_length(out);
	tlbf_check_filter_bytes(out);
	return out;
}

/*
 * Whether a value of format 1 or 2 may be carried by one of format 3
 * (value_carry.c), or united with what it carries: the same span, and
 * keys of kinds that join, hashed alike (worded as a union of format 2).
 */
void
tlbf_check_carry(const TbFilter *bands, const Tlbf *old)
{
	TlbfKeys	a = tb_keys_of(bands);
	TlbfKeys	b = tlbf_keys_of(old);
	TlbfKeys	joined;

	if (bands->span != old->span)
		report_spans(bands->span, old->span);
	if (bands->inserted == 0 || old->inserted == 0)
		return;
	if (b.fields == 0)
		report_legacy(a);
	b.tag = a.tag;				/* the seeds are checked apart */
	if (!tlbf_keys_join(a, b, &joined))
		report_kinds(tb_keys_of(bands), tlbf_keys_of(old));
	if (bands->seed != old->seed)
		report_types(a);
}

/*
 * The union of a value of format 3 with one of format 1 or 2: its bands,
 * carrying the older value (united with the one it carried, if any).
 */
static TbFilter *
union_mixed(TlbfValue a, const Tlbf *old)
{
	const Tlbf *carried = old;

	tlbf_check_carry(a.v3, old);
	if (a.carried != NULL)
	{
		const Tlbf *inputs[2] = {a.carried, old};

		carried = tlbf_merge_values(inputs, 2);
	}
	return tlbf_carry(a.v3, carried->nslices > 0 ? carried : NULL);
}

/*
 * The union of two format 3 filters (core/tb.h): a copy of the first's
 * bands, the second's OR'ed or folded into them, or kept beside its own;
 * the values they carry (value_carry.c) united and carried.
 */
static TbFilter *
union_format3(TlbfValue a, TlbfValue b)
{
	TbFilter   *out = tlbf_bands_copy(a.v3);
	TlbfMemory	memory;

	tlbf_memory_for(&memory, out, CurrentMemoryContext);
	out = tlbf_union_format3_into(out, b.v3, &memory);
	if (a.carried != NULL || b.carried != NULL)
	{
		TlbfValue	u = {NULL, out, NULL};

		if (a.carried != NULL)
			out = union_mixed(u, a.carried);
		if (b.carried != NULL)
		{
			u.v3 = out;
			u.carried = tlbf_carried(out);
			out = union_mixed(u, b.carried);
		}
	}
	return out;
}

/*
 * Merge 'b' into 'into', a writable format 3 filter that 'memory'
 * describes, and return it (grown through 'memory': it may have moved).
 * Shared by tlbf_union and the combine function of tlbf_agg_format3.
 */
TbFilter *
tlbf_union_format3_into(TbFilter *into, const TbFilter *b, TlbfMemory *memory)
{
	TlbfStatus	status;
	uint64		truncated;

	switch (tb_merge_mismatch(into, b))
	{
		case TB_MERGE_OK:
			break;
		case TB_MERGE_SPAN:
			report_spans(into->span, b->span);
			break;
		case TB_MERGE_ERROR_RATE:
			/* format 2 merges these with the smaller k; bits cannot be OR-ed */
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot merge tlbf filters of format 3 with different error rates"),
					 errdetail("One was made for an error rate of %g, the other for %g.",
							   into->error_rate, b->error_rate),
					 errhint("Filters of format 3 unite bit for bit: make them with the same error_rate.")));
			break;
		case TB_MERGE_GENERATIONS:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot merge tlbf filters of format 3 with different generations per span"),
					 errdetail("One has %d generations per span, the other %d.",
							   (int) into->generations, (int) b->generations),
					 errhint("Filters of format 3 unite bit for bit: make them with the same parameters.")));
			break;
		case TB_MERGE_HASH_SCHEME:
			report_hashing("hash scheme");
			break;
		case TB_MERGE_SEED:
			report_types(tb_keys_of(b));
			break;
		case TB_MERGE_KINDS:
			report_kinds(tb_keys_of(into), tb_keys_of(b));
			break;
	}
	truncated = tlbf_add_saturating(into->truncated, b->truncated);
	status = tb_union(&into, memory, b);
	tlbf_check_core_status(status, truncated, into->truncated);
	SET_VARSIZE(into, tb_size(into));
	return into;
}

/* Formats 1 and 2 and format 3 do not merge (tlbf_union, tlbf_union_agg). */
void
tlbf_refuse_mixed_formats(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("cannot merge a tlbf filter of format 3 with one of format 1 or 2"),
			 errdetail("The two formats lay out their bits differently."),
			 errhint("Merge filters of one format: rebuild the older ones, or merge once their keys have expired (one span).")));
}

/*
 * tlbf_union(a, b), a || b: every key either filter holds, at any time.
 * Filters must share their span and hash scheme, and their format.
 */
Datum
tlbf_union(PG_FUNCTION_ARGS)
{
	const Tlbf *inputs[2];
	TlbfValue	a = tlbf_arg_value(fcinfo, 0);
	TlbfValue	b = tlbf_arg_value(fcinfo, 1);

	if (a.v3 != NULL && b.v3 != NULL)
		PG_RETURN_POINTER(union_format3(a, b));
	if (a.v3 != NULL)
		PG_RETURN_POINTER(union_mixed(a, b.v2));
	if (b.v3 != NULL)
		PG_RETURN_POINTER(union_mixed(b, a.v2));
	inputs[0] = a.v2;
	inputs[1] = b.v2;
	PG_RETURN_POINTER(tlbf_merge_values(inputs, 2));
}
