# tlbf.naptime and tlbf.snapshot_interval are reloadable; a new value
# takes effect at once (issue 23, item 5).  Lowered from an hour to a
# second, the next maintenance pass and the next save come within seconds,
# not when the hour planned with the old value is over.  Raised, the
# longer value is kept.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('reloaded');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.naptime = 1
tlbf.snapshot_interval = 1
});
$node->start;

sub set_and_reload
{
	my ($setting, $value) = @_;
	$node->safe_psql('postgres', "ALTER SYSTEM SET $setting = '$value'; SELECT pg_reload_conf();");
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
# value, nothing more for a while.
set_and_reload('tlbf.naptime', '1h');
set_and_reload('tlbf.snapshot_interval', '1h');
sleep 3;
my $pass_then = $node->safe_psql('postgres', $last_pass);
$node->safe_psql('postgres', q{SELECT tlbf_shared_add('s', 2)});
sleep 3;
is($node->safe_psql('postgres', $last_pass), $pass_then, 'naptime raised to 1h: no pass for 3 s');
is($node->safe_psql('postgres', $saved), 'f', 'snapshot interval raised to 1h: no save for 3 s');

# Lowered to a second: a row to retire, and the change, are taken care of
# at once.
$node->safe_psql('postgres',
	q{INSERT INTO t VALUES (2, tlbf_add(tlbf_create('1 minute'), 2, now() - interval '1 hour'))});
set_and_reload('tlbf.naptime', '1s');
set_and_reload('tlbf.snapshot_interval', '1s');
my $start = time;
ok($node->poll_query_until('postgres', q{SELECT count(*) = 0 FROM t WHERE tlbf_retirable(f)}),
	'naptime lowered to 1s: the next pass comes');
ok($node->poll_query_until('postgres', $saved), 'snapshot interval lowered to 1s: the next save comes');
cmp_ok(time - $start, '<', 60, '... within a minute, not the hour planned before');

$node->stop;
done_testing();
