# Keys committed to shared filters are written to the WAL (issue 39): a
# crash forgets none, with tlbf.snapshot_interval at its default (30 s, so
# no save runs between the inserts and the crash).
#
# - 20,000 rows inserted through the dedup trigger (200 transactions of
#   100), with a checkpoint after the first 10,000, then an immediate stop:
#   after the start, inserting them again stores none of them (before: all
#   20,000 were stored again; the first 10,000 with the keys' records
#   alone, as recovery starts at the checkpoint: the launcher writes an
#   image of the filter after its redo point);
# - keys of a transaction rolled back, and of a savepoint rolled back,
#   are not brought back (their filter answers as for keys never added),
#   nor the key of a row INSERT ... ON CONFLICT DO NOTHING skipped;
# - keys added with tlbf_shared_add in another database come back in
#   theirs;
# - a second crash before any save keeps them all too;
# - keys tlbf_shared_rebuild added are kept too;
# - a crash right after a CHECKPOINT keeps the keys committed before it:
#   the checkpoint's record comes after the launcher's image (it waits);
# - pg_waldump shows one record per transaction (as custom128).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('wal_keys');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'tlbf'
wal_keep_size = '1GB'
});
$node->start;

is($node->safe_psql('postgres', 'SHOW tlbf.snapshot_interval'), '30s',
	'saves are 30 s apart (the default)');
$node->safe_psql('postgres', q{
	CREATE DATABASE other;
	CREATE EXTENSION tlbf;
	CREATE TABLE clicks (id int);
	SELECT tlbf_shared_create('clicks', '1 hour', 1e-6, 100000);
	CREATE TRIGGER dedup BEFORE INSERT ON clicks
	    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('clicks', 'id');
});
# a table inserted into with ON CONFLICT: the AFTER trigger marks the keys
# of the rows stored
$node->safe_psql('postgres', q{
	CREATE TABLE signups (id int, email text UNIQUE);
	SELECT tlbf_shared_create('signups', '1 hour', 1e-6, 1000);
	CREATE TRIGGER dedup BEFORE INSERT ON signups
	    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('signups', 'id');
	CREATE TRIGGER dedup_stored AFTER INSERT ON signups
	    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('signups', 'id');
});
$node->safe_psql('other', q{
	CREATE EXTENSION tlbf;
	SELECT tlbf_shared_create('seen', '1 hour', 1e-6, 100000);
});

my $start_lsn = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
for my $t (0 .. 199)
{
	my $from = $t * 100 + 1;
	my $to = $from + 99;
	$node->safe_psql('postgres',
		"INSERT INTO clicks SELECT k FROM generate_series($from, $to) k");
	# a checkpoint half-way: recovery starts after the first half's records
	$node->safe_psql('postgres', 'CHECKPOINT') if $t == 99;
}
$node->safe_psql('postgres', q{
	BEGIN;
	INSERT INTO clicks SELECT k FROM generate_series(100001, 101000) k;
	ROLLBACK;
	BEGIN;
	INSERT INTO clicks VALUES (200001);
	SAVEPOINT s;
	INSERT INTO clicks SELECT k FROM generate_series(200002, 201000) k;
	ROLLBACK TO SAVEPOINT s;
	COMMIT;
});
$node->safe_psql('postgres', q{
	INSERT INTO signups VALUES (1, 'ann@example.com');
	INSERT INTO signups VALUES (2, 'ann@example.com') ON CONFLICT (email) DO NOTHING;
});
$node->safe_psql('other',
	q{SELECT count(*) FROM generate_series(1, 5000) k WHERE tlbf_shared_add('seen', k)});
is($node->safe_psql('postgres', 'SELECT count(*) FROM clicks'), '20001', '20,001 rows stored');
is($node->safe_psql('postgres',
		q{SELECT info->>'unsaved_changes' FROM tlbf_shared_list() WHERE name = 'clicks'}),
	'true', 'no save ran');
my $end_lsn = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');

$node->stop('immediate');
$node->start;

is($node->safe_psql('postgres', q{
		INSERT INTO clicks SELECT k FROM generate_series(1, 20000) k;
		SELECT count(*) FROM clicks}),
	'20001', 'after a crash, none of the 20,000 rows is stored again');
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM generate_series(100001, 101000) k WHERE tlbf_shared_contains('clicks', k)}),
	'0', 'keys of a transaction rolled back are not brought back');
is($node->safe_psql('postgres', q{
		SELECT tlbf_shared_contains('clicks', 200001),
		       (SELECT count(*) FROM generate_series(200002, 201000) k
		        WHERE tlbf_shared_contains('clicks', k))}),
	't|0', 'of a transaction with a savepoint rolled back, only the keys it kept');
is($node->safe_psql('other',
		q{SELECT count(*) FROM generate_series(1, 5000) k WHERE NOT tlbf_shared_contains('seen', k)}),
	'0', 'keys of another database come back in it');
is($node->safe_psql('postgres', q{
		SELECT tlbf_shared_contains('signups', 1), tlbf_shared_contains('signups', 2)}),
	't|f', 'the key of a row stored comes back, not that of a row ON CONFLICT skipped');
is($node->safe_psql('postgres', q{
		INSERT INTO signups VALUES (2, 'bob@example.com');
		SELECT count(*) FROM signups}),
	'2', '... so the next row of that key is stored');

# again, before any save
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM generate_series(1, 20000) k WHERE NOT tlbf_shared_contains('clicks', k)}),
	'0', 'a second crash before any save keeps every key');
is($node->safe_psql('other',
		q{SELECT count(*) FROM generate_series(1, 5000) k WHERE NOT tlbf_shared_contains('seen', k)}),
	'0', '... in both databases');

# Keys added at once by tlbf_shared_rebuild (not waiting for the commit)
# are in the WAL too.
is($node->safe_psql('postgres',
		q{SELECT tlbf_shared_rebuild('clicks', 'SELECT k, now() FROM generate_series(40001, 41000) k')}),
	'1000', 'a rebuild adds 1,000 keys');
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM generate_series(40001, 41000) k WHERE NOT tlbf_shared_contains('clicks', k)}),
	'0', 'a crash keeps the keys a rebuild added');

# A crash right after a checkpoint: the checkpoint did not complete before
# the launcher's image of the filter was in the WAL, between its redo
# point and its record.
$node->safe_psql('postgres', q{INSERT INTO clicks SELECT k FROM generate_series(30001, 30100) k});
$node->safe_psql('postgres', 'CHECKPOINT');
my ($control) = run_command([ 'pg_controldata', $node->data_dir ]);
my ($checkpoint) = $control =~ /^Latest checkpoint location:\s+(\S+)/m;
my ($redo) = $control =~ /^Latest checkpoint's REDO location:\s+(\S+)/m;
$node->stop('immediate');
my ($between) = run_command([
		'pg_waldump', '-p', $node->data_dir . '/pg_wal', '-s', $redo, '-e', $checkpoint,
		'-r', 'custom128' ]);
cmp_ok(scalar(grep { /desc: UNKNOWN \(20\)|IMAGE/ } split /\n/, $between), '>=', 1,
	"an image of the filter lies between the checkpoint's redo point and its record")
	or diag($between);
$node->start;
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM generate_series(30001, 30100) k WHERE NOT tlbf_shared_contains('clicks', k)}),
	'0', 'a crash right after a checkpoint keeps the keys committed before it');

# the records, as pg_waldump shows them (every segment is still there)
my ($stdout, $stderr) = run_command([
		'pg_waldump', '-p', $node->data_dir . '/pg_wal',
		'-s', $start_lsn, '-e', $end_lsn, '-r', 'custom128' ]);
my @records = split /\n/, $stdout;
is(scalar(grep { /desc: UNKNOWN \(10\)|KEYS/ } @records), 203,
	'one KEYS record (of resource manager 128) per committing transaction that stored keys (none for the one whose row was skipped)')
	or diag($stdout);
cmp_ok(scalar(grep { /desc: UNKNOWN \(20\)|IMAGE/ } @records), '>=', 1,
	'an IMAGE record after the checkpoint');
like($records[0], qr/len \(rec\/tot\):\s+\d+\/\s*\d+/, 'pg_waldump shows them')
	or diag($stderr);

$node->stop;
done_testing();
