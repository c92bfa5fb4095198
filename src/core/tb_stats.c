/*-------------------------------------------------------------------------
 *
 * tb_stats.c
 *	  How many distinct keys a format 3 filter still finds, and the range
 *	  that count lies in (tlbf_info, tlbf_summary).
 *
 * A key sets the same bits of its piece in every slot (tb_key_masks reads
 * the hash alone), so the OR of a group's pieces of the live generations
 * holds the bits of their distinct keys: inverted as a slot's are
 * (tb_keys_estimate), it counts a key once however many generations it
 * came back in.  The bits set vary about their expectation (tb_bits_sd);
 * two standard deviations either side, inverted the same way, give the
 * range.  Bands (the rate moved) place a key apart, so their counts add:
 * the distinct keys are at least the largest band's low and at most the
 * sum of their highs.
 *
 * It reads every live piece once: a filter of 75 MB takes tens of
 * milliseconds.  No allocation, no error.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "tb_bits.h"

/* Does a query over the span at 'at' ask this generation? */
bool
tb_generation_is_live(const TbFilter *f, int64_t generation, TlbfTime at)
{
	return tb_asks(f, generation, at, f->span);
}

/* Bits set in the OR of the live pieces (slots in 'live') of every group. */
static uint64_t
live_bits(const TbFilter *f, const uint64_t *band, uint64_t nlines, unsigned live)
{
	int			slots = tb_slots(f);
	int			piece = tb_piece_words(f);
	uint64_t	set = 0;

	for (uint64_t g = 0; g < nlines; g++)
	{
		const uint64_t *group = band + g * (uint64_t) slots * piece;

		for (int w = 0; w < piece; w++)
		{
			uint64_t	word = 0;

			for (int s = 0; s < slots; s++)
				if (live & (1u << s))
					word |= group[s * piece + w];
			set += (uint64_t) tb_popcount(word);
		}
	}
	return set;
}

void
tb_live_keys(const TbFilter *f, TlbfTime at, TbLiveKeys *out)
{
	const TbBand *b = tb_bands(f);
	double		piece_bits = 64.0 * tb_piece_words(f);

	out->estimate = out->low = out->high = 0.0;
	out->oldest_live = TLBF_NEVER;
	for (int i = 0; i < f->nbands; i++)
	{
		unsigned	live = 0;
		double		set,
					sd,
					keys;

		for (int s = 0; s < tb_slots(f); s++)
		{
			int64_t		g = b[i].slot[s].generation;

			if (!tb_generation_is_live(f, g, at))
				continue;
			live |= 1u << s;
			if (out->oldest_live == TLBF_NEVER || g * f->length < out->oldest_live)
				out->oldest_live = g * f->length;
		}
		if (live == 0)
			continue;
		set = (double) live_bits(f, tb_words(f) + tb_band_word(f, i), b[i].nlines, live);
		keys = tb_keys_estimate(f, set, b[i].nlines);
		sd = tb_bits_sd(f, keys, b[i].nlines);
		out->estimate += keys;
		out->low = fmax(out->low, tb_keys_estimate(f, set - 2 * sd, b[i].nlines));
		out->high += tb_keys_estimate(f, fmin(set + 2 * sd, (double) b[i].nlines * piece_bits),
									  b[i].nlines);
	}
}
