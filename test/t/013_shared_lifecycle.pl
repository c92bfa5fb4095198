# The life of a shared filter against the catalogs (issue 14, items 5, 6
# and 7).
#
# 5. Create and drop across sessions (the interleavings themselves are in
#    test/isolation/specs/shared_create_drop.spec): after the same
#    interleavings here, every filter that answered queries before a clean
#    restart answers them after it, with the same keys, and none comes back
#    that had gone.
# 6. DROP EXTENSION (or DROP SCHEMA ... CASCADE of its schema) frees the
#    database's filters: after CREATE EXTENSION again, nothing is listed, a
#    filter of the same name can be created (no 42710) and starts empty,
#    and it is the one that survives a restart.  A DROP EXTENSION that
#    rolls back changes nothing.
# 7. ALTER DATABASE ... ALLOW_CONNECTIONS false does not free the filters
#    of a database that sessions still use: keys added after it are found,
#    also after ALLOW_CONNECTIONS true again.
# 8. Prepared transactions (Citus commits DROP EXTENSION on its workers with
#    two-phase commit, issue 27): a drop or a DROP EXTENSION can be
#    prepared; others see the filter until COMMIT PREPARED (from another
#    session), which frees it, and ROLLBACK PREPARED gives it back with its
#    keys.  A transaction that created a filter cannot be prepared.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use WorkerLog qw(wait_for_round);

my $node = PostgreSQL::Test::Cluster->new('lifecycle');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.naptime = 1
tlbf.snapshot_interval = 1
max_prepared_transactions = 5
# a snapshot worker for each of the 7 databases with filters, and passes
max_worker_processes = 16
# the launcher's rounds (WorkerLog)
log_min_messages = debug1
});
$node->start;

sub result
{
	my ($db, $sql) = @_;
	my ($ret, $out, $err) = $node->psql($db, $sql, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	return $ret == 0 ? $out : ($err =~ /ERROR:  (\w{5})/ ? "ERROR $1" : "failed: $err");
}

# a query in a background session, its output without the final newline
sub bgq
{
	my ($session, $sql) = @_;
	my $out = $session->query($sql);
	chomp $out;
	return $out;
}

# ---- 7. ALLOW_CONNECTIONS false ------------------------------------------
$node->safe_psql('postgres', 'CREATE DATABASE closing');
$node->safe_psql('closing', q{
	CREATE EXTENSION tlbf;
	SELECT tlbf_shared_create('kept_open', '1 hour', 0.001, 10000);
	SELECT count(*) FROM generate_series(1, 100) k WHERE tlbf_shared_add('kept_open', k);
});
my $user = $node->background_psql('closing');
$user->query_safe('SELECT 1');
# (each wait_for_round: a launcher round that began after what came
# before, which would have freed the filter had it taken the closed
# database for a dropped one)
$node->safe_psql('postgres', 'ALTER DATABASE closing ALLOW_CONNECTIONS false');
wait_for_round($node, -s $node->logfile);
# keys added one at a time, 100 ms apart, for 4 seconds
$user->query_safe(q{
	DO $$
	BEGIN
	    FOR k IN 1001 .. 1040 LOOP
	        PERFORM tlbf_shared_add('kept_open', k, clock_timestamp());
	        PERFORM pg_sleep(0.1);
	    END LOOP;
	END $$});
$user->query_safe(q{SELECT tlbf_shared_add('kept_open', 555555, clock_timestamp())});
wait_for_round($node, -s $node->logfile);
is(bgq($user, q{SELECT tlbf_shared_contains('kept_open', 555555)}), 't',
	'ALLOW_CONNECTIONS false: a key added before the last launcher round is found by a connected session');
is(bgq($user, q{SELECT count(*) FROM generate_series(1, 100) k WHERE NOT tlbf_shared_contains('kept_open', k)})
	  . '/' . bgq($user, q{SELECT count(*) FROM generate_series(1001, 1040) k WHERE NOT tlbf_shared_contains('kept_open', k)}),
	'0/0', '... and every key added before and after it');
is(bgq($user, q{SELECT count(*) FROM tlbf_shared_list() WHERE name = 'kept_open'}), '1',
	'... and the filter is listed');
$node->safe_psql('postgres', 'ALTER DATABASE closing ALLOW_CONNECTIONS true');
wait_for_round($node, -s $node->logfile);
is(result('closing', q{SELECT count(*) FROM generate_series(1001, 1040) k WHERE NOT tlbf_shared_contains('kept_open', k)}),
	'0', 'ALLOW_CONNECTIONS true again: every key is still there');
is(bgq($user, q{SELECT tlbf_shared_contains('kept_open', 555555)}), 't', '... the last one too');
$user->quit;

# ---- 5. create and drop across sessions, then a clean restart -------------
$node->safe_psql('postgres', 'CREATE DATABASE crossing');
$node->safe_psql('crossing', q{
	CREATE EXTENSION tlbf;
	SELECT tlbf_shared_create('z_rollback', '1 hour');
	SELECT tlbf_shared_add('z_rollback', 1);
	SELECT tlbf_shared_create('z_commit', '1 hour');
	SELECT tlbf_shared_add('z_commit', 1);
});
my $a = $node->background_psql('crossing', on_error_stop => 0);
my $b = $node->background_psql('crossing', on_error_stop => 0);

sub waits
{
	my ($session_name) = @_;
	return $node->poll_query_until('crossing', qq{
		SELECT count(*) > 0 FROM pg_stat_activity
		WHERE application_name = '$session_name' AND wait_event_type = 'Lock'});
}
$a->query_safe("SET application_name = 'session_a'");

# (i) B drops z and creates it again; A's drop waits; B rolls back.
# (ii) the same, B commits.
foreach my $end ('rollback', 'commit')
{
	my $z = "z_$end";
	$b->query_safe('BEGIN');
	$b->query_safe("SELECT tlbf_shared_drop('$z')");
	$b->query_safe("SELECT tlbf_shared_create('$z', '1 hour')");
	$a->query_until(qr/sent/, "\\echo sent\nSELECT tlbf_shared_drop('$z');\n");
	ok(waits('session_a'), "($end) A's drop waits for B");
	$b->query_safe(uc $end);
	$a->query('SELECT 1');
}
# (iv) an uncommitted create, then committed; (v) two creates of one name,
# the first committed; the first rolled back.
$b->query_safe('BEGIN');
$b->query_safe("SELECT tlbf_shared_create('y', '1 hour')");
$b->query_safe('COMMIT');
$b->query_safe("SELECT tlbf_shared_add('y', 1)");
$b->query_safe('BEGIN');
$b->query_safe("SELECT tlbf_shared_create('x_rolled_back', '1 hour')");
$a->query_until(qr/sent/, "\\echo sent\nSELECT tlbf_shared_create('x_rolled_back', '1 hour');\n");
$b->query_safe('ROLLBACK');
$a->query("SELECT tlbf_shared_add('x_rolled_back', 1)");
$a->quit;
$b->quit;

# What answers now must answer after a clean restart, and what does not
# must not come back.
my @names = ('z_rollback', 'z_commit', 'y', 'x_rolled_back');
my %before;
foreach my $name (@names)
{
	$before{$name} = result('crossing', "SELECT tlbf_shared_contains('$name', 1)");
}
is($before{z_rollback}, 'ERROR 42704', '(i) after B rolled back, A dropped z');
is($before{z_commit}, 'ERROR 42704', '(ii) after B committed, A dropped its new z');
is($before{y}, 't', '(iv) a committed create answers');
is($before{x_rolled_back}, 't', '(v) the second create of a name that the first rolled back answers');
is(result('crossing', q{SELECT count(*) FROM tlbf_shared_filters WHERE name IN ('z_rollback', 'z_commit')}),
	'0', 'no saved copy is left of the dropped ones');

# ---- 6. DROP EXTENSION frees the filters ----------------------------------
$node->safe_psql('postgres', 'CREATE DATABASE ext_dropped; CREATE DATABASE ext_kept; CREATE DATABASE ext_schema;');
$node->safe_psql('ext_dropped', q{
	CREATE EXTENSION tlbf;
	SELECT tlbf_shared_create('gone', '1 hour', 0.0001, 10000);
	SELECT count(*) FROM generate_series(1, 1000) k WHERE tlbf_shared_add('gone', k);
});
$node->safe_psql('ext_kept', q{
	CREATE EXTENSION tlbf;
	SELECT tlbf_shared_create('kept', '1 hour', 0.0001, 10000);
	SELECT count(*) FROM generate_series(1, 1000) k WHERE tlbf_shared_add('kept', k);
});
$node->safe_psql('ext_schema', q{
	CREATE SCHEMA tl;
	CREATE EXTENSION tlbf SCHEMA tl;
	SELECT tl.tlbf_shared_create('in_schema', '1 hour', 0.0001, 10000);
	SELECT count(*) FROM generate_series(1, 1000) k WHERE tl.tlbf_shared_add('in_schema', k);
});
ok($node->poll_query_until('ext_dropped',
		"SELECT NOT (info->>'unsaved_changes')::boolean FROM tlbf_shared_list() WHERE name = 'gone'"),
	'the filter was saved before the extension is dropped');

$node->safe_psql('ext_dropped', 'DROP EXTENSION tlbf');
$node->safe_psql('ext_dropped', 'CREATE EXTENSION tlbf');
is(result('ext_dropped', 'SELECT count(*) FROM tlbf_shared_list()'), '0',
	'DROP EXTENSION, CREATE EXTENSION: no filter is listed');
is(result('ext_dropped', "SELECT tlbf_shared_contains('gone', 1)"), 'ERROR 42704',
	'... the old filter does not exist');
is(result('ext_dropped', "SELECT tlbf_shared_create('gone', '1 hour', 0.0001, 10000)"), '',
	'... a filter of the same name can be created');
is(result('ext_dropped', "SELECT count(*) FROM generate_series(1, 1000) k WHERE tlbf_shared_contains('gone', k)"),
	'0', '... and it starts empty');
$node->safe_psql('ext_dropped', "SELECT tlbf_shared_add('gone', 424242)");

$node->safe_psql('ext_kept', 'BEGIN; DROP EXTENSION tlbf; ROLLBACK;');
is(result('ext_kept', "SELECT count(*) FROM generate_series(1, 1000) k WHERE NOT tlbf_shared_contains('kept', k)"),
	'0', 'a DROP EXTENSION that rolled back leaves the filter and its keys');
is(result('ext_kept', "SELECT tlbf_shared_add('kept', 123456789)"), 't', '... and it keeps working');

$node->safe_psql('ext_schema', 'DROP SCHEMA tl CASCADE; CREATE SCHEMA tl; CREATE EXTENSION tlbf SCHEMA tl;');
is(result('ext_schema', 'SELECT count(*) FROM tl.tlbf_shared_list()'), '0',
	'DROP SCHEMA ... CASCADE of the extension\'s schema frees its filters too');
is(result('ext_schema', "SELECT tl.tlbf_shared_create('in_schema', '1 hour', 0.0001, 10000)"), '',
	'... a filter of the same name can be created');
is(result('ext_schema', "SELECT count(*) FROM generate_series(1, 1000) k WHERE tl.tlbf_shared_contains('in_schema', k)"),
	'0', '... and it starts empty');

# ---- 8. prepared transactions ---------------------------------------------
$node->safe_psql('postgres', 'CREATE DATABASE prepared');
$node->safe_psql('prepared', q{
	CREATE EXTENSION tlbf;
	SELECT tlbf_shared_create(name, '1 hour', 0.001, 10000) FROM unnest(ARRAY['p_commit', 'p_rollback']) name;
	SELECT count(*) FROM generate_series(1, 100) k, unnest(ARRAY['p_commit', 'p_rollback']) name
	WHERE tlbf_shared_add(name, k);
});
$node->safe_psql('prepared', q{BEGIN; SELECT tlbf_shared_drop('p_commit'); PREPARE TRANSACTION 'drop_commit'});
$node->safe_psql('prepared', q{BEGIN; SELECT tlbf_shared_drop('p_rollback'); PREPARE TRANSACTION 'drop_rollback'});
is(result('prepared', q{SELECT count(*) FROM generate_series(1, 100) k, unnest(ARRAY['p_commit', 'p_rollback']) name
		WHERE tlbf_shared_contains(name, k)}), '200',
	'prepared drops: other sessions still see both filters and their keys');
$node->safe_psql('prepared', q{COMMIT PREPARED 'drop_commit'});
is(result('prepared', q{SELECT tlbf_shared_contains('p_commit', 1)}), 'ERROR 42704',
	'COMMIT PREPARED (from another session): the filter is gone');
is(result('prepared', q{SELECT tlbf_shared_create('p_commit', '1 hour', 0.001, 10000)}), '',
	'... its name can be created again');
is(result('prepared', q{SELECT count(*) FROM generate_series(1, 100) k WHERE tlbf_shared_contains('p_commit', k)}),
	'0', '... and the new filter starts empty');
$node->safe_psql('prepared', q{ROLLBACK PREPARED 'drop_rollback'});
is(result('prepared', q{SELECT count(*) FROM generate_series(1, 100) k WHERE tlbf_shared_contains('p_rollback', k)}),
	'100', 'ROLLBACK PREPARED: the filter is back with its keys');
is(result('prepared', q{SELECT tlbf_shared_add('p_rollback', 1000)}), 't', '... and it takes new keys');
is(result('prepared', q{BEGIN; SELECT tlbf_shared_create('p_new', '1 hour'); PREPARE TRANSACTION 'create'}),
	'ERROR 0A000', 'a transaction that created a filter cannot be prepared');
is(result('prepared', q{SELECT count(*) FROM pg_prepared_xacts}), '0', '... and it rolled back');
is(result('prepared', q{SELECT string_agg(name, ',' ORDER BY name) FROM tlbf_shared_list()}), 'p_commit,p_rollback',
	'... leaving no filter p_new');
$node->safe_psql('prepared', q{BEGIN; DROP EXTENSION tlbf; PREPARE TRANSACTION 'drop_extension'});
$node->safe_psql('prepared', q{COMMIT PREPARED 'drop_extension'; CREATE EXTENSION tlbf});
is(result('prepared', 'SELECT count(*) FROM tlbf_shared_list()'), '0',
	'a prepared DROP EXTENSION, committed: no filter is listed after CREATE EXTENSION');
is(result('prepared', q{SELECT tlbf_shared_create('p_rollback', '1 hour', 0.001, 10000)}), '',
	'... a filter of an old name can be created');
is(result('prepared', q{SELECT count(*) FROM generate_series(1, 100) k WHERE tlbf_shared_contains('p_rollback', k)}),
	'0', '... and it starts empty');

# ---- a clean restart -------------------------------------------------------
$node->restart;
foreach my $name (@names)
{
	is(result('crossing', "SELECT tlbf_shared_contains('$name', 1)"), $before{$name},
		"after a clean restart, '$name' answers as before ($before{$name})");
}
is(result('ext_dropped', q{SELECT string_agg(name, ',') FROM tlbf_shared_list()}), 'gone',
	'after a clean restart, the new filter of a re-created extension is there');
is(result('ext_dropped', q{SELECT tlbf_shared_contains('gone', 424242)}
		. q{ AND NOT EXISTS (SELECT FROM generate_series(1, 1000) k WHERE tlbf_shared_contains('gone', k))}),
	't', '... with its key, and none of the old ones');
is(result('ext_kept', "SELECT tlbf_shared_contains('kept', 123456789)"), 't',
	'... and the filter whose DROP EXTENSION rolled back, with its last key');

$node->stop;
done_testing();
