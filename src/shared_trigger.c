/*-------------------------------------------------------------------------
 *
 * shared_trigger.c
 *	  tlbf_reject_recent: a BEFORE INSERT trigger that skips (or refuses)
 *	  rows whose key was seen within a shared filter's span.
 *
 *	  CREATE TRIGGER no_repeat_clicks BEFORE INSERT ON clicks
 *	  FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('clicks', 'user_id', 'ad_id');
 *
 * Arguments: options first, then the filter's name, then one or more
 * columns that together make the key.  Options: 'error' (raise 23505
 * instead of skipping the row); 'threshold=P' (skip or refuse a row only
 * when the probability that its key was really added within the span, as
 * tlbf_probability gives it, is at least P; default 0: every "yes");
 * 'prior=Q' (the prior probability for that, default 0.5); 'on_full=drop'
 * (when the filter's keys need more shared memory than the pool has left,
 * drop its oldest keys with a WARNING rather than fail the insert, the
 * default 'on_full=error').  A row accepted adds its key; a row skipped
 * or refused does not (see tlbf_shared_accept).
 * NULL is a value like any other.  A key of one non-NULL column hashes as
 * tlbf_shared_add(filter, value) does, so tlbf_shared_contains() finds it;
 * tlbf_shared_rebuild() combines several key columns as the trigger does.
 * The test and the insertion of the key are one atomic step.
 *
 * On a Citus cluster the trigger fires on the shards, on the workers, and
 * each node has its own shared filters.  A key is then checked against one
 * filter only if all its rows reach one shard with one placement: the
 * trigger refuses to run on a shard of a table with several placements
 * per shard (reference tables), or whose key leaves out the distribution
 * column.  And Citus reports the rows it sent in a COPY (a COPY into the
 * table, an INSERT ... SELECT it routes through the coordinator), not the
 * rows stored: a row skipped there would be counted, so there a recent
 * duplicate fails the statement instead.
 *
 *-------------------------------------------------------------------------
 */
#include "shared_functions.h"
#include "filter_args.h"
#include "key_match.h"
#include "statements.h"

#include <math.h>

#include "access/xact.h"
#include "citus_tables.h"
#include "catalog/pg_trigger.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "tcop/pquery.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(tlbf_reject_recent);

/* What a trigger's arguments say, worked out once (see plan_for). */
typedef struct TriggerPlan
{
	Oid			trigger;
	MemoryContext context;		/* holds the plan */
	bool		stale;			/* the catalogs changed since it was made */
	bool		raise;			/* 'error': raise instead of skipping */
	double		threshold;		/* reject when the posterior reaches it */
	double		prior;
	SharedWhenFull when_full;
	char		filter[NAMEDATALEN];
	int			ncolumns;
	AttrNumber *columns;
	KeyMatcher *matcher;		/* hashes a row's key */
	SharedKeyGuess guess;		/* the filter's kind of key, as last seen */
	bool		on_shard;		/* fires on a shard of a Citus table */
	bool		confirmed_after;	/* an AFTER trigger confirms stored rows */
	int			checked_role;	/* the session_replication_role it was found for */
} TriggerPlan;

/* The value of a trigger option that is a probability, checked. */
static double
probability_option(const char *option, const char *value)
{
	char	   *end;
	double		p = strtod(value, &end);

	if (end == value || *end != '\0' || isnan(p) || p < 0.0 || p > 1.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid tlbf_reject_recent option \"%s\"", option),
				 errdetail("A threshold and a prior are probabilities, between 0 and 1.")));
	return p;
}

/*
 * If 'rel' is a shard of a Citus table, is every key's every row sure to
 * reach it, and only it?  Refuse to run where it is not.
 */
static bool
check_citus_shard(const TriggerPlan *plan, Relation rel)
{
	CitusShard	shard;
	AttrNumber	distribution;

	if (!tlbf_citus_shard_of(rel, &shard))
		return false;
	if (shard.replication != 's')
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("tlbf_reject_recent cannot guard Citus table %s",
						shard.table),
				 errdetail("Its shards have a copy on several nodes, and each node checks its own shared filter, so the copies could keep different rows."),
				 errhint("Guard a distributed table (create_distributed_table) instead of a reference table.")));
	if (shard.column == NULL)
		return true;			/* a single shard: every row reaches it */
	distribution = SPI_fnumber(RelationGetDescr(rel), shard.column);
	for (int i = 0; i < plan->ncolumns; i++)
		if (plan->columns[i] == distribution)
			return true;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("tlbf_reject_recent on Citus table %s must have its distribution column \"%s\" among its key columns",
					shard.table, shard.column),
			 errdetail("Each worker checks its own shared filter: only a key that includes the distribution column sends all its rows to one worker."),
			 errhint("Add \"%s\" to the trigger's columns.", shard.column)));
	return false;				/* not reached */
}

/* Is the statement running a COPY (as Citus sends rows to a shard)? */
static bool
in_copy(void)
{
	return ActivePortal != NULL && ActivePortal->commandTag == CMDTAG_COPY;
}

static bool
same_arguments(const Trigger *a, const Trigger *b)
{
	if (a->tgnargs != b->tgnargs)
		return false;
	for (int i = 0; i < a->tgnargs; i++)
		if (strcmp(a->tgargs[i], b->tgargs[i]) != 0)
			return false;
	return true;
}

#define ROW_INSERT_TRIGGER(t) \
	(TRIGGER_FOR_ROW((t)->tgtype) && TRIGGER_FOR_INSERT((t)->tgtype) && \
	 (t)->tgenabled != TRIGGER_DISABLED && !(t)->tgisinternal)

/* Does trigger 't' fire in this session (session_replication_role)? */
static bool
fires_now(const Trigger *t)
{
	if (SessionReplicationRole == SESSION_REPLICATION_ROLE_REPLICA)
		return t->tgenabled == TRIGGER_FIRES_ON_REPLICA || t->tgenabled == TRIGGER_FIRES_ALWAYS;
	return t->tgenabled == TRIGGER_FIRES_ON_ORIGIN || t->tgenabled == TRIGGER_FIRES_ALWAYS;
}

/*
 * The BEFORE trigger must see the row last: a BEFORE INSERT trigger that
 * fires after it (triggers fire in name order) could change the key, or
 * skip the row, after its key was taken.  Returns whether an AFTER INSERT
 * trigger with the same arguments fires with it in this session (to
 * confirm each row that was stored: needed for INSERT ... ON CONFLICT,
 * which may skip a row the BEFORE trigger let through).  Such a trigger
 * must fire for every row, when its statement ends: one that is deferrable
 * (it would confirm at commit, after later statements looked for the key)
 * or has a WHEN condition (it would leave rows unconfirmed, their keys
 * dropped) is refused.
 */
static bool
check_trigger_pair(const Trigger *before, Relation rel)
{
	TriggerDesc *triggers = rel->trigdesc;
	bool		has_after = false;

	for (int i = 0; triggers != NULL && i < triggers->numtriggers; i++)
	{
		const Trigger *t = &triggers->triggers[i];

		if (!ROW_INSERT_TRIGGER(t))
			continue;
		if (TRIGGER_FOR_BEFORE(t->tgtype) && strcmp(t->tgname, before->tgname) > 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("trigger \"%s\" fires after tlbf_reject_recent trigger \"%s\" on table \"%s\"",
							t->tgname, before->tgname, RelationGetRelationName(rel)),
					 errdetail("BEFORE INSERT triggers fire in the order of their names, and tlbf_reject_recent must see the row as it will be stored: a trigger after it could change its key or skip it."),
					 errhint("Rename the tlbf_reject_recent trigger so that its name sorts after \"%s\".",
							 t->tgname)));
		if (!TRIGGER_FOR_AFTER(t->tgtype) || t->tgfoid != before->tgfoid ||
			!same_arguments(t, before))
			continue;
		if (t->tgdeferrable || t->tgqual != NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("AFTER INSERT trigger \"%s\" on table \"%s\" cannot confirm the rows of tlbf_reject_recent trigger \"%s\"",
							t->tgname, RelationGetRelationName(rel), before->tgname),
					 t->tgdeferrable ?
					 errdetail("It is deferrable: the AFTER trigger must fire for every row stored, when its statement ends.") :
					 errdetail("It has a WHEN condition: the AFTER trigger must fire for every row stored, when its statement ends."),
					 errhint("Create it as a plain AFTER INSERT ... FOR EACH ROW trigger.")));
		if (fires_now(t))
			has_after = true;
	}
	return has_after;
}

/*
 * INSERT ... ON CONFLICT may skip a row its BEFORE triggers let through
 * (ON CONFLICT DO NOTHING, or DO UPDATE of the row it conflicts with): its
 * key must then not count, so the rows it stores are confirmed by the AFTER
 * trigger.  Without one, such a statement is refused.
 */
static void
require_after_trigger(const Trigger *before, Relation rel)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("INSERT ... ON CONFLICT into table \"%s\" needs an AFTER INSERT trigger to go with tlbf_reject_recent trigger \"%s\"",
					RelationGetRelationName(rel), before->tgname),
			 errdetail("ON CONFLICT may skip a row the BEFORE trigger let through: an AFTER INSERT ... FOR EACH ROW trigger with the same function and arguments tells which rows were stored."),
			 errhint("CREATE TRIGGER %s_stored AFTER INSERT ON %s FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent(...), with the arguments of \"%s\".",
					 quote_identifier(before->tgname),
					 quote_identifier(RelationGetRelationName(rel)), before->tgname)));
}

/* Work out a trigger's plan, in 'context'. */
static TriggerPlan *
make_plan(TriggerData *data, MemoryContext context)
{
	Trigger    *trigger = data->tg_trigger;
	TupleDesc	desc = RelationGetDescr(data->tg_relation);
	TriggerPlan *plan;
	int			first;

	plan = MemoryContextAllocZero(context, sizeof(TriggerPlan));
	plan->trigger = trigger->tgoid;
	plan->context = context;
	plan->prior = 0.5;
	for (first = 0; first < trigger->tgnargs; first++)
	{
		const char *option = trigger->tgargs[first];

		if (strcmp(option, "error") == 0)
			plan->raise = true;
		else if (strncmp(option, "threshold=", 10) == 0)
			plan->threshold = probability_option(option, option + 10);
		else if (strncmp(option, "prior=", 6) == 0)
			plan->prior = probability_option(option, option + 6);
		else if (strcmp(option, "on_full=error") == 0)
			plan->when_full = SHARED_FULL_ERROR;
		else if (strcmp(option, "on_full=drop") == 0)
			plan->when_full = SHARED_FULL_DROP_OLDEST;
		else if (strncmp(option, "on_full=", 8) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid tlbf_reject_recent option \"%s\"", option),
					 errdetail("on_full is error (the default: the insert fails when the filter's shared memory is full) or drop (the filter drops its oldest keys, with a WARNING).")));
		else
			break;
	}
	if (trigger->tgnargs < first + 2)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tlbf_reject_recent needs a filter name and at least one column"),
				 errhint("Create the trigger with EXECUTE FUNCTION tlbf_reject_recent(['error',] ['threshold=P',] ['prior=Q',] ['on_full=error|drop',] 'filter', 'column' [, ...]).")));
	if (strlen(trigger->tgargs[first]) >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("invalid shared tlbf filter name \"%s\"", trigger->tgargs[first])));
	strlcpy(plan->filter, trigger->tgargs[first], NAMEDATALEN);
	plan->ncolumns = trigger->tgnargs - first - 1;
	if (plan->ncolumns > TLBF_MAX_KEY_FIELDS)
		ereport(ERROR,
				(errcode(ERRCODE_TOO_MANY_COLUMNS),
				 errmsg("tlbf_reject_recent takes at most %d key columns, not %d",
						TLBF_MAX_KEY_FIELDS, plan->ncolumns)));
	plan->columns = MemoryContextAlloc(context, plan->ncolumns * sizeof(AttrNumber));
	plan->matcher = tlbf_key_matcher(context);
	for (int i = 0; i < plan->ncolumns; i++)
	{
		const char *column = trigger->tgargs[first + 1 + i];
		int			attnum = SPI_fnumber(desc, column);

		if (attnum <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" of relation \"%s\" does not exist", column,
							RelationGetRelationName(data->tg_relation))));
		if (TupleDescAttr(desc, attnum - 1)->attgenerated != '\0')
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("tlbf_reject_recent cannot key on generated column \"%s\"", column),
					 errdetail("A BEFORE trigger sees a stored generated column before it is computed, as NULL."),
					 errhint("Key on the columns it is computed from.")));
		plan->columns[i] = attnum;
	}
	if (TRIGGER_FIRED_BEFORE(data->tg_event))
		plan->confirmed_after = check_trigger_pair(trigger, data->tg_relation);
	plan->checked_role = SessionReplicationRole;
	plan->on_shard = check_citus_shard(plan, data->tg_relation);
	return plan;
}

/*
 * Plans outlive statements: working one out (the arguments, the table's
 * other triggers, Citus, the key's types) costs as much as the test-and-add
 * itself, and a single-row INSERT would pay it for every row.  They are
 * kept by trigger OID in CacheMemoryContext, each in its own context.  Any
 * change to a table, a type or an operator class (the key's hashers) makes
 * every plan stale: the next call works out a new one.  A stale plan may
 * still be in use by a call that started before (an invalidation is taken
 * when a lock is, and a call waits for locks), so it is freed only with the
 * current transaction.
 */
typedef struct PlanEntry
{
	Oid			trigger;		/* the hash key */
	TriggerPlan *plan;
} PlanEntry;

static HTAB *plans = NULL;
static bool stale_plans = false;

static void
make_plans_stale(void)
{
	HASH_SEQ_STATUS scan;
	PlanEntry  *entry;

	if (plans == NULL)
		return;
	hash_seq_init(&scan, plans);
	while ((entry = hash_seq_search(&scan)) != NULL)
		entry->plan->stale = true;
	stale_plans = true;
}

/* Let go of the stale plans (of dropped triggers too) with the transaction. */
static void
drop_stale_plans(void)
{
	HASH_SEQ_STATUS scan;
	PlanEntry  *entry;

	hash_seq_init(&scan, plans);
	while ((entry = hash_seq_search(&scan)) != NULL)
		if (entry->plan->stale)
		{
			MemoryContextSetParent(entry->plan->context, TopTransactionContext);
			(void) hash_search(plans, &entry->trigger, HASH_REMOVE, NULL);
		}
	stale_plans = false;
}

static void
on_relcache_change(Datum arg, Oid relid)
{
	make_plans_stale();
}

static void
on_syscache_change(Datum arg, int cacheid, uint32 hashvalue)
{
	make_plans_stale();
}

static TriggerPlan *
plan_for(TriggerData *data)
{
	Oid			trigger = data->tg_trigger->tgoid;
	PlanEntry  *entry;
	MemoryContext context;
	TriggerPlan *plan;

	if (plans == NULL)
	{
		HASHCTL		info;

		info.keysize = sizeof(Oid);
		info.entrysize = sizeof(PlanEntry);
		info.hcxt = CacheMemoryContext;
		plans = hash_create("tlbf_reject_recent plans", 16, &info,
							HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		CacheRegisterRelcacheCallback(on_relcache_change, (Datum) 0);
		CacheRegisterSyscacheCallback(TYPEOID, on_syscache_change, (Datum) 0);
		CacheRegisterSyscacheCallback(CLAOID, on_syscache_change, (Datum) 0);
		CacheRegisterSyscacheCallback(AMPROCNUM, on_syscache_change, (Datum) 0);
	}
	if (stale_plans)
		drop_stale_plans();
	entry = hash_search(plans, &trigger, HASH_FIND, NULL);
	if (entry != NULL)
		return entry->plan;

	/* made under the statement's context, kept only if complete */
	context = AllocSetContextCreate(CurrentMemoryContext, "tlbf_reject_recent plan",
									ALLOCSET_SMALL_SIZES);
	plan = make_plan(data, context);
	MemoryContextSetParent(context, CacheMemoryContext);
	entry = hash_search(plans, &trigger, HASH_ENTER, NULL);
	entry->plan = plan;
	return plan;
}


/* The row's key: its columns together (a NULL is a value). */
static void
row_key(const TriggerPlan *plan, HeapTuple row, TupleDesc desc, KeyFields *key)
{
	key->n = plan->ncolumns;
	for (int i = 0; i < plan->ncolumns; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, plan->columns[i] - 1);

		key->types[i] = attr->atttypid;
		key->collations[i] = attr->attcollation;
		key->values[i] = heap_getattr(row, plan->columns[i], desc, &key->nulls[i]);
	}
}

/* "(a, b)=(1, x)" for the error's detail, as unique violations show keys. */
static char *
key_text(const TriggerPlan *plan, HeapTuple row, TupleDesc desc)
{
	StringInfoData names,
				values;

	initStringInfo(&names);
	initStringInfo(&values);
	for (int i = 0; i < plan->ncolumns; i++)
	{
		char	   *value = SPI_getvalue(row, desc, plan->columns[i]);

		appendStringInfo(&names, "%s%s", i ? ", " : "", SPI_fname(desc, plan->columns[i]));
		appendStringInfo(&values, "%s%s", i ? ", " : "", value ? value : "null");
	}
	return psprintf("(%s)=(%s)", names.data, values.data);
}

Datum
tlbf_reject_recent(PG_FUNCTION_ARGS)
{
	TriggerData *data = (TriggerData *) fcinfo->context;
	TriggerPlan *plan;
	TupleDesc	desc;
	KeyFields	key;
	TlbfHash	hash;
	TlbfKeys	basis;
	bool		is_new;
	TlbfTime	now = GetCurrentTransactionStartTimestamp();

	if (!CALLED_AS_TRIGGER(fcinfo) ||
		TRIGGER_FIRED_INSTEAD(data->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(data->tg_event) ||
		!TRIGGER_FIRED_BY_INSERT(data->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("tlbf_reject_recent must be called by BEFORE INSERT and AFTER INSERT ... FOR EACH ROW triggers")));

	tlbf_store_require();
	plan = plan_for(data);
	desc = RelationGetDescr(data->tg_relation);
	row_key(plan, data->tg_trigtuple, desc, &key);
	tlbf_shared_guess_for(&plan->guess, plan->filter);
	if (TRIGGER_FIRED_AFTER(data->tg_event))
	{
		/* the row was stored: its key enters the filter if we commit */
		do
		{
			basis = tlbf_key_basis(plan->matcher, &key, plan->guess.keys, plan->guess.holds_keys);
			(void) tlbf_key_hash(plan->matcher, &key, basis, true, &hash);
		} while (!tlbf_shared_confirm(plan->filter, hash, basis, &plan->guess));
		return PointerGetDatum(NULL);
	}
	/* which triggers fire depends on session_replication_role */
	if (plan->checked_role != SessionReplicationRole)
	{
		plan->confirmed_after = check_trigger_pair(data->tg_trigger, data->tg_relation);
		plan->checked_role = SessionReplicationRole;
	}
	if (!plan->confirmed_after && tlbf_statement_inserts_on_conflict(data->tg_relation))
		require_after_trigger(data->tg_trigger, data->tg_relation);
	do
	{
		basis = tlbf_key_basis(plan->matcher, &key, plan->guess.keys, plan->guess.holds_keys);
		(void) tlbf_key_hash(plan->matcher, &key, basis, true, &hash);
	} while (!tlbf_shared_accept(plan->filter, hash, now, plan->threshold, plan->prior,
								 plan->when_full, !plan->confirmed_after, basis, &plan->guess,
								 &is_new));
	if (is_new)
		return PointerGetDatum(data->tg_trigtuple);
	if (plan->on_shard && !plan->raise && in_copy())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot skip a recent duplicate in rows Citus copies to a shard"),
				 errdetail("Key %s was added within the span of shared tlbf filter \"%s\"; Citus would count the skipped row as stored.",
						   key_text(plan, data->tg_trigtuple, desc), plan->filter),
				 errhint("Insert with INSERT ... VALUES, or INSERT ... SELECT from a table distributed alike; a COPY or an INSERT ... SELECT routed through the coordinator is refused only when it holds a recent duplicate.")));
	if (plan->raise)
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg("duplicate key: seen recently by shared tlbf filter \"%s\"", plan->filter),
				 errdetail("Key %s was added within the filter's span.",
						   key_text(plan, data->tg_trigtuple, desc))));
	return PointerGetDatum(NULL);
}
