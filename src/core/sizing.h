/*-------------------------------------------------------------------------
 *
 * sizing.h
 *	  The paper's sizing equations, internal to the core.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_SIZING_H
#define TLBF_SIZING_H

#include "tlbf.h"

#define TLBF_LN2		0.69314718055994530942

/*
 * A slice may grow at most this much per shift.  It bounds the damage of a
 * rate measured over a generation that took no time at all (a burst within
 * one instant), while still following a tenfold rate change in one shift.
 */
#define TLBF_MAX_GROWTH		16.0
#define TLBF_MIN_TARGET_GEN 1e-3
#define TLBF_MAX_TARGET_GEN 1e12
#define TLBF_LOAD_ONE	65536u	/* load is kept in 16.16 fixed point */
#define TLBF_MIN_LOAD_WEIGHT TLBF_LOAD_ONE	/* one key per bit: an empty slice */
#define TLBF_MAX_LOAD_WEIGHT (64u * TLBF_LOAD_ONE)

/*
 * A generation that has lasted this many times its planned span/l ends
 * even if its slices still have room (see insert.c).
 */
#define TLBF_OVERDUE_FACTOR 2

/*
 * The largest generation: k slices of the largest size, each taking its
 * whole capacity (less than one key per bit), in load units.
 */
#define TLBF_MAX_GEN_SIZE \
	((uint64_t) TLBF_MAX_K * TLBF_MAX_SLICE_WORDS * 64 * TLBF_LOAD_ONE)

extern double tlbf_clamp_target_gen(double target_gen);
extern double tlbf_slice_capacity(const TlbfSlice *s);
extern uint32_t tlbf_load_weight(const TlbfSlice *s, double keys);
extern uint32_t tlbf_words_for_capacity(double capacity);
extern uint64_t tlbf_generation_size(const Tlbf *f);
extern double tlbf_target_generation(const Tlbf *f, TlbfTime now);
extern double tlbf_next_slice_capacity(const Tlbf *f, double target_gen);

#endif							/* TLBF_SIZING_H */
