/*-------------------------------------------------------------------------
 *
 * tb_window.c
 *	  Format 3 (src/core/tb_*.c, issue 36) behind the comparison's
 *	  interface, beside the paper's layout (tlbf_window.c).
 *
 * Created with the window as its span, three generations a span, and the
 * mean number of live insertions as its first generation's guess.  Its
 * error rate is the lowest on a grid of 1/64 decades whose bits per live
 * key (bits_per_key * slots / generations, before sizes are rounded up by
 * at most 1/32) fit the budget.  Its bits are the bands' lines; the
 * header and directory are reported apart (meta_bits).
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "heap_memory.h"
#include "tb.h"
#include "window_filter.h"

typedef struct TbWindow
{
	WindowFilter base;
	TbFilter   *f;
	TlbfMemory	memory;
} TbWindow;

static void
tbw_insert(WindowFilter *wf, TlbfHash h, int64_t at)
{
	TbWindow   *t = (TbWindow *) wf;

	if (tb_insert(&t->f, &t->memory, h, at) != TLBF_OK)
	{
		fprintf(stderr, "tb_insert failed\n");
		exit(1);
	}
}

static bool
tbw_query(WindowFilter *wf, TlbfHash h, int64_t at)
{
	TbWindow   *t = (TbWindow *) wf;

	return tb_query(t->f, h, at, t->f->span);
}

static uint64_t
tbw_bits(const WindowFilter *wf)
{
	const TbFilter *f = ((const TbWindow *) wf)->f;

	return (uint64_t) (tb_size(f) - tb_lines_offset(f->nbands)) * 8;
}

static uint64_t
tbw_meta_bits(const WindowFilter *wf)
{
	return (uint64_t) tb_lines_offset(((const TbWindow *) wf)->f->nbands) * 8;
}

static void
tbw_describe(const WindowFilter *wf, char *buf, size_t len)
{
	const TbFilter *f = ((const TbWindow *) wf)->f;

	snprintf(buf, len, "error_rate=%.3g k=%d lines=%d bands=%d",
			 f->error_rate, f->k, f->lines_per_key, f->nbands);
}

static void
tbw_destroy(WindowFilter *wf)
{
	TbWindow   *t = (TbWindow *) wf;

	free(t->f);
	free(t);
}

static const WindowFilterOps tbw_ops = {
	tbw_insert, tbw_query, tbw_bits, tbw_meta_bits, tbw_describe, tbw_destroy
};

/* The lowest error rate on the grid whose bits per live key fit 'budget'. */
static double
rate_for_budget(double budget)
{
	double		rate = TLBF_MAX_ERROR_RATE;

	for (int i = 0; i <= 64 * 8; i++)
	{
		double		candidate = TLBF_MAX_ERROR_RATE * pow(10.0, -i / 64.0);
		int			lines,
					k;
		double		bits;

		tb_choose_layout(candidate, TB_DEFAULT_GENERATIONS, &lines, &k, &bits);
		if (bits * (TB_DEFAULT_GENERATIONS + 1) / TB_DEFAULT_GENERATIONS > budget)
			break;
		rate = candidate;
	}
	return rate;
}

WindowFilter *
tb_window_create(const WindowConfig *config)
{
	TbWindow   *t = eval_calloc(1, sizeof(TbWindow));
	TbParams	p = {config->span, 0, (uint64_t) (config->live_items + 0.5), false, 0, 0};
	TlbfProblem problem;

	p.error_rate = rate_for_budget(config->budget_bits / fmax(config->live_items, 1.0));
	if (!tb_check_params(&p, &problem))
	{
		fprintf(stderr, "format 3 parameters: %s\n", problem.message);
		exit(1);
	}
	t->base.ops = &tbw_ops;
	t->f = eval_calloc(1, tb_lines_offset(0));
	tb_init(t->f, &p);
	t->memory.resize = heap_resize;
	t->memory.allocated = tb_lines_offset(0);
	t->memory.max_bytes = SIZE_MAX;
	return &t->base;
}
