/*-------------------------------------------------------------------------
 *
 * merge.c
 *	  The union of two filters.
 *
 * Bits of two filters cannot be OR-ed slice by slice: their slices differ
 * in size, age and hash function, and a slice holding both inputs' keys
 * would be far past its capacity.  Instead the union lists the slices of
 * the filter with the newer insertions, then the other filter's slices.
 * Each input's windows of k consecutive slices stay consecutive, with their
 * bits and timestamps, so every key either input finds, the union finds at
 * any time (no false negatives).  The price is that an absent key now meets
 * both filters' windows: the union's false-positive rate is about the sum
 * of the inputs'.  New insertions go to the front filter's newest slices;
 * the other filter's slices simply age out.
 *
 * Filters with different k merge with the smaller k: a run of k hits
 * contains a run of any smaller length, so nothing is lost, but the filter
 * with the larger k then answers with fewer hash functions.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "sizing.h"
#include "tlbf.h"

/* NULL when a and b can be merged, else what differs. */
const char *
tlbf_merge_mismatch(const Tlbf *a, const Tlbf *b)
{
	if (a->span != b->span)
		return "span";
	if (a->hash_scheme != b->hash_scheme)
		return "hash scheme";
	if (a->seed != b->seed)
		return "hash seed";
	return NULL;
}

size_t
tlbf_merge_bytes(const Tlbf *a, const Tlbf *b)
{
	return tlbf_layout_bytes((uint64_t) a->nslices + b->nslices,
							 tlbf_total_words(a) + tlbf_total_words(b));
}

/*
 * Write the union of a and b to 'out', which holds tlbf_merge_bytes(a, b)
 * bytes and overlaps neither.  The inputs must pass tlbf_merge_mismatch().
 */
void
tlbf_merge(Tlbf *out, const Tlbf *a, const Tlbf *b)
{
	const Tlbf *front = b->newest > a->newest ? b : a;
	const Tlbf *back = front == a ? b : a;
	const Tlbf *fewer_hashes = b->k < a->k ? b : a;
	uint32_t	front_words = (uint32_t) tlbf_total_words(front);
	TlbfSlice  *s;

	memcpy(out, front, sizeof(Tlbf));
	out->k = fewer_hashes->k;
	out->l = fewer_hashes->l;
	out->error_rate = fewer_hashes->error_rate;
	out->nslices = front->nslices + back->nslices;
	out->inserted = a->inserted + b->inserted;
	out->truncated = a->truncated + b->truncated;

	s = tlbf_slices(out);
	memcpy(s, tlbf_slices(front), front->nslices * sizeof(TlbfSlice));
	memcpy(s + front->nslices, tlbf_slices(back), back->nslices * sizeof(TlbfSlice));
	for (uint32_t i = front->nslices; i < out->nslices; i++)
		s[i].offset += front_words;
	memcpy(tlbf_words(out), tlbf_words(front), front_words * sizeof(uint64_t));
	memcpy(tlbf_words(out) + front_words, tlbf_words(back),
		   tlbf_total_words(back) * sizeof(uint64_t));

	/*
	 * With a smaller k the generation counts new bits in fewer slices, and
	 * the front slices' plan must fit their positions under the new k.
	 */
	if (out->k < front->k && out->nslices > 0)
	{
		uint64_t	limit = tlbf_generation_size(out);

		out->gen_size = out->gen_size / front->k * out->k;
		out->gen_left = out->gen_left / front->k * out->k;
		if (out->gen_left > limit)
			out->gen_left = limit;
		if (out->gen_left > out->gen_size)
			out->gen_left = out->gen_size;
	}
}
