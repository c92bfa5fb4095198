/*
 * heap_memory.h
 *	  Memory for a filter outside PostgreSQL (tests, benchmarks, tools):
 *	  malloc'd, growing by doubling, with no size cap.
 */
#ifndef TLBF_HEAP_MEMORY_H
#define TLBF_HEAP_MEMORY_H

#include <stdint.h>
#include <stdlib.h>

#include "tlbf.h"

static inline void *
heap_resize(TlbfMemory *memory, void *buffer, size_t size)
{
	size_t		grown = size > 2 * memory->allocated ? size : 2 * memory->allocated;
	void	   *p = realloc(buffer, grown);

	if (p != NULL)
		memory->allocated = grown;
	return p;
}

/* A new, empty filter on the heap, and the memory it may grow in. */
static inline Tlbf *
heap_filter(const TlbfParams *params, TlbfMemory *memory)
{
	Tlbf	   *f = malloc(sizeof(Tlbf));

	if (f == NULL)
		abort();
	tlbf_init(f, params);
	memory->resize = heap_resize;
	memory->context = NULL;
	memory->allocated = sizeof(Tlbf);
	memory->max_bytes = SIZE_MAX;
	memory->keep_live = false;
	return f;
}

#endif							/* TLBF_HEAP_MEMORY_H */
