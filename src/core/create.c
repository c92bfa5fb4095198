/*-------------------------------------------------------------------------
 *
 * create.c
 *	  A new, empty filter: just the header.
 *
 * A new filter has no slices.  The first insertion creates the k slices it
 * writes to, sized from the capacity guess (see insert.c), exactly as after
 * a pause longer than the span; so an empty filter is small whatever its
 * capacity, and there is one code path for starting to fill a filter.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "sizing.h"
#include "tlbf.h"

void
tlbf_init(Tlbf *f, const TlbfParams *p)
{
	memset(f, 0, sizeof(Tlbf));
	f->magic = TLBF_MAGIC;
	f->version = TLBF_FORMAT_VERSION;
	f->hash_scheme = TLBF_HASH_XXH3_DOUBLE;
	f->k = (uint8_t) p->k;
	f->l = (uint16_t) p->l;
	f->seed = p->seed;
	f->span = p->span;
	f->error_rate = p->error_rate;
	f->capacity = p->capacity;
	f->newest = TLBF_NEVER;
	f->gen_started = TLBF_NEVER;
	f->target_gen = tlbf_clamp_target_gen((double) p->capacity / p->l);
}

/* Bytes of the filter once its first k slices exist. */
size_t
tlbf_first_generation_bytes(const TlbfParams *p)
{
	double		target_gen = tlbf_clamp_target_gen((double) p->capacity / p->l);
	uint64_t	words = tlbf_words_for_capacity(p->k * target_gen);

	return tlbf_layout_bytes(p->k, (uint64_t) p->k * words);
}
