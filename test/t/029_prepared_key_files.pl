# The files in which prepared transactions write down their keys
# (pg_tlbf/pending/), met as a crash or an operator leaves them (issue 38):
# - one that cannot be read when its filter loads fails the load, which the
#   next use tries again, and then finds its keys (a filter loaded without
#   them would let a prepared transaction's key through);
# - one of a transaction PostgreSQL has no status for (here one past the
#   next XID, as a file from before a wraparound would look) is kept as
#   committed, and does not break the load, nor the saves after;
# - a damaged one is set aside (.damaged) with a WARNING;
# - a half-written one (.tmp) of a transaction that ended is removed by the
#   next save, and one of a database that no longer exists by the
#   launcher.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('prepared_key_files');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.snapshot_interval = 1
max_prepared_transactions = 10
});
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION tlbf;
	CREATE TABLE signups (email text);
	SELECT tlbf_shared_create('signups', '1 hour', 1e-6);
	CREATE TRIGGER dedup BEFORE INSERT ON signups
	    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('signups', 'email');
	INSERT INTO signups VALUES ('saved@example.com');
	BEGIN; INSERT INTO signups VALUES ('ann@example.com'); PREPARE TRANSACTION 'p_ann';
	BEGIN; INSERT INTO signups VALUES ('bob@example.com'); PREPARE TRANSACTION 'p_bob';
});
my $db = $node->safe_psql('postgres', q{SELECT oid FROM pg_database WHERE datname = 'postgres'});
my %xid = map { split /\|/ } split /\n/, $node->safe_psql('postgres',
	q{SELECT gid, transaction FROM pg_prepared_xacts});
# two transactions that ended (each writes a row: a commit that wrote
# nothing is not flushed, and an immediate stop may forget it and its XID)
$node->safe_psql('postgres', q{CREATE TABLE marks (x int)});
my $ended = $node->safe_psql('postgres',
	q{INSERT INTO marks VALUES (1) RETURNING pg_current_xact_id()});
my $ended_too = $node->safe_psql('postgres',
	q{INSERT INTO marks VALUES (2) RETURNING pg_current_xact_id()});
my $next = $ended_too + 1;
my $dir = $node->data_dir . '/pg_tlbf/pending';
ok(-f "$dir/${db}_$xid{p_ann}" && -f "$dir/${db}_$xid{p_bob}",
	'each prepared transaction wrote its keys down');
$node->stop('immediate');

# CRC-32C, as PostgreSQL's pg_crc32c computes it
sub crc32c
{
	my ($data) = @_;
	my $crc = 0xFFFFFFFF;
	for my $byte (unpack('C*', $data))
	{
		$crc ^= $byte;
		$crc = ($crc & 1) ? (($crc >> 1) ^ 0x82F63B78) : ($crc >> 1) for 1 .. 8;
	}
	return $crc ^ 0xFFFFFFFF;
}

# bob's keys, as if written by a transaction a million XIDs ahead
my $bob = slurp_file("$dir/${db}_$xid{p_bob}");
my ($magic, $version, undef, $count) = unpack('V V Q< V V', substr($bob, 0, 24));
my $future = $next + 1_000_000;
my $header = pack('V V Q< V V', $magic, $version, $future, $count, 0);
my $keys = substr($bob, 24);
$header = pack('V V Q< V V', $magic, $version, $future, $count, crc32c($header . $keys));
unlink("$dir/${db}_$xid{p_bob}");
append_to_file("$dir/${db}_" . ($future % 2**32), $header . $keys);
# a damaged file, a half-written one, one of a dropped database
append_to_file("$dir/${db}_$ended", 'not a file of keys');
append_to_file("$dir/${db}_$ended_too.tmp", substr($bob, 0, 30));
append_to_file("$dir/4000000000_$ended", $bob);
# and ann's cannot be read
chmod(0, "$dir/${db}_$xid{p_ann}");

$node->start;
ok($node->poll_query_until('postgres',
	"SELECT NOT EXISTS (SELECT FROM pg_ls_dir('pg_tlbf/pending') f WHERE f LIKE '4000000000\\_%')"),
	'the launcher removes the file of a database that no longer exists');

my $log_offset = -s $node->logfile;
my ($ret, $out, $err) = $node->psql('postgres', q{INSERT INTO signups VALUES ('cat@example.com')});
like($err, qr/could not read file .*${db}_$xid{p_ann}/,
	'a file of keys that cannot be read fails the load of its filter');
chmod(0600, "$dir/${db}_$xid{p_ann}");
is($node->safe_psql('postgres', q{
	INSERT INTO signups VALUES ('cat@example.com');
	SELECT count(*) FROM signups WHERE email = 'cat@example.com'}),
	'1', 'the next use loads the filter');
($ret, $out, $err) = $node->psql('postgres',
	q{SET lock_timeout = '500ms'; INSERT INTO signups VALUES ('ann@example.com')});
like($err, qr/lock timeout/, '... with the prepared transaction\'s key: an insert of it waits');
is($node->safe_psql('postgres', q{SELECT tlbf_shared_contains('signups', 'bob@example.com')}),
	't', 'the keys of a transaction with no status are kept, as committed');
ok(-f "$dir/${db}_$ended.damaged" && !-f "$dir/${db}_$ended",
	'a damaged file is set aside');
ok($node->log_contains(qr/WARNING: .*keys a prepared transaction wrote to file .* are damaged/,
	$log_offset), '... with a WARNING');
ok($node->poll_query_until('postgres', qq{
	SELECT NOT EXISTS (SELECT FROM pg_ls_dir('pg_tlbf/pending') f
	                   WHERE f LIKE '%.tmp' OR f = '${db}_} . ($future % 2**32) . q{')}),
	'after a save, the half-written file is removed, and the settled one');
ok(-f "$dir/${db}_$xid{p_ann}", '... and keeps the file of the transaction still prepared');

$node->safe_psql('postgres', q{
	COMMIT PREPARED 'p_ann';
	ROLLBACK PREPARED 'p_bob';
	INSERT INTO signups VALUES ('ann@example.com'), ('dan@example.com');
});
is($node->safe_psql('postgres', q{SELECT string_agg(email, ' ' ORDER BY email) FROM signups}),
	'ann@example.com cat@example.com dan@example.com saved@example.com',
	'after COMMIT PREPARED, its key still rejects a repeat');

$node->stop;
done_testing();
