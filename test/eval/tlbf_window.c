/*-------------------------------------------------------------------------
 *
 * tlbf_window.c
 *	  The tlbf core behind the comparison's interface.
 *
 * The filter is created with the window as its span and the mean number
 * of live insertions as its capacity guess; its error rate is chosen by
 * the harness so that its memory matches the budget (see compare.c).  Its
 * bits are the slices' bit arrays; the 112-byte header and the 32-byte
 * directory entry per slice are reported apart (meta_bits).
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>

#include "heap_memory.h"
#include "window_filter.h"

typedef struct TlbfWindow
{
	WindowFilter base;
	Tlbf	   *f;
	TlbfMemory	memory;
} TlbfWindow;

static void
tw_insert(WindowFilter *wf, TlbfHash h, int64_t at)
{
	TlbfWindow *t = (TlbfWindow *) wf;

	if (tlbf_insert(&t->f, &t->memory, h, at) != TLBF_OK)
	{
		fprintf(stderr, "tlbf_insert failed\n");
		exit(1);
	}
}

static bool
tw_query(WindowFilter *wf, TlbfHash h, int64_t at)
{
	TlbfWindow *t = (TlbfWindow *) wf;

	return tlbf_query(t->f, h, at, t->f->span);
}

static uint64_t
tw_bits(const WindowFilter *wf)
{
	return tlbf_total_words(((const TlbfWindow *) wf)->f) * 64;
}

static uint64_t
tw_meta_bits(const WindowFilter *wf)
{
	const Tlbf *f = ((const TlbfWindow *) wf)->f;

	return (uint64_t) (tlbf_size(f) - tlbf_total_words(f) * 8) * 8;
}

static void
tw_describe(const WindowFilter *wf, char *buf, size_t len)
{
	const Tlbf *f = ((const TlbfWindow *) wf)->f;

	snprintf(buf, len, "error_rate=%.3g k=%d l=%d slices=%u",
			 f->error_rate, f->k, f->l, f->nslices);
}

static void
tw_destroy(WindowFilter *wf)
{
	TlbfWindow *t = (TlbfWindow *) wf;

	free(t->f);
	free(t);
}

static const WindowFilterOps tw_ops = {
	tw_insert, tw_query, tw_bits, tw_meta_bits, tw_describe, tw_destroy
};

WindowFilter *
tlbf_window_create(const WindowConfig *config)
{
	TlbfWindow *t = eval_calloc(1, sizeof(TlbfWindow));
	TlbfParams	p = {config->span, config->tlbf_error_rate,
	(uint64_t) (config->live_items + 0.5), 0, 0, 0};
	TlbfProblem problem;

	if (p.capacity < 1)
		p.capacity = 1;
	if (!tlbf_check_params(&p, &problem))
	{
		fprintf(stderr, "tlbf parameters: %s\n", problem.message);
		exit(1);
	}
	t->base.ops = &tw_ops;
	t->f = heap_filter(&p, &t->memory);
	return &t->base;
}
