/*-------------------------------------------------------------------------
 *
 * tb_create.c
 *	  A new, empty format 3 filter: its header alone, no band; and the kind
 *	  of key it records (as formats 1 and 2: keys.c).
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "tb.h"

/* 'f' must hold tb_lines_offset(0) bytes; the params were checked. */
void
tb_init(TbFilter *f, const TbParams *params)
{
	int			lines_per_key,
				k;
	double		bits_per_key;

	memset(f, 0, tb_lines_offset(0));
	tb_choose_layout(params->error_rate, params->generations, &lines_per_key, &k, &bits_per_key);
	f->magic = TLBF_MAGIC;
	f->version = TB_FORMAT_VERSION;
	f->hash_scheme = TLBF_HASH_XXH3_DOUBLE;
	f->lines_per_key = (uint8_t) lines_per_key;
	f->generations = (uint16_t) params->generations;
	f->nbands = 0;
	f->span = params->span;
	f->length = (params->span + params->generations - 1) / params->generations;
	f->error_rate = params->error_rate;
	f->bits_per_key = bits_per_key;
	f->capacity = params->capacity;
	f->k = (uint8_t) k;
	f->flags = params->declared ? TB_DECLARED : 0;
	f->seed = params->seed;
	f->newest = TLBF_NEVER;
}

/* The kind of key the filter records (fields 0: none yet); its tag is the seed. */
TlbfKeys
tb_keys_of(const TbFilter *f)
{
	TlbfKeys	keys = {f->key_fields, f->key_kinds, f->seed};

	return keys;
}

/* Record the kind of the first key: a filter that holds keys keeps its own. */
void
tb_record_keys(TbFilter *f, TlbfKeys keys)
{
	if (f->inserted == 0)
	{
		f->key_fields = keys.fields;
		f->key_kinds = keys.kinds;
		f->seed = keys.tag;
	}
}
