/*-------------------------------------------------------------------------
 *
 * tb_retire.c
 *	  Emptying the generations of a format 3 filter that no query at or
 *	  after a time can ask (those wholly older than the span before it),
 *	  and dropping the bands left with none.
 *
 *-------------------------------------------------------------------------
 */
#include "tb.h"

/* The oldest generation a query at 'at' over the span may ask. */
int64_t
tb_oldest_kept(const TbFilter *f, TlbfTime at)
{
	return tb_generation_of(at - f->span, f->length);
}

/*
 * Empty the generations older than tb_oldest_kept(f, at), and drop every
 * band but the newest that holds none any more; 'at' becomes the newest
 * time seen if it is newer.  Returns the generations' slots emptied.
 */
int
tb_retire(TbFilter *f, TlbfTime at)
{
	int64_t		oldest;
	int			emptied = 0;

	if (f->newest == TLBF_NEVER || at > f->newest)
		f->newest = at;
	oldest = tb_oldest_kept(f, f->newest);
	for (int i = f->nbands - 1; i >= 0; i--)
	{
		TbBand	   *b = &tb_bands(f)[i];
		bool		any = false;

		for (int s = 0; s < tb_slots(f); s++)
		{
			if (b->slot[s].generation == TB_NO_GENERATION)
				continue;
			if (b->slot[s].generation < oldest)
			{
				tb_clear_slot(f, i, s);
				emptied++;
			}
			else
				any = true;
		}
		if (!any && i < f->nbands - 1)
			tb_remove_band(f, i);
	}
	return emptied;
}

/* Does the filter have bands, and no generation in any? */
bool
tb_releasable(const TbFilter *f)
{
	if (f->nbands == 0)
		return false;
	for (int i = 0; i < f->nbands; i++)
		for (int s = 0; s < tb_slots(f); s++)
			if (tb_bands(f)[i].slot[s].generation != TB_NO_GENERATION)
				return false;
	return true;
}

/*
 * Drop the bands of a filter that holds no generation any more (after
 * tb_retire), in place: an idle filter shrinks to its header, as one of
 * format 2 does.  tb_retire keeps the newest band because its size is the
 * guess for the next generation when no rate is known; here that guess
 * moves to the capacity of an undeclared filter (a declared one sizes
 * every generation from its capacity anyway).  Returns whether it dropped
 * any; the caller sets the value's length (tb_size).
 */
bool
tb_release(TbFilter *f)
{
	if (!tb_releasable(f))
		return false;
	if ((f->flags & TB_DECLARED) == 0)
	{
		uint64_t	guess = tb_capacity_of(f, tb_bands(f)[f->nbands - 1].nlines);

		f->capacity = guess < TLBF_MAX_CAPACITY / f->generations ?
			guess * f->generations : TLBF_MAX_CAPACITY;
	}
	while (f->nbands > 0)
		tb_remove_band(f, f->nbands - 1);
	return true;
}

/* Would tb_retire(f, at) empty a generation or drop a band? */
bool
tb_retirable(const TbFilter *f, TlbfTime at)
{
	int64_t		oldest = tb_oldest_kept(f, f->newest == TLBF_NEVER || at > f->newest ? at : f->newest);

	for (int i = 0; i < f->nbands; i++)
	{
		const TbBand *b = &tb_bands(f)[i];
		bool		any = false;

		for (int s = 0; s < tb_slots(f); s++)
		{
			if (b->slot[s].generation == TB_NO_GENERATION)
				continue;
			if (b->slot[s].generation < oldest)
				return true;
			any = true;
		}
		if (!any && i < f->nbands - 1)
			return true;
	}
	return false;
}
