# The documented crash bound holds while a maintenance pass is slow (issue
# 14, item 9): after a crash, a shared filter has every key added up to at
# most tlbf.snapshot_interval (plus a second of slack) before the crash.
# Saving must not wait behind a pass: here a pass takes tens of seconds (a
# registered table of 3000 rows with expired slices, whose BEFORE UPDATE
# trigger sleeps 10 ms a row) while a session adds keys for 8 seconds;
# then the server stops in immediate mode.  This is the one test whose
# assertion is a time: the bound is what the README promises.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $snapshot_interval = 2;
my $node = PostgreSQL::Test::Cluster->new('crash_bound');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.naptime = 1
tlbf.snapshot_interval = $snapshot_interval
});
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION tlbf;
	SELECT tlbf_shared_create('bound', '1 hour', 0.0001, 100000);
	CREATE TABLE slow (id int PRIMARY KEY, f tlbf);
	INSERT INTO slow SELECT i, tlbf_add(tlbf_create('1 minute'), i, now() - interval '1 hour')
	FROM generate_series(1, 3000) i;
	CREATE FUNCTION slowly() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
	    PERFORM pg_sleep(0.01);
	    RETURN NEW;
	END $$;
	CREATE TRIGGER slowly BEFORE UPDATE ON slow FOR EACH ROW EXECUTE FUNCTION slowly();
	SELECT tlbf_maintain('slow', 'f');
});
ok($node->poll_query_until('postgres', q{
		SELECT count(*) > 0 FROM pg_stat_activity
		WHERE backend_type LIKE 'tlbf%' AND wait_event = 'PgSleep'}),
	'a slow maintenance pass is running');

# Keys 1, 2, ... added one at a time at clock_timestamp(), for 8 seconds;
# the time of each as the server saw it.
my $adder = $node->background_psql('postgres');
my @at;
my $until = time() + 8;
my $k = 0;
while (time() < $until)
{
	$k++;
	my $at = $adder->query_safe(qq{
		SELECT extract(epoch FROM t) FROM (SELECT clock_timestamp() AS t) s
		WHERE tlbf_shared_add('bound', $k, t) IS NOT NULL});
	chomp $at;
	push @at, $at;
}
my $crash_at = $node->safe_psql('postgres', 'SELECT extract(epoch FROM clock_timestamp())');
$node->stop('immediate');
eval { $adder->quit };
$node->start;

my $newest = $node->safe_psql('postgres', q{
	SELECT coalesce(extract(epoch FROM (info->>'newest')::timestamptz), 0)
	FROM tlbf_shared_list() WHERE name = 'bound'});
my $age = $crash_at - $newest;
cmp_ok($age, '<=', $snapshot_interval + 1,
	sprintf('after a crash the filter is at most %d s behind (%s; %d keys were added)',
		$snapshot_interval + 1,
		$newest > 0 ? sprintf('it is %.1f s behind', $age) : 'it has no key at all', $k));

# Every key added up to the filter's newest time is there.
my $last = 0;
$last++ while ($last < @at && $at[$last] <= $newest);
is($node->safe_psql('postgres',
		"SELECT count(*) FROM generate_series(1, $last) k WHERE NOT tlbf_shared_contains('bound', k)"),
	'0', "every key up to the newest saved time ($last of them) is found");

$node->stop;
done_testing();
