/*-------------------------------------------------------------------------
 *
 * type_io.h
 *	  type_io.c: the text and binary forms of the tlbf type.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_TYPE_IO_H
#define TLBF_TYPE_IO_H

#include "tlbf_pg.h"

extern char *tlbf_base64_decode(const char *text, int *decoded_len, const char *type_name,
								Node *escontext);
extern char *tlbf_base64_encode(const char *data, int len);

#endif							/* TLBF_TYPE_IO_H */
