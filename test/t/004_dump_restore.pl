# pg_dump and pg_restore of a database with tlbf columns (formats 2 and 3),
# registrations for the maintenance worker and snapshots of shared filters,
# into a new cluster: the same bytes and answers afterwards (with
# tlbf.maintenance_to_format3 off); then the target's worker moves the
# restored values of format 2 to format 3, answering the same, and its
# launcher the restored shared filter of format 2 (the source keeps format
# 2, as a server before 1.5 did: tlbf.shared_format = 2 there).
# (pg_upgrade: 034_pg_upgrade.)
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my %conf = (shared_preload_libraries => "'tlbf'", 'tlbf.naptime' => 1,
	'tlbf.snapshot_interval' => 1, 'tlbf.maintenance_to_format3' => 'off');
my @nodes;
for my $name ('source', 'target')
{
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', join("\n", map { "$_ = $conf{$_}" } sort keys %conf));
	$node->append_conf('postgresql.conf', 'tlbf.shared_format = 2') if $name eq 'source';
	$node->start;
	push @nodes, $node;
}
my ($source, $target) = @nodes;

$source->safe_psql('postgres', q{
	CREATE EXTENSION tlbf;
	CREATE TABLE visits AS
	SELECT g % 50 AS site, g AS user_id, now() - interval '30 minutes' + g * interval '10 ms' AS at
	FROM generate_series(1, 50000) g;
	-- format 2, as a value written before 1.5: tlbf_add row by row
	CREATE FUNCTION add_row2(f tlbf, item int, at timestamptz, span interval) RETURNS tlbf
	    LANGUAGE sql AS $$ SELECT tlbf_add(coalesce(f, tlbf_create_format2(span)), item, at) $$;
	CREATE AGGREGATE agg2(int, timestamptz, interval) (SFUNC = add_row2, STYPE = tlbf);
	CREATE TABLE per_site AS
	SELECT site, agg2(user_id, at, '1 hour' ORDER BY at) AS users,
	       tlbf_agg_format3(user_id, at, '1 hour', 0.01, 1000) AS users3
	FROM visits GROUP BY site;
	SELECT tlbf_maintain('per_site', 'users');
	SELECT tlbf_shared_create('logins', '1 hour');
	SELECT count(*) FROM generate_series(1, 5000) k WHERE tlbf_shared_add('logins', k);
});
ok($source->poll_query_until('postgres',
		"SELECT NOT (info->>'unsaved_changes')::boolean FROM tlbf_shared_list()"),
	'the shared filter is saved');

# answers to compare: every user on its site, absent users, the shared filter
my $answers = q{
	SELECT (SELECT md5(string_agg(users::bytea::text || users3::bytea::text, ',' ORDER BY site))
	        FROM per_site) || ' ' ||
	       (SELECT count(*) FROM visits v JOIN per_site p USING (site)
	        WHERE tlbf_contains(p.users, v.user_id) AND tlbf_contains(p.users3, v.user_id)) || ' ' ||
	       (SELECT count(*) FROM per_site p, generate_series(1000001, 1010000) g
	        WHERE tlbf_contains(p.users, g)) || ' ' ||
	       (SELECT count(*) FROM generate_series(1, 20000) k WHERE tlbf_shared_contains('logins', k)) || ' ' ||
	       (SELECT string_agg(tbl::text || '.' || col, ',') FROM tlbf_maintained)
};
my $before = $source->safe_psql('postgres', $answers);
like($before, qr/^[0-9a-f]{32} 50000 \d+ \d+ per_site\.users$/, "answers before: $before");

my $dump = $source->basedir . '/dump.custom';
$source->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $source->connstr('postgres') ],
	'pg_dump');
# pg_dump of PostgreSQL 16beta2 also dumps the row security policies of
# the extension's own tables, which the restored extension has already
# created (fixed in later releases): there each restore ends with that
# error, after the data, and is a known failure.
my $policies_dumped = $source->pg_version =~ /^16beta2$/
  ? 'pg_dump of PostgreSQL 16beta2 dumps the policies of extension tables' : undef;

$target->safe_psql('postgres', 'CREATE DATABASE restored');
{
	local $main::TODO = $policies_dumped;
	$target->command_ok([ 'pg_restore', '--exit-on-error', '-d', $target->connstr('restored'), $dump ],
		'pg_restore into a new cluster');
}

is($target->safe_psql('restored', $answers), $before,
	'the same bytes and answers: tlbf columns of both formats, registrations and shared filters');
is($target->safe_psql('restored', q{SELECT count(*) FROM per_site}), '50', 'every row is there');

# the restored shared filter was saved as format 2; the target's launcher
# moves it to format 3 carrying the old value, with the same answers
ok($target->poll_query_until('restored', q{
	SELECT info->>'version' = '3' AND info->'carries'->>'version' = '2'
	FROM tlbf_shared_list() WHERE name = 'logins'}),
	'the target moves the restored shared filter of format 2 to format 3');
is($target->safe_psql('restored', $answers), $before, '... which answers as before');

# the same through a plain SQL dump (text I/O of every value)
my $plain = $source->basedir . '/dump.sql';
$source->command_ok([ 'pg_dump', '-f', $plain, '-d', $source->connstr('postgres') ], 'plain pg_dump');
$target->safe_psql('postgres', 'CREATE DATABASE restored_plain');
{
	local $main::TODO = $policies_dumped;
	$target->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', $plain,
			'-d', $target->connstr('restored_plain') ], 'restore with psql');
}
is($target->safe_psql('restored_plain', $answers), $before, 'the same answers from a plain dump');

# the target's worker, with tlbf.maintenance_to_format3 on in a database,
# moves its registered column's values of format 2 to format 3 (each
# carrying its old value), and they answer as before
my $keys = q{
	SELECT (SELECT count(*) FROM visits v JOIN per_site p USING (site)
	        WHERE tlbf_contains(p.users, v.user_id)) || ' ' ||
	       (SELECT count(*) FROM per_site p, generate_series(1000001, 1010000) g
	        WHERE tlbf_contains(p.users, g))
};
my $keys_before = $target->safe_psql('restored', $keys);
is($target->safe_psql('restored', 'SELECT count(*) FROM per_site WHERE tlbf_format(users) = 2'), '50',
	'restored values of format 2 stay so while the setting is off');
# (set for that database alone: the worker takes a database's settings)
$target->safe_psql('postgres', q{ALTER DATABASE restored SET tlbf.maintenance_to_format3 = on});
ok($target->poll_query_until('restored',
		'SELECT count(*) = 0 FROM per_site WHERE tlbf_format(users) < 3'),
	'the worker moves them to format 3');
is($target->safe_psql('restored', $keys), $keys_before, 'which answer as before');
# the other database keeps the server's setting (off): after a pass that
# began later, its values are still of format 2
my $moved_at = $target->safe_psql('restored_plain', 'SELECT now()');
ok($target->poll_query_until('restored_plain',
		"SELECT last_pass > '$moved_at' FROM tlbf_maintenance_status WHERE tbl = 'per_site'::regclass"),
	'a later pass in the database without the setting');
is($target->safe_psql('restored_plain', 'SELECT count(*) FROM per_site WHERE tlbf_format(users) = 2'),
	'50', 'which leaves its values of format 2');

$source->stop;
$target->stop;
done_testing();
