# Shared filters on a hot standby (issue 14, item 8).  A standby is read
# only: adding, creating, dropping and rebuilding fail with SQLSTATE 25006
# (read_only_sql_transaction), since nothing written there could be kept
# or replicated.  Reading follows the primary's saved snapshots as they
# replay: a key added on the primary is found on the standby once the
# primary saved the filter and the standby replayed that save (and, since
# issue 39, once the standby replayed its commit: 033_wal_recovery); a filter
# dropped on the primary disappears from the standby; a new one appears.
# Saved copies of format 2 and 3 are read there, and one of format 2 moved
# to format 3 by the primary's launcher (a carrier of its old value, once
# the server's tlbf.shared_format is 3); a carrier no shared filter writes
# (its parts hashing keys differently) is refused by name.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.naptime = 1
tlbf.snapshot_interval = 1
tlbf.shared_format = 2
});
$primary->start;

sub saved_on_primary
{
	return $primary->poll_query_until('postgres',
		"SELECT bool_and(NOT (info->>'unsaved_changes')::boolean) FROM tlbf_shared_list()");
}

$primary->safe_psql('postgres', q{
	CREATE EXTENSION tlbf;
	SET tlbf.shared_format = 3;
	SELECT tlbf_shared_create('replicated', '1 hour', 0.001, 10000);
	RESET tlbf.shared_format;
	SELECT count(*) FROM generate_series(1, 100) k WHERE tlbf_shared_add('replicated', k);
	SELECT tlbf_shared_create('dropped_later', '1 hour');
	CREATE TABLE source AS SELECT k, now() AS at FROM generate_series(1, 10) k;
});
ok(saved_on_primary(), 'the primary saved its filters');
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;
$primary->wait_for_catchup($standby);

sub on_standby
{
	my ($sql) = @_;
	my ($ret, $out, $err) = $standby->psql('postgres', $sql, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	return $ret == 0 ? $out : ($err =~ /ERROR:  (\w{5})/ ? "ERROR $1" : "failed: $err");
}

is(on_standby("SELECT count(*) FROM generate_series(1, 100) k WHERE NOT tlbf_shared_contains('replicated', k)"),
	'0', 'the standby finds the keys of the replicated snapshot');
is(on_standby('SELECT string_agg(name, \',\' ORDER BY name) FROM tlbf_shared_list()'),
	'dropped_later,replicated', 'tlbf_shared_list works on the standby');

# Writes fail: the standby is read only.
is(on_standby("SELECT tlbf_shared_add('replicated', 888888)"), 'ERROR 25006',
	'tlbf_shared_add on the standby: ERROR 25006');
is(on_standby("SELECT tlbf_shared_create('standby_made', '1 hour')"), 'ERROR 25006',
	'tlbf_shared_create on the standby: ERROR 25006');
is(on_standby("SELECT tlbf_shared_drop('replicated')"), 'ERROR 25006',
	'tlbf_shared_drop on the standby: ERROR 25006');
is(on_standby("SELECT tlbf_shared_rebuild('replicated', 'SELECT k + 1000, at FROM source')"), 'ERROR 25006',
	'tlbf_shared_rebuild on the standby: ERROR 25006');
is(on_standby("SELECT tlbf_shared_contains('replicated', 888888)"), 'f',
	'... and nothing was written there');
is(on_standby('SELECT count(*) FROM tlbf_shared_list()'), '2', '... nor dropped');

# The standby follows the primary's saves.
$primary->safe_psql('postgres', q{
	SELECT tlbf_shared_add('replicated', 777777);
	SELECT tlbf_shared_drop('dropped_later');
	SELECT tlbf_shared_create('created_later', '1 hour');
	SELECT tlbf_shared_add('created_later', 'new');
});
ok(saved_on_primary(), 'the primary saved the new key');
$primary->wait_for_catchup($standby);
is(on_standby("SELECT tlbf_shared_contains('replicated', 777777)"), 't',
	'a key added and saved on the primary is found on the standby after replay');
is(on_standby("SELECT tlbf_contains(tlbf_shared_get('replicated'), 777777)"), 't',
	'... also in tlbf_shared_get');
is(on_standby('SELECT string_agg(name, \',\' ORDER BY name) FROM tlbf_shared_list()'),
	'created_later,replicated', 'a filter dropped on the primary is gone from the standby, a new one is there');
is(on_standby("SELECT tlbf_shared_contains('created_later', 'new')"), 't',
	'... with its keys');
is(on_standby("SELECT count(*) FROM generate_series(1, 100) k WHERE NOT tlbf_shared_contains('replicated', k)"),
	'0', 'the old keys are still found on the standby');

# 'created_later' is of format 2 (the server's tlbf.shared_format), as a
# filter made before 1.5 is, 'replicated' of format 3: each saved copy is
# read there.
is(on_standby("SELECT tlbf_info(tlbf_shared_get('created_later'))->'version'"), '2',
	'a saved copy of format 2 is read on the standby');
is(on_standby("SELECT tlbf_info(tlbf_shared_get('replicated'))->'version'"), '3',
	'... and one of format 3');

# With the server's tlbf.shared_format at 3 (the default), the launcher's
# pass moves 'created_later' to format 3: a carrier of its old value,
# saved, replayed and read on the standby with every key.
$primary->safe_psql('postgres', q{
	ALTER SYSTEM SET tlbf.shared_format = 3;
	SELECT pg_reload_conf();
});
ok($primary->poll_query_until('postgres', q{
	SELECT info->>'version' = '3' AND info->'carries'->>'version' = '2'
	       AND NOT (info->>'unsaved_changes')::boolean
	FROM tlbf_shared_list() WHERE name = 'created_later'}),
	"the primary's launcher moved the filter of format 2 to format 3, and saved it");
$primary->safe_psql('postgres', q{SELECT tlbf_shared_add('created_later', 'newer')});
ok(saved_on_primary(), '... and a key added since');
$primary->wait_for_catchup($standby);
is(on_standby("SELECT tlbf_info(tlbf_shared_get('created_later'))->'carries'->'version'"), '2',
	'the standby reads the saved carrier');
is(on_standby("SELECT tlbf_shared_contains('created_later', 'new') AND tlbf_shared_contains('created_later', 'newer')
	AND NOT tlbf_shared_contains('created_later', 'never')"), 't',
	'... and finds the key of the old value and the new one');

# A carrier whose parts hash keys differently (a superuser's doing: no
# shared filter writes one) is refused on the standby, by the function's
# name (0A000), never read as another layout.
$primary->safe_psql('postgres', q{
	UPDATE tlbf_shared_filters
	SET filter = tlbf_union(tlbf_create_format3('1 hour'),
	                        tlbf_add(tlbf_create_format2('1 hour', 0.01, 1000), 'x'::text, now()))
	WHERE name = 'created_later'});
$primary->wait_for_catchup($standby);
is(on_standby("SELECT tlbf_shared_contains('created_later', 'new')"), 'ERROR 0A000',
	'a saved copy carrying a value of format 2 that hashes keys otherwise is refused on the standby: ERROR 0A000');
is(on_standby("SELECT tlbf_shared_contains('replicated', 777777)"), 't',
	'... and the other filters answer as before');

$standby->stop;
$primary->stop;
done_testing();
