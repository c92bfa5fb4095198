/*
 * union_bench.c
 *	  Unions of format 3 filters (src/core/tb_*.c, issue 36): one stream of
 *	  three spans cut into consecutive time ranges of equal length, a filter
 *	  built over each and all united (tb_union), against one filter built
 *	  over the whole stream; and the same stream's keys split between
 *	  builders over the whole time range (as shards are), with and without a
 *	  declared capacity.  Bytes of the value, the error rate of 1M keys never
 *	  added, and the keys of the last span missed (none may be).
 *
 *	  build/bench/union_bench [live-keys]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 1
#include "bench_timing.h"
#include "heap_memory.h"
#include "tb.h"

#define SECOND	INT64_C(1000000)
#define SPAN	(60 * SECOND)
#define START	INT64_C(757382400000000)	/* a multiple of span / 3 */

typedef struct Built
{
	TbFilter   *f;
	TlbfMemory	memory;
} Built;

static void
built_init(Built *b, long live, bool declared)
{
	TbParams	p = {SPAN, 0.01, (uint64_t) live, declared, 0, 0};
	TlbfProblem problem;

	if (!tb_check_params(&p, &problem))
		abort();
	b->f = malloc(tb_lines_offset(0));
	tb_init(b->f, &p);
	b->memory = (TlbfMemory) {heap_resize, NULL, tb_lines_offset(0), SIZE_MAX, false};
}

static void
add(Built *b, uint64_t key, TlbfTime at)
{
	if (tb_insert(&b->f, &b->memory, key_hash(key), at) != TLBF_OK)
		abort();
}

/* Bytes, FPR over 1M absent keys and missed keys of the last span, at 'at'. */
static void
report(const char *what, long live, int parts, const TbFilter *whole, const TbFilter *united,
	   long total, int64_t gap, TlbfTime at)
{
	long		fp[2] = {0, 0},
				missed[2] = {0, 0};
	const TbFilter *f[2] = {whole, united};

	for (long i = total - live; i < total; i++)
		for (int k = 0; k < 2; k++)
			if (START + (i + 1) * gap >= at - SPAN)
				missed[k] += !tb_query(f[k], key_hash((uint64_t) i), at, SPAN);
	for (long i = 0; i < 1000000; i++)
		for (int k = 0; k < 2; k++)
			fp[k] += tb_query(f[k], key_hash((UINT64_C(1) << 62) + (uint64_t) i), at, SPAN);
	printf("%-22s %10ld %5d | %10zu %5.2f%% | %10zu %5.2f%% %d bands | %5.3f | %ld, %ld\n",
		   what, live, parts, tb_size(whole), fp[0] / 1e4, tb_size(united), fp[1] / 1e4,
		   united->nbands, (double) tb_size(united) / tb_size(whole), missed[0], missed[1]);
}

int
main(int argc, char **argv)
{
	long		live = argc > 1 ? atol(argv[1]) : 1000000;
	long		total = 3 * live;
	int64_t		gap = SPAN / live;
	TlbfTime	at = START + total * gap;
	static const int cuts[] = {3, 5, 7, 12, 30};
	static const int shards[] = {2, 4, 8};

	printf("Format 3 unions (1%%, span 60 s, three spans of keys; whole filter | united | x bytes | missed)\n");
	printf("%-22s %10s %5s | %10s %6s | %10s %6s | %5s | %s\n", "parts", "live keys", "n", "whole B",
		   "FPR", "united B", "FPR", "x", "missed (whole, united)");
	for (int guess = 0; guess <= 1; guess++)
	for (int c = 0; c < (int) (sizeof(cuts) / sizeof(cuts[0])); c++)
	{
		Built		whole,
					part,
					united;
		/* every builder's first guess: the rate, or a tenth of it */
		long		first = guess == 0 ? live : live / 10;

		built_init(&whole, first, false);
		built_init(&united, first, false);
		for (int r = 0; r < cuts[c]; r++)
		{
			long		from = total * r / cuts[c],
						to = total * (r + 1) / cuts[c];

			built_init(&part, first, false);
			for (long i = from; i < to; i++)
			{
				add(&whole, (uint64_t) i, START + (i + 1) * gap);
				add(&part, (uint64_t) i, START + (i + 1) * gap);
			}
			if (tb_union(&united.f, &united.memory, part.f) != TLBF_OK)
				abort();
			free(part.f);
		}
		report(guess == 0 ? "ranges, guess right" : "ranges, guess 10x low", live, cuts[c],
			   whole.f, united.f, total, gap, at);
		free(whole.f);
		free(united.f);
	}
	for (int declared = 0; declared <= 1; declared++)
		for (int s = 0; s < (int) (sizeof(shards) / sizeof(shards[0])); s++)
		{
			Built		whole,
						part[8],
						united;

			built_init(&whole, live, declared);
			built_init(&united, live, declared);
			for (int p = 0; p < shards[s]; p++)
				built_init(&part[p], declared ? live : live / shards[s], declared);
			for (long i = 0; i < total; i++)
			{
				add(&whole, (uint64_t) i, START + (i + 1) * gap);
				add(&part[i % shards[s]], (uint64_t) i, START + (i + 1) * gap);
			}
			for (int p = 0; p < shards[s]; p++)
			{
				if (tb_union(&united.f, &united.memory, part[p].f) != TLBF_OK)
					abort();
				free(part[p].f);
			}
			report(declared ? "shards, declared" : "shards, sized apart", live, shards[s],
				   whole.f, united.f, total, gap, at);
			free(whole.f);
			free(united.f);
		}
	return 0;
}
