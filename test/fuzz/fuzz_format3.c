/*
 * fuzz_format3.c
 *	  Format 3 (src/core/tb_*.c): a value from the input, or a new filter,
 *	  through a life driven by the input.
 *
 * Input: a 16-bit length and that many bytes of a value, used if
 * tb_validate accepts them (then every function must be memory-safe on
 * it); otherwise parameters for a new filter are drawn from the bytes that
 * follow.  Then the memory model (growing up to a cap, some resizes
 * failing, keep_live or not), then one byte per operation and its
 * arguments until the input ends: insertions at times moving forward,
 * backward, far ahead or standing still, bursts (some through
 * tb_insert_many, checked against tb_insert key by key), queries and last_seen
 * with any window, retire at any time, fold to fit, and unions with a copy
 * of itself, an earlier state or a new filter of the same parameters.
 *
 * After every operation the filter must validate and stay under its cap,
 * and every key logged as added must be found by queries at the newest
 * time and at its own time plus the span, unless it is older than the span
 * before the newest time (no longer promised) or the cap made the core drop
 * bands holding keys of the span (keep_live off; counted in 'truncated';
 * the log starts over).  At the end the logged keys are built into a
 * filter at once (tb_build, as an aggregate without a capacity does).
 */
#include <math.h>

#include "fuzz_common.h"
#include "fuzz_memory.h"
#include "tb.h"

#define LOG_SIZE	16
#define MAX_OPS		64
#define MAX_INSERTS 2048

typedef struct Logged
{
	uint64_t	key;
	TlbfTime	at;
} Logged;

typedef struct Run
{
	TbFilter   *f;
	FuzzMemory	memory;
	TbFilter   *snapshot;
	TlbfTime	clock;
	Logged		log[LOG_SIZE];
	int			nlog;
	uint64_t	next_key;
	int			inserts;
	bool		strict;			/* tb_insert_or_fail, as shared filters insert */
	FuzzInput	in;
} Run;

static TlbfHash
hash_of(uint64_t key)
{
	return tlbf_hash_int64((int64_t) key, 0);
}

static void
check_valid(const TbFilter *f, const char *what)
{
	TlbfProblem problem = {NULL, NULL};

	if (!tb_validate(f, tb_size(f), &problem))
	{
		fprintf(stderr, "tb_validate rejects %s: %s\n", what, problem.message);
		fuzz_fail(__FILE__, __LINE__, "tb_validate(f)", what);
	}
}

static TbFilter *
clone(const TbFilter *f)
{
	TbFilter   *copy = fuzz_malloc(tb_size(f));

	memcpy(copy, f, tb_size(f));
	return copy;
}

/* Every logged key still promised is found. */
static void
check_log(Run *r, const char *what)
{
	TbFilter   *f = r->f;
	int			kept = 0;

	for (int i = 0; i < r->nlog; i++)
	{
		Logged	   *l = &r->log[i];

		if (f->newest != TLBF_NEVER && l->at < f->newest - f->span)
			continue;			/* no longer promised */
		FUZZ_CHECK(tb_query(f, hash_of(l->key), f->newest, f->span) &&
				   tb_query(f, hash_of(l->key), fuzz_add_time(l->at, f->span), f->span),
				   what);
		r->log[kept++] = *l;
	}
	r->nlog = kept;
}

static void
log_key(Run *r, uint64_t key, TlbfTime at)
{
	if (r->nlog == LOG_SIZE)
	{
		memmove(&r->log[0], &r->log[1], (LOG_SIZE - 1) * sizeof(Logged));
		r->nlog--;
	}
	r->log[r->nlog].key = key;
	r->log[r->nlog].at = at;
	r->nlog++;
}

static void
insert(Run *r, uint64_t key, TlbfTime at)
{
	uint16_t	bands = r->f->nbands;
	uint64_t	truncated_before = r->f->truncated;
	TlbfStatus	status;

	status = r->strict ? tb_insert_or_fail(&r->f, &r->memory.memory, hash_of(key), at) :
		tb_insert(&r->f, &r->memory.memory, hash_of(key), at);
	r->inserts++;
	check_valid(r->f, "a filter after tb_insert");
	FUZZ_CHECK(tb_size(r->f) <= r->memory.memory.allocated, "a filter fits its memory");
	/*
	 * Without keep_live, the oldest bands may have made room for a new one,
	 * holding keys of the span: the core counts them in 'truncated'.
	 */
	if (r->f->truncated != truncated_before)
	{
		FUZZ_CHECK(!r->memory.memory.keep_live, "keep_live drops no band");
		r->nlog = 0;
	}
	if (status != TLBF_OK)
	{
		FUZZ_CHECK(status == TLBF_OUT_OF_MEMORY || status == TLBF_OVER_LIMIT,
				   "tb_insert returns a known status");
		return;
	}
	FUZZ_CHECK(tb_size(r->f) <= r->memory.memory.max_bytes ||
			   r->f->nbands <= bands, "an insertion that adds a band stays under the cap");
	log_key(r, key, at);
}

/*
 * A burst through tb_insert_many: the same bytes and status as tb_insert
 * key by key on a copy (its memory a copy too, so that the same requests
 * fail), and every key logged if all went in.
 */
static void
insert_many(Run *r, const uint64_t *ids, const TlbfTime *times, int n)
{
	FuzzMemory	m = r->memory;
	TbFilter   *one = fuzz_malloc(r->memory.memory.allocated);
	TbKey	   *keys = fuzz_malloc(n * sizeof(TbKey));
	uint64_t	truncated_before = r->f->truncated;
	TlbfStatus	status_one = TLBF_OK,
				status;

	memset(one, 0, r->memory.memory.allocated);
	memcpy(one, r->f, tb_size(r->f));
	m.capacity = r->memory.memory.allocated;
	for (int i = 0; i < n; i++)
	{
		keys[i].hash = hash_of(ids[i]);
		keys[i].at = times[i];
		if (status_one == TLBF_OK)
			status_one = tb_insert(&one, &m.memory, keys[i].hash, keys[i].at);
	}
	status = tb_insert_many(&r->f, &r->memory.memory, keys, (size_t) n);
	r->inserts += n;
	check_valid(r->f, "a filter after tb_insert_many");
	FUZZ_CHECK(status == status_one, "tb_insert_many fails where tb_insert does");
	FUZZ_CHECK(tb_size(r->f) == tb_size(one) && memcmp(r->f, one, tb_size(one)) == 0,
			   "tb_insert_many gives the bytes of tb_insert key by key");
	free(one);
	free(keys);
	if (status != TLBF_OK || r->f->truncated != truncated_before)
	{
		r->nlog = 0;
		return;
	}
	for (int i = 0; i < n; i++)
		log_key(r, ids[i], times[i]);
}

static TbFilter *
new_filter(FuzzInput *in)
{
	TbParams	p;
	TlbfProblem problem;
	TbFilter   *f;
	static const int generations[] = {1, 3, 7};

	p.span = (TlbfTime) fuzz_scaled(in, TLBF_MAX_SPAN) + 1;
	p.error_rate = TLBF_MIN_ERROR_RATE + (TLBF_MAX_ERROR_RATE - TLBF_MIN_ERROR_RATE) *
		(fuzz_u16(in) / 65535.0) * (fuzz_u16(in) / 65535.0);
	p.capacity = fuzz_scaled(in, 4096);
	p.declared = (fuzz_u8(in) & 1) && p.capacity > 0;
	p.generations = generations[fuzz_u8(in) % 3];
	p.seed = fuzz_u64(in);
	if (!tb_check_params(&p, &problem))
		return NULL;
	f = fuzz_malloc(tb_lines_offset(0));
	tb_init(f, &p);
	check_valid(f, "a new filter");
	return f;
}

/* Read-only functions on a valid value: memory-safe, whatever its bits. */
static void
exercise(const TbFilter *f, FuzzInput *in)
{
	TlbfTime	times[4];
	TlbfTime	lower,
				upper;

	times[0] = f->newest == TLBF_NEVER ? 0 : f->newest;
	times[1] = fuzz_clamp_time(times[0] - f->span);
	times[2] = TLBF_TIME_MIN;
	times[3] = TLBF_TIME_END - 1;
	for (int i = 0; i < 4; i++)
	{
		TlbfHash	h = hash_of(fuzz_u16(in));

		(void) tb_query(f, h, times[i], f->span);
		(void) tb_query(f, h, times[i], 0);
		double		p = tb_posterior(f, h, times[i], f->span, 0.5);
		TbLiveKeys	live;

		if (tb_last_seen(f, h, times[i], f->span, &lower, &upper))
			FUZZ_CHECK(lower <= upper && upper <= times[i], "last seen is an interval before 'at'");
		FUZZ_CHECK(p >= 0.0 && p <= 1.0, "a probability is in [0, 1]");
		/* (0 for a yes too if nothing was added since the window began) */
		FUZZ_CHECK(tb_query(f, h, times[i], f->span) ?
				   (p > 0.0 || f->newest < times[i] - f->span) : p == 0.0,
				   "the probability is 0 when a query says no, else when nothing is within the window");
		tb_live_keys(f, times[i], &live);
		FUZZ_CHECK(live.low <= live.estimate + 1e-6 * live.estimate && live.estimate <= live.high + 1e-6 * live.high,
				   "the live keys' estimate lies in its range");
	}
}

/*
 * tb_build (an aggregate's end without a declared capacity) from the
 * logged keys of the span, with the filter's parameters and newest time:
 * valid, every key found, the same bytes from its parts in the reverse
 * order (one part per key), under a cap or refused.
 */
static TbFilter *
build_from_log(const Run *r, bool reversed)
{
	TbFilter   *f = fuzz_malloc(tb_lines_offset(0));
	TbCounter  *counters = fuzz_malloc(TB_MAX_SLOTS * sizeof(TbCounter));
	FuzzMemory	m;
	double		largest = 0;
	TlbfStatus	status;

	memset(f, 0, tb_lines_offset(0));
	memcpy(f, r->f, sizeof(TbFilter));
	f->nbands = 0;
	f->inserted = (uint64_t) r->nlog;
	f->truncated = 0;
	fuzz_memory_init(&m, tb_lines_offset(0), (size_t) 1 << 22, false, 0);
	for (int s = 0; s < tb_slots(f); s++)
	{
		TlbfHash	few[LOG_SIZE];
		size_t		n = 0;

		tb_count_init(&counters[s]);
		for (int i = 0; i < r->nlog; i++)
			if (tb_slot_of(f, tb_generation_of(r->log[i].at, f->length)) == s)
			{
				few[n] = hash_of(r->log[i].key);
				tb_count_add(&counters[s], &few[n++], 1);
			}
		/* (the glue counts so few exactly; the sketch agrees within a key or two) */
		FUZZ_CHECK(fabs(tb_count_estimate(&counters[s]) - tb_count_distinct(few, n)) < 1.5,
				   "the sketch counts a few keys as they are");
		if (tb_count_distinct(few, n) > largest)
			largest = tb_count_distinct(few, n);
	}
	free(counters);
	status = tb_build_band(&f, &m.memory, largest);
	if (status != TLBF_OK)
	{
		FUZZ_CHECK(status == TLBF_OVER_LIMIT, "tb_build_band refuses only past the cap");
		free(f);
		return NULL;
	}
	for (int i = 0; i < r->nlog; i++)
	{
		int			j = reversed ? r->nlog - 1 - i : i;
		int64_t		g = tb_generation_of(r->log[j].at, f->length);
		TbSlot	   *slot = &tb_bands(f)[0].slot[tb_slot_of(f, g)];

		if (slot->generation != g)
			tb_build_generation(f, g, r->log[j].at);
		else if (r->log[j].at < slot->started)
			slot->started = r->log[j].at;
	}
	for (int i = 0; i < r->nlog; i++)
	{
		int			j = reversed ? r->nlog - 1 - i : i;
		TlbfHash	h = hash_of(r->log[j].key);

		tb_build_add(f, tb_generation_of(r->log[j].at, f->length), &h, 1);
	}
	tb_build_finish(f);
	check_valid(f, "a built filter");
	return f;
}

static void
check_build(Run *r)
{
	TbFilter   *a,
			   *b;

	if (r->nlog == 0 || r->f->newest == TLBF_NEVER)
		return;
	a = build_from_log(r, false);
	b = build_from_log(r, true);
	FUZZ_CHECK((a == NULL) == (b == NULL), "a build is refused whatever the order");
	if (a != NULL)
	{
		FUZZ_CHECK(tb_size(a) == tb_size(b) && memcmp(a, b, tb_size(a)) == 0,
				   "a build has the same bytes whatever the order");
		for (int i = 0; i < r->nlog; i++)
			FUZZ_CHECK(tb_query(a, hash_of(r->log[i].key), a->newest, a->span) &&
					   tb_query(a, hash_of(r->log[i].key), fuzz_add_time(r->log[i].at, a->span), a->span),
					   "a built filter finds every key");
		exercise(a, &r->in);
	}
	free(a);
	free(b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	Run			r;
	uint16_t	value_len;
	size_t		size = 0;

	memset(&r, 0, sizeof(r));
	r.in.data = data;
	r.in.len = len;
	value_len = fuzz_u16(&r.in);
	if (value_len > 0 && value_len <= len - r.in.pos && len >= 2)
	{
		TbFilter   *f = (TbFilter *) fuzz_copy_value(data + r.in.pos, value_len, &size);
		TlbfProblem problem = {NULL, NULL};

		r.in.pos += value_len;
		if (tb_validate(f, size, &problem) && (f->flags & TB_CARRIES))
		{
			/* the rest is the glue's (value_carry.c): the core only reads the bands */
			FUZZ_CHECK(tb_carried_offset(f) < size, "a carrier goes on past its bands");
			exercise(f, &r.in);
			free(f);
		}
		else if (problem.message == NULL)
		{
			FUZZ_CHECK(tb_size(f) == size, "a valid value's layout has its length");
			exercise(f, &r.in);
			r.f = f;
		}
		else
		{
			FUZZ_CHECK(problem.message != NULL, "a rejected value says why");
			free(f);
		}
	}
	if (r.f == NULL)
	{
		r.f = new_filter(&r.in);
		if (r.f == NULL)
			return 0;
		size = tb_size(r.f);
	}
	{
		uint8_t		model = fuzz_u8(&r.in);
		size_t		cap = (model & 1) ? (size_t) 1 << 21 : size + ((size_t) fuzz_u16(&r.in) << 4);

		fuzz_memory_init(&r.memory, tb_size(r.f), cap < tb_size(r.f) ? tb_size(r.f) : cap, false,
						 (model & 2) ? fuzz_u32(&r.in) : 0);
		r.memory.memory.keep_live = (model & 4) != 0;
		r.strict = (model & 8) != 0;
	}
	r.clock = r.f->newest == TLBF_NEVER ? (TlbfTime) fuzz_u64(&r.in) % (INT64_C(1) << 50) : r.f->newest;
	r.clock = fuzz_clamp_time(r.clock);

	for (int op = 0; op < MAX_OPS && !fuzz_done(&r.in) && r.inserts < MAX_INSERTS; op++)
	{
		uint8_t		code = fuzz_u8(&r.in);
		TlbfTime	step = (TlbfTime) fuzz_scaled(&r.in, (uint64_t) r.f->span);

		switch (code % 8)
		{
			case 0:				/* forward */
				r.clock = fuzz_add_time(r.clock, step);
				insert(&r, r.next_key++, r.clock);
				break;
			case 1:				/* backward */
				insert(&r, r.next_key++, fuzz_clamp_time(r.clock - step));
				break;
			case 2:				/* a burst, standing still or creeping */
				{
					int			n = 1 + fuzz_u8(&r.in);
					uint64_t	ids[256];
					TlbfTime	times[256];

					/* (not strict: tb_insert_many inserts as tb_insert) */
					if ((code & 0x40) && !r.strict)
					{
						for (int i = 0; i < n; i++)
						{
							r.clock = fuzz_add_time(r.clock, step / 256);
							ids[i] = r.next_key++ % (1 + ((code >> 3) & 7));
							times[i] = r.clock;
						}
						insert_many(&r, ids, times, n);
						break;
					}
					for (int i = 0; i < n && r.inserts < MAX_INSERTS; i++)
					{
						r.clock = fuzz_add_time(r.clock, step / 256);
						insert(&r, r.next_key++ % (1 + (code >> 3)), r.clock);
					}
				}
				break;
			case 3:				/* far ahead */
				r.clock = fuzz_add_time(r.clock, (TlbfTime) fuzz_scaled(&r.in, TLBF_MAX_SPAN) * 4);
				insert(&r, r.next_key++, r.clock);
				break;
			case 4:				/* retire */
				tb_retire(r.f, fuzz_clamp_time(r.clock + step - r.f->span));
				check_valid(r.f, "a filter after tb_retire");
				break;
			case 5:				/* fold to fit */
				tb_fold_to_fit(r.f);
				check_valid(r.f, "a filter after tb_fold_to_fit");
				break;
			case 6:				/* keep a snapshot */
				free(r.snapshot);
				r.snapshot = clone(r.f);
				break;
			case 7:				/* union with a snapshot or a copy */
				{
					TbFilter   *src = r.snapshot != NULL && (code & 8) ? r.snapshot : clone(r.f);
					size_t		before_bands = r.f->nbands;
					TlbfStatus	status;

					FUZZ_CHECK(tb_merge_mismatch(r.f, src) == TB_MERGE_OK, "a filter unites with its copies");
					status = tb_union(&r.f, &r.memory.memory, src);
					check_valid(r.f, "a filter after tb_union");
					FUZZ_CHECK(status == TLBF_OK || status == TLBF_OUT_OF_MEMORY ||
							   (status == TLBF_OVER_LIMIT && before_bands == 0),
							   "tb_union returns a known status");
					FUZZ_CHECK(tb_size(r.f) <= r.memory.memory.max_bytes ||
							   r.f->nbands <= before_bands, "a union stays under the cap");
					if (status != TLBF_OK)
						r.nlog = 0;
					if (src != r.snapshot)
						free(src);
				}
				break;
		}
		check_log(&r, "a key added within the span is found");
		exercise(r.f, &r.in);
	}
	check_build(&r);
	free(r.f);
	free(r.snapshot);
	return 0;
}
