/*-------------------------------------------------------------------------
 *
 * merge.c
 *	  The union of filters.
 *
 * Bits of two filters cannot be OR-ed slice by slice: their slices differ
 * in size, age and hash function, and a slice holding both filters' keys
 * would be far past its capacity.  Instead the union lists the slices of
 * the filter with the newest insertion, then the other filters' slices, in
 * the order given.  Each input's windows of k consecutive slices stay
 * consecutive, with their bits and timestamps, so every key any input
 * finds, the union finds, at any time (no false negatives).  The price is
 * that an absent key now meets every input's windows: the union's
 * false-positive rate is about the sum of the inputs'.  New insertions go
 * to the front filter's newest slices; the other slices simply age out.
 *
 * The front filter is the newest that still has slices: a filter whose
 * slices were all retired holds no live key, and its newer insertion time
 * would not match the union's k newest slices.  If the union would have
 * more than TLBF_MAX_SLICES slices, the oldest go, as under a size cap
 * (counted in 'truncated').
 *
 * Filters with different k merge with the smallest k: a run of k hits
 * contains a run of any smaller length, so nothing is lost, but a filter
 * with a larger k then answers with fewer hash functions.  The union takes
 * its error rate and l from the filter with the smallest k.
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
	/* a filter that never took a key hashed none: its seed does not matter */
	if (a->seed != b->seed && a->inserted > 0 && b->inserted > 0)
		return "hash seed";
	{
		const Tlbf *pair[2] = {a, b};
		TlbfKeys	keys;

		if (!tlbf_merge_keys(pair, 2, &keys))
			return "key kind";
	}
	return NULL;
}

size_t
tlbf_merge_bytes(const Tlbf *const *inputs, int n)
{
	uint64_t	nslices = 0;
	uint64_t	words = 0;

	for (int i = 0; i < n; i++)
	{
		nslices += inputs[i]->nslices;
		words += tlbf_total_words(inputs[i]);
	}
	return tlbf_layout_bytes(nslices, words);
}

/* Append f's directory and bits behind what 'out' already holds. */
static void
append_slices(Tlbf *out, const Tlbf *f, uint32_t *nslices, uint64_t *nwords,
			  uint64_t total_slices)
{
	TlbfSlice  *s = tlbf_slices(out) + *nslices;
	uint64_t   *bits = (uint64_t *) ((char *) out + tlbf_layout_bytes(total_slices, 0));

	const char *from = (const char *) tlbf_words(f);
	char	   *to = (char *) (bits + *nwords);
	size_t		bytes = tlbf_total_words(f) * sizeof(uint64_t);

	memcpy(s, tlbf_slices(f), f->nslices * sizeof(TlbfSlice));
	for (uint32_t i = 0; i < f->nslices; i++)
		s[i].offset += (uint32_t) *nwords;
	/* in pieces, each followed by a chance to cancel */
	for (size_t done = 0; done < bytes; done += TLBF_CHECK_EVERY_BYTES)
	{
		size_t		piece = bytes - done < TLBF_CHECK_EVERY_BYTES ? bytes - done : TLBF_CHECK_EVERY_BYTES;

		memcpy(to + done, from + done, piece);
		tlbf_check_interrupts();
	}
	*nslices += f->nslices;
	*nwords += tlbf_total_words(f);
}

/*
 * Write the union of inputs[0..n-1] (n >= 1) to 'out', which holds
 * tlbf_merge_bytes(inputs, n) bytes and overlaps none of them.  Every input
 * must pass tlbf_merge_mismatch() against the first.
 */
void
tlbf_merge(Tlbf *out, const Tlbf *const *inputs, int n)
{
	int			front_at = 0;
	const Tlbf *front;
	const Tlbf *fewest_hashes = inputs[0];
	uint64_t	total_slices = 0;
	uint32_t	nslices = 0;
	uint64_t	nwords = 0;

	for (int i = 1; i < n; i++)
	{
		bool		has_slices = inputs[i]->nslices > 0;
		bool		front_has_slices = inputs[front_at]->nslices > 0;

		if (has_slices > front_has_slices ||
			(has_slices == front_has_slices &&
			 inputs[i]->newest > inputs[front_at]->newest))
			front_at = i;
		if (inputs[i]->k < fewest_hashes->k)
			fewest_hashes = inputs[i];
	}
	front = inputs[front_at];
	for (int i = 0; i < n; i++)
		total_slices += inputs[i]->nslices;

	memcpy(out, front, sizeof(Tlbf));
	out->k = fewest_hashes->k;
	out->l = fewest_hashes->l;
	out->error_rate = fewest_hashes->error_rate;
	out->nslices = (uint32_t) total_slices;
	out->inserted = 0;
	out->truncated = 0;
	{
		TlbfKeys	keys;

		/* filters of different kinds are refused first; if not, trust none */
		if (!tlbf_merge_keys(inputs, n, &keys))
		{
			keys.fields = 0;
			keys.kinds = 0;
			keys.tag = 0;
		}
		out->key_fields = keys.fields;
		out->key_kinds = keys.kinds;
		for (int i = 0; i < n; i++)
			if (inputs[i]->inserted > 0)
				out->seed = inputs[i]->seed;	/* all the same */
		out->version = keys.fields > 0 ? TLBF_FORMAT_VERSION : front->version;
	}
	for (int i = 0; i < n; i++)
	{
		out->inserted = tlbf_add_saturating(out->inserted, inputs[i]->inserted);
		out->truncated = tlbf_add_saturating(out->truncated, inputs[i]->truncated);
	}

	append_slices(out, front, &nslices, &nwords, total_slices);
	for (int i = 0; i < n; i++)
		if (i != front_at)
			append_slices(out, inputs[i], &nslices, &nwords, total_slices);

	/*
	 * With a smaller k the generation counts the load of fewer slices, and
	 * the front slices' plan must fit their positions under the new k.  The
	 * size is rounded up: a valid value may plan less than k units, and a
	 * plan of none is refused as slices without insertions.
	 */
	if (out->k < front->k && out->nslices > 0)
	{
		uint64_t	limit = tlbf_generation_size(out);

		out->gen_size = (out->gen_size + front->k - 1) / front->k * out->k;
		out->gen_left = out->gen_left / front->k * out->k;
		if (out->gen_left > limit)
			out->gen_left = limit;
		if (out->gen_left > out->gen_size)
			out->gen_left = out->gen_size;
	}
	if (out->nslices > TLBF_MAX_SLICES)
		tlbf_truncate_to(out, SIZE_MAX, out->newest);
}
