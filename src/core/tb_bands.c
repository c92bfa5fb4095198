/*-------------------------------------------------------------------------
 *
 * tb_bands.c
 *	  The band directory of a format 3 filter and the lines behind it:
 *	  adding a band (always the newest, last), removing one, emptying a
 *	  slot, folding a band onto a fraction of its groups.  Every change keeps
 *	  the layout of tb_format.h: lines in directory order without gaps,
 *	  starting at tb_lines_offset(nbands), zeros between, a slot holding no
 *	  generation all zeros.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "tb_bits.h"

/* Zero the bytes between the directory and the first line. */
static void
zero_padding(TbFilter *f)
{
	size_t		end = sizeof(TbFilter) + (size_t) f->nbands * sizeof(TbBand);

	memset((char *) f + end, 0, tb_lines_offset(f->nbands) - end);
}

static void
empty_slot(TbSlot *s)
{
	s->generation = TB_NO_GENERATION;
	s->started = 0;
	s->bits = 0;
}

/*
 * Append an empty band of 'nlines' groups (the newest).  Grows the buffer
 * through 'memory'; on failure the filter is unchanged.
 */
TlbfStatus
tb_add_band(TbFilter **fp, TlbfMemory *memory, uint64_t nlines)
{
	TbFilter   *f = *fp;
	uint64_t	groups = tb_total_groups(f);
	size_t		size = tb_layout_bytes(f, (uint64_t) f->nbands + 1, groups + nlines);
	size_t		old_offset = tb_lines_offset(f->nbands);
	size_t		new_offset = tb_lines_offset((uint64_t) f->nbands + 1);
	size_t		old_bytes = groups * tb_group_words(f) * sizeof(uint64_t);
	TbBand	   *b;

	if (size > memory->allocated)
	{
		void	   *grown;

		if (memory->resize == NULL)
			return TLBF_OUT_OF_MEMORY;
		grown = memory->resize(memory, f, size);
		if (grown == NULL)
			return TLBF_OUT_OF_MEMORY;
		*fp = f = grown;
	}
	/* the lines first (they move up), then the directory over their old place */
	memmove((char *) f + new_offset, (char *) f + old_offset, old_bytes);
	memset((char *) f + new_offset + old_bytes, 0, size - new_offset - old_bytes);
	b = &tb_bands(f)[f->nbands];
	b->nlines = nlines;
	for (int s = 0; s < TB_MAX_SLOTS; s++)
		empty_slot(&b->slot[s]);
	f->nbands++;
	zero_padding(f);
	return TLBF_OK;
}

/* Remove band 'index' and its lines. */
void
tb_remove_band(TbFilter *f, int index)
{
	TbBand	   *b = tb_bands(f);
	char	   *base = (char *) f;
	size_t		old_offset = tb_lines_offset(f->nbands);
	size_t		new_offset = tb_lines_offset((uint64_t) f->nbands - 1);
	size_t		head = tb_band_word(f, index) * sizeof(uint64_t);
	size_t		removed = b[index].nlines * tb_group_words(f) * sizeof(uint64_t);
	size_t		tail = tb_total_groups(f) * tb_group_words(f) * sizeof(uint64_t) - head - removed;

	/* the directory first (it shrinks), then the lines move down */
	memmove(&b[index], &b[index + 1], (size_t) (f->nbands - index - 1) * sizeof(TbBand));
	f->nbands--;
	memmove(base + new_offset, base + old_offset, head);
	memmove(base + new_offset + head, base + old_offset + head + removed, tail);
	zero_padding(f);
}

/* Empty a slot of a band: its pieces zeroed, no generation. */
void
tb_clear_slot(TbFilter *f, int band, int slot)
{
	TbBand	   *b = &tb_bands(f)[band];
	uint64_t   *words = tb_words(f) + tb_band_word(f, band);
	uint64_t	group = tb_group_words(f);
	int			piece = tb_piece_words(f);

	for (uint64_t j = 0; j < b->nlines; j++)
		memset(&words[j * group + (uint64_t) slot * piece], 0, piece * sizeof(uint64_t));
	empty_slot(&b->slot[slot]);
}

/*
 * Fold band 'index' onto nlines / divisor groups ('divisor' divides
 * nlines): group j goes into group j / divisor.  A key's group in the
 * folded band is its group in the whole one divided by 'divisor' (see
 * tb_bits.h), so every key keeps all its bits; the band takes fewer keys.
 */
void
tb_fold_band(TbFilter *f, int index, uint64_t divisor)
{
	TbBand	   *b = &tb_bands(f)[index];
	uint64_t	group = tb_group_words(f);
	uint64_t   *words = tb_words(f) + tb_band_word(f, index);
	uint64_t	folded = b->nlines / divisor;
	uint64_t	after = tb_total_groups(f) * group - tb_band_word(f, index + 1);
	int			piece = tb_piece_words(f);
	uint64_t	set[TB_MAX_SLOTS] = {0};

	if (divisor <= 1)
		return;
	for (uint64_t j = 0; j < folded; j++)
	{
		uint64_t	line[TB_LINE_WORDS * TB_MAX_LINES_PER_KEY] = {0};

		for (uint64_t d = 0; d < divisor; d++)
			for (uint64_t w = 0; w < group; w++)
				line[w] |= words[(j * divisor + d) * group + w];
		memcpy(&words[j * group], line, group * sizeof(uint64_t));
		/* (folded bits overlap: each slot's count is taken again) */
		for (uint64_t w = 0; w < group; w++)
			set[w / piece] += (uint64_t) tb_popcount(line[w]);
		if ((j & 0xffff) == 0)
			tlbf_check_interrupts();
	}
	memmove(words + folded * group, words + b->nlines * group, after * sizeof(uint64_t));
	b->nlines = folded;
	/* (an empty slot counts none: a value from outside may have bits there) */
	for (int s = 0; s < tb_slots(f); s++)
		b->slot[s].bits = b->slot[s].generation != TB_NO_GENERATION ? set[s] : 0;
}
