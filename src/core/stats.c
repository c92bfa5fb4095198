/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  Figures about a filter for tlbf_info() and the evaluation, above all
 *	  how many distinct keys it still holds.
 *
 * Slice i (0 is the newest) holds the keys of generations i-k+1 .. i
 * (generation 0 is the current one, g the one g shifts ago): a key goes to
 * the k newest slices, which then move up one position per shift.  A
 * slice's fill gives the distinct keys of its block of generations by
 * linear counting, n = -m*ln(1 - b/m) (tlbf_slice_load).  A key added in
 * generation g is found while slices g .. g+k-1 are live; with live slices
 * 0 .. L-1 these are the generations 0 .. L-k.
 *
 * Slices k apart hold disjoint blocks, so the chain of slices L-k, L-2k,
 * ..., down to one of 0 .. k-1, tiles exactly the generations whose keys
 * are still found.  Summing its slices' counts gives the distinct keys if
 * no key was added in two blocks, and the fullest slice among 0 .. L-k
 * gives one block's: the distinct keys lie between the two.  A key that
 * comes back every few minutes is in every block: the sum then counts it
 * once per block (five times in an hour's filter of a steady audience).
 *
 * Where in that range the truth lies depends on how much the blocks share,
 * and the chain tells that too: slices k apart use the same hash function
 * (the same hash_index), and a slice of m bits puts a key at floor(u*m)
 * for the same u in [0, 1) in every one of them (bits.h).  A key in two
 * blocks sets the cells around its u in both, so the places where both
 * slices are clear are more than two independent blocks would leave;
 * shared_keys() inverts that excess.  Slices of the same size could simply
 * be OR-ed; theirs differ, so the cells of both are walked together.  The
 * blocks are then added up the fullest first, each less what it shares
 * with those already counted (segment_keys): at least what it shares with
 * the one it shares most with, at most the sum over them, and where in
 * between the block against all of them at once says.  That is exact for
 * keys seen once and for an audience that comes back within a block, and
 * above the truth for keys that skip whole blocks, never beyond the sum.
 * Measured (test_live_keys.c and the World Cup log of the demo, a 10-minute
 * filter every 10 minutes): within 4% on the synthetic streams, 7.5% on
 * average on the log (4% high), whose windows hold only 150 to 400 keys.
 *
 * Everything here reads the filter only: no allocation, no error.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>

#include "tlbf.h"

/*
 * Work bound for the overlap of two slices: the cells of both, merged, are
 * walked from u = 0 up to a budget shared by all pairs of a filter, so that
 * tlbf_info() on a filter of a gigabyte still answers at once.  Keys are
 * spread uniformly over u, so any stretch of it estimates the overlap.
 * About 4M cells in all, shared by the pairs, but at least 256 a pair.
 */
#define OVERLAP_CELLS_TOTAL (UINT64_C(1) << 22)
#define OVERLAP_CELLS_MIN	(UINT64_C(1) << 8)
#define OVERLAP_BINS		64

/*
 * A chain is taken in segments of at most CHAIN_SEGMENT blocks, each block
 * compared with those at most CHAIN_REACH blocks away, so that the work
 * and the stack stay small for any filter.  A filter at its planned rate
 * has a chain of (k+l)/k blocks or so: all of it is compared.
 */
#define CHAIN_SEGMENT	64
#define CHAIN_REACH		16
#define CHANCE_PARTNERS 4

/*
 * What a walk over the merged cells of slice a and some others saw (their
 * union: a point is clear there when every one of them is).
 */
typedef struct CellWalk
{
	double		covered;		/* length of u walked */
	double		a_clear;		/* ... where slice a's cell is clear */
	double		others_clear;	/* ... where the others' all are */
	double		both_clear;		/* ... where all are */
	double		cells;			/* cells stepped through */

	/*
	 * By the overlap of a's cell with the others' there (a bin per
	 * 1/OVERLAP_BINS of a's cell): the length of u walked, and that length
	 * times the overlap.
	 */
	double		length[OVERLAP_BINS];
	double		overlap[OVERLAP_BINS];
} CellWalk;

/* The slices a walk goes through, each at its current cell. */
typedef struct Walker
{
	const TlbfSlice *slice;
	uint64_t	bits;			/* its cells */
	uint64_t	cell;			/* the current one */
	bool		set;			/* is it set? */
} Walker;

static inline bool
slice_bit(const uint64_t *words, const TlbfSlice *s, uint64_t i)
{
	return (words[s->offset + (i >> 6)] >> (i & 63)) & 1;
}

/* Does w's current cell end before (< 0), with (0) or after x's? */
static inline int
compare_ends(const Walker *w, const Walker *x)
{
	unsigned __int128 wend = (unsigned __int128) (w->cell + 1) * x->bits;
	unsigned __int128 xend = (unsigned __int128) (x->cell + 1) * w->bits;

	return wend < xend ? -1 : wend > xend;
}

static inline double
cell_start(const Walker *w)
{
	return (double) w->cell / (double) w->bits;
}

static inline double
cell_end(const Walker *w)
{
	return (double) (w->cell + 1) / (double) w->bits;
}

/*
 * Walk the cells of slice a and others[0..m) together, from u = 0, for at
 * most 'max_cells' steps, each to the next end of a cell of any of them.
 * Cell ends are compared exactly in integers.
 */
static void
walk_cells(const Tlbf *f, const TlbfSlice *a, const TlbfSlice *const *others,
		   int m, uint64_t max_cells, CellWalk *w)
{
	const uint64_t *words = tlbf_words(f);
	Walker		walker[1 + 2 * CHAIN_REACH];
	int			n = 1 + m;
	int			others_set = 0;
	double		bins_per_overlap;
	double		start = 0.0;
	uint64_t	steps = 0;
	bool		at_end = false;

	*w = (CellWalk) {0};
	for (int x = 0; x < n; x++)
	{
		const TlbfSlice *slice = x == 0 ? a : others[x - 1];

		walker[x].slice = slice;
		walker[x].bits = (uint64_t) slice->nwords * 64;
		walker[x].cell = 0;
		walker[x].set = slice_bit(words, slice, 0);
		others_set += x > 0 && walker[x].set;
	}
	bins_per_overlap = (double) a->nwords * 64 * OVERLAP_BINS;

	while (steps < max_cells && !at_end)
	{
		int			first = 0;
		double		others_start = 1.0;
		double		others_end = 0.0;
		double		end;
		double		len;
		double		overlap;
		int			bin;

		for (int x = 1; x < n; x++)
		{
			if (compare_ends(&walker[x], &walker[first]) < 0)
				first = x;
			others_start = fmin(others_start, cell_start(&walker[x]));
			others_end = fmax(others_end, cell_end(&walker[x]));
		}
		end = cell_end(&walker[first]);
		len = end - start;

		/*
		 * A key in a and in the others sets a's cell and the others' around
		 * its u: taken to be in all of them, the overlap is a's cell's with
		 * the span of theirs.  (A key in only some overlaps less, and is then
		 * counted a little short: the caller keeps the result at least what
		 * a shares with the strongest other alone.)
		 */
		overlap = fmin(cell_end(&walker[0]), others_end) -
			fmax(cell_start(&walker[0]), others_start);
		bin = (int) (overlap * bins_per_overlap);
		bin = bin < 0 ? 0 : bin >= OVERLAP_BINS ? OVERLAP_BINS - 1 : bin;
		w->length[bin] += len;
		w->overlap[bin] += len * overlap;
		w->a_clear += walker[0].set ? 0.0 : len;
		w->others_clear += others_set > 0 ? 0.0 : len;
		w->both_clear += walker[0].set || others_set > 0 ? 0.0 : len;
		start = end;

		/* on to the next cell of every slice whose cell ends here */
		for (int x = n - 1; x >= 0; x--)
		{
			Walker	   *y = &walker[x];

			if (x != first && compare_ends(y, &walker[first]) != 0)
				continue;
			steps++;
			if (++y->cell == y->bits)
			{
				at_end = true;	/* u = 1: every slice ends here */
				break;
			}
			others_set -= x > 0 && y->set;
			y->set = slice_bit(words, y->slice, y->cell);
			others_set += x > 0 && y->set;
		}
	}
	w->covered = start;
	w->cells = (double) steps;
}

/*
 * How many times more often a point is clear in a and in the others than
 * if their blocks were hashed independently, for 'shared' keys in both:
 * each shared key sets the cells around its u in both, which overlap (by
 * o, around a point where a's cell and the others' overlap by o) instead
 * of lying in independent places.  nb: the size of the strongest other
 * (a second-order correction only).  Relative to the walked stretch,
 * so 1 at shared = 0, and increasing in 'shared'.
 */
static double
excess_clear(const CellWalk *w, double na, double nb, double shared)
{
	double		a = 1.0 / na;
	double		b = 1.0 / nb;
	double		sum = 0.0;

	for (int bin = 0; bin < OVERLAP_BINS; bin++)
	{
		double		o;

		if (w->length[bin] <= 0.0)
			continue;
		o = w->overlap[bin] / w->length[bin];
		sum += w->length[bin] *
			exp(shared * log1p((o - a * b) / ((1.0 - a) * (1.0 - b))));
	}
	return sum / w->covered;
}

/*
 * Estimate of the keys that slice a and others[0..m) (disjoint blocks, the
 * same hash function) both hold, between 0 and 'most'.  0 when the slices
 * cannot tell (one of them full), or when the excess is within 'chance'
 * standard deviations of none: the caller takes the largest of several
 * such estimates, and the largest of several chance excesses is not small.
 */
static double
shared_keys(const Tlbf *f, const TlbfSlice *a, const TlbfSlice *const *others,
			int m, int strongest, double most, uint64_t max_cells, double chance)
{
	CellWalk	w;
	double		na = (double) a->nwords * 64;
	double		nb = (double) others[strongest]->nwords * 64;
	double		observed;
	double		clear;
	double		low = 0.0;
	double		high = most;

	if (!(most > 0.0))
		return 0.0;
	walk_cells(f, a, others, m, max_cells, &w);
	if (!(w.a_clear > 0.0 && w.others_clear > 0.0 && w.covered > 0.0))
		return 0.0;
	observed = w.both_clear * w.covered / (w.a_clear * w.others_clear);
	clear = w.both_clear / w.covered;
	if (!(observed > 1.0 + chance * sqrt((1.0 - clear) / (clear * fmax(w.cells, 1.0)))))
		return 0.0;
	if (observed >= excess_clear(&w, na, nb, most))
		return most;
	/* excess_clear() increases with 'shared': bisect to a ten-thousandth */
	for (int step = 0; step < 64 && high - low > fmax(0.01, most * 1e-4); step++)
	{
		double		mid = (low + high) / 2;

		if (excess_clear(&w, na, nb, mid) < observed)
			low = mid;
		else
			high = mid;
	}
	return (low + high) / 2;
}

/* The keys two slices of the same hash function both hold (0: another). */
static double
shared_pair(const Tlbf *f, const TlbfSlice *a, const TlbfSlice *b,
			uint64_t max_cells, double chance)
{
	if (a->hash_index != b->hash_index)
		return 0.0;
	return shared_keys(f, a, &b, 1, 0,
					   fmin(tlbf_slice_load(a), tlbf_slice_load(b)),
					   max_cells, chance);
}

/* Distinct keys in a run of live slices, and bounds on them. */
typedef struct KeyCount
{
	double		estimate;
	double		low;
	double		high;
} KeyCount;

/* Pairs of blocks compared in a chain of 'blocks' (at most). */
static uint64_t
chain_pairs(uint32_t blocks)
{
	uint32_t	reach = blocks - 1 < CHAIN_REACH ? blocks - 1 : CHAIN_REACH;

	return (uint64_t) blocks * reach;
}

static inline bool
within_reach(uint32_t b, uint32_t c)
{
	return (c > b ? c - b : b - c) <= CHAIN_REACH;
}

/*
 * The distinct keys of blocks slice[0..n) of a chain (slice[b] and
 * slice[b+1] are k apart).  Greedily, the fullest block first: each next
 * block, the fullest left, adds its keys less those it shares with the
 * blocks already counted.  Fullest first, so that the blocks long enough to
 * hold a whole returning audience are counted before the short ones, whose
 * keys then all sit in one counted block.
 */
static double
segment_keys(const Tlbf *f, const uint32_t *slice, const double *keys,
			 uint32_t n, uint64_t max_cells)
{
	const TlbfSlice *s = tlbf_slices(f);
	bool		counted[CHAIN_SEGMENT] = {false};
	double		total = 0.0;

	for (uint32_t step = 0; step < n; step++)
	{
		uint32_t	b = n;
		const TlbfSlice *partner[2 * CHAIN_REACH];
		int			partners = 0;
		int			sharing = 0;
		int			strongest = 0;
		double		chance;
		double		most_shared = 0.0;
		double		sum_shared = 0.0;
		double		shared;

		for (uint32_t c = 0; c < n; c++)
			if (!counted[c] && (b == n || keys[c] > keys[b]))
				b = c;
		for (uint32_t c = 0; c < n; c++)
			partners += counted[c] && within_reach(b, c);

		/*
		 * The largest of m chance excesses is about sqrt(2 ln m) standard
		 * deviations: below that an overlap is taken for none, when there are
		 * many partners (a long chain: a small k, a large l, a filter that
		 * grew).  Against a few, small real overlaps (blocks of a few hundred
		 * keys) would be lost for less than they gain.
		 */
		chance = partners > CHANCE_PARTNERS ? sqrt(2.0 * log(partners)) : 0.0;
		for (uint32_t c = 0; c < n; c++)
		{
			double		pair;

			if (!counted[c] || !within_reach(b, c))
				continue;
			pair = shared_pair(f, &s[slice[b]], &s[slice[c]], max_cells, chance);
			if (pair <= 0.0)
				continue;
			if (pair > most_shared)
			{
				most_shared = pair;
				strongest = sharing;
			}
			sum_shared += pair;
			partner[sharing++] = &s[slice[c]];
		}

		/*
		 * What the block shares with all the counted blocks together: at
		 * least what it shares with any one, at most the sum.  When several
		 * share some, the block against all of them at once tells where in
		 * between (a key coming back after a block without it).
		 */
		shared = most_shared;
		if (sharing > 1)
			shared = fmin(fmax(shared_keys(f, &s[slice[b]], partner, sharing, strongest,
										   fmin(sum_shared, keys[b]), max_cells, 0.0),
							   most_shared),
						  fmin(sum_shared, keys[b]));
		total += keys[b] - shared;
		counted[b] = true;
	}
	return total;
}

/*
 * The run of live slices first .. last (at least k of them).  Its chain is
 * slices last-k+1, last-2k+1, ..., down to at most k-1 beyond 'first'.
 */
static uint32_t
chain_blocks(const Tlbf *f, uint32_t first, uint32_t last)
{
	return (last - f->k + 1 - first) / f->k + 1;
}

static void
count_run(const Tlbf *f, uint32_t first, uint32_t last, uint64_t max_cells,
		  KeyCount *count)
{
	const TlbfSlice *s = tlbf_slices(f);
	uint32_t	oldest = last - f->k + 1;	/* last whose keys are all found */
	uint32_t	blocks = chain_blocks(f, first, last);
	uint32_t	slice[CHAIN_SEGMENT];
	double		keys[CHAIN_SEGMENT];
	uint32_t	n = 0;
	double		sum = 0.0;
	double		estimate = 0.0;
	double		fullest = 0.0;

	for (uint32_t i = first; i <= oldest; i++)
		fullest = fmax(fullest, tlbf_slice_load(&s[i]));

	/* the chain from its oldest block, in segments */
	for (uint32_t b = 0; b < blocks; b++)
	{
		uint32_t	i = oldest - b * f->k;

		slice[n] = i;
		keys[n] = tlbf_slice_load(&s[i]);
		sum += keys[n];
		n++;
		if (n == CHAIN_SEGMENT || b == blocks - 1)
		{
			estimate += segment_keys(f, slice, keys, n, max_cells);
			/* less what it shares with the previous segment's newest block */
			if (b + 1 > n)
				estimate -= shared_pair(f, &s[slice[0]], &s[slice[0] + f->k],
										max_cells, 0.0);
			n = 0;
		}
	}
	count->low = fullest;
	count->high = fmax(sum, fullest);
	count->estimate = fmin(fmax(estimate, fullest), count->high);
}

/*
 * The next run of at least k consecutive live slices from *pos on (only
 * there can a key be found): false when there is none.  In one filter the
 * live slices are the newest ones; a union (merge.c) lists several
 * filters' slices one after the other, and each may have its own.
 */
static bool
next_live_run(const Tlbf *f, TlbfTime at, uint32_t *pos,
			  uint32_t *first, uint32_t *last)
{
	const TlbfSlice *s = tlbf_slices(f);

	while (*pos < f->nslices)
	{
		uint32_t	start = *pos;
		uint32_t	end = start;

		tlbf_check_interrupts();
		while (end < f->nslices && !tlbf_is_expired(&s[end], at, f->span))
			end++;
		*pos = end + 1;
		if (end - start >= (uint32_t) f->k)
		{
			*first = start;
			*last = end - 1;
			return true;
		}
	}
	return false;
}

/*
 * The distinct keys the filter still finds at 'at' (an estimate, and the
 * range it lies in), summed over the runs of live slices.
 */
static void
count_live_keys(const Tlbf *f, TlbfTime at, TlbfStats *stats)
{
	uint32_t	pos = 0;
	uint32_t	first;
	uint32_t	last;
	uint64_t	pairs = 0;
	uint64_t	max_cells;

	stats->live_keys = stats->live_keys_low = stats->live_keys_high = 0.0;
	while (next_live_run(f, at, &pos, &first, &last))
		pairs += chain_pairs(chain_blocks(f, first, last));
	max_cells = pairs == 0 ? 0 : OVERLAP_CELLS_TOTAL / pairs;
	if (max_cells < OVERLAP_CELLS_MIN)
		max_cells = OVERLAP_CELLS_MIN;

	pos = 0;
	while (next_live_run(f, at, &pos, &first, &last))
	{
		KeyCount	count;

		count_run(f, first, last, max_cells, &count);
		stats->live_keys += count.estimate;
		stats->live_keys_high += count.high;
		stats->live_keys_low = fmax(stats->live_keys_low, count.low);
	}
}

void
tlbf_stats(const Tlbf *f, TlbfTime at, TlbfStats *stats)
{
	const TlbfSlice *s = tlbf_slices(f);
	double		live_load = 0.0;

	stats->live_slices = 0;
	stats->oldest_live = TLBF_NEVER;
	stats->bits = tlbf_total_words(f) * 64;
	for (uint32_t i = 0; i < f->nslices; i++)
	{
		if (i % TLBF_CHECK_EVERY_SLICES == 0)
			tlbf_check_interrupts();
		if (tlbf_is_expired(&s[i], at, f->span))
			continue;
		stats->live_slices++;
		live_load += tlbf_slice_load(&s[i]);
		if (stats->oldest_live == TLBF_NEVER || s[i].updated_at < stats->oldest_live)
			stats->oldest_live = s[i].updated_at;
	}

	/*
	 * The figure reported before 1.5, kept for comparison: every key went to
	 * k slices, so this counts a key once per k generations it was added in
	 * (and counts the older keys live slices still hold).  It is the
	 * distinct keys only for keys that never come back.
	 */
	stats->live_items = live_load / f->k;
	count_live_keys(f, at, stats);
}

double
tlbf_fill_ratio(const TlbfSlice *s)
{
	return (double) s->bits_set / ((double) s->nwords * 64);
}
