/*
 * fuzz_memory.h
 *	  Memory for a filter that a fuzz target inserts into: it grows on
 *	  request (AddressSanitizer sees any access past the size asked for),
 *	  under a size cap, and may be told to fail some requests, to drive the
 *	  out-of-memory paths.  With 'fixed' it does not grow at all (resize
 *	  NULL: a fixed region, as a shared-memory filter has).  free() takes
 *	  its buffers, poisoned tail and all.
 */
#ifndef TLBF_FUZZ_MEMORY_H
#define TLBF_FUZZ_MEMORY_H

#include <sanitizer/asan_interface.h>

#include "fuzz_common.h"

#define FUZZ_COMPARE_BYTES 4096

typedef struct FuzzMemory
{
	TlbfMemory	memory;			/* first: the core passes &memory back */
	size_t		capacity;		/* bytes malloc'd at the buffer */
	uint32_t	fail_mask;		/* request n fails if bit n % 32 is set */
	uint32_t	requests;
	bool		quick;			/* fuzz_insert: validate only, skip the
								 * queries (within a burst of insertions) */
} FuzzMemory;

/*
 * Grow like the glue (at least doubling, never past the cap), but keep the
 * bytes past the size asked for poisoned: to AddressSanitizer the buffer
 * ends exactly where the core said it would.
 */
static void *
fuzz_resize(TlbfMemory *memory, void *buffer, size_t size)
{
	FuzzMemory *m = (FuzzMemory *) memory;

	/* the core drops slices to stay under the cap; it never asks past it */
	FUZZ_CHECK(size <= memory->max_bytes, "a resize stays within max_bytes");
	if (m->fail_mask & (UINT32_C(1) << (m->requests++ % 32)))
		return NULL;
	if (size > m->capacity)
	{
		size_t		grown = 2 * m->capacity < memory->max_bytes ? 2 * m->capacity : memory->max_bytes;
		void	   *moved;

		if (grown < size)
			grown = size;
		ASAN_UNPOISON_MEMORY_REGION(buffer, m->capacity);
		moved = realloc(buffer, grown);
		if (moved == NULL)
		{
			ASAN_POISON_MEMORY_REGION((char *) buffer + memory->allocated,
									  m->capacity - memory->allocated);
			return NULL;
		}
		buffer = moved;
		m->capacity = grown;
	}
	ASAN_UNPOISON_MEMORY_REGION(buffer, size);
	ASAN_POISON_MEMORY_REGION((char *) buffer + size, m->capacity - size);
	memory->allocated = size;
	return buffer;
}

/* Describe a filter buffer of exactly 'allocated' bytes to the core. */
static inline void
fuzz_memory_init(FuzzMemory *m, size_t allocated, size_t max_bytes,
				 bool fixed, uint32_t fail_mask)
{
	m->memory.resize = fixed ? NULL : fuzz_resize;
	m->memory.context = NULL;
	m->memory.allocated = allocated;
	m->memory.max_bytes = max_bytes;
	m->memory.keep_live = false;
	m->capacity = allocated;
	m->fail_mask = fail_mask;
	m->requests = 0;
	m->quick = false;
}

/*
 * Insert, checking the core's promises about a failed insertion: the
 * filter is unchanged (though it may have moved), and a successful one
 * leaves a valid filter (checked after every insertion) within the memory
 * and, if it was under the cap, still under it, with the key found
 * (unless 'quick': the caller checks the rest once a burst is over).
 * Returns the status.
 */
static inline TlbfStatus
fuzz_insert(Tlbf **fp, FuzzMemory *m, TlbfHash hash, TlbfTime at)
{
	/* kept between calls: a copy per insertion would cost more than it */
	static Tlbf *before = NULL;
	static size_t before_room = 0;
	size_t		before_size = tlbf_size(*fp);
	size_t		compared = before_size;
	TlbfStatus	status;


	/*
	 * Past a few kilobytes, compare the header and directory only: only
	 * insertions that succeed touch the bits, so speed wins there.
	 */
	if (compared > FUZZ_COMPARE_BYTES)
		compared = tlbf_layout_bytes((*fp)->nslices, 0);
	if (compared > before_room)
	{
		free(before);
		before = fuzz_malloc(compared);
		before_room = compared;
	}
	memcpy(before, *fp, compared);
	status = tlbf_insert(fp, &m->memory, hash, at);

	if (status == TLBF_OK)
		fuzz_check_valid(*fp, "a filter after tlbf_insert");
	if (status == TLBF_OK && !m->quick)
	{
		FUZZ_CHECK(tlbf_size(*fp) <= m->memory.allocated,
				   "an inserted filter fits in its memory");
		FUZZ_CHECK(before_size > m->memory.max_bytes ||
				   tlbf_size(*fp) <= m->memory.max_bytes,
				   "an insertion keeps a filter under max_bytes");
		FUZZ_CHECK((*fp)->newest == (at < before->newest ? before->newest : at),
				   "the newest time is the latest insertion");
		/* the key is in the k newest slices, all written at 'newest' */
		FUZZ_CHECK(tlbf_query(*fp, hash, (*fp)->newest, (*fp)->span) &&
				   tlbf_query(*fp, hash, fuzz_add_time((*fp)->newest, (*fp)->span),
							  (*fp)->span),
				   "a key just added is found until its time plus the span");
	}
	else if (status != TLBF_OK)
	{
		FUZZ_CHECK(status == TLBF_OUT_OF_MEMORY || status == TLBF_OVER_LIMIT,
				   "tlbf_insert returns a known status");
		FUZZ_CHECK(tlbf_size(*fp) == before_size &&
				   memcmp(*fp, before, compared) == 0,
				   "a failed insertion leaves the filter unchanged");
	}
	return status;
}

#endif							/* TLBF_FUZZ_MEMORY_H */
