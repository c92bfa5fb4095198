/*-------------------------------------------------------------------------
 *
 * value_cache.c
 *	  The TOASTed filters a call site reads, each detoasted and validated
 *	  once per query.
 *
 * A call site (an expression in a query: tlbf_contains(s.f, p.user_id))
 * keeps, in its fn_extra, the filters it fetched, keyed by their TOAST
 * pointer (which names an immutable value).  A join that meets its filters
 * in any order, as a hash join of probe rows against per-group filters
 * does, then fetches each filter once, as rows grouped by filter would;
 * with one value kept, it fetched one again whenever the next row asked
 * another.  Past tlbf.cache_memory the least recently used filters go,
 * but never the two used last: a function reads at most two filter
 * arguments, and the first must stay while it reads the second.
 *
 *-------------------------------------------------------------------------
 */
#include "tlbf_pg.h"
#include "huge_pages.h"
#include "settings.h"
#include "value_cache.h"

#include "lib/ilist.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

/* The most filters kept, with the bytes they take under tlbf.cache_memory. */
#define MOST_CACHED_VALUES 4096

/* The two kept whatever their size (see above). */
#define ALWAYS_KEPT 2

/*
 * A filter looked up this many times is moved onto huge pages (if large:
 * huge_pages.c), once: a query that probes it row after row gains, one
 * that reads it a few times does not pay for the move.
 */
#define HUGE_PAGES_AFTER 1000

typedef struct CacheKey
{
	Oid			toast_relation;
	Oid			value;
} CacheKey;

typedef struct CachedValue
{
	CacheKey	key;			/* first: the hash table's key */
	struct varlena *filter;		/* validated, of any format */
	Size		bytes;
	uint64		lookups;
	dlist_node	recency;		/* in ValueCache.recency */
} CachedValue;

struct ValueCache
{
	MemoryContext context;		/* its own: the table and the filters */
	HTAB	   *table;
	dlist_head	recency;		/* most recently used first */
	CachedValue *last;			/* the one found last (a scan asks one filter
								 * row after row: no hashing then), or NULL */
	int			count;
	Size		bytes;
};

/* Memory that filters cached by this call site are detoasted into. */
MemoryContext
tlbf_value_cache_memory(ValueCache **cache, MemoryContext parent)
{
	if (*cache == NULL)
	{
		MemoryContext context = AllocSetContextCreate(parent, "tlbf cached filters",
													  ALLOCSET_DEFAULT_SIZES);
		HASHCTL		info;
		ValueCache *created = MemoryContextAllocZero(context, sizeof(ValueCache));

		info.keysize = sizeof(CacheKey);
		info.entrysize = sizeof(CachedValue);
		info.hcxt = context;
		created->context = context;
		created->table = hash_create("tlbf cached filters", 64, &info,
									 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		dlist_init(&created->recency);
		*cache = created;
	}
	return (*cache)->context;
}

static CacheKey
key_of(const struct varatt_external *id)
{
	CacheKey	key;

	memset(&key, 0, sizeof(key));
	key.toast_relation = id->va_toastrelid;
	key.value = id->va_valueid;
	return key;
}

/* The filter cached for this TOAST pointer, or NULL. */
struct varlena *
tlbf_value_cache_find(ValueCache *cache, const struct varatt_external *id)
{
	CacheKey	key = key_of(id);
	CachedValue *entry;

	if (cache == NULL)
		return NULL;
	if (cache->last != NULL && memcmp(&cache->last->key, &key, sizeof(key)) == 0)
		entry = cache->last;
	else
	{
		entry = hash_search(cache->table, &key, HASH_FIND, NULL);
		if (entry == NULL)
			return NULL;
		cache->last = entry;
	}
	/* (first, always: the filters in use are never the ones evicted) */
	dlist_move_head(&cache->recency, &entry->recency);
	if (++entry->lookups == HUGE_PAGES_AFTER)
		tlbf_advise_huge_pages(entry->filter, entry->bytes, true);
	return entry->filter;
}

/* Let go of the least recently used filters past the bounds. */
static void
evict(ValueCache *cache, Size limit)
{
	while (cache->count > ALWAYS_KEPT &&
		   (cache->bytes > limit || cache->count > MOST_CACHED_VALUES))
	{
		CachedValue *oldest = dlist_tail_element(CachedValue, recency, &cache->recency);

		dlist_delete(&oldest->recency);
		if (cache->last == oldest)
			cache->last = NULL;
		cache->bytes -= oldest->bytes;
		cache->count--;
		pfree(oldest->filter);
		(void) hash_search(cache->table, &oldest->key, HASH_REMOVE, NULL);
	}
}

/*
 * Keep 'filter', detoasted into tlbf_value_cache_memory(), for this TOAST
 * pointer; returns it.
 */
struct varlena *
tlbf_value_cache_keep(ValueCache *cache, const struct varatt_external *id, struct varlena *filter)
{
	CacheKey	key = key_of(id);
	bool		found;
	CachedValue *entry = hash_search(cache->table, &key, HASH_ENTER, &found);

	if (found)
	{
		/* fetched again meanwhile: keep the one already there */
		pfree(filter);
		dlist_move_head(&cache->recency, &entry->recency);
		return entry->filter;
	}
	entry->filter = filter;
	entry->bytes = VARSIZE(filter);
	entry->lookups = 0;
	dlist_push_head(&cache->recency, &entry->recency);
	cache->count++;
	cache->bytes += entry->bytes;
	evict(cache, (Size) tlbf_cache_memory * 1024);
	return filter;
}
