# Privilege escalation through the extension's own queries (issue 14,
# items 1 and 2), tested as an attacker would.
#
# 1. A non-superuser who owns a database with the extension controls that
#    database's search_path (ALTER DATABASE ... SET) and the schema public.
#    It plants, in public, an operator or function for every exact type
#    match that a bookkeeping or rewrite query of the extension could
#    resolve, each of which makes the attacker superuser when it runs as a
#    superuser, and logs every call.  Then every server path runs: the
#    worker's passes (a rewrite, registrations of a dropped table and of a
#    dropped column), shared filters created, filled, dropped and listed by
#    the attacker and by the superuser (calls qualified by schema and
#    type), a snapshot save, and a manual pass (tlbf_maintenance_run()) by
#    the superuser.  Twice: with the extension in public (which the
#    attacker owns, as the owner of the database), and in a schema of its
#    own (so that overloads of its functions in public come first).
#    Nothing of the attacker's may ever run as anyone but the attacker.
# 2. A superuser's manual pass runs each table's code (triggers, index
#    expressions, check constraints, generated columns) as the table's
#    owner, in a security-restricted operation, as the worker does.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('security');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.naptime = 1
tlbf.snapshot_interval = 1
# the launcher's rounds (quiet_worker below)
log_min_messages = debug1
});
$node->start;

# The attacker: an ordinary role that owns two databases.  The superuser
# installs the extension in them and lets the attacker manage shared filters.
$node->safe_psql('postgres', q{
	CREATE ROLE attacker LOGIN;
	CREATE DATABASE d OWNER attacker;
	CREATE DATABASE d2 OWNER attacker;
});
$node->safe_psql('d', 'CREATE EXTENSION tlbf; GRANT tlbf_admin TO attacker;');
$node->safe_psql('d2', q{
	CREATE SCHEMA tlbf_ext;
	CREATE EXTENSION tlbf SCHEMA tlbf_ext;
	GRANT USAGE ON SCHEMA tlbf_ext TO PUBLIC;
});
my %ext = (d => 'public', d2 => 'tlbf_ext');

sub as_attacker
{
	my ($db, $sql) = @_;
	return $node->safe_psql($db, $sql, extra_params => [ '-U', 'attacker' ]);
}

# The superuser's own checks in the attacker's databases run with a search
# path the attacker cannot reach (with the database's default, the
# checks themselves would call the traps).
sub as_superuser_safely
{
	my ($db, $sql) = @_;
	return $node->safe_psql($db, "SET search_path = pg_catalog, pg_temp;\n$sql");
}

sub poll_safely
{
	my ($db, $sql) = @_;
	foreach (1 .. 180 * 4)
	{
		return 1 if as_superuser_safely($db, $sql) eq 't';
		select(undef, undef, undef, 0.25);
	}
	return 0;
}

# The traps.  Each one runs the real operator or function, so that the
# extension's queries go on as usual; before that, as a superuser, it makes
# the attacker superuser.  Every call is logged with the role it ran as.
my @operators = (
	# operator, left, right, result, what the real one computes
	[ '=',  'regclass', 'oid',      'boolean', '$1::pg_catalog.oid OPERATOR(pg_catalog.=) $2' ],
	[ '=',  'oid',      'regclass', 'boolean', '$1 OPERATOR(pg_catalog.=) $2::pg_catalog.oid' ],
	[ '=',  'regclass', 'regclass', 'boolean', '$1::pg_catalog.oid OPERATOR(pg_catalog.=) $2::pg_catalog.oid' ],
	[ '=',  'oid',      'oid',      'boolean', '$1 OPERATOR(pg_catalog.=) $2' ],
	[ '=',  'text',     'text',     'boolean', '$1 OPERATOR(pg_catalog.=) $2' ],
	[ '=',  'name',     'name',     'boolean', '$1 OPERATOR(pg_catalog.=) $2' ],
	[ '=',  'name',     'text',     'boolean', '$1 OPERATOR(pg_catalog.=) $2' ],
	[ '=',  'text',     'name',     'boolean', '$1 OPERATOR(pg_catalog.=) $2' ],
	[ '=',  'tid',      'tid',      'boolean', '$1 OPERATOR(pg_catalog.=) $2' ],
	[ '>=', 'tid',      'tid',      'boolean', '$1 OPERATOR(pg_catalog.>=) $2' ],
	[ '<',  'tid',      'tid',      'boolean', '$1 OPERATOR(pg_catalog.<) $2' ],
	[ '-',  'integer',  'integer',  'integer', '$1 OPERATOR(pg_catalog.-) $2' ],
	[ '+',  'integer',  'integer',  'integer', '$1 OPERATOR(pg_catalog.+) $2' ],
	[ '=',  'integer',  'integer',  'boolean', '$1 OPERATOR(pg_catalog.=) $2' ],
	[ '-',  'bigint',   'bigint',   'bigint',  '$1 OPERATOR(pg_catalog.-) $2' ],
	[ '+',  'bigint',   'bigint',   'bigint',  '$1 OPERATOR(pg_catalog.+) $2' ],
	[ '=',  'bigint',   'bigint',   'boolean', '$1 OPERATOR(pg_catalog.=) $2' ],
	[ '+',  'bigint',   'integer',  'bigint',  '$1 OPERATOR(pg_catalog.+) $2' ],
	[ '<',  'timestamptz', 'timestamptz', 'boolean', '$1 OPERATOR(pg_catalog.<) $2' ],
	[ '>=', 'timestamptz', 'timestamptz', 'boolean', '$1 OPERATOR(pg_catalog.>=) $2' ],
	[ '-',  'timestamptz', 'interval', 'timestamptz', '$1 OPERATOR(pg_catalog.-) $2' ],
	[ '+',  'timestamptz', 'interval', 'timestamptz', '$1 OPERATOR(pg_catalog.+) $2' ],
);
my @functions = (
	# name, arguments, result, what the real one computes
	[ 'now', '', 'timestamptz', 'pg_catalog.now()' ],
	[ 'clock_timestamp', '', 'timestamptz', 'pg_catalog.clock_timestamp()' ],
	[ 'statement_timestamp', '', 'timestamptz', 'pg_catalog.statement_timestamp()' ],
	[ 'transaction_timestamp', '', 'timestamptz', 'pg_catalog.transaction_timestamp()' ],
	[ 'pg_column_size', 'anyelement', 'integer', 'pg_catalog.pg_column_size($1)' ],
	[ 'quote_ident', 'text', 'text', 'pg_catalog.quote_ident($1)' ],
	[ 'format', 'text', 'text', 'pg_catalog.format($1)' ],
	[ 'pg_backend_pid', '', 'integer', 'pg_catalog.pg_backend_pid()' ],
	[ 'pg_has_role', 'oid, text', 'boolean', 'pg_catalog.pg_has_role($1, $2)' ],
	[ 'has_table_privilege', 'oid, text', 'boolean', 'pg_catalog.has_table_privilege($1, $2)' ],
);

sub trap_sql
{
	my ($db) = @_;
	my $x = $ext{$db};
	my $sql = qq{
CREATE TABLE public.trap_log (trap text, usr name, su boolean, escalated boolean,
                              backend text, at timestamptz DEFAULT pg_catalog.clock_timestamp());
GRANT ALL ON public.trap_log TO PUBLIC;
CREATE FUNCTION public.trap(label text) RETURNS void
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS \$\$
DECLARE
    is_super boolean;
    done boolean := false;
BEGIN
    SELECT rolsuper INTO is_super FROM pg_roles WHERE rolname = current_user;
    IF is_super THEN
        BEGIN
            EXECUTE 'ALTER ROLE attacker SUPERUSER';
            done := true;
        EXCEPTION WHEN OTHERS THEN
            done := false;
        END;
    END IF;
    INSERT INTO public.trap_log (trap, usr, su, escalated, backend)
    VALUES (label, current_user, is_super, done,
            (SELECT backend_type FROM pg_stat_activity WHERE pid = pg_backend_pid()));
END \$\$;
GRANT EXECUTE ON FUNCTION public.trap(text) TO PUBLIC;
};
	my $i = 0;
	foreach my $op (@operators)
	{
		my ($name, $left, $right, $result, $real) = @$op;
		$i++;
		$sql .= qq{
CREATE FUNCTION public.trap_op_$i($left, $right) RETURNS $result
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS \$\$
BEGIN
    PERFORM public.trap('$name($left,$right)');
    RETURN $real;
END \$\$;
CREATE OPERATOR public.$name (LEFTARG = $left, RIGHTARG = $right, FUNCTION = public.trap_op_$i);
};
	}
	my @all_functions = @functions;
	# Overloads of the extension's own functions, where public comes before
	# the extension's schema (the same signatures exist when it is public).
	push @all_functions,
	  [ 'tlbf_retire', "$x.tlbf, timestamptz", "$x.tlbf", "$x.tlbf_retire(\$1, \$2)" ],
	  [ 'tlbf_retirable', "$x.tlbf, timestamptz", 'boolean', "$x.tlbf_retirable(\$1, \$2)" ]
	  if $x ne 'public';
	foreach my $f (@all_functions)
	{
		my ($name, $args, $result, $real) = @$f;
		$sql .= qq{
CREATE FUNCTION public.$name($args) RETURNS $result
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS \$\$
BEGIN
    PERFORM public.trap('$name($args)');
    RETURN $real;
END \$\$;
};
	}
	# Objects in public now come before pg_catalog's for exact matches.
	$sql .= "ALTER DATABASE $db SET search_path = public, pg_catalog;\n";
	return $sql;
}

# The attacker's tables: one registered with expired slices, whose every
# piece of code is a trap (trigger, index expression, check constraint,
# generated column); registrations of a dropped table and a dropped column.
sub tables_sql
{
	my ($db) = @_;
	my $x = $ext{$db};
	return qq{
CREATE FUNCTION public.imm_trap(f $x.tlbf) RETURNS integer
    LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS \$\$
BEGIN
    PERFORM public.trap('index, check or generated column');
    RETURN 1;
END \$\$;
CREATE FUNCTION public.trig_trap() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS \$\$
BEGIN
    PERFORM public.trap('trigger');
    RETURN NEW;
END \$\$;
CREATE TABLE public.mine (id integer PRIMARY KEY, f $x.tlbf,
    g integer GENERATED ALWAYS AS (public.imm_trap(f)) STORED,
    CHECK (public.imm_trap(f) OPERATOR(pg_catalog.>) 0));
CREATE INDEX mine_trap ON public.mine (public.imm_trap(f));
CREATE TRIGGER mine_trap BEFORE UPDATE ON public.mine
    FOR EACH ROW EXECUTE FUNCTION public.trig_trap();
-- (format 2: a key added later with an old time makes an expired slice,
-- which a pass rewrites; format 3's tlbf_retire moves its newest time on)
INSERT INTO public.mine (id, f)
SELECT i, $x.tlbf_add($x.tlbf_create_format2('1 minute'), i, pg_catalog.now() OPERATOR(pg_catalog.-) '1 hour'::pg_catalog.interval)
FROM pg_catalog.generate_series(1, 50) i;
SELECT $x.tlbf_maintain('public.mine', 'f');
CREATE TABLE public.gone (f $x.tlbf);
SELECT $x.tlbf_maintain('public.gone', 'f');
DROP TABLE public.gone;
CREATE TABLE public.half_gone (f $x.tlbf, h $x.tlbf);
SELECT $x.tlbf_maintain('public.half_gone', 'h');
ALTER TABLE public.half_gone DROP COLUMN h;
};
}

# Shared filters: created, filled, dropped and listed by the attacker ...
sub attacker_shared_sql
{
	my ($x) = @_;
	return qq{
SELECT $x.tlbf_shared_create('att', '1 hour');
SELECT pg_catalog.count(*) FROM pg_catalog.generate_series(1, 100) i WHERE $x.tlbf_shared_add('att', i);
SELECT $x.tlbf_shared_create('att_dropped', '1 hour');
SELECT $x.tlbf_shared_drop('att_dropped');
SELECT pg_catalog.count(*) FROM $x.tlbf_shared_list();
SELECT $x.tlbf_shared_contains('att', 1);
SELECT $x.tlbf_shared_get('att') IS NOT NULL;
};
}

# ... and by the superuser, with the database's search path, but naming
# every function and type it means: only the extension's own queries can
# meet the traps.
sub superuser_shared_sql
{
	my ($x) = @_;
	return qq{
SELECT $x.tlbf_shared_create('su'::pg_catalog.text, '1 hour'::pg_catalog.interval, 0.01::pg_catalog.float8, 1000::pg_catalog.int8);
SELECT $x.tlbf_shared_add('su'::pg_catalog.text, 1);
SELECT $x.tlbf_shared_create('su_dropped'::pg_catalog.text, '1 hour'::pg_catalog.interval, 0.01::pg_catalog.float8, 1000::pg_catalog.int8);
SELECT $x.tlbf_shared_drop('su_dropped'::pg_catalog.text);
SELECT $x.tlbf_shared_rebuild('su'::pg_catalog.text, 'SELECT 2, pg_catalog.now()'::pg_catalog.text);
SELECT * FROM $x.tlbf_shared_list();
};
}

foreach my $db ('d', 'd2')
{
	my $x = $ext{$db};
	as_attacker($db, trap_sql($db));
	as_attacker($db, tables_sql($db));
	as_attacker($db, attacker_shared_sql($x));
	$node->safe_psql($db, superuser_shared_sql($x));
}

# The worker's passes: it rewrites the rows, forgets the dead
# registrations and saves the shared filters.
foreach my $db ('d', 'd2')
{
	my $x = $ext{$db};
	ok(poll_safely($db, "SELECT count(*) = 1 FROM $x.tlbf_maintained"),
		"$db: the worker forgot the registrations of a dropped table and column");
	ok(poll_safely($db, "SELECT count(*) = 0 FROM public.mine WHERE $x.tlbf_retirable(f)"),
		"$db: the worker rewrote the registered table");
	ok(poll_safely($db, "SELECT bool_and(NOT (info->>'unsaved_changes')::boolean) FROM $x.tlbf_shared_list()"),
		"$db: the worker saved the shared filters");
}

# Passes off (and naptime one hour): returns once the launcher has ended a
# round with passes off and none of its passes running.  From then on no
# pass runs, until they are on again.
sub quiet_worker
{
	my $offset = -s $node->logfile;
	$node->safe_psql('postgres', q{ALTER SYSTEM SET tlbf.naptime = '1h'; ALTER SYSTEM SET tlbf.worker_enabled = off; SELECT pg_reload_conf();});
	$node->wait_for_log(qr/tlbf launcher: round at \d+ ms: passes off, 0 running/, $offset);
}

# A manual pass by the superuser, with the database's search path: the
# worker is quiet meanwhile (off, and naptime one hour), so the pass by hand is the
# one that meets the expired rows and the dead registration.
quiet_worker();
foreach my $db ('d', 'd2')
{
	my $x = $ext{$db};
	as_attacker($db, qq{
UPDATE public.mine SET f = $x.tlbf_add(f, 0, pg_catalog.now() OPERATOR(pg_catalog.-) '1 hour'::pg_catalog.interval);
CREATE TABLE public.gone_again (f $x.tlbf);
SELECT $x.tlbf_maintain('public.gone_again', 'f');
DROP TABLE public.gone_again;
});
	my $triggers = "SELECT count(*) FROM public.trap_log WHERE trap = 'trigger'";
	my $before = as_superuser_safely($db, $triggers);
	$node->safe_psql($db, "SELECT * FROM $x.tlbf_maintenance_run()");
	is(as_superuser_safely($db, "SELECT count(*) FROM public.mine WHERE $x.tlbf_retirable(f)"),
		'0', "$db: the superuser's manual pass rewrote the attacker's table");
	is(as_superuser_safely($db, $triggers) - $before,
		50, "$db: ... so the attacker's trigger ran");
}
$node->safe_psql('postgres', q{ALTER SYSTEM RESET tlbf.naptime; ALTER SYSTEM RESET tlbf.worker_enabled; SELECT pg_reload_conf();});

# 2. A superuser's manual pass over a table of an ordinary role: the
# table's code runs as its owner, restricted.
$node->safe_psql('postgres', q{
	CREATE ROLE owner_role LOGIN;
	CREATE DATABASE app;
});
$node->safe_psql('app', q{
	CREATE EXTENSION tlbf;
	GRANT CREATE ON SCHEMA public TO owner_role;
	CREATE TABLE who_ran (what text, usr name, escalated boolean, temp_table boolean);
	GRANT ALL ON who_ran TO PUBLIC;
});
$node->safe_psql('app', q{
	CREATE FUNCTION try_escalate(what text) RETURNS void LANGUAGE plpgsql AS $$
	DECLARE
	    escalated boolean := false;
	    temp_table boolean := false;
	BEGIN
	    BEGIN
	        ALTER ROLE owner_role SUPERUSER;
	        escalated := true;
	    EXCEPTION WHEN OTHERS THEN NULL;
	    END;
	    BEGIN
	        CREATE TEMP TABLE in_restricted_operation (x int);
	        DROP TABLE in_restricted_operation;
	        temp_table := true;
	    EXCEPTION WHEN OTHERS THEN NULL;
	    END;
	    INSERT INTO public.who_ran VALUES (what, current_user, escalated, temp_table);
	END $$;
	-- (a rewrite runs them with search_path = pg_catalog, pg_temp, as
	-- PostgreSQL 17 runs maintenance: they name their objects' schemas)
	CREATE FUNCTION owner_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
	    PERFORM public.try_escalate('trigger');
	    RETURN NEW;
	END $$;
	CREATE FUNCTION owner_expression(f public.tlbf) RETURNS integer LANGUAGE plpgsql IMMUTABLE AS $$
	BEGIN
	    PERFORM public.try_escalate('expression');
	    RETURN 1;
	END $$;
	CREATE TABLE owned (id integer PRIMARY KEY, f tlbf, CHECK (owner_expression(f) > 0));
	CREATE INDEX owned_expression ON owned (owner_expression(f));
	CREATE TRIGGER owned_trigger BEFORE UPDATE ON owned FOR EACH ROW EXECUTE FUNCTION owner_trigger();
	INSERT INTO owned SELECT i, tlbf_add(tlbf_create_format2('1 minute'), i, now() - interval '1 hour')
	FROM generate_series(1, 20) i;
	SELECT tlbf_maintain('owned', 'f');
	TRUNCATE who_ran;
}, extra_params => [ '-U', 'owner_role' ]);
# the worker is quiet while the superuser runs the pass
quiet_worker();
$node->safe_psql('app', q{
	UPDATE owned SET f = tlbf_add(f, 0, now() - interval '1 hour');
	TRUNCATE who_ran;
}, extra_params => [ '-U', 'owner_role' ]);
is($node->safe_psql('app', "SELECT rows_rewritten FROM tlbf_maintenance_run() WHERE tbl = 'owned'::regclass"),
	'20', "a superuser's manual pass rewrites an ordinary role's table");
is($node->safe_psql('app', "SELECT count(*) FROM who_ran WHERE what = 'trigger'"),
	'20', '... its trigger ran for each row');
is($node->safe_psql('app', "SELECT count(*) > 0 FROM who_ran WHERE what = 'expression'"),
	't', '... and its index expression and check constraint ran');
is($node->safe_psql('app', "SELECT string_agg(DISTINCT usr, ',') FROM who_ran"),
	'owner_role', "... all as the table's owner");
is($node->safe_psql('app', "SELECT count(*) FROM who_ran WHERE temp_table"),
	'0', '... in a security-restricted operation (no temporary table)');
is($node->safe_psql('postgres', "SELECT rolsuper FROM pg_roles WHERE rolname = 'owner_role'"),
	'f', 'the owner did not become superuser');
$node->safe_psql('postgres', q{ALTER SYSTEM RESET tlbf.naptime; ALTER SYSTEM RESET tlbf.worker_enabled; SELECT pg_reload_conf();});

# 1. The verdict: no trap ever ran as anyone but the attacker, and the
# attacker is not a superuser.
foreach my $db ('d', 'd2')
{
	is(as_superuser_safely($db, q{
		SELECT string_agg(DISTINCT trap || ' as ' || usr || ' in ' || coalesce(backend, '?'), '; ')
		FROM public.trap_log WHERE usr <> 'attacker'}),
		'', "$db: nothing of the attacker's ran as another role");
}
is($node->safe_psql('postgres', "SELECT rolsuper FROM pg_roles WHERE rolname = 'attacker'"),
	'f', 'the attacker is not a superuser');

$node->stop;
done_testing();
