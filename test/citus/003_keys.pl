# A key is the same key on every node of a Citus cluster: a filter built on
# the coordinator finds every key when the workers ask it, and one built on
# the workers finds every key when the coordinator asks it, for an enum key
# (whose OIDs differ between the nodes) and a composite key of an integer
# and an enum.  Run by scripts/citus.sh on a PostgreSQL that has Citus.
use strict;
use warnings;

use FindBin;
use lib $FindBin::Bin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TlbfCitus qw(citus_cluster);

my ($coordinator, @workers) = citus_cluster();

# the workers have other enums first, so that the enum's OIDs differ
for my $worker (@workers)
{
	$worker->safe_psql('postgres', q{
		SET citus.enable_ddl_propagation = off;
		CREATE TYPE shifts_oids AS ENUM ('a', 'b', 'c', 'd', 'e', 'f', 'g')});
}
$coordinator->safe_psql('postgres', q{
	SET TimeZone = 'UTC';
	CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy', 'bored');
	CREATE TABLE feelings (user_id bigint, m mood, at timestamptz);
	SELECT create_distributed_table('feelings', 'user_id');
	INSERT INTO feelings
	SELECT g, (ARRAY['sad', 'ok', 'happy']::mood[])[g % 3 + 1],
	       '2024-01-01 00:00+00'::timestamptz + g * interval '100 ms'
	FROM generate_series(1, 20000) g;
	CREATE TABLE feelings_here AS SELECT * FROM feelings;   -- on the coordinator
});
my $oid_of = q{SELECT oid FROM pg_enum WHERE enumtypid = 'mood'::regtype AND enumlabel = 'happy'};
isnt($workers[0]->safe_psql('postgres', $oid_of), $coordinator->safe_psql('postgres', $oid_of),
	"the enum's OIDs differ between the coordinator and a worker");

# Built on the coordinator (from the workers' partial states and from a
# table of its own), asked on the workers: a distributed query's WHERE.
$coordinator->safe_psql('postgres', q{
	CREATE TABLE built_here AS
	SELECT (SELECT tlbf_agg(m, at, '1 hour') FROM feelings_here) AS by_enum,
	       (SELECT tlbf_agg(ROW(user_id, m), at, '1 hour') FROM feelings_here) AS by_row,
	       (SELECT tlbf_agg(ROW(user_id, m), at, '1 hour') FROM feelings) AS by_row_split;
});
my ($by_enum, $by_row, $by_row_split) = split /\|/,
  $coordinator->safe_psql('postgres', 'SELECT by_enum, by_row, by_row_split FROM built_here');
like(
	$coordinator->safe_psql('postgres', qq{
		EXPLAIN (VERBOSE, COSTS OFF)
		SELECT count(*) FROM feelings WHERE tlbf_contains('$by_enum'::tlbf, m, '2024-01-01 00:40+00')}),
	qr/Task Count: \d+/, 'the question runs on the workers');
is( $coordinator->safe_psql('postgres', qq{
		SELECT count(*) FILTER (WHERE tlbf_contains('$by_enum'::tlbf, m, '2024-01-01 00:40+00')) || ' '
		    || count(*) FILTER (WHERE tlbf_contains('$by_row'::tlbf, ROW(user_id, m), '2024-01-01 00:40+00'))
		    || ' ' || count(*) FILTER (WHERE tlbf_contains('$by_row_split'::tlbf, ROW(user_id, m),
		                                                   '2024-01-01 00:40+00'))
		FROM feelings}),
	'20000 20000 20000', 'built on the coordinator, asked on the workers: every enum and row key found');

# Built on the workers (a filter column of a distributed table, grouped by
# the distribution column), asked on the coordinator.
$coordinator->safe_psql('postgres', q{
	CREATE TABLE per_user (user_id bigint, by_enum tlbf, by_row tlbf);
	SELECT create_distributed_table('per_user', 'user_id');
	INSERT INTO per_user
	SELECT user_id, tlbf_agg(m, at, '1 hour'), tlbf_agg(ROW(user_id, m), at, '1 hour')
	FROM feelings GROUP BY user_id;
});
is( $coordinator->safe_psql('postgres', q{
		WITH filters AS MATERIALIZED (SELECT user_id, by_enum, by_row FROM per_user)
		SELECT count(*) FILTER (WHERE tlbf_contains(f.by_enum, h.m, '2024-01-01 00:40+00')) || ' '
		    || count(*) FILTER (WHERE tlbf_contains(f.by_row, ROW(h.user_id, h.m), '2024-01-01 00:40+00'))
		FROM filters f JOIN feelings_here h USING (user_id)}),
	'20000 20000', 'built on the workers, asked on the coordinator: every enum and row key found');

done_testing();
