# At rest, tlbf holds one background worker slot, the launcher's, whatever
# the number of databases with shared filters (issue 37, item 1): savers
# and maintenance passes start for their work and exit.
#
# - Six databases with shared filters, each saved once: then the only tlbf
#   process is the launcher, and a query planned with four parallel
#   workers gets four (max_worker_processes 8: the launcher, the logical
#   replication launcher, four workers).  Before, a "tlbf snapshots"
#   worker stayed in each of the six databases, and the query got none.
# - A clean stop with changes no saver has written (tlbf.snapshot_interval
#   an hour): the launcher writes them down as it leaves (an image per
#   filter, pg_tlbf/images/), and the restart finds every key; so does a
#   crash after that restart, before any save; after a save the image is
#   gone, and a save writes the image of a filter nobody used since.  An
#   image of a filter dropped and created again is not taken; a damaged
#   one is set aside with a WARNING; one whose bytes say another length
#   than its file (with a valid checksum) is read at the file's.
# - Slots short (one free for four databases): every database still gets
#   its maintenance passes and its saves, none starved by the others.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use WorkerLog qw(wait_for_count);

my $node = PostgreSQL::Test::Cluster->new('slots');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
max_worker_processes = 8
max_parallel_workers = 8
tlbf.naptime = 3600
tlbf.snapshot_interval = 1
log_min_messages = debug1
restart_after_crash = on
});
$node->start;

my @databases = map { "d$_" } 1 .. 6;
foreach my $db (@databases)
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, q{
		CREATE EXTENSION tlbf;
		SELECT tlbf_shared_create('f', '1 hour', 0.001, 10000);
		SELECT count(*) FROM generate_series(1, 100) k WHERE tlbf_shared_add('f', k);
	});
}
foreach my $db (@databases)
{
	ok($node->poll_query_until($db,
			q{SELECT NOT (info->>'unsaved_changes')::boolean FROM tlbf_shared_list() WHERE name = 'f'}),
		"$db: its filter is saved");
}
ok($node->poll_query_until('postgres', q{
		SELECT string_agg(backend_type, ', ') = 'tlbf launcher'
		FROM pg_stat_activity WHERE backend_type LIKE 'tlbf%'}),
	'at rest, the launcher is the only tlbf process');

$node->safe_psql('postgres', q{
	CREATE TABLE big AS SELECT g FROM generate_series(1, 100000) g;
	ANALYZE big;
});
my $plan = $node->safe_psql('postgres', q{
	SET max_parallel_workers_per_gather = 4;
	SET parallel_setup_cost = 0;
	SET parallel_tuple_cost = 0;
	SET min_parallel_table_scan_size = 0;
	SET parallel_leader_participation = off;
	EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM big;
});
like($plan, qr/Workers Planned: 4/, 'the query plans four parallel workers');
like($plan, qr/Workers Launched: 4/, '... and gets all four');

# ---- a clean stop writes what no save has ------------------------------------
# no save for an hour after a start (the first is planned an interval away)
$node->safe_psql('postgres', q{ALTER SYSTEM SET tlbf.snapshot_interval = '1h'});
$node->restart;
my $images = $node->data_dir . '/pg_tlbf/images';
my $d1 = $node->safe_psql('postgres', q{SELECT oid FROM pg_database WHERE datname = 'd1'});
my $image = sprintf('%s/%s_%s', $images, $d1, unpack('H*', 'f'));

sub missing
{
	my ($db, $from, $to) = @_;
	return $node->safe_psql($db,
		"SELECT count(*) FROM generate_series($from, $to) k WHERE NOT tlbf_shared_contains('f', k)");
}

$node->safe_psql('d1', q{SELECT count(*) FROM generate_series(101, 2000) k WHERE tlbf_shared_add('f', k)});
$node->safe_psql('d2', q{SELECT count(*) FROM generate_series(101, 2000) k WHERE tlbf_shared_add('f', k)});
is($node->safe_psql('d1', q{SELECT info->>'unsaved_changes' FROM tlbf_shared_list()}), 'true',
	'the keys are not saved before the stop');
$node->stop('fast');
ok(-f $image, 'the launcher wrote an image of the changed filter as it left');
$node->start;
is(missing('d1', 1, 2000), '0', 'a clean restart keeps every key, saved or not');
is($node->safe_psql('d1', q{SELECT info->>'unsaved_changes' FROM tlbf_shared_list()}), 'true',
	'... and the filter loaded from its image is due for a save');

# A crash before any save: the image still holds the keys.
$node->stop('immediate');
$node->start;
is(missing('d1', 1, 2000), '0', 'a crash before the next save keeps them too');

# A save removes the image, and the row holds the keys then; a database
# whose filter nobody used since the restart (d2) gets that save too.
my $d2 = $node->safe_psql('postgres', q{SELECT oid FROM pg_database WHERE datname = 'd2'});
my $image2 = sprintf('%s/%s_%s', $images, $d2, unpack('H*', 'f'));
ok(-f $image2, 'd2 has an image');
$node->safe_psql('postgres', q{ALTER SYSTEM SET tlbf.snapshot_interval = 1; SELECT pg_reload_conf();});
ok($node->poll_query_until('d1',
		q{SELECT NOT (info->>'unsaved_changes')::boolean FROM tlbf_shared_list() WHERE name = 'f'}),
	'the filter is saved');
ok(!-f $image, 'a save removes the image');
ok($node->poll_query_until('d2', q{SELECT count(*) = 0 FROM pg_ls_dir('pg_tlbf/images') f WHERE f LIKE '} . $d2 . q{\_%'}),
	'an image of a filter not used since the restart is written to its row too');
is($node->safe_psql('d2', q{
		SELECT count(*) FROM generate_series(1, 2000) k
		WHERE NOT tlbf_contains((SELECT filter FROM tlbf_shared_filters WHERE name = 'f'), k)}),
	'0', '... which holds every key');
$node->safe_psql('postgres', q{ALTER SYSTEM SET tlbf.snapshot_interval = '1h'});
$node->stop('immediate');
$node->start;
is(missing('d1', 1, 2000), '0', 'after the save, a crash keeps every key');

# An image of a filter dropped and created again is not taken.
$node->safe_psql('d3', q{SELECT count(*) FROM generate_series(101, 2000) k WHERE tlbf_shared_add('f', k)});
$node->stop('fast');
$node->start;
$node->safe_psql('d3', q{SELECT tlbf_shared_drop('f')});
$node->safe_psql('d3', q{SELECT tlbf_shared_create('f', '1 hour', 0.001, 10000)});
$node->stop('fast');
$node->start;
cmp_ok(missing('d3', 1, 2000), '>', 1900, 'an image of a filter dropped since is not taken');

# A damaged image is set aside, with a WARNING, and the row loaded.
$node->safe_psql('d1', q{SELECT count(*) FROM generate_series(2001, 3000) k WHERE tlbf_shared_add('f', k)});
$node->stop('fast');
ok(-f $image, 'an image again');
open(my $fh, '+<', $image) or die "open $image: $!";
binmode $fh;
seek($fh, -1, 2);
print $fh "\xAA";
close $fh;
$node->start;
my ($stdout, $stderr);
$node->psql('d1', q{SELECT tlbf_shared_contains('f', 1)}, stdout => \$stdout, stderr => \$stderr);
is($stdout, 't', 'the filter with a damaged image is loaded from its row');
like($stderr, qr/WARNING:  tlbf: the image of a shared filter in file ".*" is damaged/,
	'... with a WARNING');
ok(-f "$image.damaged" && !-f $image, '... and the image set aside');

# An image whose bytes say another length than the file holds, with a
# valid checksum (as a hostile file could): the file's length counts.
# (Before, the load copied as many bytes as the bytes said: here only
# the filter's header, and its keys were gone.)
sub crc32c
{
	my ($data) = @_;
	my $crc = 0xFFFFFFFF;
	foreach my $byte (unpack('C*', $data))
	{
		$crc ^= $byte;
		$crc = ($crc >> 1) ^ (0x82F63B78 & -($crc & 1)) for 1 .. 8;
	}
	return $crc ^ 0xFFFFFFFF;
}
$node->safe_psql('d1', q{SELECT count(*) FROM generate_series(3001, 4000) k WHERE tlbf_shared_add('f', k)});
$node->stop('fast');
ok(-f $image, 'an image once more');
my $header_bytes = 104;    # sizeof(ImageHeader); its CRC at offset 96
my $bytes = slurp_file($image);
my $filter = substr($bytes, $header_bytes);
substr($filter, 0, 4) = pack('V', 64 << 2);    # a varlena length word of 64 bytes
my $header = substr($bytes, 0, $header_bytes);
substr($header, 96, 4) = pack('V', 0);
substr($header, 96, 4) = pack('V', crc32c($header . $filter));
open(my $out, '>', $image) or die "open $image: $!";
binmode $out;
print $out $header . $filter;
close $out;
$node->start;
is(missing('d1', 1, 2000) . ',' . missing('d1', 3001, 4000), '0,0',
	'an image whose bytes say another length is read at the length of the file');
$node->stop;

# ---- one slot for four databases -------------------------------------------
my $short = PostgreSQL::Test::Cluster->new('short');
$short->init;
$short->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
max_worker_processes = 2
max_logical_replication_workers = 0
tlbf.naptime = 1
tlbf.snapshot_interval = 1
log_min_messages = debug1
});
$short->start;
my %oid;
foreach my $db (map { "s$_" } 1 .. 4)
{
	$short->safe_psql('postgres', "CREATE DATABASE $db");
	$short->safe_psql($db, q{
		CREATE EXTENSION tlbf;
		SELECT tlbf_shared_create('f', '1 hour');
		CREATE TABLE t (id int, f tlbf);
		INSERT INTO t VALUES (1, tlbf_create('1 minute'));
		SELECT tlbf_maintain('t', 'f');
	});
	$oid{$db} = $short->safe_psql('postgres', "SELECT oid FROM pg_database WHERE datname = '$db'");
}
# s1's filter changes three times, each saved before the next
my $busy = $short->background_psql('s1');
my $offset = -s $short->logfile;
foreach my $round (1 .. 3)
{
	$busy->query_safe(qq{SELECT tlbf_shared_add('f', $round)});
	ok($short->poll_query_until('s1',
			q{SELECT NOT (info->>'unsaved_changes')::boolean FROM tlbf_shared_list() WHERE name = 'f'}),
		"s1 saves change $round");
	foreach my $db (sort keys %oid)
	{
		ok(wait_for_count($short, qr/tlbf launcher: started a maintenance worker in database $oid{$db}\b/,
				$round, $offset),
			"$db gets maintenance pass $round");
	}
}
ok(wait_for_count($short, qr/tlbf launcher: started a snapshot worker in database $oid{s1}\b/, 3, $offset),
	's1 gets its saves too');
$busy->quit;
$short->stop;

done_testing();
