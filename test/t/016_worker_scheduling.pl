# How the launcher schedules the workers, and what they cost over time
# (issue 14, items 10 and 12).
#
# 10. The launcher obeys tlbf.naptime: with naptime 3 and four databases
#     with the extension (nothing registered, no shared filters), each
#     database gets at most one maintenance worker per naptime (counted
#     from the postmaster's DEBUG1 "starting background worker process"
#     lines).  And with no background worker slot free, a LOG line at the
#     default level says that a database got no pass, at most once per
#     naptime (per database, if the line names one).
# 12. Neither the launcher nor a worker that stays connected grows its
#     memory pass after pass: pg_log_backend_memory_contexts() twice, about
#     ten passes apart, shows the same memory in use (within 8 kB).  The
#     worker's database has 40 shared filters with long names, saved every
#     second (the test waits until every one is saved, which an assert-
#     enabled build also needs to survive the save), and a registered table.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('scheduling');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.naptime = 3
tlbf.snapshot_interval = 1
log_min_messages = debug1
});
$node->start;

# ---- 10. one worker per database per naptime -------------------------------
my %oid;
foreach my $db ('n1', 'n2', 'n3', 'n4')
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION tlbf');
	$oid{$db} = $node->safe_psql('postgres', "SELECT oid FROM pg_database WHERE datname = '$db'");
}
sleep 1;
my $offset = -s $node->logfile;
my $watched = 10;
sleep $watched;
my $log = slurp_file($node->logfile, $offset);
my %starts;
$starts{$1}++ while $log =~ /starting background worker process "tlbf maintenance in database (\d+)"/g;
my $at_most = int($watched / 3) + 1;
foreach my $db (sort keys %oid)
{
	my $n = $starts{ $oid{$db} } // 0;
	ok($n >= 1 && $n <= $at_most,
		"naptime 3: database $db got $n maintenance workers in $watched s (1 to $at_most)");
}

# ---- 12. memory, pass after pass -------------------------------------------
$node->safe_psql('postgres', q{
	ALTER SYSTEM SET tlbf.naptime = 1;
	ALTER SYSTEM SET log_min_messages = warning;
	SELECT pg_reload_conf();
	CREATE DATABASE mem;
});
$node->safe_psql('mem', q{
	CREATE EXTENSION tlbf;
	SELECT count(*) FROM generate_series(1, 40) i,
	    LATERAL tlbf_shared_create(rpad('a_filter_with_a_rather_long_name_number_' || i, 60, 'x'), '1 hour', 0.01, 1000);
	SELECT count(*) FROM generate_series(1, 40) i, generate_series(1, 10) k
	WHERE tlbf_shared_add(rpad('a_filter_with_a_rather_long_name_number_' || i, 60, 'x'), k);
	CREATE TABLE registered (id int, f tlbf);
	INSERT INTO registered SELECT i, tlbf_add(tlbf_create('1 minute'), i, now() - interval '1 hour')
	FROM generate_series(1, 100) i;
	SELECT tlbf_maintain('registered', 'f');
});
ok($node->poll_query_until('mem', q{
		SELECT count(*) = 40 FROM tlbf_shared_list() WHERE NOT (info->>'unsaved_changes')::boolean}),
	'every shared filter was saved');
ok($node->poll_query_until('mem', 'SELECT count(*) = 0 FROM registered WHERE tlbf_retirable(f)'),
	'the registered table was done');

my $launcher = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'tlbf launcher'");
my $worker_query = q{
	SELECT pid FROM pg_stat_activity
	WHERE datname = 'mem' AND backend_type IN ('tlbf snapshots', 'tlbf maintenance')
	ORDER BY backend_type = 'tlbf snapshots' DESC, backend_start LIMIT 1};
ok($node->poll_query_until('postgres', "SELECT count(*) = 1 FROM ($worker_query) w"),
	'a worker stays connected to the database with shared filters');
my $worker = $node->safe_psql('postgres', $worker_query);

# The memory in use ("used" of the grand total) of one process, logged now.
sub memory_in_use
{
	my ($pid) = @_;
	my $from = -s $node->logfile;
	$node->safe_psql('postgres', "SELECT pg_log_backend_memory_contexts($pid)");
	foreach (1 .. 100)
	{
		my $text = slurp_file($node->logfile, $from);
		return $1 if $text =~ /\[$pid\][^\n]*Grand total: \d+ bytes in \d+ blocks; \d+ free \(\d+ chunks\); (\d+) used/;
		select(undef, undef, undef, 0.1);
	}
	return undef;
}

# About ten passes and ten saves, with something to save each time.
sub ten_rounds
{
	my ($from) = @_;
	foreach my $round ($from .. $from + 9)
	{
		$node->safe_psql('mem', qq{
			SELECT count(*) FROM generate_series(1, 40) i
			WHERE tlbf_shared_add(rpad('a_filter_with_a_rather_long_name_number_' || i, 60, 'x'), 1000 + $round);
			UPDATE registered SET f = tlbf_add(f, $round, now() - interval '1 hour') WHERE id <= 10;
		});
		sleep 1;
	}
}

# ten rounds first, for the caches to settle (each makes a few entries the
# first time it is needed: a tablespace cache, statistics entries)
ten_rounds(1);
my %first = (launcher => memory_in_use($launcher), worker => memory_in_use($worker));
ten_rounds(11);
ok($node->poll_query_until('mem', q{
		SELECT count(*) = 40 FROM tlbf_shared_list() WHERE NOT (info->>'unsaved_changes')::boolean}),
	'every shared filter was saved again');
is($node->safe_psql('postgres', $worker_query), $worker, 'the same worker stayed connected throughout');
my %second = (launcher => memory_in_use($launcher), worker => memory_in_use($worker));
foreach my $process ('launcher', 'worker')
{
	ok(defined $first{$process} && defined $second{$process}, "the $process logged its memory");
	cmp_ok(($second{$process} // 0) - ($first{$process} // 0), '<=', 8192,
		"the $process did not grow over ten passes ($first{$process} -> $second{$process} bytes in use)");
}

# ---- 10. no slot free: said once per naptime ------------------------------
# One slot, which the launcher takes (no logical replication launcher).
$node->safe_psql('postgres', 'ALTER SYSTEM RESET tlbf.naptime');
$node->append_conf('postgresql.conf', qq{
max_worker_processes = 1
max_logical_replication_workers = 0
tlbf.naptime = 2
});
$node->restart;
$offset = -s $node->logfile;
$watched = 7;
sleep $watched;
$log = slurp_file($node->logfile, $offset);
my @lines = grep { /LOG:.*(slot|max_worker_processes)/i && /tlbf/ } split /\n/, $log;
ok(@lines >= 1, 'no worker slot free: a LOG line says a database got no pass')
  or diag($log);
my %per_database;
foreach (@lines)
{
	$per_database{ /database\D*(\d+)/ ? $1 : 'all' }++;
}
my $rounds = int($watched / 2) + 1;
foreach my $key (sort keys %per_database)
{
	cmp_ok($per_database{$key}, '<=', $rounds,
		"... at most once per naptime ($per_database{$key} lines for database $key in $watched s)");
}

$node->stop;
done_testing();
