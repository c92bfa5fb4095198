# Keys from application code: untyped parameters from real drivers (psycopg
# 3 in text and binary mode, Perl DBD::Pg with server-side prepared
# statements) reach tlbf_contains, tlbf_add and the shared filters, and are
# matched to the kind of key each filter holds.
use strict;
use warnings;

use FindBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $python = '/usr/bin/python3';
plan skip_all => 'psycopg 3 (Debian python3-psycopg) is not installed'
  unless -x $python && system($python, '-c', 'import psycopg') == 0;
plan skip_all => 'DBD::Pg (Debian libdbd-pg-perl) is not installed'
  unless eval { require DBI; require DBD::Pg; 1 };

my $node = PostgreSQL::Test::Cluster->new('drivers');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.worker_enabled = off
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION tlbf;
	SELECT tlbf_shared_create('driver', '1 hour');
	SELECT tlbf_shared_create('pairs', '1 hour');
	CREATE TABLE pairs (user_id int, ad_id bigint);
	CREATE TRIGGER dedup BEFORE INSERT ON pairs
	    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('pairs', 'user_id', 'ad_id');
	INSERT INTO pairs VALUES (7, 42);
	CREATE TABLE driver_filters (name text PRIMARY KEY, f tlbf);
	INSERT INTO driver_filters
	SELECT 'ints', tlbf_agg(g, now(), '1 hour') FROM generate_series(1, 100) g
	UNION ALL SELECT 'uuids', tlbf_add(tlbf_create('1 hour'), 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid)
	UNION ALL SELECT 'texts', tlbf_add(tlbf_create('1 hour'), 'alice'::text)
	UNION ALL SELECT 'bytes', tlbf_add(tlbf_create('1 hour'), '\x0102'::bytea);
});

my $host = $node->host;
my $port = $node->port;

# psycopg 3: each line of its output is one check
my ($out, $err) = ('', '');
IPC::Run::run([ $python, "$FindBin::RealBin/../drivers/psycopg_keys.py",
		"host=$host port=$port dbname=postgres" ], '>', \$out, '2>', \$err);
is($err, '', 'psycopg: no error output');
my @lines = split /\n/, $out;
cmp_ok(scalar(@lines), '>=', 34, 'psycopg: every check ran');
for my $line (@lines)
{
	my ($result, $name) = $line =~ /^(ok|not ok) (.*)$/;
	ok(defined $result && $result eq 'ok', "psycopg $name");
}

# DBD::Pg: placeholders are sent untyped (server-side prepare)
my $dbh = DBI->connect("dbi:Pg:host=$host;port=$port;dbname=postgres", '', '',
	{ RaiseError => 1, AutoCommit => 1, PrintError => 0 });
my $asked = $dbh->prepare(
	'SELECT tlbf_contains(f, ?) FROM driver_filters WHERE name = ?');
my %cases = (
	'42 ints' => 1, '4242 ints' => 0, 'alice texts' => 1, 'bob texts' => 0,
	'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 uuids' => 1);
for my $case (sort keys %cases)
{
	my ($key, $name) = split / /, $case;
	$asked->execute($key, $name);
	my ($found) = $asked->fetchrow_array;
	is($found ? 1 : 0, $cases{$case}, "DBD::Pg: $name filter asked with '$key'");
}
ok(!eval { $asked->execute('forty-two', 'ints'); 1 }, 'DBD::Pg: text that is no integer is refused');
like($dbh->state, qr/^22P02$/, 'DBD::Pg: ... with 22P02');
$dbh->do('UPDATE driver_filters SET f = tlbf_add(f, ?) WHERE name = ?', undef, '5000', 'ints');
$asked->execute(5000, 'ints');
is(($asked->fetchrow_array)[0] ? 1 : 0, 1, 'DBD::Pg: a key added from a parameter is found');
my $shared = $dbh->prepare('SELECT tlbf_shared_add(?, ?)');
$shared->execute('driver', 'perl-key');
my ($first) = $shared->fetchrow_array;
$shared->execute('driver', 'perl-key');
my ($again) = $shared->fetchrow_array;
is(($first ? 1 : 0) . ($again ? 1 : 0), '10', 'DBD::Pg: shared test-and-add');
# a key of two columns, as a two-column trigger saw it, from untyped parameters
my $pair = $dbh->prepare("SELECT tlbf_shared_contains_fields('pairs', ?, ?)");
$pair->execute('7', '42');
is(($pair->fetchrow_array)[0] ? 1 : 0, 1, 'DBD::Pg: a two-column key found from its fields');
$pair->execute('7', '43');
is(($pair->fetchrow_array)[0] ? 1 : 0, 0, 'DBD::Pg: ... another one not');
$_->finish for ($asked, $shared, $pair);
$dbh->disconnect;

$node->stop;
done_testing();
