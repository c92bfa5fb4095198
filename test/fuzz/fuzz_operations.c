/*
 * fuzz_operations.c
 *	  A filter's life, driven by the input: tlbf_add at times moving forward,
 *	  backward, jumping or standing still, bursts of keys, contains with any
 *	  window, retire at any time, truncation to a cap, union with a copy of
 *	  itself, an earlier state or a filter of another k, and the read-only
 *	  functions.
 *
 * Input: a 16-bit length and that many bytes of a value, used if it
 * validates; otherwise parameters for a new filter are drawn from the bytes
 * that follow.  Then the memory model (growing up to a cap, or a fixed
 * region like a shared filter's; some resizes may fail), then one byte per
 * operation and its arguments, until the input ends.
 *
 * After every operation the filter must validate, and every key logged as
 * added must be found at its time plus the span (the product's promise: no
 * false negatives), as long as the size cap has dropped no live slice
 * ('truncated' unchanged and not stuck at its maximum; otherwise the log
 * starts over).  A key's
 * time is that of its insertion as the core records it: an older time is
 * moved up to the newest one seen.  Keys the filter may rightly forget
 * leave the log: those older than the span at the newest insertion (a
 * shift drops them), and those older than the span at a retirement or
 * truncation time.
 */
#include "fuzz_common.h"
#include "fuzz_exercise.h"
#include "fuzz_memory.h"
#include "fuzz_merge.h"

#define LOG_SIZE	16			/* keys checked after each operation */
/*
 * Bounds on the time an input takes: operations, insertions, and the
 * slices visited by checks (validation and queries take time in proportion
 * to the slices, and unions may bring a filter to 65,536 of them).
 */
#define MAX_OPS		64
#define MAX_INSERTS 1024
#define MAX_WORK	(UINT64_C(1) << 18)
#define DISTINCT_BASE (UINT64_C(1) << 40)	/* keys that occur once */

typedef struct Logged
{
	uint64_t	key;
	TlbfTime	at;
} Logged;

typedef struct Run
{
	Tlbf	   *f;
	FuzzMemory	memory;
	Tlbf	   *snapshot;		/* an earlier state, for unions */
	TlbfTime	clock;			/* the time operations happen at */
	Logged		log[LOG_SIZE];
	int			nlog;
	uint64_t	logged;			/* keys offered to the log since it started */
	uint64_t	next_key;
	int			inserts;
	uint64_t	work;			/* slices checked so far */
	FuzzInput	in;
} Run;

/* ---- the key log ---------------------------------------------------- */

/*
 * Keys no longer promised from time t on: added before t - span (a shift
 * at t, or a retirement or truncation at t, may drop their slices).
 */
static void
forget_before(Run *r, TlbfTime t)
{
	int			kept = 0;

	for (int i = 0; i < r->nlog; i++)
		if (r->log[i].at >= t - r->f->span)
			r->log[kept++] = r->log[i];
	r->nlog = kept;
}

/*
 * Keep a uniform sample of the keys added since the log last started over
 * (reservoir sampling, with a fixed hash for the draw): old keys, the ones
 * a bug near the old end would lose, stay as likely as new ones.
 */
static void
log_key(Run *r, uint64_t key, TlbfTime at)
{
	uint64_t	slot = r->nlog;

	r->logged++;
	if (r->nlog == LOG_SIZE)
	{
		uint64_t	x = r->logged * UINT64_C(0x9E3779B97F4A7C15);

		slot = (x ^ (x >> 29)) % r->logged;
		if (slot >= LOG_SIZE)
			return;
	}
	else
		r->nlog++;
	r->log[slot].key = key;
	r->log[slot].at = at;
}

/* The log starts over: keys before now may be lost (the cap dropped them). */
static void
clear_log(Run *r)
{
	r->nlog = 0;
	r->logged = 0;
}

static bool
has_key(const Tlbf *f, uint64_t key, TlbfTime at, int64_t window)
{
	return tlbf_query(f, fuzz_key_hash(key, f->seed), at, window);
}

/* After every operation: valid, and no logged key lost. */
static void
check(Run *r)
{
	const Tlbf *f = r->f;

	r->work += f->nslices + 1;
	fuzz_check_valid(f, "the filter after an operation");
	FUZZ_CHECK(tlbf_size(f) <= r->memory.memory.allocated, "the filter fits in its memory");
	forget_before(r, f->newest == TLBF_NEVER ? TLBF_TIME_MIN : f->newest);
	for (int i = 0; i < r->nlog; i++)
	{
		const Logged *e = &r->log[i];

		FUZZ_CHECK(has_key(f, e->key, fuzz_add_time(e->at, f->span), f->span),
				   "a key added is found at its time plus the span");
		FUZZ_CHECK(has_key(f, e->key, f->newest, f->span),
				   "a key added within the span is found at the newest time");
	}
}

/* ---- drawing from the input ----------------------------------------- */

/*
 * A time near 'from': the same, a little or a span later or earlier, far
 * later, or anywhere.
 */
static TlbfTime
draw_time(Run *r, TlbfTime from)
{
	int64_t		span = r->f->span;
	uint8_t		how = fuzz_u8(&r->in);

	switch (how % 8)
	{
		case 0:
			return from;
		case 1:
			return fuzz_add_time(from, (int64_t) fuzz_scaled(&r->in, span / 16));
		case 2:
			/* the boundaries of the span */
			return fuzz_add_time(from, span - 1 + (how >> 3) % 3);
		case 3:
			return fuzz_add_time(from, span * (1 + (how >> 3) % 4) +
								 (int64_t) fuzz_scaled(&r->in, span));
		case 4:
			return fuzz_add_time(from, -(int64_t) fuzz_scaled(&r->in, span));
		case 5:
			return fuzz_add_time(from, -span * (1 + (how >> 3) % 4));
		case 6:
			return fuzz_any_time(fuzz_u64(&r->in));
		default:
			/* a steady rate */
			return fuzz_add_time(from, span / (1 + (how >> 3)));
	}
}

/* A key: one of a few that repeat, or one never used before. */
static uint64_t
draw_key(Run *r)
{
	uint8_t		b = fuzz_u8(&r->in);

	return b < 128 ? b % 16 : DISTINCT_BASE + r->next_key++;
}

/* A new filter's parameters; k and l given or chosen from the rate. */
static Tlbf *
new_filter(FuzzInput *in)
{
	/*
	 * Choosing (k, l) for a rate outside the APBF table is a search of
	 * milliseconds (memoized for one rate only): those rates get explicit
	 * k and l, or the fuzzer would spend its time there.
	 */
	static const double rates[] = {0.01, 0.1, 0.001, 1e-4, 1e-5, 0.5, 0.05, 1e-9};
	TlbfParams	params;
	TlbfProblem problem;
	uint8_t		how = fuzz_u8(in);
	Tlbf	   *f;

	params.span = 1 + (int64_t) fuzz_scaled(in, TLBF_MAX_SPAN - 1);
	params.error_rate = rates[how % 8];
	params.capacity = 1 + fuzz_scaled(in, TLBF_MAX_CAPACITY - 1);
	params.k = 0;
	params.l = 0;
	if ((how & 8) || how % 8 >= 5)
	{
		params.k = 1 + fuzz_u8(in) % TLBF_MAX_K;
		params.l = 1 + fuzz_u16(in) % TLBF_MAX_L;
	}
	params.seed = (how & 16) ? fuzz_u64(in) : 0;
	FUZZ_CHECK(tlbf_check_params(&params, &problem), "parameters in range are accepted");
	f = fuzz_malloc(sizeof(Tlbf));
	tlbf_init(f, &params);
	return f;
}

/* ---- operations ----------------------------------------------------- */

/* tlbf_add; the key is logged unless the insertion failed. */
static void
add(Run *r, uint64_t key, TlbfTime at)
{
	uint64_t	truncated = r->f->truncated;

	r->inserts++;
	if (fuzz_insert(&r->f, &r->memory, fuzz_key_hash(key, r->f->seed), at) != TLBF_OK)
		return;
	/* the cap dropped live slices (or could have, unseen: a saturated count) */
	if (r->f->truncated != truncated || truncated == UINT64_MAX)
		clear_log(r);
	log_key(r, key, r->f->newest);
}

static void
op_add(Run *r)
{
	uint64_t	key = draw_key(r);

	r->clock = draw_time(r, r->clock);
	add(r, key, r->clock);
}

/* Many keys at once, in one instant or at a steady pace. */
static void
op_burst(Run *r)
{
	int			n = 1 + fuzz_u8(&r->in);
	int64_t		step = fuzz_u8(&r->in) % 2 ? 0 : r->f->span / (1 + fuzz_u8(&r->in) % 64) / n;

	/* each insertion is validated, the keys checked after the burst */
	r->memory.quick = true;
	for (int i = 0; i < n && r->inserts < MAX_INSERTS; i++)
	{
		r->work += r->f->nslices + 1;
		add(r, DISTINCT_BASE + r->next_key++, r->clock);
		r->clock = fuzz_add_time(r->clock, step);
	}
	r->memory.quick = false;
}

/*
 * tlbf_contains: a logged key in any window that covers its time, and any
 * key anywhere (whose answer is not known).
 */
static void
op_contains(Run *r)
{
	const Tlbf *f = r->f;
	int64_t		window = (int64_t) fuzz_scaled(&r->in, f->span);

	if (r->nlog > 0)
	{
		const Logged *e = &r->log[fuzz_u8(&r->in) % r->nlog];
		TlbfTime	at = fuzz_add_time(e->at, window - (int64_t) fuzz_scaled(&r->in, f->span));

		FUZZ_CHECK(has_key(f, e->key, at, window),
				   "a key is found by any query within a window after its time");
	}
	(void) has_key(f, fuzz_u64(&r->in), draw_time(r, r->clock), window);
}

/* tlbf_retire at any time: it drops what tlbf_retirable counts. */
static void
op_retire(Run *r)
{
	TlbfTime	at = draw_time(r, r->clock);
	uint32_t	before = r->f->nslices;
	uint32_t	retirable = tlbf_retirable_slices(r->f, at);

	tlbf_drop_expired(r->f, at);
	FUZZ_CHECK(r->f->nslices == before - retirable, "retire drops the retirable slices");
	FUZZ_CHECK(tlbf_retirable_slices(r->f, at) == 0, "a retired filter has nothing to retire");
	forget_before(r, at);
}

/* tlbf_truncate_to a fraction of the size, at the newest time or any. */
static void
op_truncate(Run *r)
{
	size_t		cap = tlbf_size(r->f) * fuzz_u8(&r->in) / 256;
	bool		at_newest = fuzz_u8(&r->in) % 2 && r->f->newest != TLBF_NEVER;
	TlbfTime	at = at_newest ? r->f->newest : draw_time(r, r->clock);
	uint64_t	truncated = r->f->truncated;
	uint32_t	dropped_live = tlbf_truncate_to(r->f, cap, at);

	FUZZ_CHECK(tlbf_size(r->f) <= cap || r->f->nslices <= r->f->k,
			   "truncation reaches the cap or k slices");
	FUZZ_CHECK(r->f->truncated == fuzz_add_saturating(truncated, dropped_live),
			   "truncation counts the live slices it drops");
	if (dropped_live > 0)
		clear_log(r);
	else
		forget_before(r, at);
}

/*
 * tlbf_union, under the cap, with a copy of itself, an earlier state, or a
 * small filter of any k (as tlbf_union_agg meets filters of other error
 * rates) written at some time or never.
 */
static void
op_union(Run *r)
{
	uint8_t		how = fuzz_u8(&r->in);
	bool		earlier = (how & 1) && r->snapshot != NULL;
	bool		other_k = !earlier && (how & 4);
	Tlbf	   *copy;
	const Tlbf *inputs[2];
	size_t		bytes;
	size_t		size;
	bool		may_lose;
	Tlbf	   *out;

	if (earlier)
		copy = r->snapshot;
	else if (other_k)
		copy = fuzz_small_filter(r->f, 1 + fuzz_u8(&r->in) % TLBF_MAX_K,
								 (how & 8) ? TLBF_NEVER : draw_time(r, r->clock));
	else
		copy = fuzz_clone(r->f, tlbf_size(r->f));
	inputs[(how >> 1) & 1] = r->f;
	inputs[1 - ((how >> 1) & 1)] = copy;
	FUZZ_CHECK(tlbf_merge_mismatch(inputs[0], inputs[1]) == NULL,
			   "a filter merges with its own copies and its kind");
	bytes = tlbf_merge_bytes(inputs, 2);
	out = fuzz_merge_values(inputs, 2, r->memory.memory.max_bytes, &size, &may_lose);
	if (!earlier)
		free(copy);
	free(r->f);
	/* the union's buffer is the filter's memory from now on */
	r->f = out;
	r->memory.memory.allocated = bytes;
	r->memory.capacity = bytes;
	r->work += 32 * (uint64_t) out->nslices;	/* the union's checks */
	if (may_lose)
		clear_log(r);
	else
		forget_before(r, out->newest);
}

static void
op_snapshot(Run *r)
{
	free(r->snapshot);
	r->snapshot = fuzz_clone(r->f, tlbf_size(r->f));
}

/* ---- the run -------------------------------------------------------- */

/*
 * The memory model, then the starting filter placed in it: memory growing
 * up to a cap of up to 64 kB or (less often) 2 MB, some of its resizes
 * failing; or a fixed region.
 */
static void
place(Run *r, Tlbf *f, size_t size)
{
	uint8_t		how = fuzz_u8(&r->in);
	size_t		cap = sizeof(Tlbf) + fuzz_scaled(&r->in, (how & 0xF0) ? 65536 : 2 * 1024 * 1024);
	uint32_t	fail_mask = (how & 2) ? fuzz_u32(&r->in) : 0;

	if (how & 1)
	{
		/* a fixed region, as a shared filter has: it cannot grow */
		size_t		region = size > cap ? size : cap;

		r->f = fuzz_malloc(region);
		memcpy(r->f, f, size);
		free(f);
		fuzz_memory_init(&r->memory, region, region, true, 0);
	}
	else
	{
		r->f = f;
		fuzz_memory_init(&r->memory, size, cap, false, fail_mask);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	Run			r;
	size_t		value_len;
	size_t		size;
	Tlbf	   *f;

	memset(&r, 0, sizeof(r));
	r.in = (FuzzInput) {data, len, 0};
	value_len = fuzz_u16(&r.in);
	if (value_len > len - r.in.pos)
		value_len = len - r.in.pos;
	f = fuzz_decode(data + r.in.pos, value_len, &size);
	r.in.pos += value_len;
	if (f == NULL)
	{
		f = new_filter(&r.in);
		size = sizeof(Tlbf);
	}
	fuzz_check_valid(f, "the starting filter");
	place(&r, f, size);
	r.clock = fuzz_base_time(r.f);
	check(&r);

	for (int ops = 0; ops < MAX_OPS && r.inserts < MAX_INSERTS && r.work < MAX_WORK &&
		 !fuzz_done(&r.in); ops++)
	{
		switch (fuzz_u8(&r.in) % 10)
		{
			case 0:
			case 1:
				op_add(&r);
				break;
			case 2:
				op_burst(&r);
				break;
			case 3:
				op_contains(&r);
				break;
			case 4:
				op_retire(&r);
				break;
			case 5:
				op_truncate(&r);
				break;
			case 6:
				op_union(&r);
				break;
			case 7:
				op_snapshot(&r);
				break;
			case 8:
				r.clock = draw_time(&r, r.clock);
				break;
			default:
				/* the read-only functions, and retire on a copy */
				r.work += 8 * (uint64_t) r.f->nslices;
				fuzz_exercise_reads(r.f);
				fuzz_exercise_directory(r.f, tlbf_size(r.f));
				fuzz_exercise_retire(r.f, tlbf_size(r.f), draw_time(&r, r.clock));
				break;
		}
		check(&r);
	}
	free(r.snapshot);
	free(r.f);
	return 0;
}
