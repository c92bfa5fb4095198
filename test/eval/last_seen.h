/*-------------------------------------------------------------------------
 *
 * last_seen.h
 *	  The exact answer: for each key, the position of its latest insertion
 *	  so far (an open-addressing hash table).  A key is live when that
 *	  position is inside the window.
 *
 *-------------------------------------------------------------------------
 */
#ifndef EVAL_LAST_SEEN_H
#define EVAL_LAST_SEEN_H

#include <stddef.h>
#include <stdint.h>

typedef struct LastSeen
{
	uint64_t   *keys;			/* key + 1; 0 marks an empty slot */
	int64_t    *last;
	size_t		mask;
} LastSeen;

extern void last_seen_init(LastSeen *m, size_t max_keys);
extern void last_seen_put(LastSeen *m, uint64_t key, int64_t position);
extern int64_t last_seen_get(const LastSeen *m, uint64_t key);	/* -1: never */
extern void last_seen_free(LastSeen *m);

#endif							/* EVAL_LAST_SEEN_H */
