# Concurrency under load: 8 clients for 60 seconds mixing tlbf_add in
# UPDATE, tlbf_contains and shared-filter adds, with the worker running.
# No errors, no server restart, and afterwards no false negatives for the
# keys the clients logged.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $seconds = $ENV{TLBF_LOAD_SECONDS} || 60;
my $node = PostgreSQL::Test::Cluster->new('load');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.naptime = 1
tlbf.snapshot_interval = 2
max_connections = 40
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION tlbf;
	CREATE TABLE filters (id int PRIMARY KEY, f tlbf NOT NULL);
	INSERT INTO filters SELECT id, tlbf_create('1 hour', 0.01, 2000) FROM generate_series(1, 100) id;
	-- some filters hold expired slices, for the worker to retire meanwhile
	UPDATE filters SET f = tlbf_add(f, id, now() - interval '2 hours') WHERE id % 10 = 0;
	SELECT tlbf_maintain('filters', 'f');
	SELECT tlbf_shared_create('load', '1 hour', 0.01, 1000000);
	CREATE TABLE added (id int, key bigint, at timestamptz);
	CREATE TABLE shared_added (key bigint, new boolean);
	CREATE TABLE missed (id int, key bigint);
});
my $started = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');

my $script = q{
\set id random(1, 100)
\set key random(1, 1000000000)
BEGIN;
UPDATE filters SET f = tlbf_add(f, :key, now()) WHERE id = :id;
INSERT INTO added VALUES (:id, :key, now());
COMMIT;
INSERT INTO missed SELECT :id, :key FROM filters WHERE id = :id AND NOT tlbf_contains(f, :key::bigint);
INSERT INTO shared_added VALUES (:key, tlbf_shared_add('load', :key::bigint));
};
$node->pgbench("--no-vacuum --client=8 --jobs=2 --time=$seconds --max-tries=10",
	0, [qr{number of failed transactions: 0 }], [qr{^$}],
	"8 clients for $seconds s: no errors", { 'mix.sql' => $script });

is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $started, 'no server restart');
is($node->safe_psql('postgres', 'SELECT count(*) FROM missed'), '0',
	'each key was found right after its transaction');
is($node->safe_psql('postgres', q{
		SELECT count(*) FROM added a JOIN filters f USING (id) WHERE NOT tlbf_contains(f.f, a.key, a.at + interval '59 minutes')}),
	'0', 'afterwards, no false negatives for the keys the clients logged');
is($node->safe_psql('postgres', q{
		SELECT count(*) FROM shared_added WHERE NOT tlbf_shared_contains('load', key)}),
	'0', 'nor in the shared filter');
is($node->safe_psql('postgres', q{
		SELECT count(*) FILTER (WHERE tlbf_retirable(f)) FROM filters}),
	'0', 'the worker retired the expired slices meanwhile');
note $node->safe_psql('postgres', 'SELECT count(*) || \' updates logged\' FROM added');

$node->stop;
done_testing();
