/*-------------------------------------------------------------------------
 *
 * validate.c
 *	  Checking a buffer that came from outside before any other code reads
 *	  it: text or binary input, an aggregate's serialized state, a value
 *	  from disk.  After tlbf_validate() succeeds, every offset and length in
 *	  the buffer stays inside it and every invariant the rest of the core
 *	  relies on holds.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "sizing.h"
#include "tlbf.h"

/* see tlbf.h: set by the extension, called by merge, validation, statistics */
void		(*tlbf_interrupt_check) (void) = NULL;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the tlbf format is little-endian; this host would need byte swapping"
#endif

static bool
fail(TlbfProblem *problem, const char *message)
{
	problem->message = message;
	problem->hint = NULL;
	return false;
}

static bool
valid_time(TlbfTime t)
{
	return t >= TLBF_TIME_MIN && t < TLBF_TIME_END;
}

static bool
validate_header(const Tlbf *f, TlbfProblem *problem)
{
	if (f->magic != TLBF_MAGIC)
		return fail(problem, "Not a tlbf value (bad magic number)");
	if (f->version != TLBF_FORMAT_VERSION && f->version != TLBF_FORMAT_VERSION_1)
		return fail(problem, "Unknown tlbf format version");
	if (f->hash_scheme != TLBF_HASH_XXH3_DOUBLE)
		return fail(problem, "Unknown hash scheme");
	if (!tlbf_keys_valid(f))
		return fail(problem, "Key kinds are out of range");
	if (f->k < 1 || f->k > TLBF_MAX_K)
		return fail(problem, "Parameter k is out of range");
	if (f->l < 1 || f->l > TLBF_MAX_L)
		return fail(problem, "Parameter l is out of range");
	if (f->span <= 0 || f->span > TLBF_MAX_SPAN)
		return fail(problem, "Span is out of range");
	if (!(f->error_rate >= TLBF_MIN_ERROR_RATE && f->error_rate <= TLBF_MAX_ERROR_RATE))
		return fail(problem, "Error rate is out of range");
	if (f->capacity < 1 || f->capacity > TLBF_MAX_CAPACITY)
		return fail(problem, "Capacity is out of range");
	if (!(f->target_gen >= TLBF_MIN_TARGET_GEN && f->target_gen <= TLBF_MAX_TARGET_GEN))
		return fail(problem, "Target generation size is out of range");
	if (f->nslices > TLBF_MAX_SLICES)
		return fail(problem, "Too many slices");
	if (f->nslices != 0 && f->nslices < f->k)
		return fail(problem, "Fewer than k slices");
	if (f->newest != TLBF_NEVER && !valid_time(f->newest))
		return fail(problem, "Newest insertion time is out of range");
	if (f->gen_started != TLBF_NEVER &&
		!(valid_time(f->gen_started) && f->gen_started <= f->newest))
		return fail(problem, "Generation start time is out of order");
	if (f->gen_left > f->gen_size || f->gen_size > TLBF_MAX_GEN_SIZE)
		return fail(problem, "Generation counters are inconsistent");
	/*
	 * (inserted 0 with slices: a union would take another filter's seed
	 * for them, its seed "not mattering", and miss what their bits hold)
	 */
	if (f->nslices != 0 && (f->newest == TLBF_NEVER || f->gen_size == 0 || f->inserted == 0))
		return fail(problem, "Slices without insertions");
	if (f->nslices != 0 && f->gen_started == TLBF_NEVER)
		return fail(problem, "Slices without a generation start time");
	return true;
}

static bool
validate_slice(const Tlbf *f, uint32_t i, const TlbfSlice *s, uint64_t offset,
			   TlbfProblem *problem)
{
	if (s->offset != offset)
		return fail(problem, "Slice offsets are not contiguous");
	if (s->nwords < TLBF_MIN_SLICE_WORDS || s->nwords > TLBF_MAX_SLICE_WORDS)
		return fail(problem, "Slice size is out of range");
	if (s->hash_index >= TLBF_MAX_K)
		return fail(problem, "Slice hash index is out of range");
	if (s->load_weight < TLBF_MIN_LOAD_WEIGHT || s->load_weight > TLBF_MAX_LOAD_WEIGHT)
		return fail(problem, "Slice load weight is out of range");
	if (s->bits_set > (uint64_t) s->nwords * 64 || s->bits_set > f->inserted)
		return fail(problem, "Slice has more bits set than possible");
	if (s->updated_at != TLBF_NEVER &&
		!(valid_time(s->updated_at) && s->updated_at <= f->newest))
		return fail(problem, "Slice time is out of order");
	/* the k newest slices are written together */
	if (i < f->k && s->updated_at != f->newest)
		return fail(problem, "Newest slices disagree with the newest time");
	return true;
}

/*
 * Check the header and the slice directory of a value of 'len' bytes, of
 * which the first 'prefix_len' are at hand (at least the header and the
 * directory, or the check fails).  Enough to read the slices' sizes and
 * times without fetching the bits of a large TOASTed value.
 */
bool
tlbf_validate_directory(const void *prefix, size_t prefix_len, size_t len,
						TlbfProblem *problem)
{
	const Tlbf *f = prefix;
	const TlbfSlice *s;
	uint64_t	words = 0;

	if (len < sizeof(Tlbf) || prefix_len < sizeof(Tlbf))
		return fail(problem, "Value is too short for a tlbf header");
	if (!validate_header(f, problem))
		return false;
	if ((len - sizeof(Tlbf)) / sizeof(TlbfSlice) < f->nslices ||
		(prefix_len - sizeof(Tlbf)) / sizeof(TlbfSlice) < f->nslices)
		return fail(problem, "Value is too short for its slice directory");

	s = tlbf_slices(f);
	for (uint32_t i = 0; i < f->nslices; i++)
	{
		if (!validate_slice(f, i, &s[i], words, problem))
			return false;
		words += s[i].nwords;
		if (i % TLBF_CHECK_EVERY_SLICES == 0)
			tlbf_check_interrupts();
	}
	if (len != tlbf_layout_bytes(f->nslices, words))
		return fail(problem, "Value length does not match its slices");
	return true;
}

/* Check a whole value: every field, every length. */
bool
tlbf_validate(const void *buffer, size_t len, TlbfProblem *problem)
{
	return tlbf_validate_directory(buffer, len, len, problem);
}
