# For TAP tests that show what the launcher and the workers did, or did
# not do: waits on the server log instead of waits of a fixed time, which
# are slow and, on a busy machine, too short.  The launcher's lines are
# DEBUG1 (the node needs log_min_messages = debug1): at the end of each
# round
#   tlbf launcher: round at T ms: passes on|off, N running; next round at T2 ms
# (times on the launcher's clock, from its start; N of its maintenance
# passes still run) and, for each worker it starts,
#   tlbf launcher: started a maintenance|snapshot worker in database OID
# and, whenever it plans a database's next save,
#   tlbf launcher: next save in database OID in N ms
package WorkerLog;

use strict;
use warnings;

use Exporter 'import';
use PostgreSQL::Test::Utils;
use Time::HiRes qw(usleep);

our @EXPORT_OK = qw(wait_for_round wait_for_count);

# Wait until a launcher round that began after $offset in the log has
# ended: the second round line after it (the first may end a round that
# began before).  Whatever that round would have started, it has; whatever
# it would have freed, it has.  Returns the log's length then.
sub wait_for_round
{
	my ($node, $offset) = @_;
	$offset = $node->wait_for_log(qr/tlbf launcher: round at /, $offset);
	return $node->wait_for_log(qr/tlbf launcher: round at /, $offset);
}

# Wait until $regexp matches $count times in the log after $offset; the
# number of matches (at least $count), or 0 after the tests' timeout.
sub wait_for_count
{
	my ($node, $regexp, $count, $offset) = @_;
	my $matches = 0;
	foreach (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		my $log = slurp_file($node->logfile, $offset);
		$matches = () = $log =~ /$regexp/g;
		return $matches if $matches >= $count;
		usleep(100_000);
	}
	return 0;
}

1;
