# The dedup trigger keeps its promise under load (issue 24, item 1): a
# duplicate inside the span is never accepted because of load.
#
# 1. The README's example, scaled to a test: a shared filter with a
#    capacity of its distinct keys, 8 pgbench clients inserting random
#    (user, ad) pairs through tlbf_reject_recent for three spans, each key
#    tried three times a span (6,000 a second, whatever the machine: at
#    40,000 a second, 17,000 new keys in the first second, slices sized
#    for that burst filled the region of four times the capacity's needs
#    after 22 seconds, in one run of two): no two accepted rows of one key within the
#    span, and the filter never dropped a live slice.  (The trigger used to
#    add every rejected key again, which cost capacity in every generation:
#    the filter's region filled, it dropped unexpired slices, and a third of
#    the accepted rows were duplicates.)
# 2. The hot-keys reproduction: 100,000 keys added once, then 50,000 hot
#    keys added again 5M times over five minutes, into a filter of capacity
#    150,000 with a ten-minute span, in a region of 32MB: none of the
#    100,000 is lost (98,313 were).
# 3. When the filter's region is full, the trigger fails closed by default
#    (ERROR 53200, no row of that statement accepted), and with
#    'on_full=drop' accepts with a WARNING and counts the dropped slices in
#    "truncated".
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('dedup');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.worker_enabled = off
max_connections = 30
});
$node->start;

# ---- 1. the README's example under pgbench ---------------------------------
my $span = 10;    # seconds
$node->safe_psql('postgres', qq{
	CREATE EXTENSION tlbf;
	CREATE TABLE clicks (user_id int, ad_id int, clicked_at timestamptz DEFAULT now());
	-- 200 users x 100 ads: 20,000 keys, the capacity
	SELECT tlbf_shared_create('clicks', '$span seconds', error_rate => 0.001, capacity => 20000);
	CREATE TRIGGER no_repeat_clicks BEFORE INSERT ON clicks
	    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('clicks', 'user_id', 'ad_id');
});
$node->pgbench(
	'--no-vacuum --client=8 --jobs=2 --rate=6000 --time=' . (3 * $span),
	0, [qr{processed: \d+}], [], 'pgbench: 8 clients insert clicks through the trigger',
	{ 'click.sql' => q{
\set u random(1, 200)
\set a random(1, 100)
INSERT INTO clicks (user_id, ad_id) VALUES (:u, :a);
} });
my ($accepted, $duplicates, $truncated) = split /\|/, $node->safe_psql('postgres', qq{
	SELECT (SELECT count(*) FROM clicks),
	       (SELECT count(*) FROM (SELECT clicked_at - lag(clicked_at) OVER w AS gap
	                              FROM clicks WINDOW w AS (PARTITION BY user_id, ad_id ORDER BY clicked_at)) s
	        WHERE gap < interval '$span seconds'),
	       (SELECT info->>'truncated' FROM tlbf_shared_list() WHERE name = 'clicks')});
cmp_ok($accepted, '>', 20000, "the clients' rows were accepted ($accepted)");
is($duplicates, '0', 'no two accepted rows of one key within the span');
is($truncated, '0', 'the filter dropped no live slice');
my $tries = $node->safe_psql('postgres', q{SELECT pg_stat_force_next_flush() IS NULL}) &&
  $node->safe_psql('postgres', q{SELECT xact_commit FROM pg_stat_database WHERE datname = 'postgres'});
note("accepted $accepted rows of about $tries tried");

# ---- 2. hot keys ---------------------------------------------------------------
# Times from a fixed start (in the future: no retirement meets them):
# 100,000 keys at the start, then 5M additions of 50,000 hot keys, one
# every 60 us (five minutes); every first key is asked at the end.  Such
# times are refused unless tlbf.max_future allows them.
$node->safe_psql('postgres', q{
	SET tlbf.max_future = -1;
	SELECT tlbf_shared_create('hot', '10 minutes', capacity => 150000, max_bytes => 32 * 1024 * 1024);
	SELECT tlbf_shared_rebuild('hot', $$SELECT g, '2100-01-01 00:00+00'::timestamptz
	                                    FROM generate_series(1, 100000) g$$);
});
my $region_before = $node->safe_psql('postgres',
	q{SELECT info->>'region_bytes' FROM tlbf_shared_list() WHERE name = 'hot'});
is($node->safe_psql('postgres', q{
	SET tlbf.max_future = -1;
	SELECT tlbf_shared_rebuild('hot', $$SELECT 1000000 + i % 50000,
	                                           '2100-01-01 00:00+00'::timestamptz + i * interval '60 us'
	                                    FROM generate_series(1, 5000000) i$$)}),
	'5000000', '5M additions of 50,000 hot keys over five minutes');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM generate_series(1, 100000) g
	WHERE NOT tlbf_shared_contains('hot', g, '2100-01-01 00:05:00.000001+00')}),
	'0', 'none of the 100,000 keys added before is lost');
my ($region_after, $hot_truncated) = split /\|/, $node->safe_psql('postgres',
	q{SELECT info->>'region_bytes', info->>'truncated' FROM tlbf_shared_list() WHERE name = 'hot'});
is($region_after, $region_before, "the filter's region is the one it was created with ($region_after bytes)");
is($hot_truncated, '0', '... and it dropped no live slice');

# ---- 3. no room in the pool: fail closed, or drop loudly -----------------------
my $small = PostgreSQL::Test::Cluster->new('small_pool');
$small->init;
$small->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.worker_enabled = off
tlbf.shared_memory = '1MB'
});
$small->start;
$small->safe_psql('postgres', q{
	CREATE EXTENSION tlbf;
	CREATE TABLE strict_events (k int);
	CREATE TABLE loose_events (k int);
	SELECT tlbf_shared_create('strict', '1 hour', capacity => 1000);
	CREATE TRIGGER dedup BEFORE INSERT ON strict_events
	    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('strict', 'k');
});
# 500,000 new keys, 10,000 a transaction, need more than the filter's region
my $batches = join("\n", map {
	sprintf("INSERT INTO strict_events SELECT g FROM generate_series(%d, %d) g;", $_ * 10000 + 1, ($_ + 1) * 10000)
} 0 .. 49);
my ($ret, $out, $err) = $small->psql('postgres', "\\set VERBOSITY verbose\n$batches",
	on_error_stop => 0);
like($err, qr/ERROR:  53200: shared tlbf filter "strict" is full/,
	'the region full, the default trigger fails an insert, with 53200 naming the filter');
like($err, qr/HINT:  .*max_bytes/, '... and what to do');
my $stored = $small->safe_psql('postgres', 'SELECT count(*) FROM strict_events');
is($stored % 10000, 0, "... and accepts no row of a statement that failed ($stored rows in whole batches)");
is($small->safe_psql('postgres', q{SELECT info->>'truncated' FROM tlbf_shared_list() WHERE name = 'strict'}),
	'0', '... and the filter dropped nothing');
$small->safe_psql('postgres', q{
	SELECT tlbf_shared_drop('strict');
	SELECT tlbf_shared_create('loose', '1 hour', capacity => 1000);
	CREATE TRIGGER dedup BEFORE INSERT ON loose_events
	    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('on_full=drop', 'loose', 'k');
});
$batches =~ s/strict_events/loose_events/g;
($ret, $out, $err) = $small->psql('postgres', "\\set VERBOSITY verbose\n$batches", on_error_stop => 0);
unlike($err, qr/ERROR/, "with 'on_full=drop' the inserts go through") or diag($err);
like($err, qr/WARNING:  54000: shared tlbf filter "loose" was full and dropped unexpired slices/,
	'... with a WARNING');
cmp_ok($small->safe_psql('postgres', q{SELECT info->>'truncated' FROM tlbf_shared_list() WHERE name = 'loose'}),
	'>', 0, '... and the dropped slices counted in truncated');
ok($small->log_contains(qr/shared tlbf filter "loose" was full and dropped unexpired slices/),
	'... and a line in the server log');
my ($bad_ret, $bad_out, $bad_err) = $small->psql('postgres', q{
	CREATE TABLE bad_option (k int);
	CREATE TRIGGER dedup BEFORE INSERT ON bad_option
	    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('on_full=maybe', 'loose', 'k');
	INSERT INTO bad_option VALUES (1);});
like($bad_err, qr/invalid tlbf_reject_recent option "on_full=maybe"/, 'an unknown on_full is refused');

$small->stop;
$node->stop;
done_testing();
