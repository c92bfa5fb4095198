/*
 * edge_values.h
 *	  Valid values at the edges of what tlbf_validate() accepts: fields at
 *	  an end of their range (the smallest generation plan, the first and
 *	  last valid times, the most hash functions, saturated counters ...).
 *	  Every operation must write a valid value from them too; the unit
 *	  tests (test_validate.c) check that, and the fuzzers start from them
 *	  (make_corpus.c).
 */
#ifndef TLBF_TEST_EDGE_VALUES_H
#define TLBF_TEST_EDGE_VALUES_H

#include "sizing.h"
#include "tlbf.h"

/* Every slice last written at 'from' is moved to 'to'. */
static inline void
edge_move_slice_times(Tlbf *f, TlbfTime from, TlbfTime to)
{
	TlbfSlice  *s = tlbf_slices(f);

	for (uint32_t i = 0; i < f->nslices; i++)
		if (s[i].updated_at == from)
			s[i].updated_at = to;
}

static inline uint64_t
edge_most_bits_set(const Tlbf *f)
{
	const TlbfSlice *s = tlbf_slices(f);
	uint64_t	most = 0;

	for (uint32_t i = 0; i < f->nslices; i++)
		if (s[i].bits_set > most)
			most = s[i].bits_set;
	return most;
}

#define EDGE_COUNT 34

/*
 * Set one field of f (or a group of them) to an end of the range
 * validation accepts, with whatever else must change for the value to stay
 * valid: edge 0 .. EDGE_COUNT - 1.  The result may still be invalid (a
 * field that must agree with another); callers validate it.
 */
static inline void
edge_set(Tlbf *f, int edge)
{
	TlbfSlice  *s = tlbf_slices(f);

	switch (edge)
	{
		case 0:
			f->gen_size = 1;
			f->gen_left = 0;
			break;
		case 1:
			f->gen_size = 1;
			f->gen_left = 1;
			break;
		case 2:
			f->gen_left = 0;
			break;
		case 3:
			f->gen_left = f->gen_size;
			break;
		case 4:
			f->gen_size = f->gen_left = TLBF_MAX_GEN_SIZE;
			break;
		case 5:
			f->gen_size = TLBF_MAX_GEN_SIZE;
			f->gen_left = 0;
			break;
		case 6:
			f->gen_started = TLBF_TIME_MIN;
			break;
		case 7:
			f->gen_started = f->newest;
			break;
		case 8:
			edge_move_slice_times(f, f->newest, TLBF_TIME_END - 1);
			f->newest = TLBF_TIME_END - 1;
			break;
		case 9:
			/* everything at the first valid time */
			for (uint32_t i = 0; i < f->nslices; i++)
				if (s[i].updated_at != TLBF_NEVER)
					s[i].updated_at = TLBF_TIME_MIN;
			if (f->newest != TLBF_NEVER)
				f->newest = f->gen_started = TLBF_TIME_MIN;
			break;
		case 10:
			for (uint32_t i = f->k; i < f->nslices; i++)
				s[i].updated_at = TLBF_NEVER;
			break;
		case 11:
			for (uint32_t i = f->k; i < f->nslices; i++)
				s[i].updated_at = TLBF_TIME_MIN;
			break;
		case 12:
			f->k = 1;
			break;
		case 13:
			/* as many hash functions as slices (all written together) */
			f->k = f->nslices == 0 ? TLBF_MAX_K :
				f->nslices < TLBF_MAX_K ? f->nslices : TLBF_MAX_K;
			for (uint32_t i = 0; i < f->k && i < f->nslices; i++)
				s[i].updated_at = f->newest;
			break;
		case 14:
			f->l = 1;
			break;
		case 15:
			f->l = TLBF_MAX_L;
			break;
		case 16:
			f->span = 1;
			break;
		case 17:
			f->span = TLBF_MAX_SPAN;
			break;
		case 18:
			f->error_rate = TLBF_MIN_ERROR_RATE;
			break;
		case 19:
			f->error_rate = TLBF_MAX_ERROR_RATE;
			break;
		case 20:
			f->capacity = 1;
			break;
		case 21:
			f->capacity = TLBF_MAX_CAPACITY;
			break;
		case 22:
			f->target_gen = TLBF_MIN_TARGET_GEN;
			break;
		case 23:
			f->target_gen = TLBF_MAX_TARGET_GEN;
			break;
		case 24:
			f->inserted = UINT64_MAX;
			break;
		case 25:
			f->inserted = edge_most_bits_set(f);
			break;
		case 26:
			f->truncated = UINT64_MAX;
			break;
		case 27:
			f->seed = UINT64_MAX;
			break;
		case 28:
			for (uint32_t i = 0; i < f->nslices; i++)
				s[i].bits_set = 0;
			break;
		case 29:
			for (uint32_t i = 0; i < f->nslices; i++)
				s[i].bits_set = (uint64_t) s[i].nwords * 64;
			f->inserted = UINT64_MAX;
			break;
		case 30:
			for (uint32_t i = 0; i < f->nslices; i++)
				s[i].load_weight = TLBF_MIN_LOAD_WEIGHT;
			break;
		case 31:
			for (uint32_t i = 0; i < f->nslices; i++)
				s[i].load_weight = TLBF_MAX_LOAD_WEIGHT;
			break;
		case 32:
			for (uint32_t i = 0; i < f->nslices; i++)
				s[i].hash_index = 0;
			break;
		case 33:
			for (uint32_t i = 0; i < f->nslices; i++)
				s[i].hash_index = TLBF_MAX_K - 1;
			break;
	}
}

#endif							/* TLBF_TEST_EDGE_VALUES_H */
