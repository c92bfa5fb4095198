/*
 * fuzz_union.c
 *	  tlbf_union(a, b): the input holds two values.  Its first four bytes,
 *	  little-endian, give the length of the first in their low 24 bits
 *	  (modulo what is left) and the size cap in the high 8, as a fraction of
 *	  the union's size (255: no truncation); the second value is the rest.
 *	  Each is validated; if both are valid and may be merged, the union is
 *	  built and checked as tlbf_merge_values builds it (fuzz_merge.h), then
 *	  used as the SQL functions would use it (fuzz_exercise.h).
 */
#include "fuzz_common.h"
#include "fuzz_exercise.h"
#include "fuzz_merge.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	FuzzInput	in = {data, len, 0};
	uint32_t	word;
	size_t		rest;
	size_t		len_a;
	size_t		size_a;
	size_t		size_b;
	Tlbf	   *a;
	Tlbf	   *b;

	if (len < 4)
		return 0;
	word = fuzz_u32(&in);
	rest = len - 4;
	len_a = (word & 0xFFFFFF) % (rest + 1);
	a = fuzz_decode(data + 4, len_a, &size_a);
	b = fuzz_decode(data + 4 + len_a, rest - len_a, &size_b);

	if (a != NULL && b != NULL)
	{
		const char *differs = tlbf_merge_mismatch(a, b);

		FUZZ_CHECK((differs == NULL) == (tlbf_merge_mismatch(b, a) == NULL),
				   "filters that merge one way merge the other");
		if (differs == NULL)
		{
			const Tlbf *inputs[2] = {a, b};
			size_t		bytes = tlbf_merge_bytes(inputs, 2);
			size_t		cap = sizeof(Tlbf) + (bytes - sizeof(Tlbf)) * (word >> 24) / 255;
			size_t		size;
			bool		may_lose;
			Tlbf	   *out = fuzz_merge_values(inputs, 2, cap, &size, &may_lose);

			fuzz_exercise(out, size);
			free(out);
		}
	}
	free(a);
	free(b);
	return 0;
}
