/*-------------------------------------------------------------------------
 *
 * structures.c
 *	  The structures compared, in the order of the tables, with what each
 *	  design promises about keys inside the window.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>

#include "window_filter.h"

const WindowKind window_kinds[] = {
	{"counting_bf4", counting_bf_create, true},
	{"stable_bf", stable_bf_create, false},
	{"guarded_epoch_r4", guarded_epoch4_create, true},
	{"guarded_epoch_r8", guarded_epoch8_create, true},
	{"blocked_epoch_r8", blocked_epoch8_create, true},
	{"continuous_bf4", continuous_bf_create, true},
	{"rotating_bf", rotating_bf_create, true},
	{"tlbf", tlbf_window_create, true},
	{"tlbf_format3", tb_window_create, true},
};

const int	num_window_kinds = sizeof(window_kinds) / sizeof(window_kinds[0]);

/* calloc that gives up loudly: the evaluation has no use for half a run */
void *
eval_calloc(size_t n, size_t size)
{
	void	   *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	return p;
}
