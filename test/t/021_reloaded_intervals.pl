# tlbf.naptime and tlbf.snapshot_interval are reloadable; a new value
# takes effect at once (issue 23, item 5).  Lowered from an hour to a
# second, the next maintenance pass and the next save are planned within a
# second and come, not when the hour planned with the old value is over.
# Raised, the longer value is kept: after the pass and the save planned
# with the old value, the next are planned an hour away, and none comes.
# The launcher says when it plans its next round and the snapshot worker
# its next save (DEBUG1, test/t/WorkerLog.pm): the test waits for those
# plans rather than for a while.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('reloaded');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.naptime = 1
tlbf.snapshot_interval = 1
# the launcher's and the snapshot worker's plans
log_min_messages = debug1
});
$node->start;

sub set_and_reload
{
	my ($setting, $value) = @_;
	$node->safe_psql('postgres', "ALTER SYSTEM SET $setting = '$value'; SELECT pg_reload_conf();");
}

# How far ahead (ms) the first plan logged after $offset for which
# $wanted->(ms) holds puts the launcher's next round, made with none of its
# passes running ('launcher'), or the snapshot worker's next save
# ('snapshots'); undef if none came within the tests' timeout.
sub planned
{
	my ($offset, $who, $wanted) = @_;
	my $plan = $who eq 'launcher'
	  ? qr/tlbf launcher: round at (\d+) ms: passes on, 0 running; next round at (\d+) ms/
	  : qr/tlbf launcher: next save in database \d+ in ()(\d+) ms/;
	foreach (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		my $log = slurp_file($node->logfile, $offset);
		while ($log =~ /$plan/g)
		{
			my $ahead = $2 - ($1 || 0);
			return $ahead if $wanted->($ahead);
		}
		usleep(100_000);
	}
	return undef;
}

$node->safe_psql('postgres', q{
	CREATE EXTENSION tlbf;
	CREATE TABLE t (id int, f tlbf);
	INSERT INTO t VALUES (1, tlbf_add(tlbf_create('1 hour'), 1));
	SELECT tlbf_maintain('t', 'f');
	SELECT tlbf_shared_create('s', '1 hour');
	SELECT tlbf_shared_add('s', 1);
});
my $last_pass = q{SELECT last_pass FROM tlbf_maintenance_status WHERE tbl = 't'::regclass};
my $saved = q{SELECT NOT (info->>'unsaved_changes')::boolean FROM tlbf_shared_list() WHERE name = 's'};
ok($node->poll_query_until('postgres', "SELECT ($last_pass) IS NOT NULL"),
	'naptime 1: passes run');
ok($node->poll_query_until('postgres', $saved), 'snapshot interval 1: saves run');

# Raised to an hour: after the pass (and the save) planned with the old
# value, nothing more for the hour.
my $offset = -s $node->logfile;
set_and_reload('tlbf.naptime', '1h');
set_and_reload('tlbf.snapshot_interval', '1h');
my $hour = sub { $_[0] >= 3_500_000 };
ok(defined planned($offset, 'launcher', $hour),
	'naptime raised to 1h: after the pass planned before, the launcher plans its next round an hour away');
ok(defined planned($offset, 'snapshots', $hour),
	'snapshot interval raised to 1h: after the save planned before, the next save is an hour away');
my $pass_then = $node->safe_psql('postgres', $last_pass);
$node->safe_psql('postgres', q{SELECT tlbf_shared_add('s', 2)});
is($node->safe_psql('postgres', $last_pass), $pass_then, 'naptime raised to 1h: no pass since');
is($node->safe_psql('postgres', $saved), 'f', 'snapshot interval raised to 1h: no save since');

# Lowered to a second: a row to retire, and the change, are taken care of
# at once.
$node->safe_psql('postgres',
	q{INSERT INTO t VALUES (2, tlbf_add(tlbf_create('1 minute'), 2, now() - interval '1 hour'))});
$offset = -s $node->logfile;
set_and_reload('tlbf.naptime', '1s');
set_and_reload('tlbf.snapshot_interval', '1s');
my $second = sub { $_[0] <= 1000 };
ok(defined planned($offset, 'launcher', $second),
	'naptime lowered to 1s: the launcher plans its next round within a second, not the hour planned before');
ok(defined planned($offset, 'snapshots', $second),
	'snapshot interval lowered to 1s: the next save is planned within a second, not the hour planned before');
ok($node->poll_query_until('postgres', q{SELECT count(*) = 0 FROM t WHERE tlbf_retirable(f)}),
	'naptime lowered to 1s: the next pass comes');
ok($node->poll_query_until('postgres', $saved), 'snapshot interval lowered to 1s: the next save comes');

$node->stop;
done_testing();
