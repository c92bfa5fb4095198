# Prepared drops across a crash (issue 34, item 5).  Citus commits its
# prepared transactions after a restart, so this is its recovery path.
#
# - tlbf_shared_drop() prepared, the server stopped in immediate mode and
#   started again: every use of the name (tlbf_shared_contains, the
#   trigger, tlbf_shared_list, _rebuild, _create, _drop) fails at once with
#   55006, saying a prepared transaction drops it, while the database's
#   other filter loads and answers.  COMMIT PREPARED: the filter does not
#   exist (42704, the trigger too), is not listed, the snapshot worker does
#   not write its row back (a save after it is waited for), and its name
#   can be created again, empty.  ROLLBACK PREPARED: it is back with its
#   saved keys, and the key committed while its drop was prepared (not
#   saved, but in the WAL: issue 39).  The same with no use at all between the restart and
#   COMMIT PREPARED.
# - DROP EXTENSION tlbf prepared, then the same crash: a use fails at once
#   with 55006 (the prepared transaction holds the snapshot table) instead
#   of waiting for it; COMMIT PREPARED: the extension is gone, and after
#   CREATE EXTENSION no filter is listed and the old name is free, empty;
#   ROLLBACK PREPARED: the filter is back with its keys.
# - Before the crash: the snapshot worker does not save a filter whose drop
#   is prepared; creating or dropping that name, or listing the filters of
#   a database whose DROP EXTENSION is prepared, fails with 55006 instead
#   of waiting; in a copy of a database, tlbf_shared_adopt() leaves a row
#   that a prepared transaction deletes, with a WARNING, and adopts it
#   after ROLLBACK PREPARED; a transaction that adopted filters cannot be
#   prepared (0A000).
#
# - The maintenance worker: a pass skips a database whose DROP EXTENSION is
#   prepared (the transaction holds the registry) instead of waiting for
#   it, also when the transaction prepares while the pass waits for it;
#   a registered table a prepared transaction locks is left for a later
#   pass; and a fast shutdown does not wait for it.
#
# Every session has lock_timeout = 30s: a use that waited for a prepared
# transaction would fail with 55P03 instead of hanging the test.  No test
# sleeps: a save is waited for by polling the saved row for a key added
# just before.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('prepared_drop_crash');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.naptime = 1
tlbf.snapshot_interval = 1
max_prepared_transactions = 10
lock_timeout = '30s'
});
$node->start;

# The output of $sql in $db, or "ERROR <sqlstate>"; $$stderr gets what
# psql wrote there (with SQLSTATEs).
sub result
{
	my ($db, $sql, $stderr) = @_;
	my ($ret, $out, $err) = $node->psql($db, $sql, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	$$stderr = $err if $stderr;
	return $ret == 0 ? $out : ($err =~ /ERROR:  (\w{5})/ ? "ERROR $1" : "failed: $err");
}

# Wait for the saved row of filter $name in $db to hold $key: a save that
# started after $key was added has ended (the worker saves every filter
# that changed in one round).
sub saved_with
{
	my ($db, $name, $key) = @_;
	return $node->poll_query_until($db,
		"SELECT tlbf_contains(filter, $key) FROM tlbf_shared_filters WHERE name = '$name'");
}

sub all_saved
{
	my ($db) = @_;
	return $node->poll_query_until($db,
		q{SELECT bool_and(NOT (info->>'unsaved_changes')::boolean) FROM tlbf_shared_list()});
}

sub filters_with_keys
{
	my ($db, @names) = @_;
	my $names = join(', ', map { "'$_'" } @names);
	$node->safe_psql($db, qq{
		CREATE EXTENSION tlbf;
		SELECT tlbf_shared_create(name, '1 hour', 0.001, 10000) FROM unnest(ARRAY[$names]) name;
		SELECT count(*) FROM generate_series(1, 100) k, unnest(ARRAY[$names]) name
		WHERE tlbf_shared_add(name, k);
	});
}

my $err;

# ---- before the crash --------------------------------------------------------
$node->safe_psql('postgres', q{
	CREATE DATABASE drops;
	CREATE DATABASE quiet;
	CREATE DATABASE ext_commit;
	CREATE DATABASE ext_rollback;
	CREATE DATABASE orig;
});
filters_with_keys('drops', 'p_commit', 'p_rollback', 'w');
$node->safe_psql('drops', q{
	CREATE TABLE events_commit (k int);
	CREATE TRIGGER once BEFORE INSERT ON events_commit
	    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('p_commit', 'k');
	CREATE TABLE events_rollback (k int);
	CREATE TRIGGER once BEFORE INSERT ON events_rollback
	    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('p_rollback', 'k');
});
filters_with_keys('quiet', 'q', 'qw');
filters_with_keys('ext_commit', 'e');
filters_with_keys('ext_rollback', 'e');
filters_with_keys('orig', 'c');
ok(all_saved($_), "$_: the filters are saved") foreach ('drops', 'quiet', 'ext_commit', 'ext_rollback', 'orig');

# a copy of orig: its row names orig's database until adopted
$node->safe_psql('postgres', 'CREATE DATABASE copied TEMPLATE orig');
$node->safe_psql('copied', q{BEGIN; SELECT tlbf_shared_drop('c'); PREPARE TRANSACTION 'drop_copied'});
is(result('copied', 'SELECT tlbf_shared_adopt()', \$err), '0',
	'a copy: tlbf_shared_adopt() leaves the row a prepared transaction deletes, without waiting');
like($err, qr/WARNING:  55006: shared tlbf filter "c" is being dropped by a prepared transaction/,
	'... with a WARNING that says so');
$node->safe_psql('copied', q{ROLLBACK PREPARED 'drop_copied'});
is(result('copied', q{BEGIN; SELECT tlbf_shared_adopt(); PREPARE TRANSACTION 'adopt'}), 'ERROR 0A000',
	'a transaction that adopted filters cannot be prepared (it holds their names)');
is(result('copied', 'SELECT count(*) FROM pg_prepared_xacts'), '0', '... and it rolled back');
is(result('copied', 'SELECT tlbf_shared_adopt()'), '1', '... after ROLLBACK PREPARED it adopts it');
is(result('copied', q{SELECT count(*) FROM generate_series(1, 100) k WHERE tlbf_shared_contains('c', k)}),
	'100', '... and the filter loads with its keys');

$node->safe_psql('drops', q{BEGIN; SELECT tlbf_shared_drop('p_commit'); PREPARE TRANSACTION 'drop_commit'});
$node->safe_psql('drops', q{BEGIN; SELECT tlbf_shared_drop('p_rollback'); PREPARE TRANSACTION 'drop_rollback'});
$node->safe_psql('quiet', q{BEGIN; SELECT tlbf_shared_drop('q'); PREPARE TRANSACTION 'drop_quiet'});
$node->safe_psql('ext_commit', q{BEGIN; DROP EXTENSION tlbf; PREPARE TRANSACTION 'ext_commit'});
$node->safe_psql('ext_rollback', q{BEGIN; DROP EXTENSION tlbf; PREPARE TRANSACTION 'ext_rollback'});

is(result('drops', q{SELECT tlbf_shared_add('p_commit', 1000) AND tlbf_shared_add('p_rollback', 1000)}),
	't', 'prepared drops: other sessions still add to the filters');
$node->safe_psql('drops', q{SELECT tlbf_shared_add('w', 1000)});
ok(saved_with('drops', 'w', 1000), 'a save that started after those additions has ended');
is(result('drops', q{SELECT count(*) FROM tlbf_shared_filters
		WHERE name IN ('p_commit', 'p_rollback') AND NOT tlbf_contains(filter, 1000)}),
	'2', '... and did not save the filters whose drop is prepared');
is(result('drops', q{SELECT tlbf_shared_create('p_commit', '1 hour')}, \$err), 'ERROR 55006',
	'creating a name whose drop is prepared fails at once');
like($err, qr/shared tlbf filter "p_commit" is being dropped by a prepared transaction/, '... saying so');
is(result('drops', q{SELECT tlbf_shared_drop('p_rollback')}), 'ERROR 55006', '... dropping it again too');
is(result('ext_commit', q{SELECT tlbf_shared_contains('e', 1)}), 't',
	'a prepared DROP EXTENSION: other sessions still use its filter');
is(result('ext_commit', q{SELECT count(*) FROM tlbf_shared_list()}, \$err), 'ERROR 55006',
	'... and tlbf_shared_list(), which reads the snapshot table, fails at once');
like($err, qr/table tlbf_shared_filters is locked by a prepared transaction/, '... saying why');

# ---- the crash -------------------------------------------------------------
$node->stop('immediate');
$node->start;
is(result('postgres', 'SELECT count(*) FROM pg_prepared_xacts'), '5',
	'after an immediate stop and a start, the five prepared transactions are there');

# ---- tlbf_shared_drop() prepared ----------------------------------------------
is(result('drops', q{SELECT tlbf_shared_contains('p_commit', 1)}, \$err), 'ERROR 55006',
	'after the crash, tlbf_shared_contains() of a filter whose drop is prepared fails at once');
like($err, qr/ERROR:  55006: shared tlbf filter "p_commit" is being dropped by a prepared transaction/,
	'... saying so');
like($err, qr/HINT:  .*COMMIT PREPARED.*ROLLBACK PREPARED/, '... and what to do');
is(result('drops', q{INSERT INTO events_commit VALUES (4000)}), 'ERROR 55006', '... an insert through its trigger too');
is(result('drops', q{SELECT * FROM tlbf_shared_list()}), 'ERROR 55006', '... tlbf_shared_list()');
is(result('drops', q{SELECT tlbf_shared_rebuild('p_commit', 'SELECT 4000, now()')}), 'ERROR 55006',
	'... tlbf_shared_rebuild()');
is(result('drops', q{SELECT tlbf_shared_create('p_commit', '1 hour')}), 'ERROR 55006', '... tlbf_shared_create()');
is(result('drops', q{SELECT tlbf_shared_drop('p_commit')}), 'ERROR 55006', '... tlbf_shared_drop()');
is(result('drops', q{SELECT count(*) FROM generate_series(1, 100) k WHERE tlbf_shared_contains('w', k)}),
	'100', 'the database\'s other filter loads, with its keys');
$node->safe_psql('drops', q{SELECT tlbf_shared_add('w', 2000)});
ok(saved_with('drops', 'w', 2000), 'the snapshot worker saves it');

$node->safe_psql('drops', q{COMMIT PREPARED 'drop_commit'});
is(result('drops', q{SELECT tlbf_shared_contains('p_commit', 1)}, \$err), 'ERROR 42704',
	'COMMIT PREPARED: the filter does not exist');
like($err, qr/shared tlbf filter "p_commit" does not exist/, '... saying so');
is(result('drops', q{INSERT INTO events_commit VALUES (4000)}), 'ERROR 42704', '... for its trigger too');

$node->safe_psql('drops', q{ROLLBACK PREPARED 'drop_rollback'});
is(result('drops', q{SELECT count(*) FROM generate_series(1, 100) k WHERE tlbf_shared_contains('p_rollback', k)}),
	'100', 'ROLLBACK PREPARED: the other filter is back with its saved keys');
is(result('drops', q{SELECT tlbf_shared_contains('p_rollback', 1000)}), 't',
	'... and the key added while its drop was prepared, not saved but committed (in the WAL)');
is(result('drops', q{INSERT INTO events_rollback VALUES (1), (4000); SELECT count(*) FROM events_rollback}),
	'1', '... its trigger skips a saved key and takes a new one');
is(result('drops', q{SELECT string_agg(name, ',' ORDER BY name) FROM tlbf_shared_list()}), 'p_rollback,w',
	'tlbf_shared_list() lists it, not the dropped one');
$node->safe_psql('drops', q{SELECT tlbf_shared_add('w', 3000)});
ok(saved_with('drops', 'w', 3000), 'a save after COMMIT PREPARED has ended');
is(result('drops', q{SELECT string_agg(name, ',' ORDER BY name) FROM tlbf_shared_filters}), 'p_rollback,w',
	'... and did not write the dropped filter back');
is(result('drops', q{SELECT tlbf_contains(filter, 4000) FROM tlbf_shared_filters WHERE name = 'p_rollback'}),
	't', '... but saved the one that came back, with its new key');
is(result('drops', q{SELECT tlbf_shared_create('p_commit', '1 hour', 0.001, 10000)}), '',
	'the dropped name can be created again');
is(result('drops', q{SELECT count(*) FROM generate_series(1, 100) k WHERE tlbf_shared_contains('p_commit', k)}),
	'0', '... and the new filter starts empty');
is(result('drops', q{INSERT INTO events_commit VALUES (1); SELECT count(*) FROM events_commit}), '1',
	'... its trigger takes an old key as new');

# ---- the same with no use before COMMIT PREPARED ----------------------------
$node->safe_psql('quiet', q{COMMIT PREPARED 'drop_quiet'});
is(result('quiet', q{SELECT tlbf_shared_contains('q', 1)}), 'ERROR 42704',
	'a prepared drop committed before any use after the crash: the filter does not exist');
is(result('quiet', q{SELECT string_agg(name, ',') FROM tlbf_shared_list()}), 'qw', '... only the other is listed');
$node->safe_psql('quiet', q{SELECT tlbf_shared_add('qw', 2000)});
ok(saved_with('quiet', 'qw', 2000), '... a save has ended');
is(result('quiet', q{SELECT string_agg(name, ',') FROM tlbf_shared_filters}), 'qw', '... and wrote no row back');

# ---- DROP EXTENSION prepared ------------------------------------------------------
is(result('ext_commit', q{SELECT tlbf_shared_contains('e', 1)}, \$err), 'ERROR 55006',
	'a prepared DROP EXTENSION after the crash: a use of a filter fails at once');
like($err, qr/ERROR:  55006: table tlbf_shared_filters is locked by a prepared transaction/, '... saying why');
like($err, qr/HINT:  .*COMMIT PREPARED.*ROLLBACK PREPARED/, '... and what to do');
is(result('ext_commit', q{SELECT * FROM tlbf_shared_list()}), 'ERROR 55006', '... tlbf_shared_list() too');

$node->safe_psql('ext_commit', q{COMMIT PREPARED 'ext_commit'});
is(result('ext_commit', q{SELECT count(*) FROM pg_extension WHERE extname = 'tlbf'}), '0',
	'COMMIT PREPARED: the extension is gone');
$node->safe_psql('ext_commit', 'CREATE EXTENSION tlbf');
is(result('ext_commit', 'SELECT count(*) FROM tlbf_shared_list()'), '0',
	'... after CREATE EXTENSION no filter is listed');
is(result('ext_commit', q{SELECT tlbf_shared_create('e', '1 hour', 0.001, 10000)}), '',
	'... the old name is free');
is(result('ext_commit', q{SELECT count(*) FROM generate_series(1, 100) k WHERE tlbf_shared_contains('e', k)}),
	'0', '... and the new filter starts empty');

$node->safe_psql('ext_rollback', q{ROLLBACK PREPARED 'ext_rollback'});
is(result('ext_rollback', q{SELECT count(*) FROM generate_series(1, 100) k WHERE tlbf_shared_contains('e', k)}),
	'100', 'ROLLBACK PREPARED of DROP EXTENSION: the filter is back with its keys');
is(result('ext_rollback', q{SELECT string_agg(name, ',') FROM tlbf_shared_list()}), 'e', '... and listed');

is(result('postgres', 'SELECT count(*) FROM pg_prepared_xacts'), '0', 'no prepared transaction is left');

# ---- the maintenance worker and a prepared DROP EXTENSION ------------------------
# Its pass skips the database (the prepared transaction holds the registry
# until someone ends it) instead of waiting, and a fast shutdown does not
# wait for it either.
$node->safe_psql('postgres', 'CREATE DATABASE maint');
$node->safe_psql('maint', q{
	CREATE EXTENSION tlbf;
	CREATE TABLE kept (f tlbf);
	INSERT INTO kept VALUES (tlbf_add(tlbf_create('1 hour'), 1));
	SELECT tlbf_maintain('kept', 'f');
});
my $log_at = -s $node->logfile;
$node->safe_psql('maint', q{BEGIN; DROP EXTENSION tlbf CASCADE; PREPARE TRANSACTION 'maint_drop'});
ok($node->wait_for_log(qr/tlbf maintenance skipped a pass: prepared transaction \d+ holds the extension's tables/,
		$log_at),
	'a prepared DROP EXTENSION: the maintenance pass skips the database instead of waiting');
$node->stop('fast');
pass('... and a fast shutdown does not wait for the prepared transaction');
$node->start;
$node->safe_psql('maint', q{ROLLBACK PREPARED 'maint_drop'});
is(result('maint', q{SELECT tlbf_contains(f, 1) FROM kept}), 't',
	'after ROLLBACK PREPARED, the table and its filter are there');

# A pass that finds DROP EXTENSION still open waits for it; if that
# transaction then prepares, it keeps the lock, and a pass queued for the
# lock would wait until someone ended it (it once did: CI saw the worker
# hang here).  The pass looks again instead: it is seen waiting (on the
# lock, or on its own wait event), the transaction prepares, and the pass
# skips the database.
my $dropper = $node->background_psql('maint');
$dropper->query_safe('SET client_min_messages = warning');
$dropper->query_safe('BEGIN');
$dropper->query_safe('DROP EXTENSION tlbf CASCADE');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM pg_stat_activity
	WHERE backend_type = 'tlbf maintenance' AND datname = 'maint'
	  AND wait_event_type IN ('Lock', 'Extension')}),
	'a maintenance pass waits for the open DROP EXTENSION');
$log_at = -s $node->logfile;
$dropper->query_safe(q{PREPARE TRANSACTION 'maint_drop_late'});
$dropper->quit;
ok($node->wait_for_log(qr/tlbf maintenance skipped a pass: prepared transaction \d+ holds the extension's tables/,
		$log_at),
	'... which then prepares: the pass skips the database instead of waiting for it');
$node->safe_psql('maint', q{ROLLBACK PREPARED 'maint_drop_late'});
is(result('maint', q{SELECT tlbf_contains(f, 1) FROM kept}), 't',
	'... and after ROLLBACK PREPARED the table and its filter are there');

# The same for a registered table a prepared transaction locks (LOCK
# TABLE, ALTER TABLE, TRUNCATE): the pass leaves that table for a later
# pass instead of waiting for it (it waited until someone ended the
# transaction), and maintains it once the transaction has ended.
$log_at = -s $node->logfile;
$node->safe_psql('maint', q{
	BEGIN; LOCK TABLE kept IN ACCESS EXCLUSIVE MODE; PREPARE TRANSACTION 'maint_lock'});
ok($node->wait_for_log(qr/tlbf maintenance skipped table "kept" in this pass: prepared transaction \d+ holds a lock on it/,
		$log_at),
	'a registered table a prepared transaction locks: the pass skips it instead of waiting');
$node->safe_psql('maint', q{ROLLBACK PREPARED 'maint_lock'});
$node->stop;
done_testing();
