/*-------------------------------------------------------------------------
 *
 * tb_validate.c
 *	  Checking a format 3 buffer from outside before any other code reads
 *	  it.  After tb_validate() succeeds every band and line lies inside the
 *	  buffer, every byte outside the lines is defined as tb_format.h says,
 *	  and the rest of the core's invariants hold: each slot holds nothing or
 *	  a generation of its own slot among the last 'slots' up to the newest
 *	  time's (so two never share a slot).
 *	  (The lines are not read: any bits are a valid, if wrong, filter.)
 *
 *-------------------------------------------------------------------------
 */
#include "tb.h"

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
validate_header(const TbFilter *f, TlbfProblem *problem)
{
	TlbfKeys	keys = tb_keys_of(f);

	if (f->magic != TLBF_MAGIC)
		return fail(problem, "Not a tlbf value (bad magic number)");
	if (f->version != TB_FORMAT_VERSION)
		return fail(problem, "Unknown tlbf format version");
	if (f->hash_scheme != TLBF_HASH_XXH3_DOUBLE)
		return fail(problem, "Unknown hash scheme");
	if (f->generations != 1 && f->generations != 3 && f->generations != 7)
		return fail(problem, "Generations per span are out of range");
	if (f->lines_per_key != 1 && f->lines_per_key != 2 && f->lines_per_key != 4)
		return fail(problem, "Lines per key are out of range");
	if (f->k < 1 || f->k > TB_MAX_K)
		return fail(problem, "Bits per key are out of range");
	if (f->nbands > TB_MAX_BANDS)
		return fail(problem, "Too many bands");
	/* (a union takes the seed of a filter that took keys: see validate.c) */
	if (f->nbands != 0 && f->inserted == 0)
		return fail(problem, "Bands without insertions");
	if (f->span < f->generations || f->span > TLBF_MAX_SPAN)
		return fail(problem, "Span is out of range");
	if (f->length != (f->span + f->generations - 1) / f->generations)
		return fail(problem, "Generation length does not match the span");
	if (!(f->error_rate >= TLBF_MIN_ERROR_RATE && f->error_rate <= TLBF_MAX_ERROR_RATE))
		return fail(problem, "Error rate is out of range");
	if (!(f->bits_per_key >= TB_MIN_BITS_PER_KEY && f->bits_per_key <= TB_MAX_BITS_PER_KEY))
		return fail(problem, "Bits per key are out of range");
	if (f->capacity > TLBF_MAX_CAPACITY)
		return fail(problem, "Capacity is out of range");
	if ((f->flags & ~(TB_DECLARED | TB_CARRIES)) != 0 ||
		((f->flags & TB_DECLARED) && f->capacity == 0))
		return fail(problem, "Unknown flags");
	if (f->newest != TLBF_NEVER && !valid_time(f->newest))
		return fail(problem, "Newest time is out of range");
	if (!tlbf_keys_check(keys))
		return fail(problem, "Key kinds are out of range");
	return true;
}

static bool
validate_slot(const TbFilter *f, int s, const TbSlot *slot, uint64_t nlines,
			  TlbfProblem *problem)
{
	if (slot->generation == TB_NO_GENERATION)
	{
		if (slot->started != 0 || slot->bits != 0)
			return fail(problem, "An empty slot has a start time or bits set");
		return true;
	}
	if (s >= tb_slots(f) || f->newest == TLBF_NEVER)
		return fail(problem, "A slot holds a generation it cannot");
	if (slot->generation < tb_generation_of(f->newest, f->length) - f->generations ||
		slot->generation > tb_generation_of(f->newest, f->length) ||
		tb_slot_of(f, slot->generation) != s)
		return fail(problem, "A slot holds a generation outside the span or of another slot");
	if (!(valid_time(slot->started) && slot->started <= f->newest) ||
		tb_generation_of(slot->started, f->length) != slot->generation)
		return fail(problem, "A slot's start time lies outside its generation");
	if (slot->bits > nlines * 64 * (uint64_t) tb_piece_words(f))
		return fail(problem, "A slot has more bits set than its pieces hold");
	return true;
}

bool
tb_validate(const void *buffer, size_t len, TlbfProblem *problem)
{
	const TbFilter *f = buffer;
	const char *bytes = buffer;
	uint64_t	groups = 0;

	if (len < tb_lines_offset(0))
		return fail(problem, "tlbf value is too short");
	if (!validate_header(f, problem))
		return false;
	if (len < tb_lines_offset(f->nbands))
		return fail(problem, "tlbf value is too short for its directory");
	for (int i = 0; i < f->nbands; i++)
	{
		const TbBand *b = &tb_bands(f)[i];

		if (b->nlines < 1 || b->nlines > TB_MAX_GROUP_LINES)
			return fail(problem, "A band's size is out of range");
		for (int s = 0; s < TB_MAX_SLOTS; s++)
			if (!validate_slot(f, s, &b->slot[s], b->nlines, problem))
				return false;
		groups += b->nlines;
		if (groups * tb_group_words(f) * sizeof(uint64_t) > ((size_t) 1 << 30))
			return fail(problem, "tlbf value is too large");
	}
	for (size_t i = sizeof(TbFilter) + (size_t) f->nbands * sizeof(TbBand);
		 i < tb_lines_offset(f->nbands); i++)
		if (bytes[i] != 0)
			return fail(problem, "Padding bytes are not zero");
	/* a value that carries another goes on past its bands: the glue reads the rest */
	if ((f->flags & TB_CARRIES) ?
		len <= ((tb_layout_bytes(f, f->nbands, groups) + 7) & ~(size_t) 7) :
		len != tb_layout_bytes(f, f->nbands, groups))
		return fail(problem, "tlbf value length does not match its bands");
	return true;
}
