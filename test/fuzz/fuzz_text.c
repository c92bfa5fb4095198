/*
 * fuzz_text.c
 *	  The input is a value's text form, as tlbf_in receives it: a C string
 *	  (so it ends at the first NUL byte), decoded whole with PostgreSQL's own
 *	  pg_b64_decode into a buffer of pg_b64_dec_len bytes, then copied behind
 *	  a length word and validated.  A valid value is used as the SQL
 *	  functions would (fuzz_exercise.h), and must come back unchanged
 *	  through tlbf_out's encoding.
 */
#include "fuzz_common.h"
#include "fuzz_exercise.h"

#include "common/base64.h"

/* tlbf_out then tlbf_in: the same payload bytes. */
static void
check_round_trip(const char *payload, int len)
{
	int			text_len = pg_b64_enc_len(len);
	char	   *text = fuzz_malloc(text_len);
	int			written = pg_b64_encode(payload, len, text, text_len);
	char	   *decoded;
	int			decoded_len;

	FUZZ_CHECK(written >= 0, "a valid value encodes");
	decoded = fuzz_malloc(pg_b64_dec_len(written));
	decoded_len = pg_b64_decode(text, written, decoded, pg_b64_dec_len(written));
	FUZZ_CHECK(decoded_len == len && memcmp(decoded, payload, len) == 0,
			   "text output reads back as the same value");
	free(decoded);
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const char *text = (const char *) data;
	size_t		text_len = strnlen(text, len);
	int			room;
	char	   *decoded;
	int			decoded_len;
	size_t		size;
	Tlbf	   *f;

	/* tlbf_in refuses longer text before decoding; fuzz inputs are short */
	if (text_len > INT32_MAX / 4)
		return 0;
	room = pg_b64_dec_len((int) text_len);
	decoded = fuzz_malloc(room);
	decoded_len = pg_b64_decode(text, (int) text_len, decoded, room);
	if (decoded_len < 0)
	{
		free(decoded);			/* not base64: tlbf_in raises 22P02 */
		return 0;
	}
	FUZZ_CHECK(decoded_len <= room, "the decoder keeps to its buffer");

	f = fuzz_decode((const uint8_t *) decoded, (size_t) decoded_len, &size);
	if (f != NULL)
	{
		check_round_trip(decoded, decoded_len);
		fuzz_exercise(f, size);
		free(f);
	}
	free(decoded);
	return 0;
}
