/*-------------------------------------------------------------------------
 *
 * statements.c
 *	  The statements that may insert rows in this backend, as the executor
 *	  hooks (and, for COPY FROM, the utility hook) see them start and
 *	  finish.
 *
 * The dedup trigger reserves a key in its BEFORE trigger and its AFTER
 * trigger confirms it once the row is stored (shared_pending.c).  AFTER
 * row triggers fire when their statement finishes (ExecutorFinish, the end
 * of a COPY), so a reservation its statement finished without confirming
 * is a row that was not stored (INSERT ... ON CONFLICT skipped it): it must
 * no longer count.  A statement is known here by a number this backend
 * gives it; the command counter cannot tell statements apart, as a
 * trigger or function running SQL in the middle of a statement (an audit
 * trigger) advances it.
 *
 * Statements are kept in a stack (nested ones on top, a trigger's or a
 * function's), in TopMemoryContext; an abort forgets those its
 * (sub)transaction started, which never finish.
 *
 *-------------------------------------------------------------------------
 */
#include "statements.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "catalog/partition.h"
#include "executor/executor.h"
#include "nodes/parsenodes.h"
#include "parser/parsetree.h"
#include "tcop/utility.h"
#include "utils/memutils.h"
#include "utils/rel.h"

typedef struct RunningStatement
{
	uint32		number;			/* 1, 2, ... in this backend (never 0) */
	QueryDesc  *query;			/* NULL for a COPY FROM */
	List	   *on_conflict;	/* OIDs of the tables it inserts into so */
	SubTransactionId subxact;	/* that started it */
} RunningStatement;

static List *running = NIL;
static uint32 last_number = 0;

static ExecutorFinish_hook_type previous_executor_finish = NULL;
static ExecutorEnd_hook_type previous_executor_end = NULL;
static ProcessUtility_hook_type previous_utility = NULL;

/*
 * PostgreSQL 18beta1 made ExecutorStart say whether the plan it started is
 * still valid (bool); 18.0 made it void again, under the same
 * PG_VERSION_NUM: the hook's own type says which this server has.  The
 * hook before ours is kept untyped and called as that type.
 */
typedef bool (*BoolExecutorStart) (QueryDesc *query, int eflags);
typedef void (*VoidExecutorStart) (QueryDesc *query, int eflags);

#define EXECUTOR_START_GIVES_BOOL \
	_Generic(ExecutorStart_hook, BoolExecutorStart: true, default: false)

static pg_funcptr_t previous_executor_start = NULL;

static void
push(QueryDesc *query, List *on_conflict)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	RunningStatement *s = palloc(sizeof(RunningStatement));

	if (++last_number == 0)
		last_number = 1;		/* (0 is "none") */
	s->number = last_number;
	s->query = query;
	s->on_conflict = list_copy(on_conflict);
	s->subxact = GetCurrentSubTransactionId();
	running = lappend(running, s);
	MemoryContextSwitchTo(old);
}

static void
forget(bool (*gone) (const RunningStatement *s, const void *arg), const void *arg)
{
	ListCell   *cell;

	foreach(cell, running)
	{
		RunningStatement *s = lfirst(cell);

		if (!gone(s, arg))
			continue;
		list_free(s->on_conflict);
		pfree(s);
		running = foreach_delete_current(running, cell);
	}
}

static bool
of_query(const RunningStatement *s, const void *arg)
{
	return s->query == arg;
}

static bool
numbered(const RunningStatement *s, const void *arg)
{
	return s->number == *(const uint32 *) arg;
}

static bool
of_subxact(const RunningStatement *s, const void *arg)
{
	return s->subxact == *(const SubTransactionId *) arg;
}

static bool
any_statement(const RunningStatement *s, const void *arg)
{
	return true;
}

static List *
on_conflict_tables(PlannedStmt *stmt, Plan *plan, List *tables)
{
	if (plan != NULL && IsA(plan, ModifyTable) &&
		((ModifyTable *) plan)->onConflictAction != ONCONFLICT_NONE)
	{
		ListCell   *cell;

		foreach(cell, ((ModifyTable *) plan)->resultRelations)
			tables = lappend_oid(tables, rt_fetch(lfirst_int(cell), stmt->rtable)->relid);
	}
	return tables;
}

/* Start the executor as the hook before ours would; false: the plan is no longer valid. */
static bool
start_executor(QueryDesc *query, int eflags)
{
	pg_funcptr_t start = previous_executor_start ? previous_executor_start :
		(pg_funcptr_t) standard_ExecutorStart;

	if (EXECUTOR_START_GIVES_BOOL)
		return ((BoolExecutorStart) start) (query, eflags);
	((VoidExecutorStart) start) (query, eflags);
	return true;
}

static bool
watch_start(QueryDesc *query, int eflags)
{
	PlannedStmt *stmt = query->plannedstmt;
	List	   *tables = NIL;
	ListCell   *cell;

	if (!start_executor(query, eflags))
		return false;
	if (stmt == NULL || (stmt->commandType == CMD_SELECT && !stmt->hasModifyingCTE) ||
		(eflags & EXEC_FLAG_EXPLAIN_ONLY))
		return true;
	/* a ModifyTable is the top of the plan, or of a CTE's subplan */
	tables = on_conflict_tables(stmt, stmt->planTree, tables);
	foreach(cell, stmt->subplans)
		tables = on_conflict_tables(stmt, lfirst(cell), tables);
	push(query, tables);
	list_free(tables);
	return true;
}

static bool
watch_executor_start_bool(QueryDesc *query, int eflags)
{
	return watch_start(query, eflags);
}

static void
watch_executor_start_void(QueryDesc *query, int eflags)
{
	(void) watch_start(query, eflags);
}

/* Its AFTER triggers have fired: the statement is done with its rows. */
static void
watch_executor_finish(QueryDesc *query)
{
	if (previous_executor_finish)
		previous_executor_finish(query);
	else
		standard_ExecutorFinish(query);
	if (running != NIL)
		forget(of_query, query);
}

/* (a statement ended without being finished, as EXPLAIN ends one) */
static void
watch_executor_end(QueryDesc *query)
{
	if (running != NIL)
		forget(of_query, query);
	if (previous_executor_end)
		previous_executor_end(query);
	else
		standard_ExecutorEnd(query);
}

/* A COPY FROM inserts rows without the executor's start and finish. */
static void
watch_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
			  ProcessUtilityContext context, ParamListInfo params,
			  QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	bool		copy_from = IsA(pstmt->utilityStmt, CopyStmt) &&
		((CopyStmt *) pstmt->utilityStmt)->is_from;
	uint32		number = 0;

	if (copy_from)
	{
		push(NULL, NIL);
		number = last_number;
	}
	if (previous_utility)
		previous_utility(pstmt, queryString, readOnlyTree, context, params, queryEnv,
						 dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);
	if (copy_from)
		forget(numbered, &number);
}

static void
forget_on_end(XactEvent event, void *arg)
{
	/* (a statement left running at a commit is a cursor's: it stores nothing more) */
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_COMMIT || event == XACT_EVENT_PREPARE)
		forget(any_statement, NULL);
}

static void
forget_on_subabort(SubXactEvent event, SubTransactionId mySubid,
				   SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		forget(of_subxact, &mySubid);
}

/* Install the hooks (from _PG_init, when preloaded). */
void
tlbf_statements_init(void)
{
	previous_executor_start = (pg_funcptr_t) ExecutorStart_hook;
	ExecutorStart_hook = (ExecutorStart_hook_type)
		(EXECUTOR_START_GIVES_BOOL ? (pg_funcptr_t) watch_executor_start_bool :
		 (pg_funcptr_t) watch_executor_start_void);
	previous_executor_finish = ExecutorFinish_hook;
	ExecutorFinish_hook = watch_executor_finish;
	previous_executor_end = ExecutorEnd_hook;
	ExecutorEnd_hook = watch_executor_end;
	previous_utility = ProcessUtility_hook;
	ProcessUtility_hook = watch_utility;
	RegisterXactCallback(forget_on_end, NULL);
	RegisterSubXactCallback(forget_on_subabort, NULL);
}

/*
 * The innermost statement running (the one whose rows a trigger sees now),
 * or 0 if none is known (rows inserted another way, as logical replication
 * applies them).
 */
uint32
tlbf_statement_current(void)
{
	if (running == NIL)
		return 0;
	return ((RunningStatement *) llast(running))->number;
}

/*
 * Is statement 'number' still running?  0 (not known) is taken as
 * running, and so is every statement in a parallel worker, which shares
 * its leader's transaction but not this list.
 */
bool
tlbf_statement_running(uint32 number)
{
	ListCell   *cell;

	if (number == 0 || IsParallelWorker())
		return true;
	foreach(cell, running)
		if (((RunningStatement *) lfirst(cell))->number == number)
			return true;
	return false;
}

/* Does a running statement insert into 'rel' (or a table it is a partition of) with ON CONFLICT? */
bool
tlbf_statement_inserts_on_conflict(Relation rel)
{
	ListCell   *cell;
	List	   *ancestors = NIL;
	bool		found = false;

	foreach(cell, running)
	{
		RunningStatement *s = lfirst(cell);
		ListCell   *t;

		if (s->on_conflict == NIL)
			continue;
		if (ancestors == NIL && rel->rd_rel->relispartition)
			ancestors = get_partition_ancestors(RelationGetRelid(rel));
		foreach(t, s->on_conflict)
			if (lfirst_oid(t) == RelationGetRelid(rel) || list_member_oid(ancestors, lfirst_oid(t)))
				found = true;
	}
	list_free(ancestors);
	return found;
}
