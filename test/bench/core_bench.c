/*
 * core_bench.c
 *	  Nanoseconds per insertion and per query (present and absent keys) of
 *	  the core at 10k, 1M and 10M live items at 1%, next to a plain Bloom
 *	  filter with the same number of bits and the same k, in the same run.
 *
 *	  build/bench/core_bench [max-live-items]
 *
 * The plain filter hashes the same way (one XXH3-128, double hashing,
 * multiply-shift), so the ratio shows what the slices and their bookkeeping
 * cost.  Each figure is the median of five rounds.
 *
 * The second table does the same for format 3 (src/core/tb_*.c) at 1M and
 * 10M live keys: against a plain Bloom filter with its bits and its k, min
 * and median of the rounds, with the false-positive rate of both over the
 * absent keys asked (the plain filter holds only the live keys).  Its
 * insertions are timed one at a time (tb_insert), and in batches of 1,024
 * (tb_insert_many, as an aggregate with a declared capacity adds rows).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_timing.h"
#include "heap_memory.h"
#include "tb.h"
#include "tlbf.h"

#define SECOND	INT64_C(1000000)
#define SPAN	(60 * SECOND)
#define START	INT64_C(757382400000000)
#define BATCH	1024			/* keys a tb_insert_many call takes, as agg_format3.c */

typedef struct PlainBloom
{
	uint64_t   *words;
	uint64_t	nbits;
	int			k;
} PlainBloom;

static inline uint64_t
position(TlbfHash h, int j, uint64_t nbits)
{
	uint64_t	x = h.a + (uint64_t) j * h.b;

	return (uint64_t) (((unsigned __int128) x * nbits) >> 64);
}

static void
plain_add(PlainBloom *b, TlbfHash h)
{
	for (int j = 0; j < b->k; j++)
	{
		uint64_t	p = position(h, j, b->nbits);

		b->words[p >> 6] |= UINT64_C(1) << (p & 63);
	}
}

static bool
plain_has(const PlainBloom *b, TlbfHash h)
{
	for (int j = 0; j < b->k; j++)
	{
		uint64_t	p = position(h, j, b->nbits);

		if (!((b->words[p >> 6] >> (p & 63)) & 1))
			return false;
	}
	return true;
}

static volatile long sink;

static void
bench(long live)
{
	TlbfParams	params = {SPAN, 0.01, (uint64_t) live, 0, 0, 0};
	TlbfProblem problem;
	TlbfMemory	memory;
	Tlbf	   *f;
	PlainBloom	plain;
	int64_t		gap = SPAN / live;
	TlbfTime	at = START;
	uint64_t	key = 0;
	long		ops = live < 1000000 ? live : 1000000;
	double		t_insert[ROUNDS], p_insert[ROUNDS], t_present[ROUNDS],
				p_present[ROUNDS], t_absent[ROUNDS], p_absent[ROUNDS];
	long		found = 0;

	if (!tlbf_check_params(&params, &problem))
		abort();
	f = heap_filter(&params, &memory);
	/* two spans to reach the steady state */
	for (long i = 0; i < 2 * live; i++)
	{
		at += gap;
		tlbf_insert(&f, &memory, key_hash(key++), at);
	}
	plain.nbits = tlbf_total_words(f) * 64;
	plain.k = f->k;
	plain.words = calloc(plain.nbits / 64, sizeof(uint64_t));
	for (uint64_t k = key - live; k < key; k++)
		plain_add(&plain, key_hash(k));

	for (int r = 0; r < ROUNDS; r++)
	{
		double		t0;
		uint64_t	first = key;

		/* insertions: the next 'ops' keys of the stream */
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
		{
			at += gap;
			tlbf_insert(&f, &memory, key_hash(key++), at);
		}
		t_insert[r] = (now_ns() - t0) / ops;
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			plain_add(&plain, key_hash(first + i));
		p_insert[r] = (now_ns() - t0) / ops;

		/* present: keys from the last span, spread over it */
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			found += tlbf_query(f, key_hash(key - 1 - (uint64_t) i * (live / ops)), at, SPAN);
		t_present[r] = (now_ns() - t0) / ops;
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			found += plain_has(&plain, key_hash(key - 1 - (uint64_t) i * (live / ops)));
		p_present[r] = (now_ns() - t0) / ops;

		/* absent: keys never added */
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			found += tlbf_query(f, key_hash((UINT64_C(1) << 62) + r * ops + i), at, SPAN);
		t_absent[r] = (now_ns() - t0) / ops;
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			found += plain_has(&plain, key_hash((UINT64_C(1) << 62) + r * ops + i));
		p_absent[r] = (now_ns() - t0) / ops;
	}
	sink = found;

	printf("%10ld  %6.1f MB %4u |  insert %6.1f / %6.1f = %4.2fx |  present %6.1f / %6.1f = %4.2fx |  absent %6.1f / %6.1f = %4.2fx\n",
		   live, tlbf_size(f) / 1e6, f->nslices,
		   median(t_insert), median(p_insert), median(t_insert) / median(p_insert),
		   median(t_present), median(p_present), median(t_present) / median(p_present),
		   median(t_absent), median(p_absent), median(t_absent) / median(p_absent));
	free(plain.words);
	free(f);
}

static double
minimum(const double *v)
{
	double		m = v[0];

	for (int i = 1; i < ROUNDS; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

static void
print_pair(const char *what, double *t, double *p)
{
	double		tmin = minimum(t),
				pmin = minimum(p);

	printf(" | %s %5.1f / %5.1f = %4.2fx, median %5.1f / %5.1f = %4.2fx", what,
		   tmin, pmin, tmin / pmin, median(t), median(p), median(t) / median(p));
}

/* Time blocks against a plain Bloom filter with the same bits and k. */
static void
bench_blocks(long live)
{
	TbParams	params = {SPAN, 0.01, (uint64_t) live, false, 0, 0};

	if (getenv("TB_GENERATIONS"))
		params.generations = atoi(getenv("TB_GENERATIONS"));
	TlbfProblem problem;
	TlbfMemory	memory = {heap_resize, NULL, 0, SIZE_MAX, false};
	TbFilter   *f;
	PlainBloom	plain;
	int64_t		gap = SPAN / live;
	TlbfTime	at = START;
	uint64_t	key = 0;
	long		ops = 1000000;
	double		t_insert[ROUNDS], p_insert[ROUNDS], t_many[ROUNDS], p_many[ROUNDS],
				t_present[ROUNDS], p_present[ROUNDS], t_absent[ROUNDS], p_absent[ROUNDS];
	long		found = 0,
				fp_t = 0,
				fp_p = 0;
	static TbKey batch[BATCH];

	if (!tb_check_params(&params, &problem))
		abort();
	f = malloc(tb_lines_offset(0));
	tb_init(f, &params);
	memory.allocated = tb_lines_offset(0);
	for (long i = 0; i < 2 * live; i++)
	{
		at += gap;
		tb_insert(&f, &memory, key_hash(key++), at);
	}
	plain.nbits = (tb_size(f) - tb_lines_offset(f->nbands)) * 8;
	plain.k = f->k;
	plain.words = calloc(plain.nbits / 64, sizeof(uint64_t));
	for (uint64_t k = key - live; k < key; k++)
		plain_add(&plain, key_hash(k));

	/* queries first, the plain filter holding exactly the live keys */
	for (int r = 0; r < ROUNDS; r++)
	{
		double		t0;

		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			found += tb_query(f, key_hash(key - 1 - (uint64_t) i * (live / ops)), at, SPAN);
		t_present[r] = (now_ns() - t0) / ops;
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			found += plain_has(&plain, key_hash(key - 1 - (uint64_t) i * (live / ops)));
		p_present[r] = (now_ns() - t0) / ops;

		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			fp_t += tb_query(f, key_hash((UINT64_C(1) << 62) + r * ops + i), at, SPAN);
		t_absent[r] = (now_ns() - t0) / ops;
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			fp_p += plain_has(&plain, key_hash((UINT64_C(1) << 62) + r * ops + i));
		p_absent[r] = (now_ns() - t0) / ops;
	}
	/* then insertions: the next keys of the stream (the plain filter's fill does not matter) */
	for (int r = 0; r < ROUNDS; r++)
	{
		double		t0;
		uint64_t	first = key;

		t0 = now_ns();
		for (long i = 0; i < ops; i++)
		{
			at += gap;
			tb_insert(&f, &memory, key_hash(key++), at);
		}
		t_insert[r] = (now_ns() - t0) / ops;
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			plain_add(&plain, key_hash(first + i));
		p_insert[r] = (now_ns() - t0) / ops;

		/* the next keys in batches, as an aggregate with a capacity adds them */
		first = key;
		t0 = now_ns();
		for (long i = 0; i < ops; i += BATCH)
		{
			int			n = ops - i < BATCH ? (int) (ops - i) : BATCH;

			for (int j = 0; j < n; j++)
			{
				at += gap;
				batch[j].hash = key_hash(key++);
				batch[j].at = at;
			}
			tb_insert_many(&f, &memory, batch, n);
		}
		t_many[r] = (now_ns() - t0) / ops;
		t0 = now_ns();
		for (long i = 0; i < ops; i++)
			plain_add(&plain, key_hash(first + i));
		p_many[r] = (now_ns() - t0) / ops;
	}
	sink = found;
	if (found != 2 * ROUNDS * ops)
	{
		printf("a present key was reported absent\n");
		exit(1);
	}
	printf("%10ld  %6.1f MB %5.1f", live, tb_size(f) / 1e6, tb_size(f) * 8.0 / live);
	print_pair("insert", t_insert, p_insert);
	print_pair("in batches", t_many, p_many);
	print_pair("present", t_present, p_present);
	print_pair("absent", t_absent, p_absent);
	printf(" | FPR %.2f%% / %.2f%%\n", 100.0 * fp_t / (ROUNDS * ops), 100.0 * fp_p / (ROUNDS * ops));
	free(plain.words);
	free(f);
}

int
main(int argc, char **argv)
{
	long		max_live = argc > 1 ? atol(argv[1]) : 10000000;

	printf("Core: ns per operation, tlbf / plain Bloom filter with the same bits and k (error rate 1%%, median of %d rounds)\n", ROUNDS);
	printf("%10s  %9s %4s |\n", "live items", "size", "slices");
	for (long live = 10000; live <= max_live; live *= 100)
		bench(live);
	if (max_live >= 10000000)
		bench(10000000);

	printf("\nFormat 3: ns per operation, format 3 / plain Bloom filter with the same bits\n"
		   "and k, min and median of %d rounds (error rate 1%%; bits per live key)\n", ROUNDS);
	for (long live = 1000000; live <= max_live; live *= 10)
		bench_blocks(live);
	return 0;
}
