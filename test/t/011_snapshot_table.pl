# The snapshot table is untrusted input (issue 14, item 3).
#
# (a) Members of tlbf_admin may read tlbf_shared_filters but not write it:
#     only the extension's functions do (INSERT, UPDATE, DELETE: 42501).
# (b) A superuser (or a restore of a tampered dump) can still put anything
#     in it.  Crafted rows in database A: region sizes that are negative,
#     zero, smaller than the filter, larger than all of tlbf.shared_memory,
#     2^62; names of 64 and 100 bytes (a name has 1 to 63), the empty
#     name, a 64-byte name whose 63-byte prefix ends inside a UTF-8
#     character.  Every such row gives a WARNING and is left out; the good
#     rows beside them load (one whose region is exactly the filter's size
#     keeps taking inserts, truncating with a WARNING when full; names that
#     differ only in a trailing space are two filters).  A row of format 3
#     carrying that value, its bands hashing keys as the carried value
#     does (what a shared filter moved to format 3 writes), loads and finds
#     the old keys; one whose bands record no kind of key (a union's, a
#     tlbf_to_format3's before its first key) gives a WARNING and is left
#     out.  Meanwhile the
#     shared filter of database B keeps all its 1000 keys, the server never
#     restarts, and listing A's filters 100 times does not use up slots
#     (tlbf.max_shared_filters = 8): a third database can still create one.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('snapshots');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.naptime = 1
tlbf.snapshot_interval = 1
tlbf.max_shared_filters = 8
tlbf.shared_memory = '4MB'
});
$node->start;

$node->safe_psql('postgres', q{
	CREATE ROLE admin_member LOGIN;
	CREATE DATABASE a;
	CREATE DATABASE b;
	CREATE DATABASE c;
});
$node->safe_psql('b', q{
	CREATE EXTENSION tlbf;
	GRANT tlbf_admin TO admin_member;
	SELECT tlbf_shared_create('bf', '1 hour', 0.01, 1000);
	SELECT count(*) FROM generate_series(1, 1000) k WHERE tlbf_shared_add('bf', k);
});

# Calls that may meet a damaged filter: a hang (a backend spinning in a
# corrupted slice directory, or waiting for it) is a failure, not a stop.
# (The tests' timeout: a busy machine is slow, not hung.)
sub run
{
	my ($db, $sql) = @_;
	my $timed_out = 0;
	my ($ret, $out, $err) = (undef, '', '');
	$ret = $node->psql($db, $sql, stdout => \$out, stderr => \$err,
		timeout => $PostgreSQL::Test::Utils::timeout_default, timed_out => \$timed_out);
	return ($timed_out ? 'timed out' : $ret, $out, $err);
}

sub missing_in_b
{
	my ($ret, $out, $err) = run('b',
		"SELECT count(*) FROM generate_series(1, 1000) k WHERE NOT tlbf_shared_contains('bf', k)");
	return "$ret" eq '0' ? $out : "error ($ret): $err";
}
is(missing_in_b(), '0', 'B: all 1000 keys are found');

# (a) A member of tlbf_admin reads the table but cannot write it.
foreach my $write (
	"INSERT INTO tlbf_shared_filters VALUES ('planted', tlbf_create('1 hour'), 65536, now())",
	"UPDATE tlbf_shared_filters SET region_bytes = -1",
	"DELETE FROM tlbf_shared_filters")
{
	my ($ret, $out, $err) = $node->psql('b', "BEGIN; $write; ROLLBACK;",
		extra_params => [ '-U', 'admin_member', '-v', 'VERBOSITY=verbose' ]);
	like($err, qr/ERROR:  42501/, "a tlbf_admin member gets 42501 for: $write");
}
is($node->safe_psql('b', 'SELECT count(*) FROM tlbf_shared_filters', extra_params => [ '-U', 'admin_member' ]),
	'1', '... and may still read it');

# (b) Crafted rows in database A, each with a valid filter value.
my $start_time = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
$node->safe_psql('a', 'CREATE EXTENSION tlbf');
my $watch = $node->background_psql('a');
$watch->query_safe('SELECT 1');

my %bad = (
	'neg8'      => "-8",
	'neg1'      => "-1",
	'zero'      => "0",
	'one'       => "1",
	'too_small' => "(tlbf_info(f)->>'bytes')::bigint - 8",
	'too_big'   => "8 * 1024 * 1024",
	'huge'      => "(2::numeric ^ 62)::bigint",
);
my %bad_names = (
	'64 bytes'           => "repeat('n', 64)",
	'100 bytes'          => "repeat('m', 100)",
	'empty'              => "''",
	'64 bytes, UTF-8 cut' => "repeat('e', 62) || 'é'",
);
my %good = (
	'exact'    => "(tlbf_info(f)->>'bytes')::bigint",
	'fine'     => "65536",
	'dup'      => "65536",
	'dup '     => "65536",
);
my $good_63 = "repeat('g', 61) || 'é'";

my $rows = '';
$rows .= "('$_', $bad{$_}),\n" foreach sort keys %bad;
$rows .= "($bad_names{$_}, 65536),\n" foreach sort keys %bad_names;
$rows .= "('$_', $good{$_}),\n" foreach sort keys %good;
$rows .= "($good_63, 65536)\n";
my $log_offset = -s $node->logfile;
# A filter of a few slices (2000 keys over 40 minutes), as a value.
$node->safe_psql('a', qq{
	SET client_min_messages = error;
	CREATE FUNCTION pg_temp.add_row2(f tlbf, item int, at timestamptz) RETURNS tlbf
	    LANGUAGE sql AS \$\$ SELECT tlbf_add(coalesce(f, tlbf_create_format2('1 hour')), item, at) \$\$;
	CREATE AGGREGATE pg_temp.agg2(int, timestamptz) (SFUNC = pg_temp.add_row2, STYPE = tlbf);
	INSERT INTO tlbf_shared_filters (name, filter, region_bytes, saved_at)
	SELECT r.name, v.f, r.region, now()
	FROM (SELECT pg_temp.agg2(i, now() - interval '40 minutes' + i * interval '1 second' ORDER BY i) AS f
	      FROM generate_series(1, 2000) i) v,
	     LATERAL (VALUES $rows) AS r(name, region);
	INSERT INTO tlbf_shared_filters (name, filter, region_bytes, saved_at)
	SELECT 'carrier', tlbf_add(tlbf_to_format3(filter), 0, now()), 1048576, now()
	FROM tlbf_shared_filters WHERE name = 'fine'
	UNION ALL
	SELECT 'unkinded_carrier', tlbf_to_format3(filter), 1048576, now()
	FROM tlbf_shared_filters WHERE name = 'fine';
});

# Use every name: list (several times), contains, add.
my ($ret, $out, $err) = run('a', 'SELECT name FROM tlbf_shared_list() ORDER BY name');
my $first_list_warnings = $err;
for (1 .. 3)
{
	run('a', 'SELECT count(*) FROM tlbf_shared_list()');
}
run('a', q{
	DO $$
	DECLARE
	    r record;
	BEGIN
	    FOR r IN SELECT name FROM tlbf_shared_filters WHERE name <> 'exact' LOOP
	        BEGIN
	            PERFORM tlbf_shared_contains(r.name, 1);
	            PERFORM tlbf_shared_add(r.name, 0);
	            -- (only where that worked) enough keys to outgrow the region
	            PERFORM tlbf_shared_add(r.name, k) FROM generate_series(1, 5000) k;
	            PERFORM tlbf_shared_contains(r.name, 1);
	        EXCEPTION WHEN OTHERS THEN
	            NULL;
	        END;
	    END LOOP;
	END $$;
});

# The server is the same one, and a session connected throughout is still there.
$watch->{timeout}->start($PostgreSQL::Test::Utils::timeout_default);
my $still = eval { $watch->query('SELECT 42') } // '';
chomp $still;
is($still, '42', 'a session connected throughout is still connected');
($ret, $out) = run('postgres', 'SELECT pg_postmaster_start_time()');
is($out, $start_time, 'the server did not restart');
is(missing_in_b(), '0', 'B: all 1000 keys are still found');

# Every bad row gave a WARNING (in the session or in the server log) and is
# not listed; the good ones are.
my $log = slurp_file($node->logfile, $log_offset) . $first_list_warnings;
my @warnings = grep { /WARNING/ } split /\n/, $log;
foreach my $name (sort keys %bad)
{
	ok((grep { /\b$name\b/ } @warnings), "a WARNING names the bad row \"$name\"");
}
ok((grep { /nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn/ } @warnings), 'a WARNING for the 64-byte name');
ok((grep { /mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm/ } @warnings), 'a WARNING for the 100-byte name');
ok((grep { /eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee/ } @warnings), 'a WARNING for the 64-byte name cut in a character');
ok((grep { /""/ } @warnings), 'a WARNING for the empty name');
ok((grep { /unkinded_carrier/ } @warnings), 'a WARNING for the carrier whose parts hash keys differently');

my $expected_names = "SELECT unnest(ARRAY['carrier', 'dup', 'dup ', 'exact', 'fine', $good_63])";
($ret, $out, $err) = run('a', qq{
	SELECT (SELECT count(*) FROM tlbf_shared_list()) || ' listed, '
	    || (SELECT count(*) FROM tlbf_shared_list() WHERE name NOT IN ($expected_names)) || ' unexpected, '
	    || (SELECT count(*) FROM ($expected_names) e(n) WHERE n NOT IN (SELECT name FROM tlbf_shared_list())) || ' missing'});
is($out, '6 listed, 0 unexpected, 0 missing',
	'exactly the good rows are listed (names differing in a trailing space are two filters)');

# The carrier answers for its old keys and its own.
($ret, $out, $err) = run('a', q{
	SELECT info->'carries'->>'version' || ' '
	    || (SELECT count(*) FROM generate_series(1, 2000) i WHERE NOT tlbf_shared_contains('carrier', i)) || ' '
	    || tlbf_shared_contains('carrier', 0)
	FROM tlbf_shared_list() WHERE name = 'carrier'});
is($out, '2 0 true', 'the carrier loads: every old key found, and its own');

# The filter whose region is exactly its size keeps taking inserts.
($ret, $out, $err) = run('a', q{
	SELECT count(*) >= 0 FROM generate_series(100001, 105000) k WHERE tlbf_shared_add('exact', k);
	SELECT tlbf_shared_contains('exact', 105000)});
is($ret, 0, 'a filter whose region is exactly its size takes inserts') or diag($err);
is($out, "t\nt", '... and finds the last key');
unlike($err, qr/ERROR/, '... without an error (a truncation WARNING at most)');

# 100 more listings do not use up slots: a third database still gets one.
($ret, $out, $err) = run('a', join('', map { "SELECT count(*) FROM tlbf_shared_list();\n" } 1 .. 100));
($ret, $out, $err) = run('a', 'SELECT count(*) FROM tlbf_shared_list()');
is($out, '6', 'after 100 listings A still has its 6 filters');
($ret, $out, $err) = run('c', "CREATE EXTENSION tlbf; SELECT tlbf_shared_create('cf', '1 hour', 0.01, 1000)");
is($ret, 0, 'a third database can still create a filter (slots were not used up)') or diag($err);
is(missing_in_b(), '0', 'B: all 1000 keys are still found at the end');
($ret, $out) = run('postgres', 'SELECT pg_postmaster_start_time()');
is($out, $start_time, 'the server did not restart at all');

eval { $watch->quit };
# immediate: a backend stuck in a damaged filter would not stop otherwise
$node->stop('immediate');
done_testing();
