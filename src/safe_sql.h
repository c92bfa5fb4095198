/*-------------------------------------------------------------------------
 *
 * safe_sql.h
 *	  How the extension's C code finds its own objects and runs its own
 *	  SQL without trusting anything a user could have put in its way.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_SAFE_SQL_H
#define TLBF_SAFE_SQL_H

#include "tlbf_pg.h"

#include "storage/lock.h"

/* The search_path of every statement the extension runs itself. */
#define TLBF_SAFE_SEARCH_PATH "pg_catalog, pg_temp"

/* A role switch in progress (tlbf_become / tlbf_unbecome). */
typedef struct RoleSwitch
{
	Oid			saved_user;
	int			saved_context;
	int			nest_level;
} RoleSwitch;

extern bool tlbf_lock_extension(bool wait);
extern Oid	tlbf_extension_oid(void);
extern Oid	tlbf_extension_schema(void);
extern char *tlbf_extension_schema_quoted(void);
extern Oid	tlbf_extension_table(const char *name);
extern Oid	tlbf_extension_type(void);
extern Oid	tlbf_relation_owner(Oid relid);
extern TransactionId tlbf_prepared_holder(const LOCKTAG *tag, LOCKMODE mode);
extern void tlbf_become(Oid role, RoleSwitch *saved);
extern void tlbf_unbecome(RoleSwitch *saved);
extern int	tlbf_safe_execute(const char *query, int nargs, Oid *types,
							  Datum *values, bool read_only, long count);

#endif							/* TLBF_SAFE_SQL_H */
