# The dedup trigger and prepared transactions across a crash (issue 38): a
# key a prepared transaction's row stored is written down at PREPARE
# TRANSACTION, so after an immediate stop and a start it is pending again:
# an insert of it waits for the prepared transaction (as a unique index
# would), then is skipped after COMMIT PREPARED and stored after ROLLBACK
# PREPARED.  A transaction committed with COMMIT PREPARED just before the
# crash, before any save, keeps its key too.  (Saves are an hour apart:
# nothing here comes from the snapshot table.)
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('dedup_prepared');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.snapshot_interval = 3600
max_prepared_transactions = 10
});
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION tlbf;
	CREATE TABLE signups (email text);
	SELECT tlbf_shared_create('signups', '1 hour', 1e-6);
	CREATE TRIGGER dedup BEFORE INSERT ON signups
	    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('signups', 'email');
	INSERT INTO signups VALUES ('saved@example.com');
});
# the filter's row is written when it is created; make sure it is loaded
# from it after the restart, holding no key from before
$node->safe_psql('postgres', q{
	BEGIN; INSERT INTO signups VALUES ('ann@example.com'); PREPARE TRANSACTION 'p_commit';
	BEGIN; INSERT INTO signups VALUES ('bob@example.com'); PREPARE TRANSACTION 'p_rollback';
	BEGIN; INSERT INTO signups VALUES ('cat@example.com'); PREPARE TRANSACTION 'p_done';
	COMMIT PREPARED 'p_done';
});
ok(-d $node->data_dir . '/pg_tlbf/pending', 'the prepared transactions wrote their keys down');

$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_prepared_xacts'), '2',
	'after an immediate stop and a start, two transactions are still prepared');

# a key of a prepared transaction: an insert of it waits for it
my ($ret, $out, $err) = $node->psql('postgres',
	q{SET lock_timeout = '500ms'; INSERT INTO signups VALUES ('ann@example.com')});
like($err, qr/lock timeout/, 'an insert of a key a prepared transaction stored waits for it');

is($node->safe_psql('postgres', q{
	COMMIT PREPARED 'p_commit';
	INSERT INTO signups VALUES ('ann@example.com');
	SELECT count(*) FROM signups WHERE email = 'ann@example.com'}),
	'1', 'after COMMIT PREPARED, the key is a duplicate: the insert is skipped');
is($node->safe_psql('postgres', q{
	ROLLBACK PREPARED 'p_rollback';
	INSERT INTO signups VALUES ('bob@example.com');
	SELECT count(*) FROM signups WHERE email = 'bob@example.com'}),
	'1', 'after ROLLBACK PREPARED, the row is stored');
is($node->safe_psql('postgres', q{
	INSERT INTO signups VALUES ('cat@example.com');
	SELECT count(*) FROM signups WHERE email = 'cat@example.com'}),
	'1', 'a transaction committed with COMMIT PREPARED before the crash keeps its key');
is($node->safe_psql('postgres', q{SELECT tlbf_shared_contains('signups', 'cat@example.com')}),
	't', '... and the filter finds it');

# tlbf_shared_rebuild refills the filter from the rows stored; keys of
# transactions still prepared come back by themselves (above)
$node->safe_psql('postgres', q{
	BEGIN; INSERT INTO signups VALUES ('dan@example.com'); PREPARE TRANSACTION 'p_rebuild';
});
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', q{
	SELECT tlbf_shared_rebuild('signups', $$SELECT email, now() FROM signups$$)}),
	'4', 'after a crash, tlbf_shared_rebuild adds the rows stored');
($ret, $out, $err) = $node->psql('postgres',
	q{SET lock_timeout = '500ms'; INSERT INTO signups VALUES ('dan@example.com')});
like($err, qr/lock timeout/, '... and the prepared transaction\'s key still makes an insert of it wait');
$node->safe_psql('postgres', q{COMMIT PREPARED 'p_rebuild'});
is($node->safe_psql('postgres', q{
	INSERT INTO signups VALUES ('dan@example.com');
	SELECT count(*) FROM signups WHERE email = 'dan@example.com'}),
	'1', '... then is skipped');

$node->stop;
done_testing();
