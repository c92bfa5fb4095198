# For TAP tests that need the maintenance worker held in the middle of a
# pass: a registered table whose trigger waits for an advisory lock the
# test holds, so the pass stays in that table (in a step's transaction,
# waiting on the lock) until the test lets it go.
package HeldPass;

use strict;
use warnings;

use Exporter 'import';

our @EXPORT_OK = qw(hold_pass);

# Create the extension and visits_f (column f, $rows filters with only
# expired slices: the pass rewrites each row, whose trigger waits for
# advisory lock $lock), register it, and hold $lock in a background
# session, which is returned: SELECT pg_advisory_unlock($lock) in it lets
# the pass go.
sub hold_pass
{
	my ($node, $lock, $rows) = @_;
	my $holder = $node->background_psql('postgres');

	$holder->set_query_timer_restart();    # its next query may come much later
	$holder->query_safe("SELECT pg_advisory_lock($lock)");
	$node->safe_psql('postgres', sprintf(q{
		CREATE EXTENSION tlbf;
		CREATE TABLE visits_f (id int, f tlbf);
		INSERT INTO visits_f
		SELECT i, tlbf_add(tlbf_create('1 minute'), i, now() - interval '1 hour')
		FROM generate_series(1, %d) i;
		CREATE FUNCTION wait_for_the_test() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			PERFORM pg_catalog.pg_advisory_xact_lock_shared(%d);
			RETURN NEW;
		END $$;
		CREATE TRIGGER wait_for_the_test BEFORE UPDATE ON visits_f
			FOR EACH ROW EXECUTE FUNCTION wait_for_the_test();
		SELECT tlbf_maintain('visits_f', 'f');
	}, $rows, $lock));
	return $holder;
}

1;
