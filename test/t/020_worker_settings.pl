# A database's own settings (ALTER DATABASE ... SET, which its owner may
# run) must not change what the workers do (issue 23, item 3).  The owner
# sets every one that would, the hostile way, and a superuser adds
# session_replication_role = replica.  Then:
#
# - exit_on_error: a registered table whose rewrite always fails does not
#   end the pass, the worker, nor any later pass: a table registered after
#   it is maintained, the error is recorded, no FATAL is logged;
# - every other setting: a trigger on a registered table records what the
#   maintenance batch saw (it fired at all: not replica mode), and each
#   value is the worker's own, not the database's;
# - a saver saves with a read-only default, and an error in a save (a
#   constraint a superuser added) is reported without FATAL and the save
#   tried again by the next saver.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use WorkerLog qw(wait_for_count);

my $node = PostgreSQL::Test::Cluster->new('settings');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.naptime = 1
tlbf.snapshot_interval = 1
});
$node->start;
my $version = $node->safe_psql('postgres', 'SHOW server_version_num');

$node->safe_psql('postgres', q{
	CREATE ROLE owner LOGIN;
	CREATE DATABASE app OWNER owner;
});
$node->safe_psql('app', 'CREATE EXTENSION tlbf; GRANT tlbf_admin TO owner;');

# What the trigger records: the settings a batch runs with.
my %expected = (
	exit_on_error => 'off',
	role => 'none',
	search_path => 'pg_catalog, pg_temp',
	transform_null_equals => 'off',
	standard_conforming_strings => 'on',
	default_transaction_read_only => 'off',
	transaction_read_only => 'off',
	default_transaction_isolation => 'read committed',
	transaction_isolation => 'read committed',
	default_transaction_deferrable => 'off',
	statement_timeout => '0',
	lock_timeout => '0',
	idle_in_transaction_session_timeout => '0',
	idle_session_timeout => '0',
	synchronous_commit => 'local',
	session_replication_role => 'origin',
	row_security => 'on',
	max_parallel_workers_per_gather => '0',
	($version >= 160000 ? (debug_parallel_query => 'off') : (force_parallel_mode => 'off')),
	($version >= 170000 ? (transaction_timeout => '0') : ()),
);
my $names = join(', ', map { "'$_'" } sort keys %expected);

# The owner's tables: the first always fails, the second watches.
$node->safe_psql('app', qq{
	CREATE TABLE public.seen (setting text, value text, session_usr name, usr name);
	CREATE FUNCTION public.always_fails() RETURNS trigger LANGUAGE plpgsql AS \$\$
	BEGIN
	    RAISE EXCEPTION 'this table always fails';
	END \$\$;
	CREATE FUNCTION public.observe() RETURNS trigger LANGUAGE plpgsql AS \$\$
	BEGIN
	    IF NOT EXISTS (SELECT FROM public.seen) THEN
	        INSERT INTO public.seen
	        SELECT name, pg_catalog.current_setting(name, true), session_user, current_user
	        FROM pg_catalog.unnest(ARRAY[$names]) name;
	    END IF;
	    -- five rows take 100 ms, twice the database's statement_timeout
	    PERFORM pg_catalog.pg_sleep(0.02);
	    RETURN NEW;
	END \$\$;
	CREATE TABLE public.a_failing (id int, f tlbf);
	CREATE TRIGGER fails BEFORE UPDATE ON public.a_failing
	    FOR EACH ROW EXECUTE FUNCTION public.always_fails();
	CREATE TABLE public.b_watched (id int, f tlbf);
	CREATE TRIGGER watches BEFORE UPDATE ON public.b_watched
	    FOR EACH ROW EXECUTE FUNCTION public.observe();
	SELECT tlbf_shared_create('s', '1 hour');
}, extra_params => [ '-U', 'owner' ]);

# The settings: everything the owner may set, and replica mode.
my @hostile = (
	q{exit_on_error = on},
	q{session_authorization = 'owner'},
	q{role = 'owner'},
	q{search_path = public},
	q{transform_null_equals = on},
	# (19 refuses it everywhere)
	($version < 190000 ? (q{standard_conforming_strings = off}) : ()),
	q{default_transaction_read_only = on},
	q{default_transaction_isolation = 'serializable'},
	q{default_transaction_deferrable = on},
	q{statement_timeout = '50ms'},
	q{lock_timeout = '50ms'},
	q{idle_in_transaction_session_timeout = '50ms'},
	q{idle_session_timeout = '50ms'},
	q{synchronous_commit = off},
	q{row_security = off},
	q{max_parallel_workers_per_gather = 8},
	($version >= 160000 ? q{debug_parallel_query = on} : q{force_parallel_mode = on}),
	($version >= 170000 ? (q{transaction_timeout = '50ms'}) : ()),
);
$node->safe_psql('app', join('', map { "ALTER DATABASE app SET $_;\n" } @hostile),
	extra_params => [ '-U', 'owner' ]);
$node->safe_psql('postgres', 'ALTER DATABASE app SET session_replication_role = replica');

# The test's own sessions in app undo those settings first (RESET would
# go back to the database's values).
my $superuser = $node->safe_psql('postgres', 'SELECT rolname FROM pg_roles WHERE oid = 10');
my $undo = qq{
	SET SESSION AUTHORIZATION "$superuser"; SET ROLE NONE;
	SET exit_on_error = off; SET search_path = public, pg_catalog;
	SET default_transaction_read_only = off; SET transaction_read_only = off;
	SET statement_timeout = 0; SET lock_timeout = 0; SET idle_in_transaction_session_timeout = 0;
	SET idle_session_timeout = 0; SET session_replication_role = origin; SET row_security = on;
	SET standard_conforming_strings = on;
} . ($version >= 170000 ? "SET transaction_timeout = 0;\n" : '');
sub in_app
{
	my ($sql) = @_;
	return $node->safe_psql('app', "$undo\n$sql");
}
sub poll_app
{
	my ($sql) = @_;
	foreach (1 .. 4 * $PostgreSQL::Test::Utils::timeout_default)
	{
		return 1 if in_app($sql) eq 't';
		select(undef, undef, undef, 0.25);
	}
	return 0;
}

# Rows to retire, registered now that the settings are in place.
my $log_offset = -s $node->logfile;
in_app(q{
	INSERT INTO public.a_failing
	SELECT id, tlbf_add(tlbf_create('1 minute'), id, now() - interval '1 hour') FROM generate_series(1, 5) id;
	INSERT INTO public.b_watched
	SELECT id, tlbf_add(tlbf_create('1 minute'), id, now() - interval '1 hour') FROM generate_series(1, 5) id;
	SELECT tlbf_maintain('public.a_failing', 'f');
	SELECT tlbf_maintain('public.b_watched', 'f');
	SELECT count(*) FROM generate_series(1, 100) k WHERE tlbf_shared_add('s', k);
});
ok(poll_app(q{SELECT count(*) = 0 FROM public.b_watched WHERE tlbf_retirable(f)}),
	'exit_on_error: the table registered after a failing one is maintained');
ok(poll_app(q{SELECT last_error LIKE '%this table always fails%' FROM tlbf_maintenance_status
	          WHERE tbl = 'public.a_failing'::regclass}),
	'... and the failing table\'s error is recorded');
ok(poll_app(q{SELECT count(*) > 0 FROM public.seen}),
	'the watching trigger fired (session_replication_role is not replica in the worker)');
# a few more passes over the failing table: its error logged three times
# (by the worker; a FATAL if exit_on_error held)
ok(wait_for_count($node, qr/(?:ERROR|FATAL):  this table always fails/, 3, $log_offset),
	'... and three passes met the failing table');
# (a FATAL of the test's own sessions would be its own doing, not a worker's)
sub worker_fatals
{
	my ($offset) = @_;
	return grep { /FATAL/ && !/020_worker_settings\.pl/ } split /\n/, slurp_file($node->logfile, $offset);
}
is(scalar(worker_fatals($log_offset)), 0, '... and no worker ended with FATAL')
  or diag(join("\n", worker_fatals($log_offset)));

my %seen = map { my ($k, $v) = split /\|/; $k => $v }
  split /\n/, in_app(q{SELECT setting, coalesce(value, '?') FROM public.seen});
foreach my $name (sort keys %expected)
{
	is($seen{$name}, $expected{$name}, "a batch runs with $name = $expected{$name}");
}
is(in_app(q{SELECT DISTINCT session_usr = (SELECT rolname FROM pg_roles WHERE oid = 10) FROM public.seen}),
	't', 'session_authorization: the worker\'s session user is the bootstrap superuser');
is(in_app(q{SELECT DISTINCT usr FROM public.seen}), 'owner', '... and the batch runs as the table\'s owner');

# The savers: save with a read-only default; a save that fails is
# reported, and the next saver tries again.
ok(poll_app(q{SELECT NOT (info->>'unsaved_changes')::boolean FROM tlbf_shared_list() WHERE name = 's'}),
	'default_transaction_read_only: a saver saves');
$log_offset = -s $node->logfile;
in_app(q{
	ALTER TABLE tlbf_shared_filters ADD CONSTRAINT never_saved CHECK (false) NOT VALID;
	SELECT tlbf_shared_add('s', 1000);
});
my $failures = 0;
foreach (1 .. 4 * $PostgreSQL::Test::Utils::timeout_default)
{
	my $log = slurp_file($node->logfile, $log_offset);
	$failures = () = $log =~ /never_saved/g;
	last if $failures >= 2;
	select(undef, undef, undef, 0.25);
}
cmp_ok($failures, '>=', 2, 'saves fail while the constraint is there, and are tried again');
is(scalar(worker_fatals($log_offset)), 0, 'exit_on_error: a failed save ends with no FATAL');
in_app(q{ALTER TABLE tlbf_shared_filters DROP CONSTRAINT never_saved});
ok(poll_app(q{SELECT NOT (info->>'unsaved_changes')::boolean FROM tlbf_shared_list() WHERE name = 's'}),
	'... and the filter is saved once the constraint is gone');

$node->stop;
done_testing();
