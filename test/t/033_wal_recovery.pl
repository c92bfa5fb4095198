# Shared filters after a failover and after a point-in-time recovery
# (issue 39): the keys committed on the primary are in the WAL, so the
# standby promoted, or a recovery stopped at a target, starts with exactly
# the keys of the transactions that committed by then.  Saves are an hour
# apart: nothing here comes from a saved row but the empty filter.
#
# - a hot standby streams 5,000 rows stored through the dedup trigger
#   (with a checkpoint in the middle): it finds every key once it has
#   replayed it (before: none, until the primary saved the filter), not
#   one of a transaction prepared until COMMIT PREPARED; promoted, it
#   stores none of them again (before: all 5,000);
# - a recovery to a restore point between two halves of a load: every key
#   of the first half is found, no key of the second half is (1e-6 error
#   rate), and the table and the filter agree: a row inserted again is
#   stored if and only if the table lacks it.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1, has_archiving => 1);
$primary->append_conf('postgresql.conf', q{
shared_preload_libraries = 'tlbf'
tlbf.snapshot_interval = '1h'
max_prepared_transactions = 5
});
$primary->start;
$primary->safe_psql('postgres', q{
	CREATE EXTENSION tlbf;
	CREATE TABLE clicks (id int);
	SELECT tlbf_shared_create('clicks', '1 hour', 1e-6, 100000);
	CREATE TRIGGER dedup BEFORE INSERT ON clicks
	    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('clicks', 'id');
});
$primary->backup('b');

# A standby, promoted.
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
# (its timeline must not reach the primary's archive, where the recovery
# below would follow it)
$standby->append_conf('postgresql.conf', 'archive_mode = off');
$standby->start;

sub load
{
	my ($from, $to) = @_;
	for (my $k = $from; $k <= $to; $k += 100)
	{
		my $last = $k + 99;
		$primary->safe_psql('postgres', "INSERT INTO clicks SELECT k FROM generate_series($k, $last) k");
	}
}

load(1, 2500);
$primary->safe_psql('postgres', 'CHECKPOINT');
load(2501, 5000);
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', q{
		SELECT count(*) FROM generate_series(1, 5000) k WHERE NOT tlbf_shared_contains('clicks', k)}),
	'0', 'the hot standby finds every key it replayed, none of them saved (before: none)');
is($standby->safe_psql('postgres', q{
		SELECT count(*) FROM generate_series(5001, 10000) k WHERE tlbf_shared_contains('clicks', k)}),
	'0', '... and no key never added');
$primary->safe_psql('postgres', q{
	BEGIN;
	INSERT INTO clicks VALUES (90001);
	SELECT pg_current_xact_id();
	PREPARE TRANSACTION 'open';
});
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', q{SELECT tlbf_shared_contains('clicks', 90001)}), 'f',
	'a key of a transaction prepared, not committed, is not found');
$primary->safe_psql('postgres', q{COMMIT PREPARED 'open'});
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', q{SELECT tlbf_shared_contains('clicks', 90001)}), 't',
	'... and is once it is committed');
$standby->promote;
is($standby->safe_psql('postgres', q{
		INSERT INTO clicks SELECT k FROM generate_series(1, 5000) k;
		INSERT INTO clicks VALUES (90001);
		SELECT count(*) FROM clicks}),
	'5001', 'the promoted standby stores none of the 5,001 rows the primary had');
is($standby->safe_psql('postgres', q{
		INSERT INTO clicks SELECT k FROM generate_series(5001, 5100) k;
		SELECT count(*) FROM clicks}),
	'5101', '... and stores new ones');
$standby->stop;

# A point-in-time recovery to a restore point in the middle of a load.
load(10001, 12000);
$primary->safe_psql('postgres', q{SELECT pg_create_restore_point('middle')});
load(12001, 14000);
my $last_segment = $primary->safe_psql('postgres', 'SELECT pg_walfile_name(pg_switch_wal())');
$primary->poll_query_until('postgres',
	qq{SELECT last_archived_wal IS NOT NULL AND last_archived_wal >= '$last_segment'
	   FROM pg_stat_archiver}) or die 'the WAL was not archived';

my $restored = PostgreSQL::Test::Cluster->new('restored');
$restored->init_from_backup($primary, 'b', has_restoring => 1);
$restored->append_conf('postgresql.conf', q{
recovery_target_name = 'middle'
recovery_target_action = 'promote'
});
$restored->start;
$restored->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	or die 'the recovery did not end';

is($restored->safe_psql('postgres', 'SELECT count(*), min(id), max(id) FROM clicks'),
	'7001|1|90001', 'the recovery stopped between the two halves');
is($restored->safe_psql('postgres', q{
		SELECT count(*) FROM clicks WHERE NOT tlbf_shared_contains('clicks', id)}),
	'0', 'every key of a row the table has is in the filter');
is($restored->safe_psql('postgres', q{
		SELECT count(*) FROM generate_series(12001, 14000) k WHERE tlbf_shared_contains('clicks', k)}),
	'0', 'no key of a transaction after the target is');
is($restored->safe_psql('postgres', q{
		INSERT INTO clicks SELECT k FROM generate_series(1, 14000) k;
		SELECT count(*), count(DISTINCT id) FROM clicks}),
	'14001|14001', 'inserted again, exactly the 7,000 rows the table lacked are stored');

$restored->stop;
$primary->stop;
done_testing();
