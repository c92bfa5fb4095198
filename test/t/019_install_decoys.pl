# The install and update scripts run as the superuser who runs CREATE
# EXTENSION or ALTER EXTENSION ... UPDATE, with search_path set to the
# target schema, which the database's owner may own (public does, from
# PostgreSQL 15).  A function or operator that owner plants there wins
# over pg_catalog's whenever it matches the call's argument types better
# (format(text, name) beats pg_catalog.format(text, VARIADIC "any")), and
# would run as that superuser (issue 23, item 1).
#
# So: every function name and operator name the scripts use is read from
# the scripts themselves (calls and operators in statements and in the
# function bodies they create), and for each one the owner plants decoys
# in public and in a schema of its own: a function of that name for every
# combination of common argument types (arity as used, up to two
# arguments; patterns beyond), and an operator of that name for every pair.
# A decoy counts its calls in a sequence (sequences do not roll back, so a
# call is seen even when the script then fails).  Then the superuser runs
# CREATE EXTENSION (into public and into the owner's schema) and the update
# chain 1.0 -> newest, each with the role check failing and succeeding,
# and the owner and the superuser use what the scripts created.  No decoy
# may ever run.
use strict;
use warnings;

use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $sql_dir = "$FindBin::RealBin/../../sql";
my @scripts = sort glob("$sql_dir/tlbf--*.sql");
cmp_ok(scalar(@scripts), '>=', 6, 'the install and update scripts are found');

my $node = PostgreSQL::Test::Cluster->new('decoys');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.worker_enabled = off
});
$node->start;

# --- the names the scripts use ----------------------------------------------

# The code of a script: comments and the contents of quoted literals
# removed, dollar-quoted bodies kept (they are code too).
sub code_of
{
	my ($text) = @_;
	my $code = '';
	while (length $text)
	{
		if ($text =~ s/^--[^\n]*//) { }
		elsif ($text =~ s/^'(?:[^']|'')*'//) { $code .= "''"; }
		elsif ($text =~ s/^\$([A-Za-z_]*)\$//) { $code .= ' '; }
		elsif ($text =~ s/^("(?:[^"]|"")*")//) { $code .= $1; }
		else { $text =~ s/^(.)//s; $code .= $1; }
	}
	return $code;
}

# The number of arguments between the parenthesis at $pos and its match.
sub arity_at
{
	my ($code, $pos) = @_;
	my ($depth, $commas, $empty) = (0, 0, 1);
	for (my $i = $pos; $i < length $code; $i++)
	{
		my $c = substr($code, $i, 1);
		if ($c eq '(') { $depth++; next if $depth == 1; }
		elsif ($c eq ')') { $depth--; return $empty ? 0 : $commas + 1 if $depth == 0; }
		elsif ($c eq ',' && $depth == 1) { $commas++; }
		$empty = 0 if $c !~ /\s/;
	}
	die "unbalanced parentheses";
}

my %keyword = map { lc($_) => 1 } split /\n/, $node->safe_psql('postgres',
	"SELECT word FROM pg_get_keywords() WHERE catcode IN ('R', 'C')");
my (%function_arities, %operators);
foreach my $script (@scripts)
{
	my $code = code_of(slurp_file($script));
	$code =~ s/\@extschema\@/extschema/g;
	while ($code =~ /\b([A-Za-z_][A-Za-z0-9_]*)\s*(?=\()/g)
	{
		my $name = lc $1;
		next if $keyword{$name};
		$function_arities{$name}{ arity_at($code, pos($code)) } = 1;
	}
	$operators{$1} = 1 while $code =~ /OPERATOR\s*\(\s*\w+\s*\.\s*([^\s)]+)\s*\)/g;
	(my $bare = $code) =~ s/OPERATOR\s*\([^)]*\)//g;
	$bare =~ s/::|:=|=>//g;
	$operators{$1} = 1 while $bare =~ m{([-+*/<>=~!@#%^&|`?]+)}g;
}
my @function_names = sort keys %function_arities;
my @operator_names = sort keys %operators;
# what the decoys must cover, at least: the calls that made the fault, and
# the operators every script uses
ok((grep { $_ eq 'format' } @function_names) && (grep { $_ eq 'now' } @function_names)
	  && (grep { $_ eq 'pg_has_role' } @function_names),
	'the names read from the scripts include format, now and pg_has_role');
ok((grep { $_ eq '=' } @operator_names) && (grep { $_ eq '<>' } @operator_names),
	'the operators read from the scripts include = and <>');
note('functions: ' . join(' ', @function_names));
note('operators: ' . join(' ', @operator_names));

# --- the decoys ----------------------------------------------------------------

my @types = ('text', 'name', 'oid', 'regclass', 'regtype', 'integer', 'bigint', 'boolean',
	'timestamp with time zone', 'interval', 'double precision', '"char"');

# Argument lists for a name called with $n arguments: every combination up
# to two; beyond, every type everywhere and every type in each position
# among text.
sub signatures
{
	my ($n) = @_;
	return ([]) if $n == 0;
	return map { [$_] } @types if $n == 1;
	return map { my $a = $_; map { [ $a, $_ ] } @types } @types if $n == 2;
	my %sigs = map { join(', ', ($_) x $n) => 1 } @types;
	foreach my $i (0 .. $n - 1)
	{
		foreach my $t (@types)
		{
			my @sig = ('text') x $n;
			$sig[$i] = $t;
			$sigs{ join(', ', @sig) } = 1;
		}
	}
	return map { [ split /, / ] } sort keys %sigs;
}

# The roles: the database owner (the attacker), and a role with
# CREATEROLE that makes the role check fail as a non-superuser can.
$node->safe_psql('postgres', q{
	CREATE ROLE attacker LOGIN;
	CREATE ROLE squatter LOGIN CREATEROLE;
	CREATE DATABASE reference;
	CREATE DATABASE decoyed OWNER attacker;
});

# The extension's own signatures: a decoy must not be one of them (it
# would make CREATE FUNCTION fail, not run).
$node->safe_psql('reference', 'CREATE EXTENSION tlbf');
my %own = map { $_ => 1 } split /\n/, $node->safe_psql('reference', q{
	SELECT p.proname || '(' || pg_catalog.oidvectortypes(p.proargtypes) || ')'
	FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace});
$node->safe_psql('reference', 'DROP EXTENSION tlbf');
$node->safe_psql('postgres', 'DROP ROLE tlbf_admin; DROP ROLE tlbf_user;');

# What a decoy of each name returns: what pg_catalog's function or
# operator of that name returns, so that the call type-checks and runs.
my %returns = map { split /\t/ } split /\n/, $node->safe_psql('postgres', q{
	SELECT DISTINCT ON (p.proname) p.proname, pg_catalog.format_type(p.prorettype, NULL)
	FROM pg_proc p JOIN pg_type t ON t.oid = p.prorettype
	WHERE p.pronamespace = 'pg_catalog'::regnamespace AND t.typtype <> 'p'
	ORDER BY p.proname, p.oid}, extra_params => [ '-F', "\t" ]);
my %operator_returns = map { split /\t/ } split /\n/, $node->safe_psql('postgres', q{
	SELECT DISTINCT ON (o.oprname) o.oprname, pg_catalog.format_type(o.oprresult, NULL)
	FROM pg_operator o JOIN pg_type t ON t.oid = o.oprresult
	WHERE o.oprnamespace = 'pg_catalog'::regnamespace AND t.typtype <> 'p'
	ORDER BY o.oprname, (o.oprresult <> 'boolean'::regtype), o.oid}, extra_params => [ '-F', "\t" ]);

my $decoy_count = 0;
my ($ret, $out, $err);
my $decoy_sql = q{
CREATE SCHEMA app;
CREATE SEQUENCE public.decoy_calls;
CREATE SEQUENCE public.decoy_privileged_calls;
GRANT USAGE ON SCHEMA app TO PUBLIC;
GRANT USAGE, UPDATE ON SEQUENCE public.decoy_calls, public.decoy_privileged_calls TO PUBLIC;
};
sub decoy_body
{
	my ($label, $returns) = @_;
	$label =~ s/'/''/g;
	return qq{RETURNS $returns LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS \$d\$
BEGIN
    PERFORM pg_catalog.nextval('public.decoy_calls');
    IF current_user <> 'attacker' THEN
        PERFORM pg_catalog.nextval('public.decoy_privileged_calls');
    END IF;
    RAISE WARNING 'decoy % ran as %', '$label', current_user;
    RETURN NULL;
END \$d\$;
};
}
foreach my $schema ('public', 'app')
{
	foreach my $name (@function_names)
	{
		my $returns = $returns{$name} // 'text';
		foreach my $n (sort keys %{ $function_arities{$name} })
		{
			foreach my $sig (signatures($n))
			{
				my $args = join(', ', @$sig);
				next if $own{"$name($args)"};
				$decoy_sql .= qq{CREATE FUNCTION $schema."$name"($args) }
				  . decoy_body("$schema.$name($args)", $returns);
				$decoy_count++;
			}
		}
	}
	my $i = 0;
	foreach my $op (@operator_names)
	{
		my $returns = $operator_returns{$op} // 'text';
		foreach my $left (@types)
		{
			foreach my $right (@types)
			{
				$i++;
				$decoy_sql .= qq{CREATE FUNCTION $schema.decoy_operator_$i($left, $right) }
				  . decoy_body("$schema.$op($left, $right)", $returns)
				  . qq{CREATE OPERATOR $schema.$op (LEFTARG = $left, RIGHTARG = $right, FUNCTION = $schema.decoy_operator_$i);\n};
				$decoy_count++;
			}
		}
	}
}
($ret, $out, $err) = $node->psql('decoyed', "BEGIN;\n$decoy_sql\nCOMMIT;",
	extra_params => [ '-U', 'attacker', '-v', 'ON_ERROR_STOP=1' ]);
is($ret, 0, "the owner planted $decoy_count decoys in public and app") or diag($err);

# A decoy that is a better match than pg_catalog's does run: the test
# would see a call the scripts made.
$node->safe_psql('postgres', 'CREATE DATABASE probe TEMPLATE decoyed OWNER attacker');
($ret, $out, $err) = $node->psql('probe', q{SELECT format('%I', 'x'::name)});
like($err, qr/decoy public\.format\(text, name\) ran/,
	'a decoy that matches better than pg_catalog\'s runs when called unqualified');

sub calls
{
	my ($db) = @_;
	return $node->safe_psql($db, q{
		SET search_path = pg_catalog, pg_temp;
		SELECT last_value - 1 + is_called::int FROM public.decoy_calls});
}

# A database of the owner's with every decoy; empty role check state.
my $databases = 0;
sub fresh_database
{
	my $db = 'd' . ++$databases;
	$node->safe_psql('postgres', "CREATE DATABASE $db TEMPLATE decoyed OWNER attacker");
	return $db;
}

sub squat_roles
{
	$node->safe_psql('postgres', 'CREATE ROLE tlbf_user; GRANT tlbf_user TO squatter;',
		extra_params => [ '-U', 'squatter' ]);
}

sub unsquat_roles
{
	$node->safe_psql('postgres', 'DROP ROLE tlbf_user');
}

# Run the superuser's $sql in a fresh database after $setup; check that it
# failed on the role check (or succeeded) and that no decoy ran.
sub superuser_runs
{
	my ($what, $setup, $sql, $should_fail) = @_;
	my $db = fresh_database();
	$node->safe_psql($db, $setup) if $setup;
	is(calls($db), '0', "$what: no decoy ran before");
	my ($ret, $out, $err) = $node->psql($db, $sql);
	if ($should_fail)
	{
		isnt($ret, 0, "$what: fails on the role check");
		like($err, qr/ERROR:  role "tlbf_user" already exists and was not made by the tlbf extension/,
			"$what: ... with the role check's error");
	}
	else
	{
		is($ret, 0, "$what: succeeds") or diag($err);
	}
	unlike($err, qr/decoy/, "$what: no decoy ran") or diag($err);
	is(calls($db), '0', "$what: the decoys count no call");
	return $db;
}

# 1. The role check failing: every script up to the check runs.
squat_roles();
superuser_runs('CREATE EXTENSION into public, role check failing',
	undef, 'CREATE EXTENSION tlbf', 1);
superuser_runs("CREATE EXTENSION into the owner's schema, role check failing",
	undef, 'SET search_path = app, public; CREATE EXTENSION tlbf', 1);
superuser_runs('the update chain from 1.0, role check failing',
	q{CREATE EXTENSION tlbf VERSION '1.0'}, 'ALTER EXTENSION tlbf UPDATE', 1);
unsquat_roles();

# 2. The role check succeeding: every script runs to its end.
my $in_public = superuser_runs('CREATE EXTENSION into public', undef, 'CREATE EXTENSION tlbf', 0);
my $in_app = superuser_runs("CREATE EXTENSION into the owner's schema", undef,
	'SET search_path = app, public; CREATE EXTENSION tlbf', 0);
superuser_runs("CREATE EXTENSION ... SCHEMA public, the owner's schema first on the path", undef,
	'SET search_path = app, public; CREATE EXTENSION tlbf SCHEMA public', 0);
my $updated = superuser_runs('the update chain from 1.0', q{CREATE EXTENSION tlbf VERSION '1.0'},
	'ALTER EXTENSION tlbf UPDATE', 0);
is($node->safe_psql($in_app, q{SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'tlbf'}),
	'app', "the extension went into the owner's schema");
is($node->safe_psql($updated, q{SELECT extversion FROM pg_extension WHERE extname = 'tlbf'}),
	$node->safe_psql($in_public, q{SELECT extversion FROM pg_extension WHERE extname = 'tlbf'}),
	'the update chain reached the newest version');

# 3. What the scripts created, used by the owner (its calls name every
# schema and type, so only the extension's own code can meet a decoy) and
# by the superuser: function bodies, defaults, the view and policies, the
# operators and aggregates.
foreach my $case ([ $in_public, 'public' ], [ $in_app, 'app' ], [ $updated, 'public' ])
{
	my ($db, $x) = @$case;
	my $ts = q{'2026-01-01 00:00:00+00'::pg_catalog.timestamptz};
	$node->safe_psql($db, qq{
		CREATE TABLE public.t (id pg_catalog.int4, f $x.tlbf);
		INSERT INTO public.t
		SELECT 1, $x.tlbf_agg(g, $ts, '1 minute'::pg_catalog.interval)
		FROM pg_catalog.generate_series(1, 10) g;
		SELECT $x.tlbf_maintain('public.t'::pg_catalog.regclass, 'f'::pg_catalog.name);
		SELECT pg_catalog.count(*) FROM $x.tlbf_maintenance_status;
		SELECT pg_catalog.count(*) FROM $x.tlbf_maintenance_run();
		SELECT $x.tlbf_retirable(f), $x.tlbf_summary(f) IS NOT NULL,
		       f OPERATOR($x.@>) 1::pg_catalog.int4, (f OPERATOR($x.||) f) IS NOT NULL
		FROM public.t;
		SELECT $x.tlbf_unmaintain('public.t'::pg_catalog.regclass, 'f'::pg_catalog.name);
	}, extra_params => [ '-U', 'attacker' ]);
	$node->safe_psql($db, qq{
		SET search_path = pg_catalog, pg_temp;
		SELECT $x.tlbf_maintain('public.t'::regclass, 'f'::name);
		SELECT count(*) FROM $x.tlbf_maintenance_run();
		SELECT count(*) FROM $x.tlbf_maintenance_status;
		SELECT $x.tlbf_unmaintain('public.t'::regclass, 'f'::name);
	});
	is(calls($db), '0', "$db ($x): using what the scripts created ran no decoy");
}

is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_roles WHERE rolsuper AND rolname IN ('attacker', 'squatter')}),
	'0', 'neither the owner nor the squatter became superuser');

$node->stop;
done_testing();
