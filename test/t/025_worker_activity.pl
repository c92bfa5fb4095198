# What pg_stat_activity says about tlbf's background processes (issue 28,
# item 5).
#
# - A maintenance worker shows the column its pass works on as its query,
#   state active: "tlbf maintenance: public.visits_f.f".  The table has a
#   trigger that waits for an advisory lock the test holds, so the pass
#   stays in that table (waiting on the lock) until the test lets it go;
#   then the pass finishes the table.
# - A pass by hand (tlbf_maintenance_run) leaves the caller's query alone.
# - Idle, the launcher waits with wait_event_type 'Extension' on
#   TlbfLauncherMain, its query saying which worker it last started.
#   Before PostgreSQL 17 an extension cannot name its waits: the event is
#   'Extension' there.  A saver saves and leaves: it is never idle.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use HeldPass qw(hold_pass);

my $node = PostgreSQL::Test::Cluster->new('activity');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.naptime = 1
tlbf.snapshot_interval = 1
});
$node->start;

my $named = $node->safe_psql('postgres', 'SHOW server_version_num') >= 170000;
my %event = $named ? (launcher => 'TlbfLauncherMain') : (launcher => 'Extension');

# ---- a maintenance pass at work --------------------------------------------
# 300 filters with only expired slices; each row the pass rewrites waits
# for the advisory lock (the trigger runs as the table's owner).
my $holder = hold_pass($node, 25, 300);

ok($node->poll_query_until('postgres', q{
		SELECT count(*) = 1 FROM pg_stat_activity
		WHERE backend_type = 'tlbf maintenance' AND datname = 'postgres'
		  AND state = 'active' AND query = 'tlbf maintenance: public.visits_f.f'
		  AND wait_event_type = 'Lock' AND wait_event = 'advisory'}),
	'a maintenance worker in the table\'s trigger shows the column it works on');

$holder->query_safe('SELECT pg_advisory_unlock(25)');
$holder->quit;
ok($node->poll_query_until('postgres', 'SELECT count(*) = 0 FROM visits_f WHERE tlbf_retirable(f)'),
	'let go, the pass finishes the table');

# ---- a pass by hand is the caller's own statement --------------------------
$node->safe_psql('postgres', q{
	CREATE FUNCTION my_query_after_a_pass() RETURNS text LANGUAGE plpgsql AS $$
	BEGIN
		PERFORM count(*) FROM tlbf_maintenance_run();
		RETURN (SELECT query FROM pg_stat_activity WHERE pid = pg_backend_pid());
	END $$;
});
is($node->safe_psql('postgres', 'SELECT my_query_after_a_pass()'),
	'SELECT my_query_after_a_pass()',
	'a pass by hand leaves the caller\'s query in pg_stat_activity alone');

# ---- idle waits --------------------------------------------------------------
ok($node->poll_query_until('postgres', qq{
		SELECT count(*) = 1 FROM pg_stat_activity
		WHERE backend_type = 'tlbf launcher' AND state = 'idle'
		  AND wait_event_type = 'Extension' AND wait_event = '$event{launcher}'
		  AND query ~ '^tlbf launcher: starting a (maintenance|snapshot) worker in database [0-9]+\$'}),
	"the idle launcher waits on $event{launcher}");

# A saver saves, and leaves: then the launcher is alone.
$node->safe_psql('postgres', q{
	ALTER SYSTEM SET tlbf.naptime = 3600;
	SELECT pg_reload_conf();
	SELECT tlbf_shared_create('visits_shared', '1 hour', 0.01, 1000);
	SELECT tlbf_shared_add('visits_shared', 1);
});
ok($node->poll_query_until('postgres', q{
		SELECT NOT (info->>'unsaved_changes')::boolean FROM tlbf_shared_list()
		WHERE name = 'visits_shared'}),
	'the shared filter is saved');
ok($node->poll_query_until('postgres', q{
		SELECT string_agg(backend_type, ',') = 'tlbf launcher' FROM pg_stat_activity
		WHERE backend_type LIKE 'tlbf%'}),
	'... and the saver has left');

$node->stop;
done_testing();
