# How the launcher schedules the workers, and what they cost over time
# (issue 14, items 10 and 12).
#
# 10. The launcher obeys tlbf.naptime: with naptime 3 and four databases
#     with the extension (nothing registered, no shared filters), each
#     database gets at most one maintenance worker per naptime: every
#     worker the postmaster starts (its DEBUG1 "starting background worker
#     process" lines) is one the launcher started (its DEBUG1 "started a
#     maintenance worker" line, before the postmaster starts the next),
#     and the launcher's rounds that started them, on its own clock, are a
#     naptime apart or more; three or more of them for each database.  And with no
#     background worker slot free, a LOG line at the default level says
#     that a database got no pass, at most once per naptime (per database,
#     if the line names one): three such lines, by their times in the log,
#     at least a naptime apart.
# 12. The launcher, the one process that stays (its workers start for a
#     pass or a save and exit), does not grow its memory pass after pass:
#     pg_log_backend_memory_contexts() twice, ten passes and ten saves
#     apart, each between passes, shows the same memory in use (within
#     8 kB).  The workers' database has 40 shared filters with long names,
#     saved every second (the test waits until every one is saved, which an
#     assert-enabled build also needs to survive the save), and a
#     registered table.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::Local qw(timegm);

my $node = PostgreSQL::Test::Cluster->new('scheduling');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.naptime = 3
tlbf.snapshot_interval = 1
log_min_messages = debug1
});
$node->start;

# ---- 10. one worker per database per naptime -------------------------------
my %oid;
foreach my $db ('n1', 'n2', 'n3', 'n4')
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION tlbf');
	$oid{$db} = $node->safe_psql('postgres', "SELECT oid FROM pg_database WHERE datname = '$db'");
}
my $offset = -s $node->logfile;

# The log from $offset until the launcher has started $starts maintenance
# workers in each database of %oid.
sub log_until_starts
{
	my ($starts) = @_;
	foreach (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		my $log = slurp_file($node->logfile, $offset);
		my %n;
		$n{$1}++ while $log =~ /tlbf launcher: started a maintenance worker in database (\d+)/g;
		return $log unless grep { ($n{$_} // 0) < $starts } values %oid;
		select(undef, undef, undef, 0.1);
	}
	return slurp_file($node->logfile, $offset);
}
my $log = log_until_starts(4);

# In the order they were written: the postmaster starting a worker ('P'),
# the launcher saying it started one ('L'), the launcher ending a round
# that began at a time on its clock.
my %events;
my @in_round;
while ($log =~ /starting background worker process "tlbf maintenance in database (\d+)"|tlbf launcher: started a maintenance worker in database (\d+)|tlbf launcher: round at (\d+) ms/g)
{
	if (defined $1)
	{
		push @{ $events{$1} }, ['P'];
	}
	elsif (defined $2)
	{
		push @{ $events{$2} }, ['L'];
		push @in_round, $events{$2}[-1];
	}
	else
	{
		$_->[1] = $3 foreach @in_round;
		@in_round = ();
	}
}
foreach my $db (sort keys %oid)
{
	my @e = @{ $events{ $oid{$db} } // [] };
	# (the last start said may be of a round not over yet)
	pop @e if @e && $e[-1][0] eq 'L' && !defined $e[-1][1];
	my @rounds = map { $_->[1] } grep { $_->[0] eq 'L' } @e;
	my @gaps = map { $rounds[$_] - $rounds[ $_ - 1 ] } 1 .. $#rounds;
	ok(@rounds >= 3 && !grep({ $_ < 3000 } @gaps),
		"naptime 3: database $db got one at most per naptime (" . scalar(@rounds) . ' workers, '
		  . join(', ', map { "$_ ms" } @gaps) . ' apart)');
	# (the worker of the first start said after $offset may have been
	# started before it; the last worker started may not be said yet)
	shift @e if @e && $e[0][0] eq 'L';
	pop @e if @e && $e[-1][0] eq 'P';
	like(join('', map { $_->[0] } @e), qr/^(?:PL){2,}$/,
		"... and every maintenance worker started there is one the launcher started");
}

# ---- 12. memory, pass after pass -------------------------------------------
$node->safe_psql('postgres', q{
	ALTER SYSTEM SET tlbf.naptime = 1;
	ALTER SYSTEM SET log_min_messages = warning;
	SELECT pg_reload_conf();
	CREATE DATABASE mem;
});
$node->safe_psql('mem', q{
	CREATE EXTENSION tlbf;
	SELECT count(*) FROM generate_series(1, 40) i,
	    LATERAL tlbf_shared_create(rpad('a_filter_with_a_rather_long_name_number_' || i, 60, 'x'), '1 hour', 0.01, 1000);
	SELECT count(*) FROM generate_series(1, 40) i, generate_series(1, 10) k
	WHERE tlbf_shared_add(rpad('a_filter_with_a_rather_long_name_number_' || i, 60, 'x'), k);
	CREATE TABLE registered (id int, f tlbf);
	INSERT INTO registered SELECT i, tlbf_add(tlbf_create('1 minute'), i, now() - interval '1 hour')
	FROM generate_series(1, 100) i;
	SELECT tlbf_maintain('registered', 'f');
});
ok($node->poll_query_until('mem', q{
		SELECT count(*) = 40 FROM tlbf_shared_list() WHERE NOT (info->>'unsaved_changes')::boolean}),
	'every shared filter was saved');
ok($node->poll_query_until('mem', 'SELECT count(*) = 0 FROM registered WHERE tlbf_retirable(f)'),
	'the registered table was done');

my $launcher = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'tlbf launcher'");

# The memory the launcher keeps between passes: "used" of the grand total
# of its logged memory contexts, less its round's context (reset at each
# pass).  A dump taken in the middle of a pass (the request is answered at
# any interrupt check) counts that pass's transaction too: it is asked
# again until it comes between passes.
sub memory_in_use
{
	my ($pid) = @_;
	foreach my $attempt (1 .. 100)
	{
		my $from = -s $node->logfile;
		my $dump;
		$node->safe_psql('postgres', "SELECT pg_log_backend_memory_contexts($pid)");
		foreach (1 .. 100)
		{
			my $text = slurp_file($node->logfile, $from);
			if ($text =~ /\[$pid\][^\n]*Grand total: /)
			{
				$dump = join("\n", grep { /\[$pid\]/ } split /\n/, $text);
				last;
			}
			select(undef, undef, undef, 0.1);
		}
		return undef unless defined $dump;
		next if $dump =~ /TopTransactionContext/;
		my ($used) = $dump =~ /Grand total: \d+ bytes in \d+ blocks; \d+ free \(\d+ chunks\); (\d+) used/;
		my ($round) = $dump =~ /tlbf launcher round: \d+ total in \d+ blocks; \d+ free \(\d+ chunks\); (\d+) used/;
		return undef unless defined $used && defined $round;
		return $used - $round;
	}
	return undef;
}

# Ten passes and ten saves, with something to save each time: each round
# waits until its keys are saved and its rows rewritten.
sub ten_rounds
{
	my ($from) = @_;
	foreach my $round ($from .. $from + 9)
	{
		$node->safe_psql('mem', qq{
			SELECT count(*) FROM generate_series(1, 40) i
			WHERE tlbf_shared_add(rpad('a_filter_with_a_rather_long_name_number_' || i, 60, 'x'), 1000 + $round);
			UPDATE registered SET f = tlbf_add(f, $round, now() - interval '1 hour') WHERE id <= 10;
		});
		$node->poll_query_until('mem', q{
			SELECT count(*) = 40 FROM tlbf_shared_list() WHERE NOT (info->>'unsaved_changes')::boolean})
		  or die "round $round: the shared filters were not saved";
		$node->poll_query_until('mem', 'SELECT count(*) = 0 FROM registered WHERE tlbf_retirable(f)')
		  or die "round $round: the registered table was not done";
	}
}

# ten rounds first, for the caches to settle (each makes a few entries the
# first time it is needed: a tablespace cache, statistics entries)
ten_rounds(1);
my %first = (launcher => memory_in_use($launcher));
ten_rounds(11);
ok($node->poll_query_until('mem', q{
		SELECT count(*) = 40 FROM tlbf_shared_list() WHERE NOT (info->>'unsaved_changes')::boolean}),
	'every shared filter was saved again');
my %second = (launcher => memory_in_use($launcher));
foreach my $process ('launcher')
{
	ok(defined $first{$process} && defined $second{$process}, "the $process logged its memory");
	cmp_ok(($second{$process} // 0) - ($first{$process} // 0), '<=', 8192,
		"the $process did not grow over ten passes ($first{$process} -> $second{$process} bytes in use)");
}

# ---- 10. no slot free: said once per naptime ------------------------------
# One slot, which the launcher takes (no logical replication launcher).
$node->safe_psql('postgres', 'ALTER SYSTEM RESET tlbf.naptime');
$node->append_conf('postgresql.conf', qq{
max_worker_processes = 1
max_logical_replication_workers = 0
tlbf.naptime = 2
});
$node->restart;
$offset = -s $node->logfile;
my $slot_line = qr/^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{3}) \S+ \[\d+\] .*LOG:.*(?:slot|max_worker_processes)/im;
my @lines;
foreach (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
{
	@lines = grep { /$slot_line/ && /tlbf/ } split /\n/, slurp_file($node->logfile, $offset);
	last if @lines >= 3;
	select(undef, undef, undef, 0.1);
}
ok(@lines >= 3, 'no worker slot free: a LOG line says a database got no pass')
  or diag(slurp_file($node->logfile, $offset));
# The launcher measures the naptime between two lines from after it wrote
# the first (launcher.c): their times in the log are a naptime apart or
# more, however busy the machine.
my %per_database;
foreach (@lines)
{
	my @t = /$slot_line/;
	my $ms = timegm(@t[5, 4, 3], $t[2], $t[1] - 1, $t[0]) * 1000 + $t[6];
	push @{ $per_database{ /database\D*(\d+)/ ? $1 : 'all' } }, $ms;
}
foreach my $key (sort keys %per_database)
{
	my @ms = @{ $per_database{$key} };
	my @gaps = map { $ms[$_] - $ms[ $_ - 1 ] } 1 .. $#ms;
	ok(!grep({ $_ < 2000 } @gaps),
		"... at most once per naptime (database $key: " . scalar(@ms) . ' lines, '
		  . (@gaps ? join(', ', map { "$_ ms" } @gaps) . ' apart' : 'one') . ')');
}

$node->stop;
done_testing();
