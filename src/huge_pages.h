/*-------------------------------------------------------------------------
 *
 * huge_pages.h
 *	  huge_pages.c: large filters on huge pages, where the kernel offers them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_HUGE_PAGES_H
#define TLBF_HUGE_PAGES_H

#include "tlbf_pg.h"

extern void tlbf_advise_huge_pages(void *p, Size size, bool now);

#endif							/* TLBF_HUGE_PAGES_H */
