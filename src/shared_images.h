/*-------------------------------------------------------------------------
 *
 * shared_images.h
 *	  Images of shared filters written at a clean stop, in pg_tlbf/images/,
 *	  so that a restart forgets nothing a save had not written yet.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_SHARED_IMAGES_H
#define TLBF_SHARED_IMAGES_H

#include "tlbf_pg.h"

#include "nodes/pg_list.h"

extern bool tlbf_image_write(Oid database, const char *name, TransactionId row_xid,
							 Size region, const Tlbf *filter);
extern Tlbf *tlbf_image_read(const char *name, TransactionId row_xid, Size region);
extern void tlbf_image_remove(Oid database, const char *name);
extern List *tlbf_image_names(void);
extern List *tlbf_images_databases(const List *existing);

#endif							/* TLBF_SHARED_IMAGES_H */
