/*-------------------------------------------------------------------------
 *
 * statements.h
 *	  The statements that insert rows in this backend, as the executor and
 *	  COPY start and finish them: which one is running, and which tables
 *	  they insert into with ON CONFLICT.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TLBF_STATEMENTS_H
#define TLBF_STATEMENTS_H

#include "postgres.h"

#include "utils/relcache.h"

extern void tlbf_statements_init(void);
extern uint32 tlbf_statement_current(void);
extern bool tlbf_statement_running(uint32 statement);
extern bool tlbf_statement_inserts_on_conflict(Relation rel);

#endif							/* TLBF_STATEMENTS_H */
