# tlbf_agg_format3 (format 3, a declared capacity; issue 36) on a Citus
# cluster (a coordinator and two workers): Citus splits it (the partial
# aggregate runs on the workers), each shard sends its filter, no larger
# than the result whatever the shard's row count, and the coordinator
# unites them by OR into the bytes the aggregate gives over a local table
# of the same rows (no GROUP BY, GROUP BY another column, GROUP BY the
# distribution column), rows stored in no particular order;
# tlbf_union_agg of stored filters unites them into the same bytes; and
# the form without a capacity gives the local table's bytes too, its typed
# forms split (each shard sends its rows' hashes).  Run
# by scripts/citus.sh on a PostgreSQL that has Citus.
use strict;
use warnings;

use FindBin;
use lib $FindBin::Bin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TlbfCitus qw(citus_cluster visits_tables plan_of yes);

my ($coordinator, @workers) = citus_cluster();

# 400,000 visits of 20,000 users to 12 sites over 80 minutes (the span is
# an hour), inserted in random order; the same rows in a local table.
visits_tables($coordinator, 0.25);

# 1. The partial step runs on the workers.
my $partial = qr/worker_(binary_)?partial_agg\('public\.tlbf_agg_format3\(bigint,timestamp with time zone,interval,double precision,bigint\)'/;
like(plan_of($coordinator, q{SELECT tlbf_agg_format3(user_id, at, '1 hour', 0.01, 300000) FROM visits}),
	$partial, 'tlbf_agg_format3: the workers run the partial aggregate');
like(plan_of($coordinator, q{SELECT site, tlbf_agg_format3(user_id, at, '1 hour', 0.01, 30000) FROM visits GROUP BY site}),
	$partial, 'grouped by another column: partial aggregates on the workers');

# 2. What crosses: each shard's partial state, as Citus sends it, against
# the result's bytes: the same size (the declared capacity sizes both),
# however many rows the shard holds.
my $shards = $coordinator->safe_psql('postgres', q{
	SELECT shard_name, nodeport FROM citus_shards
	WHERE table_name = 'visits'::regclass ORDER BY 1});
my $result_bytes = $coordinator->safe_psql('postgres', q{
	SELECT octet_length(tlbf_agg_format3(user_id, at, '1 hour', 0.01, 300000)::bytea) FROM visits});
my ($nshards, $largest, $rows) = (0, 0, 0);
for my $line (split /\n/, $shards)
{
	my ($shard, $port) = split /\|/, $line;
	my ($worker) = grep { $_->port == $port } @workers;
	my ($state, $count) = split /\|/, $worker->safe_psql('postgres', qq{
		SELECT octet_length(pg_catalog.worker_partial_agg(
		           'public.tlbf_agg_format3(bigint,timestamptz,interval,float8,bigint)'::regprocedure,
		           ROW(user_id, at, '1 hour'::interval, 0.01::float8, 300000::bigint))::text::public.tlbf::bytea),
		       count(*)
		FROM $shard});
	$nshards++;
	$largest = $state if $state > $largest;
	$rows += $count;
}
note sprintf('%d shards of %d rows in all: the largest partial state %d bytes, the result %d bytes',
	$nshards, $rows, $largest, $result_bytes);
cmp_ok($nshards, '>=', 2, 'the table has shards');
is($rows, 400000, 'the shards hold every row');
cmp_ok($largest, '<=', $result_bytes, "each shard sends at most the result's bytes");

# 3. The same bytes as over the local table, for each grouping.
ok( yes($coordinator, q{
	SELECT (SELECT tlbf_agg_format3(user_id, at, '1 hour', 0.01, 300000)::bytea FROM visits)
	     = (SELECT tlbf_agg_format3(user_id, at, '1 hour', 0.01, 300000)::bytea FROM visits_local)}),
	'no GROUP BY: the bytes of the local aggregate');
is( $coordinator->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE d.f::bytea = l.f::bytea) || ' of ' || count(*)
	FROM (SELECT site, tlbf_agg_format3(user_id, at, '1 hour', 0.01, 30000) f FROM visits GROUP BY site) d
	FULL JOIN (SELECT site, tlbf_agg_format3(user_id, at, '1 hour', 0.01, 30000) f
	           FROM visits_local GROUP BY site) l USING (site)}),
	'12 of 12', 'GROUP BY another column: every group the same bytes');
is( $coordinator->safe_psql('postgres', q{
	WITH d AS (SELECT user_id, tlbf_agg_format3(user_id, at, '1 hour', 0.01, 20) f FROM visits GROUP BY user_id)
	SELECT count(*) FILTER (WHERE d.f::bytea = l.f::bytea) = count(*) AND count(*) > 19000
	FROM d FULL JOIN (SELECT user_id, tlbf_agg_format3(user_id, at, '1 hour', 0.01, 20) f
	                  FROM visits_local GROUP BY user_id) l USING (user_id)}),
	't', 'GROUP BY the distribution column: every group the same bytes');
ok( yes($coordinator, q{
	SELECT (SELECT tlbf_agg_format3(user_id::text, at, '1 hour', 0.001, 300000)::bytea FROM visits)
	     = (SELECT tlbf_agg_format3(user_id::text, at, '1 hour', 0.001, 300000)::bytea FROM visits_local)}),
	'text items and another error rate: the same bytes');
ok( yes($coordinator, q{
	SELECT (SELECT tlbf_agg_format3(user_id::numeric, at, '1 hour', 0.01, 300000)::bytea FROM visits)
	     = (SELECT tlbf_agg_format3(user_id::numeric, at, '1 hour', 0.01, 300000)::bytea FROM visits_local)}),
	'numeric items (no typed aggregate: Citus gathers the rows): the same bytes');

# 4. Every key of the last hour is found in the distributed result.
ok( yes($coordinator, q{
	SELECT bool_and(tlbf_contains(f, user_id, '2024-01-01 01:20+00'))
	FROM (SELECT tlbf_agg_format3(user_id, at, '1 hour', 0.01, 300000) f FROM visits) d,
	     visits_local WHERE at >= '2024-01-01 00:20+00'}),
	'every key of the last hour is found');

# 5. tlbf_union_agg over filters of format 3 stored in a distributed table
# (one per site, one declared capacity): split the same way (each shard
# sends the union of its filters), and exact: the bytes of one builder
# over every row.
$coordinator->safe_psql('postgres', q{
	CREATE TABLE site_filters3 AS
	SELECT site, tlbf_agg_format3(user_id, at, '1 hour', 0.01, 300000) AS f FROM visits_local GROUP BY site;
	SELECT create_distributed_table('site_filters3', 'site');
});
like(plan_of($coordinator, q{SELECT tlbf_union_agg(f) FROM site_filters3}),
	qr/worker_(binary_)?partial_agg\('public\.tlbf_union_agg\(public\.tlbf\)'/,
	'tlbf_union_agg of format 3: the workers run the partial aggregate');
ok( yes($coordinator, q{
	SELECT (SELECT tlbf_union_agg(f)::bytea FROM site_filters3)
	     = (SELECT tlbf_agg_format3(user_id, at, '1 hour', 0.01, 300000)::bytea FROM visits_local)}),
	'tlbf_union_agg of format 3: the bytes of one builder over every row');

# 6. Without a capacity (the hashes kept until the end): for a bigint
# item Citus splits it (the typed form's state is a tlbf_agg_state of
# hashes), each shard sending its rows' hashes, 16 bytes a row and a few
# more per generation; for a numeric item ("any") it gathers the rows.
# Either way the coordinator's filter has the bytes of the local table's,
# with and without GROUP BY.
my $hashes = qr/worker_(binary_)?partial_agg\('public\.tlbf_agg\(bigint,timestamp with time zone,interval\)'/;
like(plan_of($coordinator, q{SELECT tlbf_agg(user_id, at, '1 hour') FROM visits}),
	$hashes, 'without a capacity: the workers run the partial aggregate');
my ($largest_hashes, $its_rows) = (0, 0);
for my $line (split /\n/, $shards)
{
	my ($shard, $port) = split /\|/, $line;
	my ($worker) = grep { $_->port == $port } @workers;
	my ($state, $count) = split /\|/, $worker->safe_psql('postgres', qq{
		SELECT octet_length(decode(pg_catalog.worker_partial_agg(
		           'public.tlbf_agg(bigint,timestamptz,interval)'::regprocedure,
		           ROW(user_id, at, '1 hour'::interval))::text, 'base64')),
		       count(*)
		FROM $shard});
	($largest_hashes, $its_rows) = ($state, $count) if $state > $largest_hashes;
}
note sprintf('without a capacity: the largest partial state %d bytes, for %d rows',
	$largest_hashes, $its_rows);
cmp_ok($largest_hashes, '<=', 16 * $its_rows + 1024,
	'without a capacity: a shard sends 16 bytes a row, and a few more');
cmp_ok($largest_hashes, '>=', 16 * $its_rows, 'without a capacity: every row\'s hash crosses');
ok( yes($coordinator, q{
	SELECT (SELECT tlbf_agg(user_id, at, '1 hour')::bytea FROM visits)
	     = (SELECT tlbf_agg(user_id, at, '1 hour')::bytea FROM visits_local)}),
	'without a capacity: the same bytes');
is( $coordinator->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE d.f::bytea IS DISTINCT FROM l.f::bytea)
	FROM (SELECT site, tlbf_agg(user_id, at, '1 hour', 0.02) f FROM visits GROUP BY site) d
	FULL JOIN (SELECT site, tlbf_agg(user_id, at, '1 hour', 0.02) f
	           FROM visits_local GROUP BY site) l USING (site)}),
	'0', 'without a capacity, GROUP BY site: the same bytes for every group');
is( $coordinator->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE d.f::bytea IS DISTINCT FROM l.f::bytea)
	FROM (SELECT user_id % 7 AS g, tlbf_agg(user_id::text, at, '1 hour') f FROM visits GROUP BY 1) d
	FULL JOIN (SELECT user_id % 7 AS g, tlbf_agg(user_id::text, at, '1 hour') f
	           FROM visits_local GROUP BY 1) l USING (g)}),
	'0', 'without a capacity, text items, GROUP BY an expression: the same bytes');
ok( yes($coordinator, q{
	SELECT (SELECT tlbf_agg(user_id::numeric, at, '1 hour')::bytea FROM visits)
	     = (SELECT tlbf_agg(user_id::numeric, at, '1 hour')::bytea FROM visits_local)}),
	'without a capacity, numeric items (Citus gathers the rows): the same bytes');

done_testing();
