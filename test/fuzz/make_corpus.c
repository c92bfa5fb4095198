/*
 * make_corpus.c
 *	  Seed inputs for the fuzz targets, generated rather than committed:
 *	  valid values of many shapes, written in each target's input format.
 *
 *	  make_corpus DIR   writes DIR/<target>/<n>-<shape> for every target
 *
 * Shapes: empty filters; filters after constant, bursty, out-of-order,
 * same-instant, repeating and pausing streams; unions (same and different
 * k); partly and fully retired filters; filters truncated by a size cap;
 * for several spans, seeds, error rates and explicit (k, l).  And a few of
 * them with one field at an end of its valid range (edge_values.h): values
 * the core never writes but validation accepts, which the fuzzer would
 * otherwise have to find byte by byte.  Capacities
 * are small so that values stay a few kilobytes: the fuzzer mutates short
 * inputs much faster, and the shapes, not the sizes, are what matter.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "edge_values.h"
#include "heap_memory.h"
#include "tb.h"
#include "tlbf.h"

#include "common/base64.h"

#define SECOND		INT64_C(1000000)
#define START		INT64_C(757382400000000)	/* 2024-01-01 */
#define MAX_VALUES	512

typedef struct Value
{
	char		name[64];
	Tlbf	   *f;				/* a copy of exactly tlbf_size(f) bytes */
} Value;

static Value values[MAX_VALUES];
static int	nvalues;
static uint64_t rng_state = 42;

static uint64_t
rng_next(void)
{
	uint64_t	z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static void
fail(const char *what)
{
	fprintf(stderr, "make_corpus: %s\n", what);
	exit(1);
}

/* Keep a copy of a filter, which must be valid: seeds are valid values. */
static void
keep(const char *name, const Tlbf *f)
{
	TlbfProblem problem;
	size_t		size = tlbf_size(f);

	if (!tlbf_validate(f, size, &problem))
	{
		fprintf(stderr, "make_corpus: %s is not valid: %s\n", name, problem.message);
		exit(1);
	}
	if (nvalues == MAX_VALUES)
		fail("too many values");
	snprintf(values[nvalues].name, sizeof(values[nvalues].name), "%s", name);
	values[nvalues].f = malloc(size);
	memcpy(values[nvalues].f, f, size);
	nvalues++;
}

/* ---- streams ------------------------------------------------------------ */

typedef struct Params
{
	const char *name;
	double		error_rate;
	int			k;
	int			l;
} Params;

typedef struct Filter
{
	Tlbf	   *f;
	TlbfMemory	memory;
} Filter;

static void
create(Filter *t, int64_t span, const Params *p, uint64_t capacity, uint64_t seed)
{
	TlbfParams	params = {span, p->error_rate, capacity, p->k, p->l, seed};
	TlbfProblem problem;

	if (!tlbf_check_params(&params, &problem))
		fail(problem.message);
	t->f = heap_filter(&params, &t->memory);
}

static void
add(Filter *t, uint64_t key, TlbfTime at)
{
	if (tlbf_insert(&t->f, &t->memory, tlbf_hash_bytes(&key, sizeof(key), t->f->seed), at) != TLBF_OK)
		fail("an insertion failed");
}

typedef enum Stream
{
	CONSTANT,
	BURSTY,
	OUT_OF_ORDER,
	SAME_INSTANT,
	REPEATING,
	PAUSING,
	NSTREAMS
} Stream;

static const char *const stream_names[NSTREAMS] = {
	"constant", "bursty", "out_of_order", "same_instant", "repeating", "pausing"
};

/* n keys over about three spans, in the stream's pattern. */
static void
feed(Filter *t, Stream stream, int n, int64_t span)
{
	int64_t		step = 3 * span / n;
	TlbfTime	at = START;

	for (int i = 0; i < n; i++)
	{
		uint64_t	key = (uint64_t) i;

		switch (stream)
		{
			case CONSTANT:
				at = START + i * step;
				break;
			case BURSTY:
				/* 40 keys in one instant, then a third of a span of quiet */
				at = START + (i / 40) * (span / 3);
				break;
			case OUT_OF_ORDER:
				at = START + i * step - (int64_t) (rng_next() % 5) * step;
				break;
			case SAME_INSTANT:
				at = START;
				break;
			case REPEATING:
				key = (uint64_t) i % 7;
				at = START + i * step;
				break;
			case PAUSING:
				/* a pause longer than the span halfway: a fresh start */
				at = START + i * step / 4 + (i >= n / 2 ? 2 * span : 0);
				break;
			default:
				fail("unknown stream");
		}
		add(t, key, at);
	}
}

/* ---- the shapes --------------------------------------------------------- */

static const Params param_sets[] = {
	{"e01", 0.01, 0, 0},
	{"e1", 0.1, 0, 0},
	{"e001", 0.001, 0, 0},
	{"k1l1", 0.01, 1, 1},
	{"k3l5", 0.05, 3, 5},
	{"k2l60", 0.01, 2, 60},
	{"k40l2", 0.001, 40, 2},
};

#define NPARAMS (sizeof(param_sets) / sizeof(param_sets[0]))

static void
make_values(void)
{
	const int64_t spans[] = {60 * SECOND, 3600 * SECOND, 1, TLBF_MAX_SPAN};
	const uint64_t seeds[] = {0, 0, 7, UINT64_C(0xDEADBEEF)};
	char		name[64];
	Filter		t;
	Filter		u;

	for (size_t s = 0; s < 4; s++)
	{
		/* empty filters: no slices yet */
		for (size_t p = 0; p < NPARAMS; p += 3)
		{
			create(&t, spans[s], &param_sets[p], 1000, seeds[s]);
			snprintf(name, sizeof(name), "empty-s%zu-%s", s, param_sets[p].name);
			keep(name, t.f);
			free(t.f);
		}

		/* every stream with the default parameters, a few with the others */
		for (size_t p = 0; p < NPARAMS; p++)
			for (int st = 0; st < NSTREAMS; st++)
			{
				if (p > 0 && (st + p + s) % 3 != 0)
					continue;
				create(&t, spans[s], &param_sets[p], 40, seeds[s]);
				/* k = 40 writes 40 slices per key: fewer keys keep it small */
				feed(&t, (Stream) st, param_sets[p].k >= 20 ? 24 : 150, spans[s]);
				snprintf(name, sizeof(name), "%s-s%zu-%s", stream_names[st], s, param_sets[p].name);
				keep(name, t.f);

				/* retired: part of it, then all of it (no slices, a newest time) */
				if (st == CONSTANT || st == BURSTY)
				{
					tlbf_drop_expired(t.f, t.f->newest - t.f->span / 2 + t.f->span);
					snprintf(name, sizeof(name), "retired-%s-s%zu-%s", stream_names[st], s, param_sets[p].name);
					keep(name, t.f);
					if (t.f->newest + 2 * t.f->span < TLBF_TIME_END)
					{
						tlbf_drop_expired(t.f, t.f->newest + 2 * t.f->span);
						snprintf(name, sizeof(name), "all-retired-%s-s%zu-%s", stream_names[st], s, param_sets[p].name);
						keep(name, t.f);
					}
				}
				free(t.f);
			}

		/* truncated: a size cap while growing, and the union's truncation */
		create(&t, spans[s], &param_sets[0], 40, seeds[s]);
		t.memory.max_bytes = 2400;
		feed(&t, CONSTANT, 300, spans[s]);
		snprintf(name, sizeof(name), "capped-s%zu", s);
		keep(name, t.f);
		tlbf_truncate_to(t.f, tlbf_size(t.f) / 2, t.f->newest);
		snprintf(name, sizeof(name), "truncated-s%zu", s);
		keep(name, t.f);
		free(t.f);

		/* unions: two streams, and two error rates (k 10 and 7) */
		for (int pair = 0; pair < 2; pair++)
		{
			const Tlbf *inputs[2];
			Tlbf	   *out;

			create(&t, spans[s], &param_sets[0], 40, seeds[s]);
			create(&u, spans[s], &param_sets[pair], 40, seeds[s]);
			feed(&t, CONSTANT, 100, spans[s]);
			feed(&u, pair ? BURSTY : OUT_OF_ORDER, 100, spans[s]);
			inputs[0] = t.f;
			inputs[1] = u.f;
			out = malloc(tlbf_merge_bytes(inputs, 2));
			tlbf_merge(out, inputs, 2);
			snprintf(name, sizeof(name), "union-s%zu-%s", s, pair ? "k10k7" : "streams");
			keep(name, out);
			free(out);
			free(t.f);
			free(u.f);
		}
	}
}

/* Each edge of edge_values.h on a few of the values above, where valid. */
static void
make_edge_values(void)
{
	static const char *const bases[] = {
		"constant-s0-e01", "constant-s0-k1l1", "union-s0-k10k7", "empty-s0-e01",
		"all-retired-constant-s0-e01"
	};
	int			before = nvalues;

	for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
	{
		const Tlbf *base = NULL;

		for (int i = 0; i < before && base == NULL; i++)
			if (strcmp(values[i].name, bases[b]) == 0)
				base = values[i].f;
		if (base == NULL)
			fail("a base value for the edges is missing");
		for (int edge = 0; edge < EDGE_COUNT; edge++)
		{
			size_t		size = tlbf_size(base);
			Tlbf	   *f = malloc(size);
			TlbfProblem problem;
			char		name[64];

			memcpy(f, base, size);
			edge_set(f, edge);
			if (tlbf_validate(f, size, &problem))
			{
				snprintf(name, sizeof(name), "edge%d-%s", edge, bases[b]);
				keep(name, f);
			}
			free(f);
		}
	}
}

/* ---- writing the targets' inputs ---------------------------------------- */

static const char *out_dir;

static void
make_dir(const char *path)
{
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		fail("cannot create a directory");
}

static void
write_file(const char *target, int n, const char *name, const void *data, size_t len)
{
	char		path[512];
	FILE	   *file;

	snprintf(path, sizeof(path), "%s/%s/%04d-%s", out_dir, target, n, name);
	file = fopen(path, "wb");
	if (file == NULL || fwrite(data, 1, len, file) != len || fclose(file) != 0)
		fail("cannot write a corpus file");
}

/* A value's payload: what follows the varlena length word. */
static const char *
payload(const Tlbf *f, size_t *len)
{
	*len = tlbf_size(f) - 4;
	return (const char *) f + 4;
}

static void
write_text(int n, const Value *v)
{
	size_t		len;
	const char *bytes = payload(v->f, &len);
	int			room = pg_b64_enc_len((int) len);
	char	   *text = malloc(room);
	int			written = pg_b64_encode(bytes, (int) len, text, room);

	if (written < 0)
		fail("base64 encoding failed");
	write_file("fuzz_text", n, v->name, text, (size_t) written);
	free(text);
}

static void
write_raw(const char *target, int n, const Value *v)
{
	size_t		len;
	const char *bytes = payload(v->f, &len);

	write_file(target, n, v->name, bytes, len);
}

/* fuzz_union: a length word (24 bits of length, 8 of cap), then a, then b. */
static void
write_pair(int n, const Value *a, const Value *b, uint8_t cap)
{
	size_t		len_a;
	size_t		len_b;
	const char *pa = payload(a->f, &len_a);
	const char *pb = payload(b->f, &len_b);
	char	   *buffer = malloc(4 + len_a + len_b);
	uint32_t	word = (uint32_t) len_a | (uint32_t) cap << 24;
	char		name[160];

	memcpy(buffer, &word, 4);
	memcpy(buffer + 4, pa, len_a);
	memcpy(buffer + 4 + len_a, pb, len_b);
	snprintf(name, sizeof(name), "%.60s+%.60s", a->name, b->name);
	write_file("fuzz_union", n, name, buffer, 4 + len_a + len_b);
	free(buffer);
}

/*
 * fuzz_operations: a 16-bit length and a value (or none, and parameter
 * bytes), the memory model, then operation bytes drawn at random: every
 * byte sequence is a valid program, so random ones are fine seeds.
 */
static void
write_operations(int n, const char *name, const Tlbf *f, const uint8_t *setup, size_t setup_len)
{
	uint8_t		buffer[16384];
	size_t		len_f = 0;
	const char *pf = f ? payload(f, &len_f) : NULL;
	size_t		pos = 0;
	size_t		nops = 64 + rng_next() % 448;
	uint16_t	len16 = (uint16_t) len_f;

	if (len_f > 0xFFFF || 2 + len_f + setup_len + nops > sizeof(buffer))
		return;
	memcpy(buffer + pos, &len16, 2);
	pos += 2;
	if (len_f > 0)
		memcpy(buffer + pos, pf, len_f);
	pos += len_f;
	memcpy(buffer + pos, setup, setup_len);
	pos += setup_len;
	for (size_t i = 0; i < nops; i++)
		buffer[pos++] = (uint8_t) rng_next();
	write_file("fuzz_operations", n, name, buffer, pos);
}

/*
 * Memory models for fuzz_operations (see place() there): growing under a
 * 64 kB scale cap; under a small cap (truncation); a fixed region; failing
 * resizes.  Each is the 'how' byte, the cap's bit count and 8 raw bytes.
 */
static const uint8_t memory_models[][14] = {
	{0x10, 16, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0},
	{0x10, 12, 0x00, 0x0A, 0, 0, 0, 0, 0, 0},
	{0x11, 14, 0x00, 0x20, 0, 0, 0, 0, 0, 0},
	{0x12, 16, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0x55, 0x00, 0x01, 0x80},
	{0x00, 22, 0xFF, 0xFF, 0x0F, 0, 0, 0, 0, 0},
};

static const size_t memory_model_len[] = {10, 10, 10, 14, 10};

/*
 * fuzz_format3: format 3 values (several bands, after a rise of the rate
 * and a burst; generations 1, 3, 7; error rates that take 1, 2 and 4 lines
 * a key), each followed by a memory model and operations; and parameter
 * bytes for a new filter (a zero length first).
 */
static void
write_format3(void)
{
	static const double rates[] = {0.01, 0.001, 1e-6};
	static const int generations[] = {3, 1, 7};
	uint8_t		buffer[1 << 17];
	int			n = 0;

	for (int i = 0; i < 3; i++)
	{
		TbParams	p = {60 * INT64_C(1000000), rates[i], 200, false, generations[i], 7};
		TlbfProblem problem;
		TlbfMemory	memory = {heap_resize, NULL, 0, SIZE_MAX, false};
		TbFilter   *f = malloc(tb_lines_offset(0));
		TlbfTime	at = INT64_C(757382400000000);
		size_t		len = 0,
					size;
		char		name[32];

		if (!tb_check_params(&p, &problem))
			fail("format 3 parameters");
		tb_init(f, &p);
		memory.allocated = tb_lines_offset(0);
		for (long k = 0; k < 3000; k++)
		{
			/* steady, then ten times faster: a second band */
			at += k < 1500 ? 40000 : 4000;
			tb_insert(&f, &memory, tlbf_hash_int64(k, 0), at);
		}
		size = tb_size(f) - 4;
		if (size + 64 > sizeof(buffer))
			fail("a format 3 seed is too large");
		buffer[len++] = (uint8_t) size;
		buffer[len++] = (uint8_t) (size >> 8);
		memcpy(buffer + len, (char *) f + 4, size);
		len += size;
		buffer[len++] = (uint8_t) (i & 1 ? 5 : 4);	/* memory model: keep_live, cap */
		buffer[len++] = 0xff;
		buffer[len++] = 0x0f;
		for (int op = 0; op < 24; op++)
		{
			buffer[len++] = (uint8_t) (op * 37 + i);	/* the operation */
			buffer[len++] = (uint8_t) (8 + op % 40);	/* the step: bits */
			for (int b = 0; b < 8; b++)
				buffer[len++] = (uint8_t) rng_next();
		}
		snprintf(name, sizeof(name), "value-%d", i);
		write_file("fuzz_format3", n++, name, buffer, len);
		free(f);
	}
	for (int i = 0; i < 6; i++)
	{
		size_t		len = 0;
		char		name[32];

		buffer[len++] = 0;
		buffer[len++] = 0;
		for (int b = 0; b < 48; b++)
			buffer[len++] = (uint8_t) rng_next();
		buffer[2] = (uint8_t) (20 + i * 4);	/* span: bits */
		snprintf(name, sizeof(name), "new-%d", i);
		write_file("fuzz_format3", n++, name, buffer, len);
	}
}

int
main(int argc, char **argv)
{
	const char *targets[] = {"fuzz_text", "fuzz_binary", "fuzz_deserialize", "fuzz_union", "fuzz_operations",
	"fuzz_format3"};
	char		path[512];
	int			n = 0;

	if (argc != 2)
	{
		fprintf(stderr, "usage: make_corpus DIR\n");
		return 2;
	}
	out_dir = argv[1];
	make_dir(out_dir);
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++)
	{
		snprintf(path, sizeof(path), "%s/%s", out_dir, targets[i]);
		make_dir(path);
	}

	make_values();
	make_edge_values();
	for (int i = 0; i < nvalues; i++)
	{
		write_text(i, &values[i]);
		write_raw("fuzz_binary", i, &values[i]);
		write_raw("fuzz_deserialize", i, &values[i]);
		write_operations(i, values[i].name, values[i].f,
						 memory_models[i % 5], memory_model_len[i % 5]);
	}

	/* unions: each value with itself (whole and capped), and with the next
	 * value it may merge with, in both orders */
	for (int i = 0; i < nvalues; i++)
	{
		int			partners = 0;

		write_pair(n++, &values[i], &values[i], 255);
		write_pair(n++, &values[i], &values[i], 128);
		for (int j = i + 1; j < nvalues && partners < 1; j++)
			if (tlbf_merge_mismatch(values[i].f, values[j].f) == NULL)
			{
				write_pair(n++, &values[i], &values[j], 255);
				write_pair(n++, &values[j], &values[i], 200);
				partners++;
			}
	}

	/* operations on a new filter: parameter bytes instead of a value
	 * (see new_filter() there): rate and flags, span, capacity, k, l */
	for (int i = 0; i < 16; i++)
	{
		uint8_t		setup[64];
		size_t		len = 0;
		uint8_t		how = (uint8_t) rng_next();
		char		name[32];

		setup[len++] = how;
		setup[len++] = (uint8_t) (20 + i % 24);	/* span: bits */
		for (int b = 0; b < 8; b++)
			setup[len++] = (uint8_t) rng_next();
		setup[len++] = (uint8_t) (4 + i % 12);	/* capacity: bits */
		for (int b = 0; b < 8; b++)
			setup[len++] = (uint8_t) rng_next();
		if ((how & 8) || how % 8 >= 5)
		{
			/* explicit k and l */
			setup[len++] = (uint8_t) rng_next();
			setup[len++] = (uint8_t) rng_next();
			setup[len++] = (uint8_t) (rng_next() % 4);
		}
		if (how & 16)
			for (int b = 0; b < 8; b++)
				setup[len++] = (uint8_t) rng_next();
		memcpy(setup + len, memory_models[i % 5], memory_model_len[i % 5]);
		len += memory_model_len[i % 5];
		snprintf(name, sizeof(name), "new-%d", i);
		write_operations(nvalues + i, name, NULL, setup, len);
	}

	write_format3();
	printf("make_corpus: %d values, %d union pairs, in %s\n", nvalues, n, out_dir);
	for (int i = 0; i < nvalues; i++)
		free(values[i].f);
	return 0;
}
