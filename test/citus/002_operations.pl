# Keeping filters on a Citus cluster (a coordinator and two workers),
# issue 27:
#
# 1. Writes: UPDATE ... SET f = tlbf_add(f, ...) (and ||, tlbf_union) and
#    INSERT ... ON CONFLICT DO UPDATE with tlbf_add on a distributed table,
#    also from a prepared statement with an untyped parameter.
# 2. Maintenance of a distributed table registered on the coordinator, as
#    a non-superuser owner: a pass by hand rewrites the rows on the workers
#    and tlbf_maintenance_status counts them; after a shard moves
#    (citus_move_shard_placement), the coordinator's maintenance worker
#    rewrites the moved shard where it is now.  A reference table is not
#    maintained, and its status says so.
# 3. Rejecting recent duplicates: a filter on each worker, the trigger on
#    the distributed table keyed by (the distribution column, ad).  Three
#    clients insert overlapping keys at once through the coordinator:
#    exactly one row per key is stored, and the row counts the clients are
#    told add up to the rows stored.  Forms that cannot work fail with an
#    error: a key without the distribution column, a reference table, a
#    COPY or INSERT ... SELECT through the coordinator that holds a recent
#    duplicate (Citus would count the skipped row); the same without a
#    duplicate, and INSERT ... SELECT between co-located tables, are
#    counted right.
# 4. DDL: DROP EXTENSION while the workers hold shared filters (Citus
#    commits it there with two-phase commit); an upgrade from 1.3 with DDL
#    propagation off is refused until every worker runs the new version, with it on it
#    updates every node, and tlbf_check_cluster() names a node that runs
#    another version.
# Run by scripts/citus.sh on a PostgreSQL that has Citus.
use strict;
use warnings;

use FindBin;
use lib $FindBin::Bin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TlbfCitus qw(citus_cluster);

my ($coordinator, @workers) = citus_cluster(coordinator_conf => "tlbf.naptime = 1\n");

sub query { return $coordinator->safe_psql('postgres', $_[0]) }

# the SQLSTATE and message of a statement that should fail
sub failure
{
	my ($sql) = @_;
	my ($ret, $out, $err) = $coordinator->psql('postgres', $sql,
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	return $ret == 0 ? "succeeded: $out" : ($err =~ /ERROR:  (\w{5}): ([^\n]*)/ ? "$1 $2" : "failed: $err");
}

# what psql prints for a script, command tags included, without its last newline
sub tag_of
{
	my ($script) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ $coordinator->installed_command('psql'), '-X', '-d', $coordinator->connstr('postgres') ],
		'<', \$script, '>', \$out, '2>', \$err);
	chomp $out;
	return $out;
}

# ---- 1. writes -------------------------------------------------------------
query(q{
	CREATE TABLE visits_f (user_id bigint PRIMARY KEY, f tlbf);
	SELECT create_distributed_table('visits_f', 'user_id');
	INSERT INTO visits_f SELECT u, tlbf_create('1 hour') FROM generate_series(1, 100) u;
});
is(query(q{UPDATE visits_f SET f = tlbf_add(f, 42) WHERE user_id <= 50}), '',
	'UPDATE ... SET f = tlbf_add(f, key) on a distributed table');
query(q{UPDATE visits_f SET f = f || tlbf_add(tlbf_create('1 hour'), 7)});
query(q{UPDATE visits_f SET f = tlbf_union(f, tlbf_add(tlbf_create('1 hour'), 8)) WHERE user_id % 2 = 0});
is(query(q{SELECT count(*) FILTER (WHERE f @> 42) || ' ' || count(*) FILTER (WHERE f @> 7)
		|| ' ' || count(*) FILTER (WHERE f @> 8) || ' ' || count(*) FILTER (WHERE f @> 9) FROM visits_f}),
	'50 100 50 0', '... and with || and tlbf_union: every row holds what was added to it');
query(q{
	INSERT INTO visits_f VALUES (5, tlbf_add(tlbf_create('1 hour'), 9)), (500, tlbf_add(tlbf_create('1 hour'), 9))
	ON CONFLICT (user_id) DO UPDATE SET f = tlbf_add(visits_f.f, 9);
	PREPARE visit(bigint, unknown) AS
	    INSERT INTO visits_f VALUES ($1, tlbf_add(tlbf_create('1 hour'), $2))
	    ON CONFLICT (user_id) DO UPDATE SET f = tlbf_add(visits_f.f, $2);
	EXECUTE visit(6, '77');
	EXECUTE visit(600, '77');
});
is(query(q{SELECT string_agg(user_id::text, ',' ORDER BY user_id) FILTER (WHERE f @> 9) || ' '
		|| string_agg(user_id::text, ',' ORDER BY user_id) FILTER (WHERE f @> 77)
		|| ' ' || bool_and(f @> 7) FILTER (WHERE user_id < 100) FROM visits_f WHERE user_id <> 600}),
	'5,500 6 true', 'upserts with tlbf_add: new rows and updated ones; an untyped key into a filter of integers');
is(query(q{SELECT tlbf_contains(f, '77') FROM visits_f WHERE user_id = 600}), 't',
	'... and into a new filter (of text keys)');

# ---- 2. maintenance --------------------------------------------------------
# filters whose keys are 2 hours to 50 minutes old, for a one-hour span:
# each has expired slices to give back (of format 2, built row by row:
# tlbf_agg builds format 3, whose values give bytes back once idle)
my $stale_filters = q{(SELECT public.agg2(g, now() - interval '2 hours' + g * interval '1 s' ORDER BY g)
                      FROM generate_series(1, 4000) g)};
query(q{
	CREATE FUNCTION add_row2(f tlbf, item int, at timestamptz) RETURNS tlbf
	    LANGUAGE sql AS $$ SELECT tlbf_add(coalesce(f, tlbf_create_format2('1 hour')), item, at) $$;
	CREATE AGGREGATE agg2(int, timestamptz) (SFUNC = add_row2, STYPE = tlbf);
});
query(qq{
	CREATE ROLE app LOGIN;
	GRANT CREATE ON SCHEMA public TO app;
	SET ROLE app;
	CREATE TABLE user_filters (user_id bigint PRIMARY KEY, f tlbf);
	SELECT create_distributed_table('user_filters', 'user_id');
	INSERT INTO user_filters SELECT u, $stale_filters FROM generate_series(1, 64) u;
	SELECT tlbf_maintain('user_filters', 'f');
});
is(query(q{SELECT count(*) FILTER (WHERE tlbf_retirable(f)) FROM user_filters}), '64',
	'64 filters on the workers with expired slices');
my $bytes_before = query(q{SELECT sum(pg_column_size(f)) FROM user_filters});
is(query(q{SET ROLE app; SELECT rows_rewritten FROM tlbf_maintenance_run() WHERE tbl = 'user_filters'::regclass}),
	'64', 'a pass by hand (as the owner) rewrites every row, on the workers');
is(query(q{SELECT rows_rewritten || ' ' || (bytes_freed > 0) || ' ' || (last_pass IS NOT NULL) || ' '
		|| coalesce(last_error, '') FROM tlbf_maintenance_status WHERE tbl = 'user_filters'::regclass}),
	'64 true true ', 'tlbf_maintenance_status counts them, and the bytes freed');
my $bytes_after = query(q{SELECT sum(pg_column_size(f)) FROM user_filters});
cmp_ok($bytes_after * 2, '<', $bytes_before,
	"the filters took less than half the bytes ($bytes_before -> $bytes_after)");
is(query(q{SELECT count(*) FILTER (WHERE tlbf_retirable(f)) || ' '
		|| count(*) FILTER (WHERE tlbf_contains(f, 4000, now())) FROM user_filters}),
	'0 64', '... none has expired slices left, and each still holds its live keys');
is(query(q{SELECT count(*) FILTER (WHERE tlbf_format(f) = 3 AND tlbf_info(f)->'carries'->>'version' = '2')
		FROM user_filters}),
	'64', '... each moved to format 3 on its worker, carrying its old value (tlbf.maintenance_to_format3)');

# a reference table is not maintained, and its status says so
query(q{
	SET ROLE app;
	CREATE TABLE shared_filters (id int PRIMARY KEY, f tlbf);
	SELECT create_reference_table('shared_filters');
	SELECT tlbf_maintain('shared_filters', 'f');
});
my (undef, undef, $warning) = $coordinator->psql('postgres', q{SET ROLE app; SELECT count(*) FROM tlbf_maintenance_run()});
like($warning, qr/WARNING:  tlbf maintenance of shared_filters skipped\nDETAIL:  The error was: tlbf cannot maintain Citus table shared_filters because its shards have a copy on several nodes/,
	'a reference table: a pass by hand skips it with a WARNING ...');
like(query(q{SELECT last_error FROM tlbf_maintenance_status WHERE tbl = 'shared_filters'::regclass}),
	qr/its shards have a copy on several nodes/, '... and its status says why');
query(q{SET ROLE app; SELECT tlbf_unmaintain('shared_filters', 'f')});

# move the shard of user 1 to the other worker; give its rows stale filters again
my ($shard, $from) = split /\|/, query(q{
	SELECT shardid, nodeport FROM citus_shards
	WHERE table_name = 'user_filters'::regclass
	  AND shardid = get_shard_id_for_distribution_column('user_filters', 1)});
my ($to) = grep { $_ != $from } map { $_->port } @workers;
query(qq{SELECT citus_move_shard_placement($shard, 'localhost', $from, 'localhost', $to,
                                           shard_transfer_mode => 'block_writes')});
is(query(qq{SELECT nodeport FROM citus_shards WHERE shardid = $shard}), $to,
	"shard $shard moved from $from to $to");
my $moved_users = query(qq{SELECT string_agg(user_id::text, ',') FROM user_filters
	WHERE get_shard_id_for_distribution_column('user_filters', user_id) = $shard});
query(qq{SET ROLE app; UPDATE user_filters SET f = $stale_filters WHERE user_id IN ($moved_users)});
my $moved_rows = query(qq{SELECT count(*) FILTER (WHERE tlbf_retirable(f)) FROM user_filters});
cmp_ok($moved_rows, '>', 0, "$moved_rows rows, all in the moved shard, have expired slices again");
# now the coordinator's maintenance worker, every second
query(q{ALTER SYSTEM SET tlbf.worker_enabled = on; SELECT pg_reload_conf()});
ok($coordinator->poll_query_until('postgres', qq{
		SELECT rows_rewritten = 64 + $moved_rows FROM tlbf_maintenance_status
		WHERE tbl = 'user_filters'::regclass}),
	"the coordinator's maintenance worker rewrote the moved shard's rows where they are now");
is(query(q{SELECT count(*) FILTER (WHERE tlbf_retirable(f)) FROM user_filters}), '0',
	'... and none has expired slices left');
is(query(q{SELECT coalesce(last_error, '') FROM tlbf_maintenance_status WHERE tbl = 'user_filters'::regclass}),
	'', '... with no error recorded');

# ---- 3. rejecting recent duplicates ----------------------------------------
query(q{
	SET citus.enable_unsafe_triggers = on;
	CREATE TABLE clicks (user_id bigint NOT NULL, ad_id int NOT NULL, at timestamptz DEFAULT now());
	SELECT create_distributed_table('clicks', 'user_id');
	CREATE TRIGGER no_repeat_clicks BEFORE INSERT ON clicks
	    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('clicks', 'user_id', 'ad_id');
});
like(failure(q{INSERT INTO clicks (user_id, ad_id) VALUES (1, 1)}),
	qr/^42704 shared tlbf filter "clicks" does not exist/,
	'without the filter on the workers, an insert fails (42704)');
query(q{SELECT run_command_on_workers($$SELECT tlbf_shared_create('clicks', '1 hour', 0.001, 100000)$$)});

# three clients at once, 100 statements of 5 rows each; client c sends key
# (u, u % 7) for u = (c * 100 + 5 s + j) mod 600: they overlap
my $psql = $coordinator->installed_command('psql');
my @clients;
for my $c (0 .. 2)
{
	my $script = '';
	for my $s (0 .. 99)
	{
		my @rows = map { my $u = ($c * 100 + 5 * $s + $_) % 600; "($u, " . ($u % 7) . ")" } 0 .. 4;
		$script .= 'INSERT INTO clicks (user_id, ad_id) VALUES ' . join(', ', @rows) . ";\n";
	}
	my $out = '';
	my $h = IPC::Run::start([ $psql, '-X', '-d', $coordinator->connstr('postgres') ],
		'<', \$script, '>', \$out, '2>', \my $err);
	push @clients, [ $h, \$out ];
}
my ($told, $statements) = (0, 0);
for my $client (@clients)
{
	$client->[0]->finish;
	for my $tag (${ $client->[1] } =~ /^INSERT 0 (\d+)$/mg)
	{
		$told += $tag;
		$statements++;
	}
}
is($statements, 300, 'three clients at once: 300 inserts through the coordinator');
is(query(q{SELECT count(*) || ' ' || count(DISTINCT (user_id, ad_id)) FROM clicks}), '600 600',
	'exactly one row per key is stored (600 keys)');
is($told, 600, '... and the row counts the clients were told add up to the rows stored');
is(query(q{SELECT count(*) FILTER (WHERE tlbf_shared_contains('clicks', ROW(user_id, ad_id))) || ' '
		|| (count(*) FILTER (WHERE tlbf_shared_contains('clicks', ROW(user_id, ad_id + 1))) < 6) FROM clicks}),
	'600 true', 'tlbf_shared_contains in a query of the table runs on the workers, each asking its own '
	  . 'filter (every stored key found; keys never added, at the false-positive rate of 0.1%)');
is(tag_of(q{INSERT INTO clicks (user_id, ad_id) VALUES (1, 2), (1, 3), (1, 2), (2, 2)}), 'INSERT 0 2',
	'a statement with a recent duplicate and a repeated key: INSERT 0 2 ...');
is(query(q{SELECT count(*) FROM clicks}), '602', '... and its two new keys stored');

like(failure("\\copy clicks (user_id, ad_id) FROM stdin\n3\t3\n4\t4\n3\t3\n\\.\n"),
	qr/^\w{5} cannot skip a recent duplicate in rows Citus copies to a shard/,
	'a COPY holding a recent duplicate fails (Citus reports XX000): it would count the skipped row');
like(failure(q{INSERT INTO clicks (user_id, ad_id) SELECT g, 5 FROM generate_series(1, 10) g
		UNION ALL SELECT 1, 1}),
	qr/^\w{5} cannot skip a recent duplicate in rows Citus copies to a shard/,
	'... and so does an INSERT ... SELECT routed through the coordinator');
is(query(q{SELECT count(*) FROM clicks}), '602', '... neither stored a row');
is(tag_of("\\copy clicks (user_id, ad_id) FROM stdin\n700\t1\n701\t1\n\\.\n"), 'COPY 2',
	'a COPY without a duplicate: COPY 2 ...');
is(query(q{SELECT count(*) FROM clicks WHERE user_id IN (700, 701)}), '2', '... and 2 stored');
query(q{
	CREATE TABLE staged (user_id bigint NOT NULL, ad_id int NOT NULL);
	SELECT create_distributed_table('staged', 'user_id', colocate_with => 'clicks');
	INSERT INTO staged SELECT u % 800, 9 FROM generate_series(1, 2400) u;
});
is(tag_of(q{INSERT INTO clicks (user_id, ad_id) SELECT user_id, ad_id FROM staged}), 'INSERT 0 800', 'INSERT ... SELECT from a co-located table: 800 of 2,400 rows stored, and told');
is(query(q{SELECT count(*) FROM clicks WHERE ad_id = 9}), '800', '... and 800 stored');

# The trigger follows the distributed transaction (issue 38): a rolled-back
# insert, or one whose transaction fails after it on every node, leaves no
# key on the workers, and the retried rows are stored; a transaction
# committed on both workers (two-phase commit) keeps its keys there.
is(query(q{
	BEGIN;
	INSERT INTO clicks (user_id, ad_id) VALUES (900, 1), (901, 1), (902, 1), (903, 1);
	ROLLBACK;
	INSERT INTO clicks (user_id, ad_id) VALUES (900, 1), (901, 1), (902, 1), (903, 1);
	SELECT count(*) FROM clicks WHERE user_id BETWEEN 900 AND 903}),
	'4', 'a rolled-back distributed insert leaves no key: its retry is stored');
like(failure(q{
	BEGIN;
	INSERT INTO clicks (user_id, ad_id) VALUES (910, 1), (911, 1), (912, 1), (913, 1);
	SELECT 1 / 0;}), qr/^22012/, 'a distributed transaction fails after its insert ...');
is(query(q{
	INSERT INTO clicks (user_id, ad_id) VALUES (910, 1), (911, 1), (912, 1), (913, 1);
	SELECT count(*) FROM clicks WHERE user_id BETWEEN 910 AND 913}),
	'4', '... and leaves no key: its retry is stored');
is(query(q{
	SELECT count(DISTINCT s.nodeport)
	FROM citus_shards s
	JOIN (SELECT get_shard_id_for_distribution_column('clicks', u) AS shardid
	      FROM generate_series(910, 913) u) x USING (shardid)
	WHERE s.table_name = 'clicks'::regclass}),
	'2', '(those rows are on both workers: the retry committed with two-phase commit)');
is(tag_of(q{INSERT INTO clicks (user_id, ad_id) VALUES (910, 1), (911, 1), (912, 1), (913, 1)}),
	'INSERT 0 0', 'the committed keys are kept on both workers: a repeat is skipped');

like(failure(q{
	SET citus.enable_unsafe_triggers = on;
	CREATE TABLE ad_clicks (user_id bigint, ad_id int);
	SELECT create_distributed_table('ad_clicks', 'user_id');
	CREATE TRIGGER no_repeat BEFORE INSERT ON ad_clicks
	    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('clicks', 'ad_id');
	INSERT INTO ad_clicks VALUES (1, 1);}),
	qr/^0A000 tlbf_reject_recent on Citus table public\.ad_clicks must have its distribution column "user_id" among its key columns/,
	'a key without the distribution column is refused (0A000)');
like(failure(q{
	SET citus.enable_unsafe_triggers = on;
	CREATE TABLE ad_list (ad_id int);
	SELECT create_reference_table('ad_list');
	CREATE TRIGGER no_repeat BEFORE INSERT ON ad_list
	    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('clicks', 'ad_id');
	INSERT INTO ad_list VALUES (1);}),
	qr/^0A000 tlbf_reject_recent cannot guard Citus table public\.ad_list$/,
	'a reference table is refused (0A000)');

# ---- 4. DROP EXTENSION, and upgrades ---------------------------------------
is($workers[0]->safe_psql('postgres', q{SELECT string_agg(name, ',') FROM tlbf_shared_list()}), 'clicks',
	'the workers hold a shared filter');
is(query(q{DROP EXTENSION tlbf CASCADE}), '', 'DROP EXTENSION, committed on the workers with two-phase commit');
query(q{CREATE EXTENSION tlbf VERSION '1.3'});
for my $worker (@workers)
{
	is($worker->safe_psql('postgres', q{SELECT extversion || ' ' || (SELECT count(*) FROM tlbf_shared_list())
			FROM pg_extension WHERE extname = 'tlbf'}),
		'1.3 0', 'a worker: tlbf 1.3 created again, no shared filter left');
}
like(failure(q{SET citus.enable_ddl_propagation = off; ALTER EXTENSION tlbf UPDATE}),
	qr/^55000 ALTER EXTENSION tlbf UPDATE on a Citus coordinator must reach the workers/,
	'an update with DDL propagation off is refused (55000)');
# workers first (Citus lets DDL run on a worker with propagation off), then the coordinator
$workers[0]->safe_psql('postgres', q{SET citus.enable_ddl_propagation = off; ALTER EXTENSION tlbf UPDATE});
my (undef, undef, $behind) = $coordinator->psql('postgres',
	q{SET citus.enable_ddl_propagation = off; ALTER EXTENSION tlbf UPDATE});
like($behind, qr/DETAIL:  citus\.enable_ddl_propagation is off, and localhost:${\ $workers[1]->port } has 1\.3\.\n/,
	'... while one worker is behind: its error names that worker only');
$workers[1]->safe_psql('postgres', q{SET citus.enable_ddl_propagation = off; ALTER EXTENSION tlbf UPDATE});
is(query(q{SET citus.enable_ddl_propagation = off; ALTER EXTENSION tlbf UPDATE;
		SELECT string_agg(version, ' ') FROM tlbf_cluster_versions()}), '1.5 1.5 1.5',
	'with every worker updated first, the coordinator updates with propagation off');
# and the usual way: from the coordinator, propagation on
query(q{DROP EXTENSION tlbf CASCADE; CREATE EXTENSION tlbf VERSION '1.3'; ALTER EXTENSION tlbf UPDATE});
is(query(q{SELECT string_agg(concat_ws(' ', coalesce(node, 'here'), port, version), ', ') FROM tlbf_cluster_versions()}),
	join(', ', 'here 1.5', map { 'localhost ' . $_->port . ' 1.5' } sort { $a->port <=> $b->port } @workers),
	'with propagation on, every node runs 1.5 (tlbf_cluster_versions)');
is(query(q{SELECT tlbf_check_cluster()}), '1.5', 'tlbf_check_cluster() agrees');
query(q{
	CREATE TABLE visits (user_id bigint, at timestamptz);
	SELECT create_distributed_table('visits', 'user_id');
	INSERT INTO visits SELECT g, '2024-01-01 00:00+00'::timestamptz + g * interval '1 s' FROM generate_series(1, 1000) g;
});
is(query(q{SELECT tlbf_contains(tlbf_agg(user_id, at, '1 hour'), 1000, '2024-01-01 00:30+00') FROM visits}), 't',
	'an aggregate split between workers and coordinator works after the upgrade');
$workers[1]->safe_psql('postgres', q{UPDATE pg_extension SET extversion = '1.3' WHERE extname = 'tlbf'});
like(failure(q{SELECT tlbf_check_cluster()}),
	qr/^55000 tlbf versions differ between the nodes of this Citus cluster/,
	'a node that says it runs 1.3: tlbf_check_cluster() fails (55000) ...');
my (undef, undef, $detail) = $coordinator->psql('postgres', q{SELECT tlbf_check_cluster()});
like($detail, qr/This node has 1\.5; localhost:${\ $workers[1]->port } has 1\.3\./, '... and names it');

done_testing();
