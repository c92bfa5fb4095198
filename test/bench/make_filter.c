/*
 * make_filter.c
 *	  Print, in hex, a tlbf value holding keys 1..n (as int8) added evenly
 *	  over the hour before 2024-01-01 00:00 UTC, for loading large filters
 *	  into a benchmark database without a million tlbf_add calls:
 *
 *	  build/bench/make_filter n [error_rate [format [base64]]]
 *	  psql: SELECT translate(encode(decode(:'hex', 'hex'), 'base64'), E'\n', '')::tlbf
 *
 * With a fourth argument "base64", the value's text form instead (for COPY:
 * a 30M-key filter's hex is too long for a psql variable).
 *
 * Format 2 (the default) or 3 (src/core/tb_*.c, a filter no SQL function
 * makes yet).  Keys are hashed exactly as the extension hashes int2/int4/
 * int8 values, and the filter records them as integers, as tlbf_add would.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap_memory.h"
#include "tb.h"
#include "tlbf.h"

#define HOUR	(INT64_C(3600) * 1000000)
#define END		INT64_C(757382400000000)	/* 2024-01-01 00:00 UTC */

static bool as_base64 = false;

static void
print_hex(const void *value, size_t size)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *bytes = value;

	/* the value's bytes after the varlena length word */
	if (!as_base64)
	{
		for (size_t i = 4; i < size; i++)
			printf("%02x", bytes[i]);
		printf("\n");
		return;
	}
	for (size_t i = 4; i < size; i += 3)
	{
		unsigned	v = (unsigned) bytes[i] << 16 |
			(i + 1 < size ? (unsigned) bytes[i + 1] << 8 : 0) |
			(i + 2 < size ? bytes[i + 2] : 0);

		putchar(digits[v >> 18 & 63]);
		putchar(digits[v >> 12 & 63]);
		putchar(i + 1 < size ? digits[v >> 6 & 63] : '=');
		putchar(i + 2 < size ? digits[v & 63] : '=');
	}
	printf("\n");
}

static int
format3(long n, double error_rate)
{
	TbParams	params = {HOUR, error_rate, (uint64_t) n, false, 0, 0};
	TlbfMemory	memory = {heap_resize, NULL, 0, SIZE_MAX, false};
	TlbfProblem problem;
	uint8_t		kind = TLBF_KEY_INTEGER;
	TbFilter   *f;

	if (!tb_check_params(&params, &problem))
		return 1;
	f = malloc(tb_lines_offset(0));
	tb_init(f, &params);
	memory.allocated = tb_lines_offset(0);
	tb_record_keys(f, tlbf_keys_make(&kind, 1));
	for (int64_t key = 1; key <= n; key++)
		if (tb_insert(&f, &memory, tlbf_hash_bytes(&key, sizeof(key), 0),
					  END - HOUR + key * (HOUR / n)) != TLBF_OK)
			return 1;
	print_hex(f, tb_size(f));
	return 0;
}

int
main(int argc, char **argv)
{
	long		n = argc > 1 ? atol(argv[1]) : 1000000;
	double		error_rate = argc > 2 ? atof(argv[2]) : 0.01;
	TlbfParams	params = {HOUR, error_rate, (uint64_t) n, 0, 0, 0};
	TlbfMemory	memory;
	TlbfProblem problem;
	uint8_t		kind = TLBF_KEY_INTEGER;
	Tlbf	   *f;

	if (n < 1 || !tlbf_check_params(&params, &problem))
	{
		fprintf(stderr, "usage: make_filter n [error_rate [format]]\n");
		return 1;
	}
	as_base64 = argc > 4 && strcmp(argv[4], "base64") == 0;
	if (argc > 3 && atoi(argv[3]) == 3)
		return format3(n, error_rate);
	f = heap_filter(&params, &memory);
	tlbf_record_keys(f, tlbf_keys_make(&kind, 1));
	for (int64_t key = 1; key <= n; key++)
		if (tlbf_insert(&f, &memory, tlbf_hash_bytes(&key, sizeof(key), 0),
						END - HOUR + key * (HOUR / n)) != TLBF_OK)
			return 1;
	print_hex(f, tlbf_size(f));
	return 0;
}
