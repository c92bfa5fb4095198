# tlbf_agg and tlbf_union_agg on a Citus cluster (a coordinator and two
# workers): Citus splits them (EXPLAIN shows the partial step on the
# workers), the workers send their rows' hashes (16 bytes a row, whatever
# their order) instead of the rows, and the
# results are the bytes the same aggregate gives over a local table of the
# same rows (no GROUP BY, GROUP BY the distribution column, GROUP BY another
# column), with rows stored in no particular order.  Run by scripts/citus.sh
# on a PostgreSQL that has Citus.
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
visits_tables($coordinator, 0.5);

# 1. The partial step runs on the workers.
my $partial = qr/worker_(binary_)?partial_agg\('public\.tlbf_agg\(bigint,timestamp with time zone,interval\)'/;
like(plan_of($coordinator, q{SELECT tlbf_agg(user_id, at, '1 hour') FROM visits}),
	$partial, 'tlbf_agg: the workers run the partial aggregate');
like(plan_of($coordinator, q{SELECT site, tlbf_agg(user_id, at, '1 hour') FROM visits GROUP BY site}),
	$partial, 'tlbf_agg grouped by another column: partial aggregates on the workers');
like(plan_of($coordinator, q{SELECT user_id, tlbf_agg(user_id, at, '1 hour') FROM visits GROUP BY user_id}),
	qr/Task.*\n.*Query: SELECT user_id, public\.tlbf_agg\(user_id, at/,
	'grouped by the distribution column: the whole aggregate runs on the workers');

# 2. What crosses: each shard's partial states (one per group) against its
# rows as Citus would gather them (their text, one tab and one newline a
# row), for the table above (rows in random order) and for one with the
# same rows stored in time order, without GROUP BY and grouped by site.
$coordinator->safe_psql('postgres', q{
	CREATE TABLE visits_in_order (LIKE visits_local);
	SELECT create_distributed_table('visits_in_order', 'user_id');
	INSERT INTO visits_in_order SELECT * FROM visits_local ORDER BY at;
});

sub bytes_sent
{
	my ($table, $group) = @_;
	my $shards = $coordinator->safe_psql('postgres', qq{
		SELECT shard_name, nodeport FROM citus_shards
		WHERE table_name = '$table'::regclass ORDER BY 1});
	my ($states, $rows) = (0, 0);
	for my $line (split /\n/, $shards)
	{
		my ($shard, $port) = split /\|/, $line;
		my ($worker) = grep { $_->port == $port } @workers;
		my ($state, $row) = split /\|/, $worker->safe_psql('postgres', qq{
			SELECT sum(state), sum(rows) FROM (
				SELECT octet_length(tlbf_agg_state_send(pg_catalog.worker_partial_agg(
				           'public.tlbf_agg(bigint,timestamptz,interval)'::regprocedure,
				           ROW(user_id, at, '1 hour'::interval))::text::public.tlbf_agg_state)) AS state,
				       sum(octet_length(user_id::text) + octet_length(at::text) + 2) AS rows
				FROM $shard GROUP BY $group) per_group});
		$states += $state;
		$rows += $row;
	}
	note sprintf('%s, GROUP BY %s: partial states %d bytes for 400000 rows (%.1f a row); the rows as text %d bytes (%.1fx)',
		$table, $group, $states, $states / 400000, $rows, $rows / $states);
	return ($states, $rows);
}

for my $group ('()', 'site')
{
	my ($states, $rows) = bytes_sent('visits', $group);
	cmp_ok($states, '<', $rows,
		"rows in random order, GROUP BY $group: the partial states take less than the rows");
	cmp_ok($states, '<=', 16.5 * 400000,
		"GROUP BY $group: 16 bytes a row, and a few hundred a state");
	my ($ordered) = bytes_sent('visits_in_order', $group);
	is($ordered, $states, "rows in time order, GROUP BY $group: the same bytes (the hashes of the same rows)");
}

# 3. The same bytes as over the local table, for each grouping.
ok( yes($coordinator, q{
	SELECT (SELECT tlbf_agg(user_id, at, '1 hour')::bytea FROM visits)
	     = (SELECT tlbf_agg(user_id, at, '1 hour' ORDER BY at)::bytea FROM visits_local)}),
	'no GROUP BY: the bytes of the local ordered aggregate');
is( $coordinator->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE d.f::bytea = l.f::bytea) || ' of ' || count(*)
	FROM (SELECT site, tlbf_agg(user_id, at, '1 hour') f FROM visits GROUP BY site) d
	FULL JOIN (SELECT site, tlbf_agg(user_id, at, '1 hour' ORDER BY at) f
	           FROM visits_local GROUP BY site) l USING (site)}),
	'12 of 12', 'GROUP BY another column: every group the same bytes');
is( $coordinator->safe_psql('postgres', q{
	WITH d AS (SELECT user_id, tlbf_agg(user_id, at, '1 hour') f FROM visits GROUP BY user_id)
	SELECT count(*) FILTER (WHERE d.f::bytea = l.f::bytea) = count(*) AND count(*) > 19000
	FROM d FULL JOIN (SELECT user_id, tlbf_agg(user_id, at, '1 hour' ORDER BY at) f
	                  FROM visits_local GROUP BY user_id) l USING (user_id)}),
	't', 'GROUP BY the distribution column: every group the same bytes');
ok( yes($coordinator, q{
	SELECT (SELECT tlbf_agg(user_id::text, at, '1 hour', 0.001)::bytea FROM visits)
	     = (SELECT tlbf_agg(user_id::text, at, '1 hour', 0.001 ORDER BY at)::bytea FROM visits_local)}),
	'text items and an error rate: the same bytes');

# An item type without a typed aggregate, and ORDER BY in the call: Citus
# gathers the rows; still the same filter.
ok( yes($coordinator, q{
	SELECT (SELECT tlbf_agg(user_id::numeric, at, '1 hour')::bytea FROM visits)
	     = (SELECT tlbf_agg(user_id::numeric, at, '1 hour' ORDER BY at)::bytea FROM visits_local)}),
	'numeric items (gathered rows): the same bytes');

# 4. tlbf_union_agg over a distributed table of filters: split the same
# way; the union holds what the local one does (filters sized apart unite
# band by band in the order they come, so only answers and a bound on the
# size compare; with a declared capacity the bytes do: 004_format3.pl).
$coordinator->safe_psql('postgres', q{
	CREATE TABLE site_filters AS
	SELECT site, tlbf_agg(user_id, at, '1 hour' ORDER BY at) AS f FROM visits_local GROUP BY site;
	CREATE TABLE site_filters_local AS SELECT * FROM site_filters;
	SELECT create_distributed_table('site_filters', 'site');
});
like(plan_of($coordinator, q{SELECT tlbf_union_agg(f) FROM site_filters}),
	qr/worker_(binary_)?partial_agg\('public\.tlbf_union_agg\(public\.tlbf\)'/,
	'tlbf_union_agg: the workers run the partial aggregate');
ok( yes($coordinator, q{
	WITH d AS (SELECT tlbf_union_agg(f) AS u FROM site_filters),
	     l AS (SELECT tlbf_union_agg(f) AS u FROM site_filters_local)
	SELECT octet_length(d.u::bytea) <= (SELECT sum(octet_length(f::bytea)) FROM site_filters_local)
	   AND (SELECT bool_and(tlbf_contains(d.u, user_id, '2024-01-01 01:20+00'))
	        FROM visits_local WHERE at > '2024-01-01 00:20:01+00')
	FROM d, l}),
	'tlbf_union_agg: at most its inputs\' size, and every key of the last hour');

done_testing();
