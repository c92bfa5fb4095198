/*
 * layout_bench.c
 *	  A prototype of another layout beside the core (issue 36), measured on
 *	  the same stream in the same run: nanoseconds per insertion and per
 *	  query (present and absent keys), false-positive rate, bits per live
 *	  key, and a check that no key added within the span is reported absent.
 *
 *	  build/bench/layout_bench [max-live-keys]
 *
 * The first prototype ("time blocks"): time is cut into generations of a
 * fixed length T = span / 4, and a key added at time t goes to generation
 * floor(t / T) only.  Each generation is a blocked Bloom filter: a key's
 * bits all lie in one block of 512 bits (one cache line), one bit in each
 * of its eight 64-bit words (as Parquet's split block filter does with 32-bit
 * words in 256-bit blocks).  A query at time 'at' asks the generations that
 * overlap (at - span, at]: five of them, whose blocks it prefetches before
 * reading any, so that their misses overlap instead of queueing.  A
 * generation is sized from the keys the previous one took; the oldest is
 * cleared when a new one starts.  When the rate rises, a generation that
 * is a sixteenth over its size starts another part, sized for the rest of
 * the generation at the rate seen so far (split); the program's second
 * table changes the rate fourfold and back, with and without splitting.
 * Its third unites filters built apart over consecutive time ranges, with
 * parts of a multiple of 64 blocks, folded to fit their keys.
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

#include "bench_timing.h"
#include "heap_memory.h"
#include "tlbf.h"

#define SECOND	INT64_C(1000000)
#define SPAN	(60 * SECOND)
#define START	INT64_C(757382400000000)

#define GENERATIONS	5			/* live: those overlapping one span */
#define PARTS		4			/* generations per span */
#define BLOCK_WORDS	8			/* 512 bits, one cache line */
#define MAX_SPLITS	8			/* parts of one generation, at most */
#define FOLD_UNIT	64			/* foldable parts: blocks a multiple of it */

/* One blocked Bloom filter, sized for 'capacity' keys. */
typedef struct Part
{
	uint64_t   *words;
	uint64_t	nblocks;
	uint64_t	capacity;
	uint64_t	keys;
} Part;

typedef struct Generation
{
	Part		parts[MAX_SPLITS];
	int			nparts;
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
	bool		split;			/* start another part when one is full */
	bool		foldable;		/* parts of a multiple of FOLD_UNIT blocks */
} TimeBlocks;

/* odd constants: each word's bit comes from h.b times its own salt */
static const uint64_t salts[BLOCK_WORDS] = {
	UINT64_C(0x47b6137b44974d91), UINT64_C(0x8824ad5ba2b7289d),
	UINT64_C(0x705495c72df1424b), UINT64_C(0x9efc49475c6bfb31),
	UINT64_C(0xd6c4d5b5d2f3a1e7), UINT64_C(0x2e2f7c1bb2b4ba41),
	UINT64_C(0x5f1a3b7c9d2e4f61), UINT64_C(0xa1b2c3d4e5f60719)
};

static void
part_start(TimeBlocks *tb, Part *p, uint64_t capacity)
{
	/*
	 * (A power of two of blocks would let generations fold onto each other
	 * exactly; sized exactly here, to see the bits a target needs.)
	 */
	uint64_t	nblocks = (uint64_t) ceil(capacity * tb->bits_per_key / 512.0);

	if (tb->foldable)
	{
		/* a multiple of FOLD_UNIT (below it, a power of two): halves as often */
		uint64_t	n = 1;

		while (n < nblocks && n < FOLD_UNIT)
			n *= 2;
		nblocks = n < FOLD_UNIT ? n : (nblocks + FOLD_UNIT - 1) / FOLD_UNIT * FOLD_UNIT;
		capacity = (uint64_t) (nblocks * 512.0 / tb->bits_per_key);
	}
	if (nblocks != p->nblocks)
	{
		free(p->words);
		p->words = aligned_alloc(64, nblocks * BLOCK_WORDS * sizeof(uint64_t));
		p->nblocks = nblocks;
	}
	memset(p->words, 0, nblocks * BLOCK_WORDS * sizeof(uint64_t));
	p->capacity = capacity;
	p->keys = 0;
}

static void
generation_start(TimeBlocks *tb, Generation *g, int64_t id, uint64_t expected_keys)
{
	part_start(tb, &g->parts[0], expected_keys);
	g->nparts = 1;
	g->id = id;
	g->keys = 0;
}

/*
 * A part is full, 'at' into its generation: the next is sized for the keys
 * the rest of the generation would bring at the rate the generation has
 * had so far, a quarter more (as the core sizes a new slice from the
 * observed rate), at least an eighth of the full one.
 */
static void
generation_split(TimeBlocks *tb, Generation *g, TlbfTime at)
{
	double		done = (double) (at - g->id * tb->length) / tb->length;
	double		rest = done > 0 ? g->keys * (1 - done) / done * 1.25 : g->keys;
	uint64_t	floor_keys = g->parts[g->nparts - 1].capacity / 8 + 1;

	part_start(tb, &g->parts[g->nparts], rest > floor_keys ? (uint64_t) rest : floor_keys);
	g->nparts++;
}

static inline uint64_t *
block_of(const Part *p, TlbfHash h)
{
	uint64_t	block = (uint64_t) (((unsigned __int128) h.a * p->nblocks) >> 64);

	return &p->words[block * BLOCK_WORDS];
}

static void
tb_add(TimeBlocks *tb, TlbfHash h, TlbfTime at)
{
	int64_t		id = at / tb->length;
	Generation *g = &tb->gens[id % GENERATIONS];
	Part	   *p;
	uint64_t   *block;

	if (id != tb->newest)
	{
		/* sized from the keys the previous generation took */
		Generation *previous = &tb->gens[tb->newest % GENERATIONS];
		uint64_t	expected = tb->newest < 0 ? tb->first_keys : previous->keys;

		generation_start(tb, g, id, expected > 0 ? expected : 1);
		tb->newest = id;
	}
	p = &g->parts[g->nparts - 1];
	/* (a sixteenth over: a generation whose keys vary by a few from the last one's keeps one part) */
	if (tb->split && p->keys >= p->capacity + p->capacity / 16 && g->nparts < MAX_SPLITS)
	{
		generation_split(tb, g, at);
		p = &g->parts[g->nparts - 1];
	}
	block = block_of(p, h);
	for (int j = 0; j < BLOCK_WORDS; j++)
		block[j] |= UINT64_C(1) << ((h.b * salts[j]) >> 58);
	p->keys++;
	g->keys++;
}

static bool
tb_has(const TimeBlocks *tb, TlbfHash h, TlbfTime at, int64_t window)
{
	int64_t		oldest = (at - window) / tb->length;
	int64_t		newest = at / tb->length;
	const uint64_t *blocks[GENERATIONS * MAX_SPLITS];
	int			n = 0;

	for (int64_t id = newest; id >= oldest; id--)
	{
		const Generation *g = &tb->gens[id % GENERATIONS];

		if (g->id != id)
			continue;
		for (int i = 0; i < g->nparts; i++)
		{
			blocks[n] = block_of(&g->parts[i], h);
			__builtin_prefetch(blocks[n]);
			n++;
		}
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
		for (int j = 0; tb->gens[i].id >= 0 && j < tb->gens[i].nparts; j++)
			bytes += tb->gens[i].parts[j].nblocks * BLOCK_WORDS * sizeof(uint64_t);
	return bytes;
}

static void
tb_init(TimeBlocks *tb, uint64_t first_keys, double bits_per_key, bool split)
{
	memset(tb, 0, sizeof(*tb));
	for (int i = 0; i < GENERATIONS; i++)
		tb->gens[i].id = -1;
	tb->length = SPAN / PARTS;
	tb->bits_per_key = bits_per_key;
	tb->newest = -1;
	tb->first_keys = first_keys;
	tb->split = split;
}

static void
tb_free(TimeBlocks *tb)
{
	for (int i = 0; i < GENERATIONS; i++)
		for (int j = 0; j < MAX_SPLITS; j++)
			free(tb->gens[i].parts[j].words);
}

/*
 * The second prototype ("interleaved"): four generations of span/3 share
 * one array of cache lines, each line four pieces of 128 bits, one per
 * generation (id mod 4): a query reads one line whatever the number of
 * generations, and clearing a generation clears its piece of every line.
 * All pieces have the size the first generation was given: no sizing from
 * the rate.  Each key sets one bit in each 64-bit word of its piece and
 * two more (four bits of 128).
 */
#define IL_PARTS	3
#define IL_GENS		4

typedef struct Interleaved
{
	uint64_t   *words;			/* nlines * 8 */
	uint64_t	nlines;
	int64_t		ids[IL_GENS];	/* the generation each piece holds */
	int64_t		length;
	int64_t		newest;
} Interleaved;

static void
il_init(Interleaved *il, uint64_t keys_per_generation, double bits_per_key)
{
	il->nlines = (uint64_t) ceil(keys_per_generation * bits_per_key / 128.0);
	il->words = aligned_alloc(64, il->nlines * BLOCK_WORDS * sizeof(uint64_t));
	memset(il->words, 0, il->nlines * BLOCK_WORDS * sizeof(uint64_t));
	for (int i = 0; i < IL_GENS; i++)
		il->ids[i] = -1;
	il->length = SPAN / IL_PARTS;
	il->newest = -1;
}

static inline uint64_t
il_line(const Interleaved *il, TlbfHash h)
{
	return (uint64_t) (((unsigned __int128) h.a * il->nlines) >> 64);
}

static void
il_add(Interleaved *il, TlbfHash h, TlbfTime at)
{
	int64_t		id = at / il->length;
	int			piece = (int) (id % IL_GENS);
	uint64_t   *w;

	if (id != il->newest)
	{
		for (uint64_t l = 0; l < il->nlines; l++)
		{
			il->words[l * BLOCK_WORDS + 2 * piece] = 0;
			il->words[l * BLOCK_WORDS + 2 * piece + 1] = 0;
		}
		il->ids[piece] = id;
		il->newest = id;
	}
	w = &il->words[il_line(il, h) * BLOCK_WORDS + 2 * piece];
	for (int j = 0; j < 4; j++)
		w[j & 1] |= UINT64_C(1) << ((h.b * salts[j]) >> 58);
}

static bool
il_has(const Interleaved *il, TlbfHash h, TlbfTime at, int64_t window)
{
	int64_t		oldest = (at - window) / il->length;
	const uint64_t *line = &il->words[il_line(il, h) * BLOCK_WORDS];
	uint64_t	want[2] = {0, 0};

	for (int j = 0; j < 4; j++)
		want[j & 1] |= UINT64_C(1) << ((h.b * salts[j]) >> 58);
	for (int piece = 0; piece < IL_GENS; piece++)
		if (il->ids[piece] >= oldest &&
			(line[2 * piece] & want[0]) == want[0] &&
			(line[2 * piece + 1] & want[1]) == want[1])
			return true;
	return false;
}

static volatile long sink;

/* The figures of one structure over the rounds. */
typedef struct Figures
{
	double		insert[ROUNDS],
				present[ROUNDS],
				absent[ROUNDS];
	long		false_positives;
	long		missed;
	double		bits;
} Figures;

static void
print_figures(const char *name, long live, double bits_per_key, Figures *x, Figures *core,
			  long asked_absent, long asked_live)
{
	printf("%10ld %5.1f | %-12s | %6.1f %6.1f %6.1f | %5.2f%% | %5.1f | %4.2f %4.2f %4.2f | %ld of %ld\n",
		   live, bits_per_key, name, median(x->insert), median(x->present), median(x->absent),
		   100.0 * x->false_positives / asked_absent, x->bits / live,
		   median(x->insert) / median(core->insert), median(x->present) / median(core->present),
		   median(x->absent) / median(core->absent), x->missed, asked_live);
}

/*
 * One stream of 'live' keys per span, evenly spaced, every structure fed
 * the same keys at the same times; two spans first to reach the steady
 * state.  bits_per_key: the prototypes' bits per key of a generation.
 * Timed one structure after another within a round, the rounds
 * interleaved; false negatives counted over every key of the last span.
 */
static bool
bench(long live, double bits_per_key)
{
	TlbfParams	params = {SPAN, 0.01, (uint64_t) live, 0, 0, 0};
	TlbfProblem problem;
	TlbfMemory	memory;
	Tlbf	   *f;
	TimeBlocks	tb;
	Interleaved il;
	int64_t		gap = SPAN / live;
	TlbfTime	at = START;
	uint64_t	key = 0;
	long		ops = live < 1000000 ? live : 1000000;
	Figures		core = {0},
				blocks = {0},
				inter = {0};
	long		found = 0,
				asked_live = 0;

	if (!tlbf_check_params(&params, &problem))
		abort();
	f = heap_filter(&params, &memory);
	tb_init(&tb, (uint64_t) live / PARTS, bits_per_key, true);
	il_init(&il, (uint64_t) live / IL_PARTS, bits_per_key);

	for (long i = 0; i < 2 * live; i++)
	{
		TlbfHash	h = key_hash(key++);

		at += gap;
		tlbf_insert(&f, &memory, h, at);
		tb_add(&tb, h, at);
		il_add(&il, h, at);
	}

	for (int r = 0; r < ROUNDS; r++)
	{
		double		t0;
		uint64_t	first = key;
		TlbfTime	first_at = at;
		TlbfTime	t;

		/* insertions: the next 'ops' keys of the stream, to each */
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
		{
			at += gap;
			tlbf_insert(&f, &memory, key_hash(key++), at);
		}
		core.insert[r] = (now_ns() - t0) / ops;
		t = first_at;
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
		{
			t += gap;
			tb_add(&tb, key_hash(first + i), t);
		}
		blocks.insert[r] = (now_ns() - t0) / ops;
		t = first_at;
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
		{
			t += gap;
			il_add(&il, key_hash(first + i), t);
		}
		inter.insert[r] = (now_ns() - t0) / ops;

		/* present: keys of the last span, spread over it */
#define PRESENT_KEY(i) key_hash(key - 1 - (uint64_t) (i) * (live / ops))
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			found += tlbf_query(f, PRESENT_KEY(i), at, SPAN);
		core.present[r] = (now_ns() - t0) / ops;
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			found += tb_has(&tb, PRESENT_KEY(i), at, SPAN);
		blocks.present[r] = (now_ns() - t0) / ops;
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			found += il_has(&il, PRESENT_KEY(i), at, SPAN);
		inter.present[r] = (now_ns() - t0) / ops;

		/* absent: keys never added */
#define ABSENT_KEY(i) key_hash((UINT64_C(1) << 62) + (uint64_t) r * ops + (i))
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			core.false_positives += tlbf_query(f, ABSENT_KEY(i), at, SPAN);
		core.absent[r] = (now_ns() - t0) / ops;
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			blocks.false_positives += tb_has(&tb, ABSENT_KEY(i), at, SPAN);
		blocks.absent[r] = (now_ns() - t0) / ops;
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			inter.false_positives += il_has(&il, ABSENT_KEY(i), at, SPAN);
		inter.absent[r] = (now_ns() - t0) / ops;
	}
	sink = found;

	/* every key of the last span, asked of each (no false negatives) */
	for (uint64_t k = key - (uint64_t) live + 1; k < key; k++)
	{
		TlbfHash	h = key_hash(k);

		asked_live++;
		core.missed += !tlbf_query(f, h, at, SPAN);
		blocks.missed += !tb_has(&tb, h, at, SPAN);
		inter.missed += !il_has(&il, h, at, SPAN);
	}
	core.bits = tlbf_total_words(f) * 64.0;
	blocks.bits = tb_bytes(&tb) * 8.0;
	inter.bits = il.nlines * 512.0;

	print_figures("core (APBF)", live, 0, &core, &core, ROUNDS * ops, asked_live);
	print_figures("time blocks", live, bits_per_key, &blocks, &core, ROUNDS * ops, asked_live);
	print_figures("interleaved", live, bits_per_key, &inter, &core, ROUNDS * ops, asked_live);
	tb_free(&tb);
	free(il.words);
	free(f);
	return core.missed == 0 && blocks.missed == 0 && inter.missed == 0;
}

/*
 * Fold a part of an even number of blocks onto half as many while its keys
 * fit the half: block j of the half is blocks 2j and 2j+1 OR'ed (a key's
 * block is floor(h.a * n / 2^64), and halving n halves it, rounding down;
 * its bits within the block come from h.b), so every key keeps its bits
 * and the part its error rate.
 */
static void
part_fold_to_fit(const TimeBlocks *tb, Part *p)
{
	while (p->nblocks % 2 == 0 &&
		   p->keys <= (uint64_t) (p->nblocks / 2 * 512.0 / tb->bits_per_key))
	{
		uint64_t	half = p->nblocks / 2;

		for (uint64_t j = 0; j < half; j++)
			for (int w = 0; w < BLOCK_WORDS; w++)
				p->words[j * BLOCK_WORDS + w] = p->words[2 * j * BLOCK_WORDS + w] |
					p->words[(2 * j + 1) * BLOCK_WORDS + w];
		p->nblocks = half;
		p->capacity = (uint64_t) (half * 512.0 / tb->bits_per_key);
	}
}

/* Take a part's words (the source gives them up). */
static void
part_move(Part *to, Part *from)
{
	free(to->words);
	*to = *from;
	memset(from, 0, sizeof(*from));
}

/*
 * dst |= src: each generation of src goes to dst, its parts folded to fit
 * their keys; a generation both hold keeps the parts of both side by side
 * (a key's bits are in the part that took it); an older one gives way.
 */
static void
tb_union(TimeBlocks *dst, TimeBlocks *src)
{
	for (int i = 0; i < GENERATIONS; i++)
	{
		Generation *s = &src->gens[i];
		Generation *d = &dst->gens[i];

		if (s->id < 0 || d->id > s->id)
			continue;
		if (d->id < s->id)
		{
			for (int j = 0; j < d->nparts; j++)
				d->parts[j].keys = 0;
			d->nparts = 0;
			d->id = s->id;
			d->keys = 0;
		}
		for (int j = 0; j < s->nparts && d->nparts < MAX_SPLITS; j++)
		{
			part_fold_to_fit(src, &s->parts[j]);
			part_move(&d->parts[d->nparts++], &s->parts[j]);
		}
		d->keys += s->keys;
		s->nparts = 0;
	}
	if (src->newest > dst->newest)
		dst->newest = src->newest;
}

/*
 * Filters of one stream built apart over consecutive time ranges and
 * united, against one built over the whole stream: 'live' keys a span for
 * three spans, cut into 'ranges' ranges of equal length (not aligned to
 * generations unless they happen to be).  Parts of a multiple of
 * FOLD_UNIT blocks, each folded to fit its keys at the end.  Bytes of the live
 * generations, the error rate, and the keys of the last span missed.
 */
static bool
unions(long live, double bits_per_key, int ranges)
{
	TimeBlocks	whole,
				united,
				part;
	int64_t		gap = SPAN / live;
	long		total = 3 * live;
	TlbfTime	at = START;
	long		asked = live < 1000000 ? live : 1000000;
	long		fp[2] = {0, 0},
				missed[2] = {0, 0};
	size_t		bytes[2];

	tb_init(&whole, (uint64_t) live / PARTS, bits_per_key, true);
	whole.foldable = true;
	tb_init(&united, (uint64_t) live / PARTS, bits_per_key, true);
	united.foldable = true;
	for (int r = 0; r < ranges; r++)
	{
		long		from = total * r / ranges;
		long		to = total * (r + 1) / ranges;

		tb_init(&part, (uint64_t) live / PARTS, bits_per_key, true);
		part.foldable = true;
		for (long i = from; i < to; i++)
		{
			TlbfHash	h = key_hash((uint64_t) i);
			TlbfTime	t = at + (i + 1) * gap;

			tb_add(&whole, h, t);
			tb_add(&part, h, t);
		}
		tb_union(&united, &part);
		tb_free(&part);
	}
	at += total * gap;
	for (int i = 0; i < GENERATIONS; i++)
		for (int j = 0; whole.gens[i].id >= 0 && j < whole.gens[i].nparts; j++)
			part_fold_to_fit(&whole, &whole.gens[i].parts[j]);
	for (long i = total - live + 1; i < total; i++)
	{
		TlbfHash	h = key_hash((uint64_t) i);

		missed[0] += !tb_has(&whole, h, at, SPAN);
		missed[1] += !tb_has(&united, h, at, SPAN);
	}
	for (long i = 0; i < asked; i++)
	{
		TlbfHash	h = key_hash((UINT64_C(1) << 62) + (uint64_t) i);

		fp[0] += tb_has(&whole, h, at, SPAN);
		fp[1] += tb_has(&united, h, at, SPAN);
	}
	/* only the generations a query at 'at' asks */
	for (int k = 0; k < 2; k++)
	{
		TimeBlocks *tb = k == 0 ? &whole : &united;

		bytes[k] = 0;
		for (int i = 0; i < GENERATIONS; i++)
			for (int j = 0; tb->gens[i].id >= (at - SPAN) / tb->length && j < tb->gens[i].nparts; j++)
				bytes[k] += tb->gens[i].parts[j].nblocks * BLOCK_WORDS * sizeof(uint64_t);
	}
	printf("%10ld %6d | %10zu %6.2f%% | %10zu %6.2f%% | %5.3f | %ld, %ld of %ld\n",
		   live, ranges, bytes[0], 100.0 * fp[0] / asked, bytes[1], 100.0 * fp[1] / asked,
		   (double) bytes[1] / bytes[0], missed[0], missed[1], live - 1);
	tb_free(&whole);
	tb_free(&united);
	return missed[0] == 0 && missed[1] == 0;
}

/*
 * When the rate changes: 'live' keys a span for two spans, then four times
 * as many for one span ("up"), then 'live' again for two ("down"), evenly
 * spaced within each phase.  At the end of each phase: the false-positive
 * rate of keys never added, the bits per key of the last span, the keys of
 * the last span missed (none may be), and ns per present and absent key.
 * Time blocks as above, and the same without splitting (a generation
 * sized from the one before, whatever comes).
 */
static bool
rates(long live, double bits_per_key)
{
	static const struct
	{
		const char *name;
		int			factor;
		int			spans;
	}			phases[] = {{"steady", 1, 2}, {"up x4", 4, 1}, {"down", 1, 2}};
	TlbfParams	params = {SPAN, 0.01, (uint64_t) live, 0, 0, 0};
	TlbfProblem problem;
	TlbfMemory	memory;
	Tlbf	   *f;
	TimeBlocks	split,
				fixed;
	TlbfTime	at = START;
	uint64_t	key = 0;
	long		asked = live < 1000000 ? live : 1000000;
	bool		ok = true;

	if (!tlbf_check_params(&params, &problem))
		abort();
	f = heap_filter(&params, &memory);
	tb_init(&split, (uint64_t) live / PARTS, bits_per_key, true);
	tb_init(&fixed, (uint64_t) live / PARTS, bits_per_key, false);
	for (int ph = 0; ph < (int) (sizeof(phases) / sizeof(phases[0])); ph++)
	{
		long		per_span = live * phases[ph].factor;
		int64_t		gap = SPAN / per_span;
		uint64_t	span_first = key;
		double		t0,
					ns[3][2];
		long		fp[3] = {0, 0, 0},
					missed[3] = {0, 0, 0},
					in_span;

		for (int sp = 0; sp < phases[ph].spans; sp++)
		{
			span_first = key;
			for (long i = 0; i < per_span; i++)
			{
				TlbfHash	h = key_hash(key++);

				at += gap;
				tlbf_insert(&f, &memory, h, at);
				tb_add(&split, h, at);
				tb_add(&fixed, h, at);
			}
		}
		/* the keys of the last span (a phase's last span has one rate) */
		in_span = (long) (key - span_first);
		for (uint64_t k = span_first + 1; k < key; k++)
		{
			TlbfHash	h = key_hash(k);

			missed[0] += !tlbf_query(f, h, at, SPAN);
			missed[1] += !tb_has(&split, h, at, SPAN);
			missed[2] += !tb_has(&fixed, h, at, SPAN);
		}
#define RATE_ABSENT(i) key_hash((UINT64_C(1) << 62) + (uint64_t) ph * asked + (i))
#define RATE_PRESENT(i) key_hash(key - 1 - (uint64_t) (i) * (in_span / asked))
		t0 = now_ns();
		for (long i = 0; i < asked; i++)
			fp[0] += tlbf_query(f, RATE_ABSENT(i), at, SPAN);
		ns[0][1] = (now_ns() - t0) / asked;
		t0 = now_ns();
		for (long i = 0; i < asked; i++)
			fp[1] += tb_has(&split, RATE_ABSENT(i), at, SPAN);
		ns[1][1] = (now_ns() - t0) / asked;
		t0 = now_ns();
		for (long i = 0; i < asked; i++)
			fp[2] += tb_has(&fixed, RATE_ABSENT(i), at, SPAN);
		ns[2][1] = (now_ns() - t0) / asked;
		t0 = now_ns();
		for (long i = 0; i < asked; i++)
			sink += tlbf_query(f, RATE_PRESENT(i), at, SPAN);
		ns[0][0] = (now_ns() - t0) / asked;
		t0 = now_ns();
		for (long i = 0; i < asked; i++)
			sink += tb_has(&split, RATE_PRESENT(i), at, SPAN);
		ns[1][0] = (now_ns() - t0) / asked;
		t0 = now_ns();
		for (long i = 0; i < asked; i++)
			sink += tb_has(&fixed, RATE_PRESENT(i), at, SPAN);
		ns[2][0] = (now_ns() - t0) / asked;

		printf("%10ld %-7s | %-18s | %6.1f %6.1f | %6.2f%% | %5.1f | %ld of %ld\n",
			   live, phases[ph].name, "core (APBF)", ns[0][0], ns[0][1],
			   100.0 * fp[0] / asked, tlbf_total_words(f) * 64.0 / in_span, missed[0], in_span - 1);
		printf("%10ld %-7s | %-18s | %6.1f %6.1f | %6.2f%% | %5.1f | %ld of %ld\n",
			   live, phases[ph].name, "time blocks, split", ns[1][0], ns[1][1],
			   100.0 * fp[1] / asked, tb_bytes(&split) * 8.0 / in_span, missed[1], in_span - 1);
		printf("%10ld %-7s | %-18s | %6.1f %6.1f | %6.2f%% | %5.1f | %ld of %ld\n",
			   live, phases[ph].name, "time blocks, fixed", ns[2][0], ns[2][1],
			   100.0 * fp[2] / asked, tb_bytes(&fixed) * 8.0 / in_span, missed[2], in_span - 1);
		ok &= missed[0] == 0 && missed[1] == 0 && missed[2] == 0;
	}
	tb_free(&split);
	tb_free(&fixed);
	free(f);
	return ok;
}

int
main(int argc, char **argv)
{
	long		max_live = argc > 1 ? atol(argv[1]) : 10000000;
	double		bits[] = {12, 13.5, 15};

	bool		ok = true;

	printf("Layouts on one stream (1%% target for the core, span 60 s; time blocks: %d generations of span/%d;\n"
		   "interleaved: %d of span/%d in one line; ns per operation, median of %d rounds)\n",
		   GENERATIONS, PARTS, IL_GENS, IL_PARTS, ROUNDS);
	printf("%10s %5s | %-12s | %6s %7s %6s | %6s | %5s | %-14s | %s\n", "live keys", "b/key",
		   "structure", "insert", "present", "absent", "FPR", "bits", "x core", "false negatives");
	for (long live = 1000000; live <= max_live; live *= 10)
		for (int i = 0; i < (int) (sizeof(bits) / sizeof(bits[0])); i++)
			ok &= bench(live, bits[i]);

	printf("\nWhen the rate changes (1%% target for the core; time blocks at 13.5 bits per key of a\n"
		   "generation; each phase's last span asked: ns per present and absent key, once)\n");
	printf("%10s %-7s | %-18s | %6s %6s | %7s | %5s | %s\n", "live keys", "phase", "structure",
		   "present", "absent", "FPR", "bits", "false negatives");
	for (long live = 1000000; live <= max_live; live *= 10)
		ok &= rates(live, 13.5);

	printf("\nUnions: filters built apart over consecutive time ranges of one stream (three spans),\n"
		   "united, against one built over it all (time blocks at 13.5 bits per key, parts of a multiple\n"
		   "of %d blocks folded to fit; bytes of the generations a query at the end asks)\n", FOLD_UNIT);
	printf("%10s %6s | %10s %7s | %10s %7s | %5s | %s\n", "live keys", "ranges", "whole B",
		   "FPR", "united B", "FPR", "x", "false negatives (whole, united)");
	for (long live = 1000000; live <= max_live; live *= 10)
	{
		static const int cuts[] = {3, 5, 7, 12, 30};

		for (int i = 0; i < (int) (sizeof(cuts) / sizeof(cuts[0])); i++)
			ok &= unions(live, 13.5, cuts[i]);
	}
	return ok ? 0 : 1;
}
