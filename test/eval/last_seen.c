/*-------------------------------------------------------------------------
 *
 * last_seen.c
 *	  An open-addressing table from key to its latest position, sized for
 *	  at most half full.  Keys stay below 2^63, so key + 1 never wraps.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>

#include "last_seen.h"
#include "window_filter.h"

void
last_seen_init(LastSeen *m, size_t max_keys)
{
	size_t		size = 16;

	while (size < 2 * max_keys)
		size *= 2;
	m->keys = eval_calloc(size, sizeof(uint64_t));
	m->last = eval_calloc(size, sizeof(int64_t));
	m->mask = size - 1;
}

static size_t
slot_of(const LastSeen *m, uint64_t key)
{
	/* a cheap mix is enough: keys are small integers */
	size_t		i = (size_t) ((key * UINT64_C(0x9E3779B97F4A7C15)) >> 20) & m->mask;

	while (m->keys[i] != 0 && m->keys[i] != key + 1)
		i = (i + 1) & m->mask;
	return i;
}

void
last_seen_put(LastSeen *m, uint64_t key, int64_t position)
{
	size_t		i = slot_of(m, key);

	m->keys[i] = key + 1;
	m->last[i] = position;
}

int64_t
last_seen_get(const LastSeen *m, uint64_t key)
{
	size_t		i = slot_of(m, key);

	return m->keys[i] == 0 ? -1 : m->last[i];
}

void
last_seen_free(LastSeen *m)
{
	free(m->keys);
	free(m->last);
}
