/*
 * fuzz_common.h
 *	  What the tlbf fuzz targets share: the glue's step of copying a value's
 *	  bytes behind a length word into an aligned buffer and validating it, a
 *	  reader that draws numbers from the fuzzer's bytes, times clamped into
 *	  the range the core accepts, and checks that abort (libFuzzer reports an
 *	  abort as a crash, with the input that caused it).
 */
#ifndef TLBF_FUZZ_COMMON_H
#define TLBF_FUZZ_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlbf.h"

/* PostgreSQL's 4-byte varlena header, which precedes the payload. */
#define FUZZ_VARHDRSZ	4

/*
 * A check that must hold whatever the input: a failure is a bug in the core
 * (or in this harness), never an input to skip.
 */
#define FUZZ_CHECK(cond, what) \
	do { \
		if (!(cond)) \
			fuzz_fail(__FILE__, __LINE__, #cond, (what)); \
	} while (0)

__attribute__((noreturn)) static inline void
fuzz_fail(const char *file, int line, const char *cond, const char *what)
{
	fprintf(stderr, "%s:%d: check failed: %s (%s)\n", file, line, what, cond);
	abort();
}

static inline void *
fuzz_malloc(size_t size)
{
	void	   *p = malloc(size);

	/* malloc(0) may return NULL; the glue's palloc(0) would not fail */
	if (p == NULL && size > 0)
		abort();
	return p;
}

/*
 * Copy a payload behind a length word, as tlbf_validated_copy() does.
 * malloc'd memory is aligned for uint64_t, like palloc's.  The buffer has
 * exactly the value's size, so AddressSanitizer reports any read past it.
 */
static inline Tlbf *
fuzz_copy_value(const uint8_t *payload, size_t len, size_t *size)
{
	size_t		total = FUZZ_VARHDRSZ + len;
	char	   *buffer = fuzz_malloc(total);
	uint32_t	length_word = (uint32_t) total << 2;	/* SET_VARSIZE, 4B */

	memcpy(buffer, &length_word, FUZZ_VARHDRSZ);
	if (len > 0)
		memcpy(buffer + FUZZ_VARHDRSZ, payload, len);
	*size = total;
	return (Tlbf *) buffer;
}

/*
 * The glue's input step: copy, then validate.  Returns the value, or NULL
 * (and frees the copy) when validation rejects it, as the glue would raise
 * an error.
 */
static inline Tlbf *
fuzz_decode(const uint8_t *payload, size_t len, size_t *size)
{
	Tlbf	   *f = fuzz_copy_value(payload, len, size);
	TlbfProblem problem = {NULL, NULL};

	if (tlbf_validate(f, *size, &problem))
	{
		FUZZ_CHECK(tlbf_size(f) == *size, "a valid value's layout has its length");
		return f;
	}
	FUZZ_CHECK(problem.message != NULL, "a rejected value says why");
	free(f);
	return NULL;
}

/*
 * The core's counters (inserted, truncated) stick at their maximum rather
 * than wrap: values from outside may start anywhere.
 */
static inline uint64_t
fuzz_add_saturating(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Validation of a buffer the core wrote from valid inputs. */
static inline void
fuzz_check_valid(const Tlbf *f, const char *what)
{
	TlbfProblem problem = {NULL, NULL};

	if (!tlbf_validate(f, tlbf_size(f), &problem))
	{
		fprintf(stderr, "tlbf_validate rejects %s: %s\n", what, problem.message);
		fuzz_fail(__FILE__, __LINE__, "tlbf_validate(f)", what);
	}
}

static inline Tlbf *
fuzz_clone(const Tlbf *f, size_t size)
{
	Tlbf	   *copy = fuzz_malloc(size);

	memcpy(copy, f, size);
	return copy;
}

/*
 * Numbers drawn from the input, little-endian; past its end every byte is
 * zero, so a short input still runs.
 */
typedef struct FuzzInput
{
	const uint8_t *data;
	size_t		len;
	size_t		pos;
} FuzzInput;

static inline uint64_t
fuzz_take(FuzzInput *in, int nbytes)
{
	uint64_t	value = 0;

	for (int i = 0; i < nbytes; i++)
	{
		uint64_t	byte = in->pos < in->len ? in->data[in->pos++] : 0;

		value |= byte << (8 * i);
	}
	return value;
}

static inline uint8_t
fuzz_u8(FuzzInput *in)
{
	return (uint8_t) fuzz_take(in, 1);
}

static inline uint16_t
fuzz_u16(FuzzInput *in)
{
	return (uint16_t) fuzz_take(in, 2);
}

static inline uint32_t
fuzz_u32(FuzzInput *in)
{
	return (uint32_t) fuzz_take(in, 4);
}

static inline uint64_t
fuzz_u64(FuzzInput *in)
{
	return fuzz_take(in, 8);
}

static inline bool
fuzz_done(const FuzzInput *in)
{
	return in->pos >= in->len;
}

/* A value in [0, n], spread over orders of magnitude (small ones likely). */
static inline uint64_t
fuzz_scaled(FuzzInput *in, uint64_t n)
{
	int			bits = fuzz_u8(in) % 65;
	uint64_t	raw = fuzz_u64(in);
	uint64_t	value = bits == 64 ? raw : raw & ((UINT64_C(1) << bits) - 1);

	return n == UINT64_MAX ? value : value % (n + 1);
}

/* Times passed to the core must lie in [TLBF_TIME_MIN, TLBF_TIME_END). */
static inline TlbfTime
fuzz_clamp_time(TlbfTime t)
{
	if (t < TLBF_TIME_MIN)
		return TLBF_TIME_MIN;
	if (t >= TLBF_TIME_END)
		return TLBF_TIME_END - 1;
	return t;
}

/* t + d, saturated into the valid range. */
static inline TlbfTime
fuzz_add_time(TlbfTime t, int64_t d)
{
	TlbfTime	sum;

	if (__builtin_add_overflow(t, d, &sum))
		return d > 0 ? TLBF_TIME_END - 1 : TLBF_TIME_MIN;
	return fuzz_clamp_time(sum);
}

/* Any valid time. */
static inline TlbfTime
fuzz_any_time(uint64_t x)
{
	uint64_t	range = (uint64_t) TLBF_TIME_END - (uint64_t) TLBF_TIME_MIN;

	return (TlbfTime) ((uint64_t) TLBF_TIME_MIN + x % range);
}

/* A time to ask about a filter at: its newest insertion, or an origin. */
static inline TlbfTime
fuzz_base_time(const Tlbf *f)
{
	return f->newest == TLBF_NEVER ? 0 : f->newest;
}

static inline TlbfHash
fuzz_key_hash(uint64_t key, uint64_t seed)
{
	return tlbf_hash_bytes(&key, sizeof(key), seed);
}

#endif							/* TLBF_FUZZ_COMMON_H */
