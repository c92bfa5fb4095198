/*-------------------------------------------------------------------------
 *
 * window_filter.h
 *	  The one interface every sliding-window structure of the comparison
 *	  implements, so that one harness feeds, queries and times them all
 *	  the same way.
 *
 * Times are microseconds.  Count-based structures ignore them and count
 * insertions; time-based ones (tlbf, the continuous filter, the rotating
 * ring, the counting filter when told the window as time) use them.  In
 * the count-window experiments the harness passes one insertion per
 * millisecond, so both kinds see the same window.
 *
 *-------------------------------------------------------------------------
 */
#ifndef EVAL_WINDOW_FILTER_H
#define EVAL_WINDOW_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tlbf.h"

/* What a structure is built for. */
typedef struct WindowConfig
{
	uint64_t	budget_bits;	/* memory for its cells or bits */
	uint64_t	window_count;	/* insertions a count-based structure covers */
	int64_t		span;			/* the window as time, in microseconds */
	double		live_items;		/* mean insertions within the window */
	bool		by_time;		/* the window is a time span (not a count) */
	uint64_t	seed;			/* for structures that draw random numbers */
	double		tlbf_error_rate;	/* tlbf only: chosen to match the budget */
} WindowConfig;

typedef struct WindowFilter WindowFilter;

typedef struct WindowFilterOps
{
	void		(*insert) (WindowFilter *wf, TlbfHash h, int64_t at);
	bool		(*query) (WindowFilter *wf, TlbfHash h, int64_t at);
	uint64_t	(*bits) (const WindowFilter *wf);	/* cells or bits, now */
	uint64_t	(*meta_bits) (const WindowFilter *wf);	/* headers etc. */
	void		(*describe) (const WindowFilter *wf, char *buf, size_t len);
	void		(*destroy) (WindowFilter *wf);
} WindowFilterOps;

/* Every structure's own struct starts with this. */
struct WindowFilter
{
	const WindowFilterOps *ops;
};

/* A structure of the comparison: its name, constructor and promise. */
typedef struct WindowKind
{
	const char *name;
	WindowFilter *(*create) (const WindowConfig *config);
	bool		no_live_false_negatives;	/* what the design promises */
} WindowKind;

extern WindowFilter *counting_bf_create(const WindowConfig *config);
extern WindowFilter *stable_bf_create(const WindowConfig *config);
extern WindowFilter *guarded_epoch4_create(const WindowConfig *config);
extern WindowFilter *guarded_epoch8_create(const WindowConfig *config);
extern WindowFilter *blocked_epoch8_create(const WindowConfig *config);
extern WindowFilter *continuous_bf_create(const WindowConfig *config);
extern WindowFilter *rotating_bf_create(const WindowConfig *config);
extern WindowFilter *tlbf_window_create(const WindowConfig *config);
extern WindowFilter *tb_window_create(const WindowConfig *config);

/* structures.c: the list the harness runs, in table order */
extern const WindowKind window_kinds[];
extern const int num_window_kinds;

/* Words of 64 bits that fit in 'bits', at least one. */
static inline uint64_t
words_within(uint64_t bits)
{
	return bits >= 64 ? bits / 64 : 1;
}

extern void *eval_calloc(size_t n, size_t size);

#endif							/* EVAL_WINDOW_FILTER_H */
