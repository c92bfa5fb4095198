# For the Citus TAP tests: a coordinator and two workers on this host, each
# with Citus and tlbf preloaded, the workers added to the coordinator, and
# tlbf created (Citus propagates it).
package TlbfCitus;

use strict;
use warnings;

use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT_OK = qw(citus_cluster visits_tables plan_of yes);

# A node listening on localhost (Citus connects to the nodes by TCP), with
# 'extra' appended to its postgresql.conf, started.  The port
# PostgreSQL::Test::Cluster found free may be taken before the server binds
# it: its reservations hold only within this tree, and another checkout's
# tests or a scripts/cluster.sh may choose the same port meanwhile.  Then
# the node is given up for a new one (a new port), named NAME_2, NAME_3, ...
sub started_node
{
	my ($name, $extra) = @_;
	foreach my $try (1 .. 5)
	{
		my $node = PostgreSQL::Test::Cluster->new($try == 1 ? $name : "${name}_$try");
		$node->init;
		$node->append_conf('postgresql.conf', qq{
			listen_addresses = 'localhost'
			shared_preload_libraries = 'citus,tlbf'
			max_worker_processes = 16
			tlbf.worker_enabled = off
			citus.max_worker_nodes_tracked = 4
		});
		$node->append_conf('postgresql.conf', $extra) if defined $extra;
		my $started = $node->start(fail_ok => 1);
		# (bound one of localhost's addresses only: Citus could reach
		# another server through the other)
		return $node if $started && slurp_file($node->logfile) !~ /could not bind/;
		$node->stop if $started;
		BAIL_OUT("node $name did not start") if slurp_file($node->logfile) !~ /could not bind/;
		note "node $name: port " . $node->port . ' was taken meanwhile; another';
	}
	BAIL_OUT("node $name: every port tried was taken before the server bound it");
}

# (coordinator, worker1, worker2).  'coordinator_conf' and 'worker_conf'
# are appended to the nodes' postgresql.conf; 'create' is what the
# coordinator runs once the workers are added (CREATE EXTENSION tlbf by
# default).  Skips the whole test when Citus is not installed.
sub citus_cluster
{
	my (%opts) = @_;
	my $libdir = `pg_config --pkglibdir`;
	chomp $libdir;
	plan skip_all => "Citus is not installed in $libdir (scripts/citus.sh installs it)"
	  unless -f "$libdir/citus.so";

	my @nodes;
	for my $name ('coordinator', 'worker1', 'worker2')
	{
		my $extra = $name eq 'coordinator' ? $opts{coordinator_conf} : $opts{worker_conf};
		my $node = started_node($name, $extra);
		$node->safe_psql('postgres', 'CREATE EXTENSION citus');
		push @nodes, $node;
	}
	my $create = $opts{create} // 'CREATE EXTENSION tlbf';
	$nodes[0]->safe_psql('postgres', sprintf(q{
		SELECT citus_set_coordinator_host('localhost', %d);
		SELECT citus_add_node('localhost', %d);
		SELECT citus_add_node('localhost', %d);
		%s;
	}, (map { $_->port } @nodes), $create));
	note 'Citus '
	  . $nodes[0]->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'citus'})
	  . ' on ' . $nodes[0]->safe_psql('postgres', 'SHOW server_version');
	return @nodes;
}

# 400,000 visits of 20,000 users to 12 sites over 80 minutes (the span the
# tests ask is an hour), from random() seeded with 'seed', inserted in
# random order into a table distributed by user_id (visits); the same rows
# in a local table (visits_local).
sub visits_tables
{
	my ($coordinator, $seed) = @_;
	$coordinator->safe_psql('postgres', qq{
		SET TimeZone = 'UTC';
		SELECT setseed($seed);
		CREATE TABLE visits_local AS
		SELECT (random() * 20000)::bigint AS user_id, (random() * 11)::int AS site,
		       '2024-01-01 00:00+00'::timestamptz + g * interval '12 ms' AS at
		FROM generate_series(1, 400000) g ORDER BY random();
		CREATE TABLE visits (LIKE visits_local);
		SELECT create_distributed_table('visits', 'user_id');
		INSERT INTO visits SELECT * FROM visits_local;
		ANALYZE visits, visits_local;
	});
}

# The plan a node gives a query, verbose.
sub plan_of
{
	my ($node, $query) = @_;
	return $node->safe_psql('postgres', "EXPLAIN (VERBOSE, COSTS OFF) $query");
}

# Is a query's one value true?
sub yes
{
	my ($node, $query) = @_;
	return $node->safe_psql('postgres', $query) eq 't';
}

1;
