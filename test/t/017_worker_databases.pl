# The workers against databases that fail, go away or are forced away
# (issue 14, items 11, 13, 14 and 15).
#
# 15. tlbf_maintenance_status tells whether maintenance runs: after passes
#     over a registered table with expired slices, a recent last_pass,
#     rows_rewritten and bytes_freed above zero and no last_error; for a
#     table whose trigger raises, last_error holds the trigger's message.
#     Any user may read it.
# 11. After a failed batch (that trigger), the maintenance worker still
#     holds its lock on the database: no "you don't own a lock" in the
#     log, and DROP DATABASE without FORCE succeeds.
# 13. DROP DATABASE ... WITH (FORCE) of a database with shared filters
#     succeeds, and so it does with a worker in the middle of a slow batch (a trigger sleeping
#     an hour; FORCE must not wait for the batch to end, here no longer
#     than the tests' timeout), and nothing waits on a ProcSignalBarrier.
# 14. Creating and dropping a database with the extension ten times in a
#     row (the last time with a shared filter) leaves no FATAL or ERROR of
#     a tlbf process in the log, and no "database N does not exist".
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use WorkerLog qw(wait_for_round wait_for_count);

my $node = PostgreSQL::Test::Cluster->new('databases');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.naptime = 1
tlbf.snapshot_interval = 1
log_line_prefix = '%m [%p] %a %b '
# the launcher's rounds (WorkerLog)
log_min_messages = debug1
});
$node->start;
$node->safe_psql('postgres', 'CREATE ROLE reader LOGIN');

sub result
{
	my ($db, $sql, @params) = @_;
	my ($ret, $out, $err) = $node->psql($db, $sql, extra_params => [ '-v', 'VERBOSITY=verbose', @params ]);
	return $ret == 0 ? $out : ($err =~ /ERROR:  (\w{5}): ([^\n]*)/ ? "ERROR $1: $2" : "failed: $err");
}

# ---- 15 and 11: a table whose trigger raises --------------------------------
$node->safe_psql('postgres', 'CREATE DATABASE failing');
$node->safe_psql('failing', q{
	CREATE EXTENSION tlbf;
	SELECT tlbf_shared_create('saved', '1 hour');
	CREATE TABLE fine (id int, f tlbf);
	INSERT INTO fine SELECT i, tlbf_add(tlbf_create('1 minute'), i, now() - interval '1 hour')
	FROM generate_series(1, 50) i;
	CREATE TABLE boom (id int, f tlbf);
	INSERT INTO boom SELECT i, tlbf_add(tlbf_create('1 minute'), i, now() - interval '1 hour')
	FROM generate_series(1, 50) i;
	CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
	    RAISE EXCEPTION 'boom from the trigger';
	END $$;
	CREATE TRIGGER boom BEFORE UPDATE ON boom FOR EACH ROW EXECUTE FUNCTION boom();
	SELECT tlbf_maintain('fine', 'f'), tlbf_maintain('boom', 'f');
});
ok($node->poll_query_until('failing', 'SELECT count(*) = 0 FROM fine WHERE tlbf_retirable(f)'),
	'the worker does the table that does not fail');
my $log_offset = -s $node->logfile;
# (the worker's error, not the statements the log shows)
my $boom = qr/(?:ERROR|FATAL):  boom from the trigger/;
ok(wait_for_count($node, $boom, 1, $log_offset), "the other table's trigger failed a batch");
ok(wait_for_count($node, $boom, 4, $log_offset), '... and so did three more passes');

# 15. the status view: a table's row, with its last error (which may quote
# its rows), for those who may read the table
is(result('failing', 'SELECT count(*) FROM tlbf_maintenance_status', '-U', 'reader'),
	'0', 'tlbf_maintenance_status shows nothing of tables one may not read');
$node->safe_psql('failing', 'GRANT SELECT ON fine, boom TO reader');
my $status = q{SELECT %s FROM tlbf_maintenance_status WHERE tbl = '%s'::regclass AND col = 'f'};
is(result('failing', sprintf($status,
			"(last_pass > now() - interval '1 minute') || ',' || (rows_rewritten > 0) || ',' || (bytes_freed > 0) || ',' || (last_error IS NULL)",
			'fine'), '-U', 'reader'),
	'true,true,true,true',
	'tlbf_maintenance_status: a recent pass rewrote rows and freed bytes, without error');
is(result('failing', sprintf($status,
			"(last_error LIKE '%boom from the trigger%') || ',' || (last_error_at > now() - interval '1 minute')",
			'boom'), '-U', 'reader'),
	'true,true', '... and shows the trigger\'s error for the table that fails');
is(result('failing', q{
		SELECT string_agg(column_name::text || ' ' || data_type, ', ' ORDER BY ordinal_position)
		FROM information_schema.columns WHERE table_name = 'tlbf_maintenance_status'}),
	'tbl regclass, col name, last_pass timestamp with time zone, rows_rewritten bigint, bytes_freed bigint, '
	  . 'last_error text, last_error_at timestamp with time zone',
	'... with the documented columns');

# 11. the worker still holds its database lock: DROP DATABASE gets past it
my ($ret, $out, $err) = $node->psql('postgres', 'DROP DATABASE failing');
is($ret, 0, 'after failed batches, DROP DATABASE (no FORCE) succeeds') or diag($err);
# Every worker that was there has gone (DROP DATABASE waits for that) and
# written its lines; the launcher has had a round since, which frees the
# dropped database's filters.
wait_for_round($node, -s $node->logfile);
my @lost_lock = grep { /you don't own a lock/ } split /\n/, slurp_file($node->logfile, $log_offset);
is(scalar(@lost_lock), 0, 'no "you don\'t own a lock" in the log') or diag($lost_lock[0]);
# (out of the way of what follows, whatever happened)
$node->safe_psql('postgres', 'DROP DATABASE IF EXISTS failing WITH (FORCE)');

# ---- 13. DROP DATABASE ... WITH (FORCE) ------------------------------------
$node->safe_psql('postgres', 'CREATE DATABASE forced_idle; CREATE DATABASE forced_busy;');
$node->safe_psql('forced_idle', q{
	CREATE EXTENSION tlbf;
	SELECT tlbf_shared_create('saved', '1 hour');
});
$log_offset = -s $node->logfile;
($ret, $out, $err) = $node->psql('postgres', 'DROP DATABASE forced_idle WITH (FORCE)');
is($ret, 0, 'DROP DATABASE WITH (FORCE) succeeds in a database with shared filters') or diag($err);

$node->safe_psql('forced_busy', q{
	CREATE EXTENSION tlbf;
	SELECT tlbf_shared_create('saved', '1 hour');
	CREATE TABLE sleepy (id int, f tlbf);
	INSERT INTO sleepy SELECT i, tlbf_add(tlbf_create('1 minute'), i, now() - interval '1 hour')
	FROM generate_series(1, 200) i;
	CREATE FUNCTION sleepy() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
	    PERFORM pg_sleep(CASE WHEN OLD.id = 1 THEN 3600 ELSE 0 END);
	    RETURN NEW;
	END $$;
	CREATE TRIGGER sleepy BEFORE UPDATE ON sleepy FOR EACH ROW EXECUTE FUNCTION sleepy();
	SELECT tlbf_maintain('sleepy', 'f');
});
ok($node->poll_query_until('postgres', q{
		SELECT count(*) > 0 FROM pg_stat_activity
		WHERE datname = 'forced_busy' AND backend_type LIKE 'tlbf%' AND wait_event = 'PgSleep'}),
	'a worker is in the middle of a slow batch');
# The batch would take an hour: FORCE must not wait for it (a table
# owner's trigger must not hold DROP DATABASE off): the worker lets go of
# its database lock during a batch, and FORCE's SIGTERM cancels the batch.
my $timed_out = 0;
$ret = $node->psql('postgres', 'DROP DATABASE forced_busy WITH (FORCE)', stderr => \$err,
	timeout => $PostgreSQL::Test::Utils::timeout_default, timed_out => \$timed_out);
is($timed_out ? 'timed out' : $ret, 0,
	'DROP DATABASE WITH (FORCE) succeeds with a worker in the middle of an hour-long batch') or diag($err);
# (a ProcSignalBarrier is waited on by DROP DATABASE itself, which has
# logged any wait once it is over)
$node->poll_query_until('postgres', "SELECT count(*) = 0 FROM pg_database WHERE datname = 'forced_busy'");
unlike(slurp_file($node->logfile, $log_offset), qr/still waiting for backend with PID \d+ to accept ProcSignalBarrier/,
	'nothing waited on a ProcSignalBarrier');

# ---- 14. create and drop, ten times ----------------------------------------
$log_offset = -s $node->logfile;
my @failures;
foreach my $i (1 .. 10)
{
	$node->safe_psql('postgres', 'CREATE DATABASE churn');
	$node->safe_psql('churn', 'CREATE EXTENSION tlbf');
	$node->safe_psql('churn', "SELECT tlbf_shared_create('f', '1 hour')") if $i == 10;
	select(undef, undef, undef, 0.7);
	($ret, $out, $err) = $node->psql('postgres', 'DROP DATABASE churn');
	push @failures, "round $i: $err" if $ret != 0;
	$node->safe_psql('postgres', 'DROP DATABASE IF EXISTS churn WITH (FORCE)') if $ret != 0;
}
is(join("\n", @failures), '', 'ten rounds of CREATE DATABASE, CREATE EXTENSION, DROP DATABASE');
# a launcher round after the last DROP DATABASE (which frees its filters)
wait_for_round($node, -s $node->logfile);
my @noise = grep { /\btlbf (launcher|maintenance|snapshots)\s+(FATAL|ERROR|PANIC):/ || /database \d+ does not exist/ }
	split /\n/, slurp_file($node->logfile, $log_offset);
is(scalar(@noise), 0, 'no FATAL or ERROR from a tlbf process, no "database N does not exist"')
  or diag(join("\n", @noise));

$node->stop;
done_testing();
