/*-------------------------------------------------------------------------
 *
 * streams.c
 *	  Generating the synthetic streams and reading the web log.
 *
 * uniform	keys drawn uniformly from 1,000,000; one insertion per ms.
 * zipf		keys drawn from 1,000,000 with P(rank r) proportional to 1/r
 *			(Zipf, exponent 1): hot keys recur all the time; one per ms.
 * bursty	quiet phases (mean 3,000 insertions, uniform keys, exponential
 *			gaps of mean 1 ms) alternate with bursts (mean 1,000
 *			insertions, gaps of mean 0.1 ms) in which 80% of the keys come
 *			from a hot set of 200 keys new to that burst, the rest uniform.
 *			Phase lengths are exponential.  Its times are real: ten times
 *			the rate during bursts.
 * sessions	web-like clients (the inference experiment's synthetic
 *			bursts): sessions start at a rate that follows the time of
 *			day (1 to 4 between night and afternoon), each by a client
 *			drawn from 1,000,000 with Zipf(1) popularity, so that some come
 *			back again and again; a session is a few page views (mean
 *			4) separated by think times of median 30 s (log-normal,
 *			heavy-tailed), each page view a burst of requests within two
 *			seconds (mean 3); times to the second, as in the web log.
 *
 * The web log is read with zcat; each line gives a client id (the key)
 * and a time to the second (UTC).
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "streams.h"
#include "window_filter.h"

#define UNIVERSE		1000000
#define QUIET_MEAN		3000.0
#define BURST_MEAN		1000.0
#define QUIET_GAP_US	1000.0
#define BURST_GAP_US	100.0
#define HOT_KEYS		200
#define HOT_SHARE		0.8

const char *
pattern_name(Pattern p)
{
	switch (p)
	{
		case PATTERN_UNIFORM:
			return "uniform";
		case PATTERN_ZIPF:
			return "zipf";
		case PATTERN_BURSTY:
			return "bursty";
	}
	return "?";
}

/* Keys of different patterns and seeds never collide: tag them. */
static inline uint64_t
tagged(Pattern p, uint64_t seed, uint64_t id)
{
	return ((uint64_t) (p + 1) << 52) | ((seed & 0xfff) << 40) | id;
}

/* Cumulative Zipf(1) probabilities over the universe, built once. */
static const double *
zipf_cdf(void)
{
	static double *cdf = NULL;
	double		sum = 0.0;

	if (cdf != NULL)
		return cdf;
	cdf = eval_calloc(UNIVERSE, sizeof(double));
	for (int r = 0; r < UNIVERSE; r++)
	{
		sum += 1.0 / (r + 1);
		cdf[r] = sum;
	}
	for (int r = 0; r < UNIVERSE; r++)
		cdf[r] /= sum;
	return cdf;
}

static uint64_t
zipf_draw(Rng *rng)
{
	const double *cdf = zipf_cdf();
	double		u = rng_uniform(rng);
	size_t		lo = 0,
				hi = UNIVERSE - 1;

	while (lo < hi)
	{
		size_t		mid = (lo + hi) / 2;

		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
fill_bursty(Stream *s, uint64_t seed, Rng *rng)
{
	double		t = 0.0;
	bool		burst = false;
	size_t		phase_left = 0;
	uint64_t	burst_id = 0;

	for (size_t i = 0; i < s->n; i++)
	{
		if (phase_left == 0)
		{
			burst = !burst;
			if (burst)
				burst_id++;
			phase_left = 1 + (size_t) rng_exponential(rng, burst ? BURST_MEAN : QUIET_MEAN);
		}
		phase_left--;
		t += rng_exponential(rng, burst ? BURST_GAP_US : QUIET_GAP_US);
		s->times[i] = EVAL_START + (int64_t) t;
		if (burst && rng_uniform(rng) < HOT_SHARE)
			s->keys[i] = tagged(PATTERN_BURSTY, seed,
								UNIVERSE + burst_id * HOT_KEYS + rng_below(rng, HOT_KEYS));
		else
			s->keys[i] = tagged(PATTERN_BURSTY, seed, rng_below(rng, UNIVERSE));
	}
}

void
stream_synthetic(Stream *s, Pattern p, size_t n, uint64_t seed)
{
	Rng			rng = rng_seeded(seed * 31 + p);

	s->n = n;
	s->keys = eval_calloc(n, sizeof(uint64_t));
	s->times = eval_calloc(n, sizeof(int64_t));
	if (p == PATTERN_BURSTY)
	{
		fill_bursty(s, seed, &rng);
		return;
	}
	for (size_t i = 0; i < n; i++)
	{
		uint64_t	id = p == PATTERN_ZIPF ? zipf_draw(&rng) : rng_below(&rng, UNIVERSE);

		s->keys[i] = tagged(p, seed, id);
		s->times[i] = EVAL_START + (int64_t) i * EVAL_MS;
	}
}

#define SESSION_CLIENTS	1000000
#define SESSION_PAGES	4.0
#define PAGE_REQUESTS	3.0
#define THINK_MEDIAN_S	30.0
#define THINK_SIGMA		1.2

/* Zipf(1) over 'n' clients by inversion of the continuous approximation. */
static uint64_t
session_client(Rng *rng)
{
	double		u = rng_uniform(rng);

	return (uint64_t) fmin(SESSION_CLIENTS - 1,
						   floor(exp(u * log((double) SESSION_CLIENTS + 1.0)) - 1.0));
}

/* A standard normal draw (Box-Muller; one of the pair is enough). */
static double
normal_draw(Rng *rng)
{
	double		u = 1.0 - rng_uniform(rng);

	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * rng_uniform(rng));
}

/* Geometric count of mean 'mean', at least one. */
static long
at_least_one(Rng *rng, double mean)
{
	return 1 + (long) floor(log1p(-rng_uniform(rng)) / log1p(-1.0 / mean));
}

typedef struct TimedKey
{
	int64_t		time;
	uint64_t	key;
	size_t		order;			/* ties keep the order of generation */
} TimedKey;

static int
compare_timed(const void *a, const void *b)
{
	const TimedKey *x = a,
			   *y = b;

	if (x->time != y->time)
		return (x->time > y->time) - (x->time < y->time);
	return (x->order > y->order) - (x->order < y->order);
}

/*
 * Session starts: a Poisson process over one day whose rate follows the
 * time of day, 1 + 0.6 sin(2 pi (t / day - 1/4)), thinned from its peak
 * rate, with a mean of n requests in the day; the requests are put in time
 * order, and those past the day's end are dropped.
 */
void
stream_sessions(Stream *s, size_t n, double day_seconds, uint64_t seed)
{
	Rng			rng = rng_seeded(seed * 31 + 7);
	size_t		allocated = 2 * n;
	TimedKey   *requests = eval_calloc(allocated, sizeof(TimedKey));
	double		mean_gap = day_seconds * SESSION_PAGES * PAGE_REQUESTS / n;
	double		t = 0.0;
	size_t		drawn = 0;

	for (;;)
	{
		uint64_t	client;
		double		at;
		long		pages;

		t += rng_exponential(&rng, mean_gap / 1.6);
		if (t >= day_seconds)
			break;
		if (rng_uniform(&rng) * 1.6 > 1.0 + 0.6 * sin(2.0 * M_PI * (t / day_seconds - 0.25)))
			continue;
		client = session_client(&rng);
		at = t;
		pages = at_least_one(&rng, SESSION_PAGES);
		for (long p = 0; p < pages; p++)
		{
			long		objects = at_least_one(&rng, PAGE_REQUESTS);

			for (long o = 0; o < objects && at < day_seconds; o++)
			{
				if (drawn == allocated)
				{
					allocated *= 2;
					requests = realloc(requests, allocated * sizeof(TimedKey));
					if (requests == NULL)
						abort();
				}
				requests[drawn].time = (int64_t) floor(at + 2.0 * rng_uniform(&rng));
				requests[drawn].key = tagged(PATTERN_BURSTY + 1, seed, client);
				requests[drawn].order = drawn;
				drawn++;
			}
			at += THINK_MEDIAN_S * exp(THINK_SIGMA * normal_draw(&rng));
		}
	}
	qsort(requests, drawn, sizeof(TimedKey), compare_timed);
	s->n = 0;
	s->keys = eval_calloc(drawn, sizeof(uint64_t));
	s->times = eval_calloc(drawn, sizeof(int64_t));
	for (size_t i = 0; i < drawn && requests[i].time < day_seconds; i++)
	{
		s->keys[s->n] = requests[i].key;
		s->times[s->n] = EVAL_START + requests[i].time * EVAL_SECOND;
		s->n++;
	}
	free(requests);
}

/* Days from 1970-01-01 to a civil date (proleptic Gregorian). */
static int64_t
days_from_civil(int y, int m, int d)
{
	int64_t		era,
				yoe,
				doy,
				doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int
month_number(const char *name)
{
	static const char *names[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
	"Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

	for (int i = 0; i < 12; i++)
		if (strncmp(name, names[i], 3) == 0)
			return i + 1;
	return 0;
}

/*
 * Read "ClientID,DD/Mon/YYYY,HH:MM:SS,..." lines (sorted by time) into a
 * stream: the client id is the key, times are PostgreSQL microseconds.
 */
bool
stream_weblog(Stream *s, const char *path, size_t max_lines)
{
	char		command[4096];
	char		line[8192];
	FILE	   *in;
	size_t		allocated = 1 << 18;
	int			status;

	snprintf(command, sizeof(command), "zcat '%s'", path);
	in = popen(command, "r");
	if (in == NULL)
		return false;
	s->n = 0;
	s->keys = eval_calloc(allocated, sizeof(uint64_t));
	s->times = eval_calloc(allocated, sizeof(int64_t));
	while (s->n < max_lines && fgets(line, sizeof(line), in) != NULL)
	{
		unsigned long long id;
		int			day,
					year,
					hh,
					mm,
					ss,
					month;
		char		mon[4];
		int64_t		unix_seconds;

		if (sscanf(line, "%llu,%d/%3[A-Za-z]/%d,%d:%d:%d", &id, &day, mon, &year, &hh, &mm, &ss) != 7)
			continue;
		month = month_number(mon);
		if (month == 0)
			continue;
		if (s->n == allocated)
		{
			allocated *= 2;
			s->keys = realloc(s->keys, allocated * sizeof(uint64_t));
			s->times = realloc(s->times, allocated * sizeof(int64_t));
			if (s->keys == NULL || s->times == NULL)
				return false;
		}
		unix_seconds = days_from_civil(year, month, day) * 86400 + hh * 3600 + mm * 60 + ss;
		s->keys[s->n] = id;
		/* PostgreSQL's epoch is 2000-01-01, 946684800 s after Unix's */
		s->times[s->n] = (unix_seconds - INT64_C(946684800)) * EVAL_SECOND;
		if (s->n > 0 && s->times[s->n] < s->times[s->n - 1])
		{
			fprintf(stderr, "%s: line %zu is out of time order\n", path, s->n + 1);
			pclose(in);
			return false;
		}
		s->n++;
	}
	status = pclose(in);

	/* zcat may die of a broken pipe when we stop early: that is fine */
	return s->n > 0 && (status == 0 || s->n == max_lines);
}

void
stream_free(Stream *s)
{
	free(s->keys);
	free(s->times);
	s->keys = NULL;
	s->times = NULL;
	s->n = 0;
}

/* The first of n times in ascending order that is at or after t (n if none). */
size_t
stream_first_at_or_after(const int64_t *times, size_t n, int64_t t)
{
	size_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (times[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
