# DROP EXTENSION while the maintenance worker is in a step of its pass.
# The Citus tests once saw these two deadlock: the DROP held one of the
# extension's tables and waited for another that the step held, while the
# step waited for the first.  DROP EXTENSION locks the extension itself
# before any of its objects; a background step now takes the same lock
# first (safe_sql.c, tlbf_lock_extension), so there is one order.
#
# - The pass is held in a registered table's trigger, which waits for an
#   advisory lock the test holds: its step holds the extension's lock (an
#   object lock on tlbf's row of pg_extension, AccessShareLock).
# - A DROP EXTENSION started then waits for that lock, the first it takes,
#   holding none of the extension's tables nor the registered table.
# - Let go, the step ends, the DROP goes through, and the server goes on
#   (tlbf can be created again and used).
#
# No sleeps: each state is waited for by polling pg_stat_activity and
# pg_locks.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use HeldPass qw(hold_pass);

my $node = PostgreSQL::Test::Cluster->new('drop_during_pass');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.naptime = 1
});
$node->start;

# filters with only expired slices: the pass rewrites each row, and each
# row's trigger waits for the advisory lock
my $holder = hold_pass($node, 35, 50);

ok($node->poll_query_until('postgres', q{
		SELECT count(*) = 1 FROM pg_stat_activity
		WHERE backend_type = 'tlbf maintenance' AND datname = 'postgres'
		  AND wait_event_type = 'Lock' AND wait_event = 'advisory'}),
	'the pass waits in the registered table\'s trigger');
my $extension = $node->safe_psql('postgres', q{SELECT oid FROM pg_extension WHERE extname = 'tlbf'});
is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
		WHERE a.backend_type = 'tlbf maintenance' AND l.locktype = 'object'
		  AND l.classid = 'pg_extension'::regclass AND l.objid = $extension
		  AND l.mode = 'AccessShareLock' AND l.granted}),
	'1', 'its step holds the extension\'s lock');

# the extension's tables and the registered one, as OIDs (read now: the
# DROP will remove them)
my $tables = $node->safe_psql('postgres', qq{
	SELECT string_agg(objid::text, ',') FROM pg_depend
	WHERE refclassid = 'pg_extension'::regclass AND refobjid = $extension
	  AND classid = 'pg_class'::regclass AND deptype = 'e'}) . ','
	. $node->safe_psql('postgres', q{SELECT 'visits_f'::regclass::oid});

my $dropper = $node->background_psql('postgres');
$dropper->query_safe(q{SET application_name = 'dropper'});
$dropper->query_until(qr/dropping/, q{\echo dropping
DROP EXTENSION tlbf CASCADE;
});
ok($node->poll_query_until('postgres', qq{
		SELECT count(*) = 1 FROM pg_locks l JOIN pg_stat_activity a USING (pid)
		WHERE a.application_name = 'dropper' AND NOT l.granted AND l.locktype = 'object'
		  AND l.classid = 'pg_extension'::regclass AND l.objid = $extension
		  AND l.mode = 'AccessExclusiveLock'}),
	'DROP EXTENSION waits for the extension\'s lock');
is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
		WHERE a.application_name = 'dropper' AND l.locktype = 'relation'
		  AND l.relation IN ($tables)}),
	'0', '... holding none of the extension\'s tables nor the registered one');

$holder->query_safe('SELECT pg_advisory_unlock(35)');
$holder->quit;
ok($node->poll_query_until('postgres', q{SELECT count(*) = 0 FROM pg_extension WHERE extname = 'tlbf'}),
	'let go, the step ends and the DROP goes through');
$dropper->quit;

is($node->safe_psql('postgres', q{
		CREATE EXTENSION tlbf;
		SELECT tlbf_contains(tlbf_add(tlbf_create('1 hour'), 1, now()), 1, now())}),
	't', 'the server goes on: tlbf created again and used');

$node->stop;
done_testing();
