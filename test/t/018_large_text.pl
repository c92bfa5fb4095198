# A value between 384 MB and 768 MB goes out as text and comes back: text
# input used to refuse anything above half of what text output writes, so
# pg_dump wrote such a value and its restore failed (ERROR 22P02).  Heavy
# (a 505 MB value, about 40 s): make test runs it (TLBF_LARGE_VALUES=1),
# the version matrix does not.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

plan skip_all => 'set TLBF_LARGE_VALUES=1 to move a 505 MB value through text'
  unless $ENV{TLBF_LARGE_VALUES};

my $node = PostgreSQL::Test::Cluster->new('large');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION tlbf;
	SET tlbf.max_filter_bytes = '1GB';
	CREATE TABLE big AS
	SELECT tlbf_add(tlbf_create_format2('1 hour', 0.01, 700000000), 1, '2024-01-01 00:00+00') AS f;
});
is($node->safe_psql('postgres', q{SELECT (tlbf_info(f)->>'bytes')::bigint > 500000000 FROM big}),
	't', 'a value of more than 500 MB');

my $file = $node->basedir . '/big.txt';
$node->safe_psql('postgres', "COPY big TO '$file'");
cmp_ok(-s $file, '>', 600_000_000, 'COPY TO writes its text (over 600 MB)');
my ($ret, $out, $err) = $node->psql('postgres', qq{
	SET tlbf.max_filter_bytes = '1GB';
	CREATE TABLE back (f tlbf);
	COPY back FROM '$file';
	SELECT (SELECT f::bytea FROM back) = (SELECT f::bytea FROM big) AS same_bytes,
	       (SELECT tlbf_contains(f, 1, '2024-01-01 00:30+00') FROM back) AS found});
is($ret, 0, 'COPY FROM reads it back') or diag($err);
is($out, 't|t', '... byte for byte, and it answers');

$node->stop;
done_testing();
