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

our @EXPORT_OK = qw(citus_cluster);

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
		my $node = PostgreSQL::Test::Cluster->new($name);
		$node->init;
		$node->append_conf('postgresql.conf', qq{
			listen_addresses = 'localhost'
			shared_preload_libraries = 'citus,tlbf'
			max_worker_processes = 16
			tlbf.worker_enabled = off
			citus.max_worker_nodes_tracked = 4
		});
		my $extra = $name eq 'coordinator' ? $opts{coordinator_conf} : $opts{worker_conf};
		$node->append_conf('postgresql.conf', $extra) if defined $extra;
		$node->start;
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

1;
