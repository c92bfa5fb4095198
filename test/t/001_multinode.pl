# Filters built on two shards and merged on a coordinator that reaches them
# through postgres_fdw: the same answers as one filter over the whole table
# (no false negatives), and a false-positive rate within the same bound
# when each shard builds its part at half the error rate.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $events = q{
    SELECT g AS id, (g * 7919) % 40000 AS user_id,
           '2024-01-01 00:00+00'::timestamptz + g * interval '50 ms' AS at
    FROM generate_series(1, 144000) g
};

# Two shards, each with half of the events table (split by user, as a hash
# distribution would), and a coordinator with the whole table for the exact
# answer.
my @shards;
for my $n (0, 1)
{
	my $shard = PostgreSQL::Test::Cluster->new("shard$n");
	$shard->init;
	$shard->start;
	$shard->safe_psql('postgres', qq{
		CREATE EXTENSION tlbf;
		CREATE TABLE events AS SELECT * FROM ($events) e WHERE user_id % 2 = $n;
	});
	push @shards, $shard;
}

my $coordinator = PostgreSQL::Test::Cluster->new('coordinator');
$coordinator->init;
$coordinator->start;
$coordinator->safe_psql('postgres', qq{
	SET TimeZone = 'UTC';
	CREATE EXTENSION tlbf;
	CREATE EXTENSION postgres_fdw;
	CREATE TABLE events AS $events;
});
for my $n (0, 1)
{
	my $port = $shards[$n]->port;
	my $host = $shards[$n]->host;
	$coordinator->safe_psql('postgres', qq{
		CREATE SERVER shard$n FOREIGN DATA WRAPPER postgres_fdw
			OPTIONS (host '$host', port '$port', dbname 'postgres', extensions 'tlbf');
		CREATE USER MAPPING FOR CURRENT_USER SERVER shard$n;
		CREATE FOREIGN TABLE events_shard$n (id int, user_id int, at timestamptz)
			SERVER shard$n OPTIONS (table_name 'events');
	});
}

# Each shard computes its filter; the coordinator merges them.
sub merged_filter
{
	my ($error_rate) = @_;
	return qq{
		SELECT tlbf_union_agg(f) FROM (
			SELECT tlbf_agg(user_id, at, '1 hour', $error_rate) AS f FROM events_shard0
			WHERE at > '2024-01-01 01:00+00'
			UNION ALL
			SELECT tlbf_agg(user_id, at, '1 hour', $error_rate) FROM events_shard1
			WHERE at > '2024-01-01 01:00+00') AS per_shard
	};
}

my $plan = $coordinator->safe_psql('postgres',
	'EXPLAIN (VERBOSE, COSTS OFF) ' . merged_filter(0.01));
like($plan, qr/Remote SQL: SELECT public\.tlbf_agg\(user_id, at, '01:00:00'::interval, 0\.01/,
	'tlbf_agg runs on the shards (pushed down through postgres_fdw)');

$coordinator->safe_psql('postgres', qq{
	CREATE TABLE filters AS
	SELECT 'one filter' AS name,
	       (SELECT tlbf_agg(user_id, at, '1 hour', 0.01) FROM events
	        WHERE at > '2024-01-01 01:00+00') AS f
	UNION ALL SELECT 'shards at 1%', (${\ merged_filter(0.01)})
	UNION ALL SELECT 'shards at 0.5%', (${\ merged_filter(0.005)});
});

# No false negatives: every user seen in the last hour is found.
my $missed = $coordinator->safe_psql('postgres', q{
	SELECT string_agg(name || '=' || missed, ' ' ORDER BY name) FROM (
		SELECT name, count(*) FILTER (WHERE NOT tlbf_contains(f, e.user_id, '2024-01-01 02:00+00')) AS missed
		FROM filters, events e WHERE e.at > '2024-01-01 01:00+00' GROUP BY name) s
});
is($missed, 'one filter=0 shards at 0.5%=0 shards at 1%=0', 'no false negatives anywhere');

# False positives over 400,000 users never seen.
my %fpr = split /[|\n]/, $coordinator->safe_psql('postgres', q{
	SELECT name, round(count(*) FILTER (WHERE tlbf_contains(f, g, '2024-01-01 02:00+00'))::numeric
	                   / count(*), 5)
	FROM filters, generate_series(1000000, 1399999) g GROUP BY name
});
note "false-positive rates: " . join(', ', map { "$_ $fpr{$_}" } sort keys %fpr);
cmp_ok($fpr{'one filter'}, '<=', 0.0125, 'one filter: within 1.25x the target');
cmp_ok($fpr{'shards at 0.5%'}, '<=', 0.0125,
	'shards built at half the rate: the union is within the same bound');
cmp_ok($fpr{'shards at 1%'}, '<=', 0.025,
	'shards built at the full rate: the union is at most the sum of the two');

done_testing();
