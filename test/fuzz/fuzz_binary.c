/*
 * fuzz_binary.c
 *	  The input is a value's binary form, as tlbf_recv (and COPY ... FORMAT
 *	  binary) receives it: the payload without the length word.  It is
 *	  copied and validated as the glue does; a valid value is then used as
 *	  every SQL function would use it (fuzz_exercise.h).
 *
 *	  The same bytes also take tlbf_retirable's path, which fetches only
 *	  the header and the directory the header announces from a stored value
 *	  and checks them against the value's full length.
 */
#include "fuzz_common.h"
#include "fuzz_exercise.h"

/* scalar_functions.c, directory_of(): the prefix a TOASTed value would give. */
static void
directory_path(const uint8_t *data, size_t len, bool whole_valid)
{
	size_t		size;
	Tlbf	   *whole = fuzz_copy_value(data, len, &size);
	size_t		wanted = size < sizeof(Tlbf) ? size : sizeof(Tlbf);
	Tlbf	   *prefix;
	TlbfProblem problem;
	bool		valid;

	if (wanted == sizeof(Tlbf))
	{
		uint32_t	nslices = whole->nslices < TLBF_MAX_SLICES ? whole->nslices : TLBF_MAX_SLICES;
		size_t		directory = tlbf_layout_bytes(nslices, 0);

		wanted = size < directory ? size : directory;
	}
	prefix = fuzz_clone(whole, wanted);
	free(whole);

	valid = tlbf_validate_directory(prefix, wanted, size, &problem);
	FUZZ_CHECK(valid || !whole_valid, "the directory of a valid value validates");
	if (valid)
	{
		TlbfTime	base = fuzz_base_time(prefix);

		/* tlbf_retirable reads only what it was given */
		FUZZ_CHECK(tlbf_retirable_slices(prefix, base) <= prefix->nslices &&
				   tlbf_retirable_slices(prefix, fuzz_add_time(base, prefix->span + 1)) <= prefix->nslices,
				   "no more retirable slices than slices");
	}
	free(prefix);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	size_t		size;
	Tlbf	   *f = fuzz_decode(data, len, &size);

	directory_path(data, len, f != NULL);
	if (f == NULL)
		return 0;
	fuzz_exercise(f, size);
	free(f);
	return 0;
}
