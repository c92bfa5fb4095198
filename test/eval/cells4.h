/*-------------------------------------------------------------------------
 *
 * cells4.h
 *	  Arrays of 4-bit cells packed sixteen to a 64-bit word, shared by the
 *	  counting filter (counters) and the continuous filter (timers).
 *
 *-------------------------------------------------------------------------
 */
#ifndef EVAL_CELLS4_H
#define EVAL_CELLS4_H

#include <stdint.h>

static inline unsigned
cell4_get(const uint64_t *words, uint64_t i)
{
	return (unsigned) (words[i >> 4] >> ((i & 15) * 4)) & 15;
}

static inline void
cell4_set(uint64_t *words, uint64_t i, unsigned value)
{
	unsigned	shift = (unsigned) (i & 15) * 4;

	words[i >> 4] = (words[i >> 4] & ~(UINT64_C(15) << shift)) |
		((uint64_t) value << shift);
}

#endif							/* EVAL_CELLS4_H */
