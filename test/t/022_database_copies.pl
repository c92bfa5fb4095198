# Copies of a database and the cluster's shared pool (issue 23, item 4).
# Only members of tlbf_admin (and superusers) may make filters occupy the
# pool or a worker slot:
#
# - CREATE DATABASE ... TEMPLATE by the database's owner (CREATEDB, no
#   tlbf role) copies the saved filters, but an INSERT through the trigger
#   in a copy loads nothing: five copies leave the pool as it was, and no
#   snapshot worker connects to them.  Every use of the filter in a copy
#   (the trigger, tlbf_shared_contains, _list, _create) fails with one
#   error, 55000, that names the cause and tlbf_shared_adopt();
#   tlbf_shared_adopt() is tlbf_admin's, and after it the copy's filter is
#   loaded with the keys it carried.
# - A restore into a second database of the same cluster (by a superuser)
#   loads without a step of its own, and when the pool is full every use
#   fails with one error naming the limit to raise (53400 for the slots,
#   53200 for the memory), never "does not exist" next to "already
#   exists"; once room is made, it loads.
# (A restore into a new cluster: 004_dump_restore.)
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use WorkerLog qw(wait_for_round);

my $node = PostgreSQL::Test::Cluster->new('copies');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.naptime = 1
tlbf.snapshot_interval = 1
tlbf.shared_memory = '2MB'
tlbf.max_shared_filters = 3
# the launcher's rounds (WorkerLog)
log_min_messages = debug1
});
$node->start;

# Run $sql in $db as $user; (exit code, stdout, stderr with SQLSTATEs).
sub attempt
{
	my ($db, $user, $sql) = @_;
	my ($ret, $out, $err) = $node->psql($db, "\\set VERBOSITY verbose\n$sql",
		extra_params => [ '-U', $user ]);
	return ($ret, $out, $err);
}

# pg_dump of PostgreSQL 16beta2 also dumps the row security policies of
# the extension's own tables, which the restored extension has made
# already (fixed in later releases): there a restore ends with that error,
# after the data (as in 004_dump_restore).
my $policies_dumped = $node->pg_version =~ /^16beta2$/
  ? 'pg_dump of PostgreSQL 16beta2 dumps the policies of extension tables' : undef;

sub restore
{
	my ($db, $dump, $what) = @_;
	local $main::TODO = $policies_dumped;
	$node->command_ok([ 'pg_restore', '-d', $node->connstr($db), $dump ], $what);
}

sub as
{
	my ($db, $user, $sql) = @_;
	return $node->safe_psql($db, $sql, extra_params => [ '-U', $user ]);
}

# A use of the filter fails with $sqlstate and a message like $message.
sub fails_with
{
	my ($db, $user, $sql, $sqlstate, $message, $what) = @_;
	my ($ret, $out, $err) = attempt($db, $user, $sql);
	isnt($ret, 0, "$what: fails");
	like($err, qr/ERROR:  $sqlstate: $message/, "$what: ... with $sqlstate") or diag($err);
	return $err;
}

$node->safe_psql('postgres', q{
	CREATE ROLE owner LOGIN CREATEDB;
	CREATE ROLE admin LOGIN;
	CREATE ROLE app_user LOGIN;
	CREATE DATABASE app OWNER owner;
	CREATE DATABASE other;
});
$node->safe_psql('app', q{
	CREATE EXTENSION tlbf;
	GRANT tlbf_admin TO admin;
	GRANT tlbf_user TO app_user;
	GRANT tlbf_user TO owner;
});
$node->safe_psql('other', 'CREATE EXTENSION tlbf');
as('app', 'admin', q{SELECT tlbf_shared_create('clicks', '1 hour', capacity => 1000)});
as('app', 'owner', q{
	CREATE TABLE clicks (user_id int, ad_id int);
	CREATE TRIGGER no_repeats BEFORE INSERT ON clicks
	    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('clicks', 'user_id', 'ad_id');
	INSERT INTO clicks VALUES (1, 42);
});
# from now on the owner has no tlbf role at all
$node->safe_psql('postgres', 'REVOKE tlbf_user FROM owner');
ok($node->poll_query_until('app',
		q{SELECT NOT (info->>'unsaved_changes')::boolean FROM tlbf_shared_list() WHERE name = 'clicks'}),
	'the filter of app is saved');

# ---- copies made by the owner -------------------------------------------------
my $copies_offset = -s $node->logfile;
foreach my $i (1 .. 5)
{
	as('postgres', 'owner', "CREATE DATABASE clone$i TEMPLATE app");
	fails_with("clone$i", 'owner', 'INSERT INTO clicks VALUES (2, 42)', '55000',
		'shared tlbf filter "clicks" was saved by another database and is not loaded',
		"copy $i: an insert through the trigger");
}
my ($ret, $out, $err) = attempt('clone1', 'owner', 'INSERT INTO clicks VALUES (2, 42)');
like($err, qr/DETAIL:  Its saved copy was written by database "app"/, 'the error names the database copied');
like($err, qr/HINT:  A member of tlbf_admin .* SELECT tlbf_shared_adopt\(\)/, '... and what to do');

# the pool holds app's filter only: two more fit in the three slots
as('other', 'postgres', q{SELECT tlbf_shared_create('x1', '1 hour', capacity => 1000)});
as('other', 'postgres', q{SELECT tlbf_shared_create('x2', '1 hour', capacity => 1000)});
pass('five copies took no slot: two more filters fit in the three slots');
# A launcher round that began after the copies were used (which would
# start a saver in a copy with a filter loaded) has ended.
wait_for_round($node, -s $node->logfile);
my $clones = $node->safe_psql('postgres', q{
	SELECT string_agg(oid::text, '|') FROM pg_database WHERE datname LIKE 'clone%'});
is(join(', ', slurp_file($node->logfile, $copies_offset) =~ /tlbf launcher: started a snapshot worker in database (?:$clones)\b/g),
	'', 'the launcher starts no saver in a copy');
is($node->safe_psql('postgres', q{
		SELECT count(*) FROM pg_stat_activity
		WHERE backend_type = 'tlbf snapshots' AND datname LIKE 'clone%'}),
	'0', 'no saver connects to a copy');

# every use says the same
fails_with('clone1', 'app_user', q{SELECT tlbf_shared_contains('clicks', 1)}, '55000',
	'shared tlbf filter "clicks" was saved by another database', 'tlbf_shared_contains in a copy');
fails_with('clone1', 'admin', q{SELECT * FROM tlbf_shared_list()}, '55000',
	'shared tlbf filter "clicks" was saved by another database', 'tlbf_shared_list in a copy');
fails_with('clone1', 'admin', q{SELECT tlbf_shared_create('clicks', '1 hour')}, '55000',
	'shared tlbf filter "clicks" was saved by another database', 'tlbf_shared_create in a copy');
fails_with('clone1', 'owner', q{SELECT tlbf_shared_adopt()}, '42501',
	'permission denied for function tlbf_shared_adopt', 'tlbf_shared_adopt by the owner');

# tlbf_admin adopts: the copy's filter loads, with the keys it carried
as('other', 'postgres', q{SELECT tlbf_shared_drop('x2')});
is(as('clone1', 'admin', q{SELECT tlbf_shared_adopt()}), '1', 'tlbf_admin adopts the copy\'s one filter');
is(as('clone1', 'admin', q{SELECT tlbf_shared_adopt()}), '0', '... once');
is(as('clone1', 'owner', q{INSERT INTO clicks VALUES (1, 42), (2, 42); SELECT count(*) FROM clicks}),
	'2', 'after adoption the trigger loads the filter: the copied key is a repeat, a new one is not');
ok($node->poll_query_until('clone1', q{
		SELECT NOT (info->>'unsaved_changes')::boolean FROM tlbf_shared_list() WHERE name = 'clicks'}),
	'... and the copy\'s filter is saved');

# ---- a restore into a second database, the pool full --------------------------
# slots: app's clicks, other's x1, clone1's clicks
my $dump = $node->basedir . '/app.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('app') ], 'pg_dump app');
$node->safe_psql('postgres', 'CREATE DATABASE staging OWNER owner');
restore('staging', $dump, 'pg_restore into staging, in the same cluster');
my $no_slot = 'no free slot to load shared tlbf filter "clicks"';
$err = fails_with('staging', 'owner', 'INSERT INTO clicks VALUES (3, 42)', '53400', $no_slot,
	'the pool has no slot: an insert through the trigger');
like($err, qr/HINT:  Raise tlbf.max_shared_filters/, '... naming the setting to raise');
fails_with('staging', 'admin', q{SELECT tlbf_shared_create('clicks', '1 hour')}, '53400', $no_slot,
	'tlbf_shared_create');
fails_with('staging', 'admin', q{SELECT * FROM tlbf_shared_list()}, '53400', $no_slot,
	'tlbf_shared_list');
fails_with('staging', 'app_user', q{SELECT tlbf_shared_contains('clicks', 1)}, '53400', $no_slot,
	'tlbf_shared_contains');
as('other', 'postgres', q{SELECT tlbf_shared_drop('x1')});
is(as('staging', 'owner', q{INSERT INTO clicks VALUES (1, 42), (3, 42); SELECT count(*) FROM clicks}),
	'2', 'with a slot free, the restored filter loads by itself, with its keys');

# the memory: a filter that takes over half the pool, restored beside itself
# (slots: app's clicks and, after this, other's big)
as('clone1', 'admin', q{SELECT tlbf_shared_drop('clicks')});
as('staging', 'admin', q{SELECT tlbf_shared_drop('clicks')});
as('other', 'postgres', q{SELECT tlbf_shared_create('big', '1 hour', capacity => 120000)});
my $region = as('other', 'postgres', q{SELECT info->>'region_bytes' FROM tlbf_shared_list() WHERE name = 'big'});
cmp_ok($region, '>', 1024 * 1024, "the big filter's region takes over half of the 2MB pool ($region bytes)");
ok($node->poll_query_until('other',
		q{SELECT NOT (info->>'unsaved_changes')::boolean FROM tlbf_shared_list() WHERE name = 'big'}),
	'the big filter is saved');
$dump = $node->basedir . '/other.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('other') ], 'pg_dump other');
$node->safe_psql('postgres', 'CREATE DATABASE other2');
restore('other2', $dump, 'pg_restore into other2');
my $no_room = 'not enough shared memory to load shared tlbf filter "big"';
$err = fails_with('other2', 'postgres', q{SELECT tlbf_shared_contains('big', 1)}, '53200', $no_room,
	'no room in the pool: tlbf_shared_contains');
like($err, qr/HINT:  Raise tlbf.shared_memory/, '... naming the setting to raise');
fails_with('other2', 'postgres', q{SELECT tlbf_shared_create('big', '1 hour')}, '53200', $no_room,
	'tlbf_shared_create');
fails_with('other2', 'postgres', q{SELECT * FROM tlbf_shared_list()}, '53200', $no_room,
	'tlbf_shared_list');

# A data-only restore with triggers disabled keeps the stamps: a copy.
$node->safe_psql('postgres', 'CREATE DATABASE data_only');
$node->safe_psql('data_only', 'CREATE EXTENSION tlbf');
$node->command_ok([ 'pg_restore', '--data-only', '--disable-triggers', '-t', 'tlbf_shared_filters',
		'-d', $node->connstr('data_only'), $node->basedir . '/app.dump' ],
	'a data-only restore of the saved filters, triggers disabled');
fails_with('data_only', 'postgres', q{SELECT tlbf_shared_contains('clicks', 1)}, '55000',
	'shared tlbf filter "clicks" was saved by another database', '... is a copy until adopted');
as('data_only', 'postgres', 'SELECT tlbf_shared_adopt()');
is(as('data_only', 'postgres', q{SELECT count(*) FROM tlbf_shared_list() WHERE name = 'clicks'}), '1',
	'... and loads once adopted');
as('data_only', 'postgres', q{SELECT tlbf_shared_drop('clicks')});

# A database still at 1.3 under the 1.4 library: its saved filters are
# not loaded (they carry no stamp) until it is updated.
$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql('old', q{
	CREATE EXTENSION tlbf VERSION '1.3';
	SELECT tlbf_shared_create('logins', '1 hour', capacity => 1000);
	SELECT tlbf_shared_add('logins', 7);
});
ok($node->poll_query_until('old',
		q{SELECT NOT (info->>'unsaved_changes')::boolean FROM tlbf_shared_list() WHERE name = 'logins'}),
	'1.3: the filter is saved');
$node->restart;
fails_with('old', 'postgres', q{SELECT tlbf_shared_contains('logins', 7)}, '55000',
	'shared tlbf filter "logins" is not loaded\nDETAIL:  The tlbf extension in this database predates version 1\.4',
	'1.3 after a restart');
$node->safe_psql('old', 'ALTER EXTENSION tlbf UPDATE');
is($node->safe_psql('old', q{SELECT tlbf_shared_contains('logins', 7)}), 't',
	'... and after ALTER EXTENSION tlbf UPDATE it loads, with its keys');

is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_roles WHERE rolsuper AND rolname = 'owner'}),
	'0', 'the owner is no superuser');
$node->stop;
done_testing();
