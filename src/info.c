/*-------------------------------------------------------------------------
 *
 * info.c
 *	  tlbf_info(f, at): a filter's parameters, size and slices as jsonb;
 *	  tlbf_summary(f, at): the same in one short line of text, for psql,
 *	  where a value's own text (its bytes in base64) is unreadable.
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"
#include "filter_args.h"
#include "info.h"
#include "key_match.h"
#include "times.h"

#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/float.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "core/tb.h"

PG_FUNCTION_INFO_V1(tlbf_info);
PG_FUNCTION_INFO_V1(tlbf_summary);

static void
append_time(StringInfo out, const char *key, TlbfTime t)
{
	char		buf[MAXDATELEN + 1];

	if (t == TLBF_NEVER)
		appendStringInfo(out, "\"%s\": null", key);
	else
		appendStringInfo(out, "\"%s\": \"%s\"", key,
						 JsonEncodeDateTime(buf, TimestampTzGetDatum(t),
											TIMESTAMPTZOID, NULL));
}

static void
append_float(StringInfo out, const char *key, double value)
{
	appendStringInfo(out, "\"%s\": %s", key, float8out_internal(value));
}

static void
append_slices(StringInfo out, const Tlbf *f, TlbfTime at)
{
	const TlbfSlice *s = tlbf_slices(f);

	appendStringInfoString(out, "\"slices\": [");
	for (uint32 i = 0; i < f->nslices; i++)
	{
		appendStringInfo(out, "%s{\"bits\": " UINT64_FORMAT ", \"bits_set\": " UINT64_FORMAT ", ",
						 i == 0 ? "" : ", ", (uint64) s[i].nwords * 64, s[i].bits_set);
		append_float(out, "inserted", round(tlbf_slice_load(&s[i])));
		appendStringInfoString(out, ", ");
		append_float(out, "fill_ratio", round(tlbf_fill_ratio(&s[i]) * 1e4) / 1e4);
		appendStringInfo(out, ", \"hash_index\": %u, ", s[i].hash_index);
		append_time(out, "updated_at", s[i].updated_at);
		appendStringInfo(out, ", \"expired\": %s}",
						 tlbf_is_expired(&s[i], at, f->span) ? "true" : "false");
	}
	appendStringInfoChar(out, ']');
}

/*
 * "key_kinds": ["integer", "text"], or null when the filter records none
 * (it holds no key yet, or was written before kinds were recorded).
 */
static void
append_key_kinds(StringInfo out, TlbfKeys keys, uint64 inserted)
{
	if (keys.fields == 0 || inserted == 0)
	{
		appendStringInfoString(out, "\"key_kinds\": null, ");
		return;
	}
	appendStringInfoString(out, "\"key_kinds\": [");
	for (int i = 0; i < keys.fields; i++)
		appendStringInfo(out, "%s\"%s\"", i == 0 ? "" : ", ",
						 tlbf_key_kind_name(tlbf_key_kind(keys, i)));
	appendStringInfoString(out, "], ");
}

/* "key": bits / per, to two decimals, or null when per is 0. */
static void
append_per(StringInfo out, const char *key, uint64 bits, double per)
{
	if (per > 0)
		append_float(out, key, round(bits / per * 100) / 100);
	else
		appendStringInfo(out, "\"%s\": null", key);
}

/*
 * The distinct keys the filter still finds: the estimate, the range it
 * lies in, and the bits each costs.  Whole keys: the range's width says
 * more about the precision than decimals would.
 */
static void
append_live_keys(StringInfo out, double estimate, double low, double high, uint64 bits)
{
	append_float(out, "live_keys_estimate", round(estimate));
	appendStringInfoString(out, ", ");
	append_float(out, "live_keys_low", round(low));
	appendStringInfoString(out, ", ");
	append_float(out, "live_keys_high", round(high));
	appendStringInfoString(out, ", ");
	append_per(out, "bits_per_live_key", bits, estimate);
}

/* The first fields of tlbf_info(), the same for every format. */
static void
append_opening(StringInfo out, unsigned version, uint64 seed, TlbfKeys keys, uint64 inserted,
			   double error_rate, int64 span)
{
	appendStringInfo(out, "{\"version\": %u, \"hash\": \"xxh3-128\", \"seed\": " UINT64_FORMAT ", ",
					 version, seed);
	append_key_kinds(out, keys, inserted);
	append_float(out, "error_rate", error_rate);
	appendStringInfoString(out, ", ");
	append_float(out, "span", (double) span / USECS_PER_SEC);
}

/* The jsonb tlbf_info() returns for a filter (with its length word set). */
Datum
tlbf_info_jsonb(const Tlbf *f, TlbfTime at)
{
	TlbfStats	stats;
	StringInfoData out;

	tlbf_stats(f, at, &stats);
	initStringInfo(&out);
	append_opening(&out, f->version, f->seed, tlbf_keys_of(f), f->inserted, f->error_rate, f->span);
	appendStringInfo(&out, ", \"k\": %u, \"l\": %u, \"capacity\": " UINT64_FORMAT,
					 f->k, f->l, f->capacity);
	appendStringInfo(&out, ", \"slice_count\": %u, \"live_slices\": %u",
					 f->nslices, stats.live_slices);
	appendStringInfo(&out, ", \"bits\": " UINT64_FORMAT ", \"bytes\": %u",
					 stats.bits, (unsigned) VARSIZE(f));
	appendStringInfo(&out, ", \"inserted\": " UINT64_FORMAT ", ", f->inserted);
	append_live_keys(&out, stats.live_keys, stats.live_keys_low, stats.live_keys_high, stats.bits);
	appendStringInfoString(&out, ", ");
	append_float(&out, "live_items_estimate", round(stats.live_items * 10) / 10);
	appendStringInfoString(&out, ", ");
	append_per(&out, "bits_per_live_item", stats.bits, stats.live_items);
	appendStringInfoString(&out, ", ");
	append_time(&out, "newest", f->newest);
	appendStringInfoString(&out, ", ");
	append_time(&out, "oldest_live", stats.oldest_live);
	appendStringInfo(&out, ", \"truncated\": " UINT64_FORMAT ", ", f->truncated);
	append_slices(&out, f, at);
	appendStringInfoChar(&out, '}');
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(out.data));
}

/*
 * tlbf_info of a format 3 filter (core/tb.h): its parameters, the distinct
 * keys of the generations a query at 'at' over the span asks (tb_live_keys),
 * and per band its generations, each with its start, its keys and whether
 * that query asks it.
 */
Datum
tlbf_info_jsonb_format3(const TbFilter *f, const Tlbf *carried, TlbfTime at)
{
	StringInfoData out;
	uint64		bits = (uint64) (tb_size(f) - tb_lines_offset(f->nbands)) * 8;
	TbLiveKeys	live;

	tb_live_keys(f, at, &live);
	initStringInfo(&out);
	append_opening(&out, f->version, f->seed, tb_keys_of(f), f->inserted, f->error_rate, f->span);
	appendStringInfo(&out, ", \"generations\": %u, ", f->generations);
	append_float(&out, "generation_length", (double) f->length / USECS_PER_SEC);
	appendStringInfo(&out, ", \"lines_per_key\": %u, \"k\": %u, ", f->lines_per_key, f->k);
	append_float(&out, "bits_per_key", round(f->bits_per_key * 100) / 100);
	appendStringInfo(&out, ", \"capacity\": " UINT64_FORMAT ", \"declared\": %s",
					 f->capacity, (f->flags & TB_DECLARED) ? "true" : "false");
	appendStringInfo(&out, ", \"band_count\": %u, \"bits\": " UINT64_FORMAT ", \"bytes\": %u",
					 f->nbands, bits, (unsigned) VARSIZE(f));
	appendStringInfo(&out, ", \"inserted\": " UINT64_FORMAT ", ", f->inserted);
	append_live_keys(&out, live.estimate, live.low, live.high, bits);
	appendStringInfoString(&out, ", ");
	append_time(&out, "newest", f->newest);
	appendStringInfoString(&out, ", ");
	append_time(&out, "oldest_live", live.oldest_live);
	appendStringInfo(&out, ", \"truncated\": " UINT64_FORMAT ", \"bands\": [", f->truncated);
	for (int i = 0; i < f->nbands; i++)
	{
		const TbBand *b = &tb_bands(f)[i];
		bool		first = true;

		appendStringInfo(&out, "%s{\"lines\": " UINT64_FORMAT ", \"generations\": [",
						 i == 0 ? "" : ", ", b->nlines * f->lines_per_key);
		for (int s = 0; s < TB_MAX_SLOTS; s++)
		{
			const TbSlot *slot = &b->slot[s];

			if (slot->generation == TB_NO_GENERATION)
				continue;
			appendStringInfoString(&out, first ? "{" : ", {");
			append_time(&out, "start", slot->generation * f->length);
			appendStringInfo(&out, ", \"keys\": " UINT64_FORMAT ", \"live\": %s}",
							 tb_keys_of_bits(f, slot->bits, b->nlines),
							 tb_generation_is_live(f, slot->generation, at) ? "true" : "false");
			first = false;
		}
		appendStringInfoString(&out, "]}");
	}
	appendStringInfoChar(&out, ']');
	/* a carried value (value_carry.c): its own tlbf_info, under "carries" */
	if (carried != NULL)
		appendStringInfo(&out, ", \"carries\": %s",
						 DatumGetCString(DirectFunctionCall1(jsonb_out, tlbf_info_jsonb(carried, at))));
	appendStringInfoChar(&out, '}');
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(out.data));
}

Datum
tlbf_info(PG_FUNCTION_ARGS)
{
	TlbfValue	v = tlbf_arg_value(fcinfo, 0);
	TlbfTime	at = tlbf_time_arg(fcinfo, 1);

	if (v.v3 != NULL)
		PG_RETURN_DATUM(tlbf_info_jsonb_format3(v.v3, v.carried, at));
	PG_RETURN_DATUM(tlbf_info_jsonb(v.v2, at));
}

/*
 * A span in the largest unit that divides it exactly ("1 hour", "90
 * minutes"), else in seconds with their fraction ("1.5 seconds").  Spans
 * are positive; a day is 24 hours, as tlbf_create counts it.
 */
static void
append_span(StringInfo out, int64 span)
{
	static const struct
	{
		int64		usecs;
		const char *one;
		const char *many;
	}			units[] = {
		{USECS_PER_DAY, "day", "days"},
		{USECS_PER_HOUR, "hour", "hours"},
		{USECS_PER_MINUTE, "minute", "minutes"},
		{USECS_PER_SEC, "second", "seconds"},
	};
	char		fraction[8];
	int			digits;

	for (int i = 0; i < lengthof(units); i++)
	{
		if (span % units[i].usecs == 0)
		{
			int64		n = span / units[i].usecs;

			appendStringInfo(out, INT64_FORMAT " %s", n, n == 1 ? units[i].one : units[i].many);
			return;
		}
	}
	snprintf(fraction, sizeof(fraction), "%06d", (int) (span % USECS_PER_SEC));
	for (digits = 6; fraction[digits - 1] == '0'; digits--)
		;
	appendStringInfo(out, INT64_FORMAT ".%.*s seconds", span / USECS_PER_SEC, digits, fraction);
}

/*
 * "~N distinct live keys (LOW to HIGH)": the estimate of the distinct keys
 * the filter still finds, and the range it lies in (tlbf_stats), so that
 * nobody takes a count of insertions, or a guess, for an exact count.
 */
static void
append_live_keys_text(StringInfo out, double live_keys, double low, double high)
{
	double		estimate = round(live_keys);

	if (round(high) == 0)
	{
		appendStringInfoString(out, "no live keys");
		return;
	}
	appendStringInfo(out, "~%.0f distinct live %s (%.0f to %.0f)", estimate,
					 estimate == 1 ? "key" : "keys", round(low), round(high));
}

/* What the line says after the live keys, for every format. */
static void
append_summary_end(StringInfo out, Size bytes, TlbfTime newest, uint64 truncated)
{
	appendStringInfo(out, ", %zu bytes, ", bytes);
	if (newest == TLBF_NEVER)
		appendStringInfoString(out, "nothing added");
	else
		appendStringInfo(out, "newest %s", timestamptz_to_str(newest));
	if (truncated > 0)
		appendStringInfo(out, ", truncated " UINT64_FORMAT, truncated);
	appendStringInfoChar(out, ')');
}

/*
 * Of format 3: its generations a span in place of the paper's l, e.g.
 * tlbf(span 1 hour, format 3, k 8, 3 generations, ~5400 distinct live keys (5311 to 5490), 22592 bytes, newest ...)
 */
static text *
summary_format3(const TbFilter *f, const Tlbf *carried, TlbfTime at)
{
	TbLiveKeys	live;
	StringInfoData out;

	tb_live_keys(f, at, &live);
	initStringInfo(&out);
	appendStringInfoString(&out, "tlbf(span ");
	append_span(&out, f->span);
	appendStringInfo(&out, ", format 3, k %u, %u generations, ", f->k, f->generations);
	append_live_keys_text(&out, live.estimate, live.low, live.high);
	/* a carried value (value_carry.c): its size, and its live keys apart */
	if (carried != NULL)
	{
		TlbfStats	stats;

		tlbf_stats(carried, at, &stats);
		appendStringInfo(&out, ", carrying format %u of %u bytes with ", carried->version,
						 (unsigned) VARSIZE(carried));
		append_live_keys_text(&out, stats.live_keys, stats.live_keys_low, stats.live_keys_high);
	}
	append_summary_end(&out, VARSIZE(f), f->newest, f->truncated);
	return cstring_to_text_with_len(out.data, out.len);
}

/*
 * One line: span, k, l, distinct live keys at 'at', bytes, newest insertion
 * (in the session's TimeZone, hence STABLE), and dropped slices if any, e.g.
 * tlbf(span 10 minutes, k 10, l 25, ~376 distinct live keys (172 to 623), 3400 bytes, newest 1998-05-01 17:34:00+00)
 */
Datum
tlbf_summary(PG_FUNCTION_ARGS)
{
	TlbfValue	v = tlbf_arg_value(fcinfo, 0);
	Tlbf	   *f = v.v2;
	TlbfTime	at = tlbf_time_arg(fcinfo, 1);
	TlbfStats	stats;
	StringInfoData out;

	if (v.v3 != NULL)
		PG_RETURN_TEXT_P(summary_format3(v.v3, v.carried, at));
	tlbf_stats(f, at, &stats);
	initStringInfo(&out);
	appendStringInfoString(&out, "tlbf(span ");
	append_span(&out, f->span);
	appendStringInfo(&out, ", k %u, l %u, ", f->k, f->l);
	append_live_keys_text(&out, stats.live_keys, stats.live_keys_low, stats.live_keys_high);
	append_summary_end(&out, VARSIZE(f), f->newest, f->truncated);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(out.data, out.len));
}
