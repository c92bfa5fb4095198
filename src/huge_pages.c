/*-------------------------------------------------------------------------
 *
 * huge_pages.c
 *	  Large filters on huge pages, where the kernel offers them.
 *
 * A query or an insertion reads one line at a random place of a filter:
 * past a few megabytes each is a TLB miss as well as a cache miss, and in
 * a virtual machine a miss of the TLB walks two levels of page tables.
 * Measured on the development VM (a chain of dependent reads in 75 MB):
 * 240-310 ns a read on 4 kB pages, 175-185 ns on 2 MB pages.  Linux gives
 * transparent huge pages to a range marked MADV_HUGEPAGE when its pages
 * are first touched (Debian's default is "madvise"), and MADV_COLLAPSE
 * (Linux 6.1) moves a range already touched onto them in place.  Both are
 * advice: the memory, its address and its contents are the same whatever
 * the kernel does, so results never depend on them.  Only the whole 2 MB
 * pages inside a buffer are advised: palloc'd memory is not aligned.
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"
#include "huge_pages.h"

#ifdef __linux__
#include <sys/mman.h>
#endif

#define HUGE_PAGE		((uintptr_t) 2 * 1024 * 1024)

/* Buffers smaller than this are left alone: a few pages, few misses. */
#define HUGE_ENOUGH		((Size) 8 * 1024 * 1024)

#if defined(__linux__) && !defined(MADV_COLLAPSE)
#define MADV_COLLAPSE	25		/* Linux 6.1; older headers lack it */
#endif

/*
 * Advise huge pages for the whole 2 MB pages of [p, p + size): for the
 * pages touched from now on, and, if 'now', for those already touched (a
 * synchronous copy by the kernel: worth it for a buffer read many times).
 * Errors (an older kernel, no huge pages) are ignored: it is advice.
 */
void
tlbf_advise_huge_pages(void *p, Size size, bool now)
{
#ifdef MADV_HUGEPAGE
	uintptr_t	start = ((uintptr_t) p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t	end = ((uintptr_t) p + size) & ~(HUGE_PAGE - 1);

	if (size < HUGE_ENOUGH || end <= start)
		return;
	(void) madvise((void *) start, end - start, MADV_HUGEPAGE);
	if (now)
		(void) madvise((void *) start, end - start, MADV_COLLAPSE);
#endif
}
