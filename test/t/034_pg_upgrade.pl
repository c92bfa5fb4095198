# pg_upgrade of a cluster that uses tlbf, to a new cluster of the same
# PostgreSQL (the binaries this tree was built for; pg_upgrade carries
# tables by their files, not by dump and restore): stored values of
# format 2 and format 3 keep every byte and answer as before (with
# tlbf.maintenance_to_format3 off), then the new cluster's worker moves
# the registered column's values of format 2 to format 3, every key still
# found and every answer the same (issue 36's move within one span); the
# maintenance worker's registrations and the shared filters (their saved
# copies) come along and answer the same, and the new cluster's workers
# take them up; a shared filter of format 2 (as one made before 1.5) moves
# to format 3 once the server's tlbf.shared_format is 3, every key found.
# The servers pg_upgrade starts for itself (binary upgrade mode) have tlbf
# preloaded too: its workers must not write while the catalogs are being
# moved.
use strict;
use warnings;

use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $conf = qq{
shared_preload_libraries = 'tlbf'
tlbf.naptime = 1
tlbf.snapshot_interval = 1
tlbf.maintenance_to_format3 = off
tlbf.shared_format = 2
};
my $old = PostgreSQL::Test::Cluster->new('old');
$old->init;
$old->append_conf('postgresql.conf', $conf);
$old->start;

$old->safe_psql('postgres', q{
	CREATE EXTENSION tlbf;
	CREATE TABLE visits AS
	SELECT g % 20 AS site, g AS user_id, now() - interval '30 minutes' + g * interval '30 ms' AS at
	FROM generate_series(1, 40000) g;
	-- format 2, as a value written before 1.5: tlbf_add row by row
	CREATE FUNCTION add_row2(f tlbf, item int, at timestamptz, span interval) RETURNS tlbf
	    LANGUAGE sql AS $$ SELECT tlbf_add(coalesce(f, tlbf_create_format2(span)), item, at) $$;
	CREATE AGGREGATE agg2(int, timestamptz, interval) (SFUNC = add_row2, STYPE = tlbf);
	CREATE TABLE per_site AS
	SELECT site, agg2(user_id, at, '1 hour' ORDER BY at) AS users,
	       tlbf_agg_format3(user_id, at, '1 hour', 0.01, 4000) AS users3
	FROM visits GROUP BY site;
	SELECT tlbf_maintain('per_site', 'users');
	SELECT tlbf_shared_create('logins', '1 hour');
	SELECT count(*) FROM generate_series(1, 5000) k WHERE tlbf_shared_add('logins', k);
});
ok($old->poll_query_until('postgres',
		"SELECT NOT (info->>'unsaved_changes')::boolean FROM tlbf_shared_list()"),
	'the shared filter is saved');

# what must come through: the values' bytes, every key found, the
# registrations, the shared filter's keys
my $answers = q{
	SELECT (SELECT md5(string_agg(users::bytea::text || users3::bytea::text, ',' ORDER BY site))
	        FROM per_site) || ' ' ||
	       (SELECT count(*) FROM visits v JOIN per_site p USING (site)
	        WHERE tlbf_contains(p.users, v.user_id) AND tlbf_contains(p.users3, v.user_id)) || ' ' ||
	       (SELECT count(*) FROM generate_series(1, 20000) k WHERE tlbf_shared_contains('logins', k)) || ' ' ||
	       (SELECT string_agg(tbl::text || '.' || col, ',') FROM tlbf_maintained)
};
my $before = $old->safe_psql('postgres', $answers);
like($before, qr/^[0-9a-f]{32} 40000 \d+ per_site\.users$/, "answers before: $before");
$old->stop;

my $new = PostgreSQL::Test::Cluster->new('new');
$new->init;
$new->append_conf('postgresql.conf', $conf);

# pg_upgrade writes its logs in the new cluster and its working files in
# the directory it runs in
my $work = $new->basedir . '/upgrade';
make_path($work);
chdir $work or die "cannot enter $work: $!";
command_ok(
	[
		'pg_upgrade', '--no-sync', '--retain',
		'-d', $old->data_dir, '-D', $new->data_dir,
		'-b', $old->config_data('--bindir'), '-B', $new->config_data('--bindir'),
		'-s', $new->host, '-p', $old->port, '-P', $new->port,
	],
	'pg_upgrade');

# the servers pg_upgrade ran: no tlbf worker started in them
my @logs = glob($new->data_dir . '/pg_upgrade_output.d/*/log/pg_upgrade_server.log');
ok(@logs >= 1, 'pg_upgrade kept its servers\' logs');
my $server_logs = join('', map { slurp_file($_) } @logs);
unlike($server_logs, qr/background worker "tlbf/,
	'no tlbf worker ran in the servers pg_upgrade started')
  or diag($server_logs);

$new->start;
is($new->safe_psql('postgres', $answers), $before,
	'the same bytes and answers: stored values of both formats, registrations, the shared filter');

# the new cluster's workers take them up: a new key of the shared filter
# is saved, a registered row is retired
$new->safe_psql('postgres', q{
	SELECT tlbf_shared_add('logins', 123456789);
	INSERT INTO per_site VALUES (99, tlbf_add(tlbf_create('1 minute'), 1, now() - interval '1 hour'), NULL);
});
ok($new->poll_query_until('postgres',
		"SELECT NOT (info->>'unsaved_changes')::boolean FROM tlbf_shared_list()"),
	'the new cluster saves the shared filter');
ok($new->poll_query_until('postgres',
		'SELECT count(*) = 0 FROM per_site WHERE tlbf_retirable(users)'),
	'the new cluster maintains the registered table');

# with tlbf.maintenance_to_format3 on, its worker moves the registered
# column's values of format 2 to format 3, each carrying the old one:
# every key found, the same answers for absent keys
my $keys = q{
	SELECT (SELECT count(*) FROM visits v JOIN per_site p USING (site)
	        WHERE tlbf_contains(p.users, v.user_id)) || ' ' ||
	       (SELECT count(*) FROM per_site p, generate_series(1000001, 1010000) g
	        WHERE tlbf_contains(p.users, g))
};
my $keys_before = $new->safe_psql('postgres', $keys);
is($new->safe_psql('postgres', 'SELECT count(*) FROM per_site WHERE tlbf_format(users) = 2'), '20',
	'format 2 until the setting is on');
$new->safe_psql('postgres', q{
	ALTER SYSTEM SET tlbf.maintenance_to_format3 = on;
	ALTER SYSTEM SET tlbf.shared_format = 3;
	SELECT pg_reload_conf();
});
ok($new->poll_query_until('postgres',
		'SELECT count(*) = 0 FROM per_site WHERE tlbf_format(users) < 3'),
	'the worker moves the values of format 2 to format 3');
is($new->safe_psql('postgres',
		q{SELECT count(*) FROM per_site WHERE site < 20 AND tlbf_info(users)->'carries'->>'version' = '2'}),
	'20', 'each carries its old value');
is($new->safe_psql('postgres', $keys), $keys_before, 'and answers as before');

# and the launcher moves the shared filter of format 2 to format 3,
# carrying its old value: the same keys found among 20,000
my $shared = q{SELECT (SELECT count(*) FROM generate_series(1, 20000) k WHERE tlbf_shared_contains('logins', k))
	|| ' ' || tlbf_shared_contains('logins', 123456789)};
is($before =~ /^\S+ \d+ (\d+) /, 1, 'the shared filter\'s count before');
my $shared_before = $1;
ok($new->poll_query_until('postgres', q{
	SELECT info->>'version' = '3' AND info->'carries'->>'version' = '2'
	FROM tlbf_shared_list() WHERE name = 'logins'}),
	'the launcher moves the shared filter to format 3');
is($new->safe_psql('postgres', $shared), "$shared_before true", 'every key found, the same answers');

$new->stop;
done_testing();
