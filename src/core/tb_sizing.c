/*-------------------------------------------------------------------------
 *
 * tb_sizing.c
 *	  How many bits a key of a generation needs, how many it sets, how many
 *	  lines a key's group has, and how many groups a generation of so many
 *	  keys gets.
 *
 * A query asks up to generations + 1 generations (the slots), the newest
 * of them partly filled (half, on average), so each is sized for
 * error_rate / (slots - 1/2).  A piece of w words whose band has c bits
 * per key holds, in a given group, j keys with probability Poisson(j;
 * lambda = 64 w / c); a key's k bits fall k / w to a word, so a key not
 * added is reported with probability
 *
 *	  sum over j of  Poisson(j; lambda) * prod over words of
 *					 (1 - (63/64)^(j k_w))^(k_w)
 *
 * At 1% with three generations a span: pieces of two words (one line), k
 * = 8, 14.9 bits per key of a generation, 19.8 per live key.  Small pieces
 * vary more in load; where a lower error rate makes one-line pieces cost
 * a fifth more bits than the best, a key's group has 2 or 4 lines.
 *
 * Sizes are rounded up to m * 2^j groups, m in 32 .. 63 (at most a
 * thirty-second more), so that a band folds onto a half, a quarter, ... of itself
 * exactly (tb_fold_band) and bands of one size merge by OR.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "tb.h"

/* x^n for a small whole n (no pow: this runs in every sizing search) */
static double
power(double x, int n)
{
	double		r = 1.0;

	while (n > 0)
	{
		if (n & 1)
			r *= x;
		x *= x;
		n >>= 1;
	}
	return r;
}

static double
tb_piece_fpr(double bits_per_key, int words, int k)
{
	double		lambda = 64.0 * words / bits_per_key;
	double		p = exp(-lambda);
	double		sum = 0.0;
	int			last = (int) (lambda + 12 * sqrt(lambda) + 30);
	int			kw_low = k / words,
				high_words = k % words;
	/* (63/64)^(j kw) for the words with kw_low and kw_low + 1 bits, by j */
	double		q_low = power(1.0 - 1.0 / 64, kw_low),
				q_high = q_low * (1.0 - 1.0 / 64),
				qj_low = 1.0,
				qj_high = 1.0;

	for (int j = 0; j <= last; j++)
	{
		double		all;

		if (j > 0)
		{
			p *= lambda / j;
			qj_low *= q_low;
			qj_high *= q_high;
		}
		all = power(power(1.0 - qj_low, kw_low), words - high_words) *
			power(power(1.0 - qj_high, kw_low + 1), high_words);
		sum += p * all;
	}
	return sum;
}

/* The fewest bits per key a piece of 'words' words with k bits needs for 'target'. */
static double
bits_for_k(double target, int words, int k)
{
	double		lo = TB_MIN_BITS_PER_KEY,
				hi = TB_MAX_BITS_PER_KEY;

	if (tb_piece_fpr(hi, words, k) > target)
		return INFINITY;
	for (int i = 0; i < 32; i++)
	{
		double		mid = (lo + hi) / 2;

		if (tb_piece_fpr(mid, words, k) > target)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

/*
 * The fewest bits per key of a piece of 'words' words meeting 'target',
 * and its k: the bits needed are unimodal in k, so a ternary search over
 * 1 .. TB_MAX_K finds the least.
 */
static double
best_bits(double target, int words, int *best_k)
{
	int			lo = 1,
				hi = TB_MAX_K;

	while (hi - lo > 2)
	{
		int			m1 = lo + (hi - lo) / 3,
					m2 = hi - (hi - lo) / 3;

		double		b1 = bits_for_k(target, words, m1),
					b2 = bits_for_k(target, words, m2);

		/* (too few bits a key reach no target at all: look at more) */
		if (b1 <= b2 && b1 < INFINITY)
			hi = m2;
		else
			lo = m1;
	}
	*best_k = lo;
	for (int k = lo + 1; k <= hi; k++)
		if (bits_for_k(target, words, k) < bits_for_k(target, words, *best_k))
			*best_k = k;
	return bits_for_k(target, words, *best_k);
}

/*
 * The layout for an error rate: lines per group (the fewest within a
 * fifth of the best bits), k and bits per key.  The last answer is kept:
 * every filter of a table is usually made alike.
 */
void
tb_choose_layout(double error_rate, int generations, int *lines_per_key, int *k,
				 double *bits_per_key)
{
	static double last_rate = -1;
	static int	last_generations,
				last_lines,
				last_k;
	static double last_bits;
	int			slots = generations + 1;
	double		bits[3];
	int			ks[3];
	double		best;

	if (error_rate == last_rate && generations == last_generations)
	{
		*lines_per_key = last_lines;
		*k = last_k;
		*bits_per_key = last_bits;
		return;
	}
	for (int i = 0; i < 3; i++)
		bits[i] = best_bits(error_rate / (slots - 0.5), TB_LINE_WORDS * (1 << i) / slots, &ks[i]);
	best = fmin(bits[0], fmin(bits[1], bits[2]));
	for (int i = 0; i < 3; i++)
		if (bits[i] <= 1.2 * best)
		{
			*lines_per_key = 1 << i;
			*k = ks[i];
			*bits_per_key = bits[i];
			break;
		}
	last_rate = error_rate;
	last_generations = generations;
	last_lines = *lines_per_key;
	last_k = *k;
	last_bits = *bits_per_key;
}

bool
tb_check_params(TbParams *params, TlbfProblem *problem)
{
	problem->hint = NULL;
	/* (a span of a few microseconds has one generation: each lasts one at least) */
	if (params->generations == 0)
		params->generations = params->span > 0 && params->span < TB_DEFAULT_GENERATIONS ?
			1 : TB_DEFAULT_GENERATIONS;
	if (params->span <= 0 || params->span > TLBF_MAX_SPAN)
	{
		problem->message = "span must be positive and at most 100 years";
		return false;
	}
	if (!(params->error_rate >= TLBF_MIN_ERROR_RATE &&
		  params->error_rate <= TLBF_MAX_ERROR_RATE))
	{
		problem->message = "error rate must be between 1e-9 and 0.5";
		return false;
	}
	if (params->generations != 1 && params->generations != 3 && params->generations != 7)
	{
		problem->message = "generations per span must be 1, 3 or 7";
		return false;
	}
	if (params->span < params->generations)
	{
		problem->message = "span must be at least one microsecond per generation";
		return false;
	}
	if (params->capacity > TLBF_MAX_CAPACITY)
	{
		problem->message = "capacity is too large";
		problem->hint = "The capacity is at most 2^40 keys per span.";
		return false;
	}
	if (params->declared && params->capacity == 0)
	{
		problem->message = "a declared capacity must be positive";
		return false;
	}
	return true;
}

/* Groups for 'keys' keys in a piece: at least one, rounded up to m * 2^j, m in 32 .. 63. */
uint64_t
tb_lines_for(const TbFilter *f, uint64_t keys)
{
	double		exact = ceil((double) keys * f->bits_per_key / (64.0 * tb_piece_words(f)));
	uint64_t	n,
				unit = 1;

	if (!(exact < (double) TB_MAX_GROUP_LINES))
		return TB_MAX_GROUP_LINES;
	n = exact < 1 ? 1 : (uint64_t) exact;
	while (n > 64 * unit)
		unit *= 2;
	/* 32 * unit < n <= 64 * unit: round up to a multiple of unit */
	return (n + unit - 1) / unit * unit;
}

uint64_t
tb_capacity_of(const TbFilter *f, uint64_t nlines)
{
	return (uint64_t) ((double) nlines * 64.0 * tb_piece_words(f) / f->bits_per_key);
}

/*
 * The share of a piece's bits one key leaves unset, as a rate: a key sets
 * about k / piece bits in each word of its piece, drawn with replacement
 * (tb_key_masks), so that each word of a group with j keys keeps a bit
 * unset with probability (63/64)^(j k / piece).  Keys fall on groups as a
 * Poisson process, so a band of n groups holding K keys has, in
 * expectation, a share exp(-(K / n) c) of its bits unset, c being this.
 */
static double
bits_per_key_rate(const TbFilter *f)
{
	int			piece = tb_piece_words(f);
	double		c = 0;

	for (int w = 0; w < piece; w++)
	{
		int			in_word = (f->k - w + piece - 1) / piece;

		c += 1 - pow(63.0 / 64.0, in_word > 0 ? in_word : 0);
	}
	return c / piece;
}

/*
 * The same inverse, not rounded: the keys that 'set' bits of a piece's
 * share of a band of 'nlines' groups stand for; TLBF_MAX_CAPACITY when
 * every bit is set.
 */
double
tb_keys_estimate(const TbFilter *f, double set, uint64_t nlines)
{
	double		m = (double) nlines * 64.0 * tb_piece_words(f);
	double		keys;

	if (set <= 0)
		return 0.0;
	if (set >= m)
		return (double) TLBF_MAX_CAPACITY;
	keys = -(double) nlines * log(1.0 - set / m) / bits_per_key_rate(f);
	return fmin(keys, (double) TLBF_MAX_CAPACITY);
}

/*
 * Distinct keys that 'set' bits of a slot of a band of 'nlines' groups
 * stand for (the inverse of the expectation above): order-free, as the bits.
 */
uint64_t
tb_keys_of_bits(const TbFilter *f, uint64_t set, uint64_t nlines)
{
	double		keys = ceil(tb_keys_estimate(f, (double) set, nlines));

	return keys < (double) TLBF_MAX_CAPACITY ? (uint64_t) keys : TLBF_MAX_CAPACITY;
}

/* E[x^j] for j ~ Poisson(lambda) */
static double
poisson_power(double x, double lambda)
{
	return exp(-lambda * (1.0 - x));
}

/*
 * The standard deviation of the bits that 'keys' keys set in a piece's
 * share of a band of 'nlines' groups.  A group holds j keys, j about
 * Poisson(lambda = keys / nlines); a word of its piece that each of them
 * draws k_w bits in (with replacement) keeps, given j, U_w unset bits
 * with E = 64 q^j and Var = 64 * 63 r^j + 64 q^j - 64^2 q^2j, where q =
 * (63/64)^k_w and r = (62/64)^k_w (balls in bins).  Over j, the group's
 * unset bits vary by the mean of those variances plus the variance of
 * their mean (the groups' uneven loads); and as the band holds exactly
 * 'keys', not a Poisson number, the part that goes with the total load is
 * taken out (Var U - Cov(U, j)^2 / Var j per group).  The groups are then
 * independent: the band's variance is their sum.
 */
double
tb_bits_sd(const TbFilter *f, double keys, uint64_t nlines)
{
	int			piece = tb_piece_words(f);
	double		lambda = keys / (double) nlines;
	double		within = 0.0,
				between = 0.0,
				cov = 0.0;

	if (lambda <= 0)
		return 0.0;
	for (int w = 0; w < piece; w++)
	{
		int			kw = (f->k - w + piece - 1) / piece;
		double		q = pow(63.0 / 64.0, kw > 0 ? kw : 0);
		double		r = pow(62.0 / 64.0, kw > 0 ? kw : 0);

		within += 64.0 * 63.0 * poisson_power(r, lambda) + 64.0 * poisson_power(q, lambda) -
			4096.0 * poisson_power(q * q, lambda);
		cov += 64.0 * lambda * poisson_power(q, lambda) * (q - 1.0);
		for (int v = 0; v < piece; v++)
		{
			int			kv = (f->k - v + piece - 1) / piece;
			double		qv = pow(63.0 / 64.0, kv > 0 ? kv : 0);

			between += 4096.0 * (poisson_power(q * qv, lambda) -
								 poisson_power(q, lambda) * poisson_power(qv, lambda));
		}
	}
	return sqrt(fmax(within + between - cov * cov / lambda, 0.0) * (double) nlines);
}

/*
 * Fewest bits set that stand for more than 'keys' keys in a band of
 * 'nlines' groups (tb_keys_of_bits(f, result, nlines) > keys): a slot is
 * full once it has that many.  The last answer is kept: it is asked at
 * every insertion with the same band.
 */
uint64_t
tb_bits_over(const TbFilter *f, uint64_t keys, uint64_t nlines)
{
	static uint64_t last_keys,
				last_nlines,
				last_bits;
	static int	last_k,
				last_piece;
	double		m = (double) nlines * 64.0 * tb_piece_words(f);
	uint64_t	bits;

	if (keys == last_keys && nlines == last_nlines && f->k == last_k &&
		tb_piece_words(f) == last_piece && last_nlines != 0)
		return last_bits;
	bits = (uint64_t) (m * (1.0 - exp(-(double) keys / (double) nlines * bits_per_key_rate(f))));
	/* (the estimate is rounded up: step to the first count past 'keys') */
	while (bits > 0 && tb_keys_of_bits(f, bits - 1, nlines) > keys)
		bits--;
	while ((double) bits < m && tb_keys_of_bits(f, bits, nlines) <= keys)
		bits++;
	last_keys = keys;
	last_nlines = nlines;
	last_k = f->k;
	last_piece = tb_piece_words(f);
	last_bits = bits;
	return bits;
}
