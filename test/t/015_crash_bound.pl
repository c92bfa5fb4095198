# A crash forgets no committed key while a maintenance pass is slow (issue
# 14, item 9, and issue 39): a pass takes tens of seconds (a registered
# table of 3000 rows with expired slices, whose BEFORE UPDATE trigger
# sleeps 10 ms a row) while a session adds 2,000 keys, one transaction
# each, with saves every 2 s; then the server stops in immediate mode, and
# every key is found after the start.  (Before the keys were in the WAL,
# this test checked the bound of one snapshot interval that a crash lost.)
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

# Keys 1 .. 2000 added one at a time, each in its own transaction, while
# the pass runs and saves come every 2 s; then an immediate stop.
my $adder = $node->background_psql('postgres');
my $keys = 2000;
for my $k (1 .. $keys)
{
	$adder->query_safe(qq{SELECT tlbf_shared_add('bound', $k)});
}
$node->stop('immediate');
eval { $adder->quit };
$node->start;

# Every key committed before the crash is found: the keys are in the WAL
# (issue 39; before, those of the last snapshot interval were lost).
is($node->safe_psql('postgres',
		"SELECT count(*) FROM generate_series(1, $keys) k WHERE NOT tlbf_shared_contains('bound', k)"),
	'0', "after a crash every one of the $keys keys added is found");

$node->stop;
done_testing();
