/*
 * make_filter.c
 *	  Print, in hex, a tlbf value holding keys 1..n (as int8) added evenly
 *	  over the hour before 2024-01-01 00:00 UTC, for loading large filters
 *	  into a benchmark database without a million tlbf_add calls:
 *
 *	  build/bench/make_filter n [error_rate]
 *	  psql: SELECT translate(encode(decode(:'hex', 'hex'), 'base64'), E'\n', '')::tlbf
 *
 * Keys are hashed exactly as the extension hashes int2/int4/int8 values.
 */
#include <stdio.h>
#include <stdlib.h>

#include "heap_memory.h"
#include "tlbf.h"

#define HOUR	(INT64_C(3600) * 1000000)
#define END		INT64_C(757382400000000)	/* 2024-01-01 00:00 UTC */

int
main(int argc, char **argv)
{
	long		n = argc > 1 ? atol(argv[1]) : 1000000;
	TlbfParams	params = {HOUR, argc > 2 ? atof(argv[2]) : 0.01, (uint64_t) n, 0, 0, 0};
	TlbfMemory	memory;
	TlbfProblem problem;
	Tlbf	   *f;
	const unsigned char *bytes;
	size_t		size;

	if (n < 1 || !tlbf_check_params(&params, &problem))
	{
		fprintf(stderr, "usage: make_filter n [error_rate]\n");
		return 1;
	}
	f = heap_filter(&params, &memory);
	for (int64_t key = 1; key <= n; key++)
		if (tlbf_insert(&f, &memory, tlbf_hash_bytes(&key, sizeof(key), 0),
						END - HOUR + key * (HOUR / n)) != TLBF_OK)
			return 1;

	/* the value's bytes after the varlena length word */
	bytes = (const unsigned char *) f;
	size = tlbf_size(f);
	for (size_t i = 4; i < size; i++)
		printf("%02x", bytes[i]);
	printf("\n");
	return 0;
}
