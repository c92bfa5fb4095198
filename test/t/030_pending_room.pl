# The table of keys waiting for their transactions to commit
# (tlbf.max_pending_keys) is shared by every filter: filters that each
# stay short of the keys that make a fold due must not fill it together.
# At the smallest setting (1,024 keys, 256 a transaction) and without the
# snapshot worker's folds, four filters take 1,000 committed keys each in
# transactions of 200: every row is stored (53200 came once the table
# filled, after about 1,000 keys in all), and each key is found.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('pending_room');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.max_pending_keys = 1024
tlbf.worker_enabled = off
tlbf.snapshot_interval = 3600
});
$node->start;
$node->safe_psql('postgres', q{CREATE EXTENSION tlbf});
for my $f (1 .. 4)
{
	$node->safe_psql('postgres', qq{
		CREATE TABLE t$f (k int);
		SELECT tlbf_shared_create('f$f', '1 hour', 0.001, 10000);
		CREATE TRIGGER dedup BEFORE INSERT ON t$f
		    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('f$f', 'k');
	});
}
my $failed = 0;
for my $round (0 .. 4)
{
	for my $f (1 .. 4)
	{
		my ($ret, $out, $err) = $node->psql('postgres',
			"INSERT INTO t$f SELECT g FROM generate_series($round * 200 + 1, $round * 200 + 200) g");
		$failed++ if $ret != 0;
		diag($err) if $ret != 0 && $failed == 1;
	}
}
is($failed, 0, 'no insert fails for want of room for keys waiting to commit');
is($node->safe_psql('postgres', q{
	SELECT (SELECT count(*) FROM t1) + (SELECT count(*) FROM t2) + (SELECT count(*) FROM t3)
	     + (SELECT count(*) FROM t4)}), '4000', 'every row is stored');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM generate_series(1, 1000) g, generate_series(1, 4) f
	WHERE NOT tlbf_shared_contains('f' || f, g)}), '0', 'every key is found');
$node->stop;
done_testing();
