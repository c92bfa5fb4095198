# For TAP tests that crash the server on purpose: waiting for it to answer
# again.
package CrashPoll;

use strict;
use warnings;

use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Utils;
use Time::HiRes qw(usleep);

our @EXPORT_OK = qw(poll_after_crash);

# PostgreSQL::Test::Cluster::poll_query_until for just after a crash, with
# the query on psql's command line instead of its standard input: while the
# postmaster starts over, psql may exit before it reads its input, and
# writing the query to it then ends the whole test with "ack Broken pipe"
# (IPC::Run).  True once the query prints 'expected' ('t' by default).
sub poll_after_crash
{
	my ($node, $dbname, $query, $expected) = @_;
	my $cmd = [
		$node->installed_command('psql'), '-XAtq',
		'-d', $node->connstr($dbname), '-c', $query
	];
	my ($stdout, $stderr);

	$expected = 't' unless defined $expected;
	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		IPC::Run::run($cmd, '<', '/dev/null', '>', \$stdout, '2>', \$stderr);
		chomp $stdout;
		return 1 if $stdout eq $expected && $stderr eq '';
		usleep(100_000);
	}
	diag("poll_after_crash timed out: $query\nlast output: $stdout\nlast error: $stderr");
	return 0;
}

1;
