/*-------------------------------------------------------------------------
 *
 * type_io.c
 *	  Text and binary input and output of the tlbf type.
 *
 * Both forms carry the value's bytes after the varlena length word, the
 * text form in base64.  Output is a plain copy, since the value is its own
 * serialization; input validates every field before the value is used.
 *
 * The casts to and from bytea (1.4) carry the same bytes as the binary
 * form: a value's bytea is what tlbf_send writes, and a bytea becomes a
 * value only as tlbf_recv would accept it, with the same SQLSTATE.
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"
#include "filter_args.h"
#include "type_io.h"

#include "common/base64.h"
#include "libpq/pqformat.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(tlbf_in);
PG_FUNCTION_INFO_V1(tlbf_out);
PG_FUNCTION_INFO_V1(tlbf_recv);
PG_FUNCTION_INFO_V1(tlbf_send);
PG_FUNCTION_INFO_V1(tlbf_to_bytea);
PG_FUNCTION_INFO_V1(tlbf_from_bytea);

/*
 * The bytes a base64 text input of type 'type_name' (tlbf, tlbf_agg_state)
 * holds, in a new buffer; ERROR 22P02 if it is not base64.
 */
char *
tlbf_base64_decode(const char *text, int *decoded_len, const char *type_name,
				   Node *escontext)
{
	size_t		len = strlen(text);

	/* every 4 characters give 3 bytes (pg_b64_dec_len would overflow an int) */
	size_t		capacity = len / 4 * 3 + 3;
	char	   *decoded;

	if (len > (size_t) INT_MAX || capacity > MaxAllocSize - VARHDRSZ)
	{
		errsave(escontext,
				errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				errmsg("invalid input syntax for type %s", type_name),
				errdetail("The value is too large."));
		return NULL;
	}
	decoded = palloc(capacity);
	*decoded_len = pg_b64_decode(text, (int) len, (void *) decoded, (int) capacity);
	if (*decoded_len < 0)
	{
		errsave(escontext,
				errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				errmsg("invalid input syntax for type %s", type_name),
				errdetail("A %s value is written in base64.", type_name));
		return NULL;
	}
	return decoded;
}

/* The text output of a value's bytes: base64. */
char *
tlbf_base64_encode(const char *data, int len)
{
	int			text_len = pg_b64_enc_len(len);
	char	   *text = palloc(text_len + 1);
	int			written = pg_b64_encode((const void *) data, len, text, text_len);

	if (written < 0)
		elog(ERROR, "could not encode a value in base64");
	text[written] = '\0';
	return text;
}

Datum
tlbf_in(PG_FUNCTION_ARGS)
{
	int			len;
	char	   *decoded = tlbf_base64_decode(PG_GETARG_CSTRING(0), &len, "tlbf",
											 fcinfo->context);
	struct varlena *f;

	/* (bad input is reported softly where the caller asks: pg_input_is_valid) */
	if (decoded == NULL)
		return (Datum) 0;
	f = tlbf_validated_copy_any(decoded, len, ERRCODE_INVALID_TEXT_REPRESENTATION,
								TLBF_VALUE_TEXT_INPUT, fcinfo->context);
	if (f == NULL)
		return (Datum) 0;
	PG_RETURN_POINTER(f);
}

/* A value argument of any format, validated: the forms below are its bytes. */
static struct varlena *
value_arg(FunctionCallInfo fcinfo, int argno)
{
	TlbfValue	v = tlbf_arg_value(fcinfo, argno);

	return v.v2 != NULL ? (struct varlena *) v.v2 : (struct varlena *) v.v3;
}

Datum
tlbf_out(PG_FUNCTION_ARGS)
{
	struct varlena *f = value_arg(fcinfo, 0);

	PG_RETURN_CSTRING(tlbf_base64_encode(VARDATA(f), VARSIZE(f) - VARHDRSZ));
}

Datum
tlbf_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int			len = buf->len - buf->cursor;
	const char *data = pq_getmsgbytes(buf, len);

	PG_RETURN_POINTER(tlbf_validated_copy_any(data, len,
											  ERRCODE_INVALID_BINARY_REPRESENTATION,
											  TLBF_VALUE_BINARY_INPUT, NULL));
}

Datum
tlbf_send(PG_FUNCTION_ARGS)
{
	struct varlena *f = value_arg(fcinfo, 0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbytes(&buf, VARDATA(f), VARSIZE(f) - VARHDRSZ);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* CAST (tlbf AS bytea): the value's bytes, as binary output sends them. */
Datum
tlbf_to_bytea(PG_FUNCTION_ARGS)
{
	struct varlena *f = value_arg(fcinfo, 0);
	Size		len = VARSIZE(f) - VARHDRSZ;
	bytea	   *result = palloc(VARHDRSZ + len);

	SET_VARSIZE(result, VARHDRSZ + len);
	memcpy(VARDATA(result), VARDATA(f), len);
	PG_RETURN_BYTEA_P(result);
}

/*
 * CAST (bytea AS tlbf): bytes that binary input would accept, checked as it
 * checks them (22P03 otherwise).
 */
Datum
tlbf_from_bytea(PG_FUNCTION_ARGS)
{
	bytea	   *bytes = PG_GETARG_BYTEA_PP(0);

	PG_RETURN_POINTER(tlbf_validated_copy_any(VARDATA_ANY(bytes), VARSIZE_ANY_EXHDR(bytes),
											  ERRCODE_INVALID_BINARY_REPRESENTATION,
											  TLBF_VALUE_BYTEA_CAST, NULL));
}
