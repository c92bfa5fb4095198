/*
 * layout_bench.c
 *	  A prototype of another layout beside the core (issue 36), measured on
 *	  the same stream in the same run: nanoseconds per insertion and per
 *	  query (present and absent keys), false-positive rate, bits per live
 *	  key, and a check that no key added within the span is reported absent.
 *
 *	  build/bench/layout_bench [max-live-keys]
 *
 * The prototype ("time-aligned blocks"): time is cut into generations of a
 * fixed length T = span / 4, and a key added at time t goes to generation
 * floor(t / T) only.  Each generation is a blocked Bloom filter: a key's
 * bits all lie in one block of 512 bits (one cache line), one bit in each
 * of its eight 64-bit words (as Parquet's split block filter does with 32-bit
 * words in 256-bit blocks).  A query at time 'at' asks the generations that
 * overlap (at - span, at]: five of them, whose blocks it prefetches before
 * reading any, so that their misses overlap instead of queueing.  A
 * generation is sized from the keys the previous one took; the oldest is
 * cleared when a new one starts.
 *
 * What it shows: a key's bits depend on its time and hash only (so inserts
 * commute and generations of equal size merge by OR), one cache line per
 * generation asked, and what that costs in bits per live key at the target
 * error rate.  The core is the paper's layout (slices of one bit per key).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heap_memory.h"
#include "tlbf.h"

#define SECOND	INT64_C(1000000)
#define SPAN	(60 * SECOND)
#define START	INT64_C(757382400000000)
#define ROUNDS	5

#define GENERATIONS	5			/* live: those overlapping one span */
#define PARTS		4			/* generations per span */
#define BLOCK_WORDS	8			/* 512 bits, one cache line */

typedef struct Generation
{
	uint64_t   *words;
	uint64_t	nblocks;
	int64_t		id;				/* floor(time / T); -1: empty */
	uint64_t	keys;			/* added (to size the next one) */
} Generation;

typedef struct TimeBlocks
{
	Generation	gens[GENERATIONS];
	int64_t		length;			/* T */
	double		bits_per_key;
	int64_t		newest;
	uint64_t	first_keys;		/* the first generation's sizing */
} TimeBlocks;

/* odd constants: each word's bit comes from h.b times its own salt */
static const uint64_t salts[BLOCK_WORDS] = {
	UINT64_C(0x47b6137b44974d91), UINT64_C(0x8824ad5ba2b7289d),
	UINT64_C(0x705495c72df1424b), UINT64_C(0x9efc49475c6bfb31),
	UINT64_C(0xd6c4d5b5d2f3a1e7), UINT64_C(0x2e2f7c1bb2b4ba41),
	UINT64_C(0x5f1a3b7c9d2e4f61), UINT64_C(0xa1b2c3d4e5f60719)
};

static void
generation_start(TimeBlocks *tb, Generation *g, int64_t id, uint64_t expected_keys)
{
	/*
	 * (A power of two of blocks would let generations fold onto each other
	 * exactly; sized exactly here, to see the bits a target needs.)
	 */
	uint64_t	nblocks = (uint64_t) ceil(expected_keys * tb->bits_per_key / 512.0);

	if (nblocks != g->nblocks)
	{
		free(g->words);
		g->words = aligned_alloc(64, nblocks * BLOCK_WORDS * sizeof(uint64_t));
		g->nblocks = nblocks;
	}
	memset(g->words, 0, nblocks * BLOCK_WORDS * sizeof(uint64_t));
	g->id = id;
	g->keys = 0;
}

static inline uint64_t *
block_of(const Generation *g, TlbfHash h)
{
	uint64_t	block = (uint64_t) (((unsigned __int128) h.a * g->nblocks) >> 64);

	return &g->words[block * BLOCK_WORDS];
}

static void
tb_add(TimeBlocks *tb, TlbfHash h, TlbfTime at)
{
	int64_t		id = at / tb->length;
	Generation *g = &tb->gens[id % GENERATIONS];
	uint64_t   *block;

	if (id != tb->newest)
	{
		/* sized from the keys the previous generation took */
		Generation *previous = &tb->gens[tb->newest % GENERATIONS];
		uint64_t	expected = tb->newest < 0 ? tb->first_keys : previous->keys;

		generation_start(tb, g, id, expected > 0 ? expected : 1);
		tb->newest = id;
	}
	block = block_of(g, h);
	for (int j = 0; j < BLOCK_WORDS; j++)
		block[j] |= UINT64_C(1) << ((h.b * salts[j]) >> 58);
	g->keys++;
}

static bool
tb_has(const TimeBlocks *tb, TlbfHash h, TlbfTime at, int64_t window)
{
	int64_t		oldest = (at - window) / tb->length;
	int64_t		newest = at / tb->length;
	const uint64_t *blocks[GENERATIONS];
	int			n = 0;

	for (int64_t id = newest; id >= oldest && n < GENERATIONS; id--)
	{
		const Generation *g = &tb->gens[id % GENERATIONS];

		if (g->id != id)
			continue;
		blocks[n] = block_of(g, h);
		__builtin_prefetch(blocks[n]);
		n++;
	}
	for (int i = 0; i < n; i++)
	{
		bool		all = true;

		for (int j = 0; j < BLOCK_WORDS && all; j++)
			all = (blocks[i][j] >> ((h.b * salts[j]) >> 58)) & 1;
		if (all)
			return true;
	}
	return false;
}

static size_t
tb_bytes(const TimeBlocks *tb)
{
	size_t		bytes = 0;

	for (int i = 0; i < GENERATIONS; i++)
		if (tb->gens[i].id >= 0)
			bytes += tb->gens[i].nblocks * BLOCK_WORDS * sizeof(uint64_t);
	return bytes;
}

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static TlbfHash
key_hash(uint64_t key)
{
	return tlbf_hash_bytes(&key, sizeof(key), 0);
}

static int
compare_doubles(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

static double
median(double *v)
{
	qsort(v, ROUNDS, sizeof(double), compare_doubles);
	return v[ROUNDS / 2];
}

static volatile long sink;

/*
 * One stream of 'live' keys per span, evenly spaced, both structures fed
 * the same keys at the same times; two spans first to reach the steady
 * state.  bits_per_key: the prototype's bits per key of a generation.
 */
static void
bench(long live, double bits_per_key)
{
	TlbfParams	params = {SPAN, 0.01, (uint64_t) live, 0, 0, 0};
	TlbfProblem problem;
	TlbfMemory	memory;
	Tlbf	   *f;
	TimeBlocks	tb;
	int64_t		gap = SPAN / live;
	TlbfTime	at = START;
	uint64_t	key = 0;
	long		ops = live < 1000000 ? live : 1000000;
	double		t_insert[ROUNDS], b_insert[ROUNDS], t_present[ROUNDS],
				b_present[ROUNDS], t_absent[ROUNDS], b_absent[ROUNDS];
	long		found = 0,
				fp_core = 0,
				fp_blocks = 0,
				missed_core = 0,
				missed_blocks = 0,
				asked_live = 0;

	if (!tlbf_check_params(&params, &problem))
		abort();
	f = heap_filter(&params, &memory);
	memset(&tb, 0, sizeof(tb));
	for (int i = 0; i < GENERATIONS; i++)
		tb.gens[i].id = -1;
	tb.length = SPAN / PARTS;
	tb.bits_per_key = bits_per_key;
	tb.newest = -1;
	tb.first_keys = (uint64_t) live / PARTS;

	for (long i = 0; i < 2 * live; i++)
	{
		TlbfHash	h = key_hash(key++);

		at += gap;
		tlbf_insert(&f, &memory, h, at);
		tb_add(&tb, h, at);
	}

	for (int r = 0; r < ROUNDS; r++)
	{
		double		t0;
		uint64_t	first = key;
		TlbfTime	first_at = at;

		/* insertions: the next 'ops' keys of the stream, to each */
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
		{
			at += gap;
			tlbf_insert(&f, &memory, key_hash(key++), at);
		}
		t_insert[r] = (now_ns() - t0) / ops;
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
		{
			first_at += gap;
			tb_add(&tb, key_hash(first + i), first_at);
		}
		b_insert[r] = (now_ns() - t0) / ops;

		/* present: keys of the last span, spread over it */
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			found += tlbf_query(f, key_hash(key - 1 - (uint64_t) i * (live / ops)), at, SPAN);
		t_present[r] = (now_ns() - t0) / ops;
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			found += tb_has(&tb, key_hash(key - 1 - (uint64_t) i * (live / ops)), at, SPAN);
		b_present[r] = (now_ns() - t0) / ops;

		/* absent: keys never added */
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			fp_core += tlbf_query(f, key_hash((UINT64_C(1) << 62) + r * ops + i), at, SPAN);
		t_absent[r] = (now_ns() - t0) / ops;
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			fp_blocks += tb_has(&tb, key_hash((UINT64_C(1) << 62) + r * ops + i), at, SPAN);
		b_absent[r] = (now_ns() - t0) / ops;
	}
	sink = found;

	/* every key of the last span, asked of both (no false negatives) */
	for (uint64_t k = key - (uint64_t) live + 1; k < key; k++)
	{
		TlbfHash	h = key_hash(k);

		asked_live++;
		missed_core += !tlbf_query(f, h, at, SPAN);
		missed_blocks += !tb_has(&tb, h, at, SPAN);
	}

	printf("%10ld %5.1f | core %5.1f ns %5.1f ns %5.1f ns %5.2f%% %5.1f b | blocks %5.1f ns %5.1f ns %5.1f ns %5.2f%% %5.1f b | x %4.2f %4.2f %4.2f | missed %ld %ld of %ld\n",
		   live, bits_per_key,
		   median(t_insert), median(t_present), median(t_absent),
		   100.0 * fp_core / (ROUNDS * ops), tlbf_total_words(f) * 64.0 / live,
		   median(b_insert), median(b_present), median(b_absent),
		   100.0 * fp_blocks / (ROUNDS * ops), tb_bytes(&tb) * 8.0 / live,
		   median(b_insert) / median(t_insert), median(b_present) / median(t_present),
		   median(b_absent) / median(t_absent),
		   missed_core, missed_blocks, asked_live);
	for (int i = 0; i < GENERATIONS; i++)
		free(tb.gens[i].words);
	free(f);
	if (missed_core > 0 || missed_blocks > 0)
		exit(1);
}

int
main(int argc, char **argv)
{
	long		max_live = argc > 1 ? atol(argv[1]) : 10000000;
	double		bits[] = {12, 13.5, 15};

	printf("Layouts on one stream (1%% target, span 60 s, %d generations of span/%d; median of %d rounds)\n",
		   GENERATIONS, PARTS, ROUNDS);
	printf("%10s %5s | core: insert, present, absent, FPR, bits/live key | time-aligned blocks: the same | blocks / core | false negatives\n",
		   "live keys", "b/key");
	for (long live = 1000000; live <= max_live; live *= 10)
		for (int i = 0; i < (int) (sizeof(bits) / sizeof(bits[0])); i++)
			bench(live, bits[i]);
	return 0;
}
