/*-------------------------------------------------------------------------
 *
 * query.c
 *	  Is a key in the filter?  (The paper's Algorithm 1 with its expiry
 *	  check.)
 *
 * A key is present when k consecutive live slices all have its bit set.
 * The search starts with the oldest window (slices n-k .. n-1) and walks
 * towards the old end while bits are set.  A miss at slice i rules out
 * every window containing i, so the search jumps to the window ending just
 * below it (i-k .. i-1), where the c hits just found above i-k still count.
 * Every slice is read at most once.
 *
 * 'window' is the span, or a shorter one for a query that only trusts
 * slices written recently: a slice counts only if its last insertion is at
 * or after at - window.  A key added at time t sits in k consecutive slices
 * whose timestamps are all >= t, so it is found for any at <= t + window.
 *
 *-------------------------------------------------------------------------
 */
#include "bits.h"
#include "tlbf.h"

bool
tlbf_query(const Tlbf *f, TlbfHash hash, TlbfTime at, int64_t window)
{
	const TlbfSlice *s = tlbf_slices(f);
	const uint64_t *words = tlbf_words(f);
	TlbfTime	oldest_live = at - window;
	int			k = f->k;
	int			i = (int) f->nslices - k;
	int			found_above = 0;	/* p: hits carried from the last window */
	int			found = 0;			/* c: consecutive hits from i upwards */

	while (i >= 0)
	{
		if (s[i].updated_at >= oldest_live && tlbf_test_bit(words, &s[i], hash))
		{
			found++;
			i++;
			if (found_above + found == k)
				return true;
		}
		else
		{
			i -= k;
			found_above = found;
			found = 0;
		}
	}
	return false;
}
