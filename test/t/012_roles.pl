# Role squatting (issue 14, item 4).  tlbf_admin and tlbf_user belong to
# the cluster; the install script made them only if they were missing, so a
# role with CREATEROLE could create them first, keep ADMIN on them (16+) or
# be a member, and be handed every privilege the extension grants them.
# CREATE EXTENSION must refuse such a role, with an error that names it, and
# grant nothing.  What must keep working: the roles the extension made in
# one database serve every other database of the cluster, also once the
# superuser granted tlbf_user to an application role, and after the
# extension is dropped and created again.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('roles');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'tlbf'
tlbf.worker_enabled = off
});
$node->start;
my $pg16 = $node->safe_psql('postgres', 'SHOW server_version_num') >= 160000;

$node->safe_psql('postgres', q{
	CREATE ROLE squatter LOGIN CREATEROLE;
	CREATE ROLE app LOGIN;
});

sub as_squatter
{
	my ($sql) = @_;
	return $node->safe_psql('postgres', $sql, extra_params => [ '-U', 'squatter' ]);
}

# Nothing of the extension exists in $db, and nothing there names $role.
sub nothing_granted
{
	my ($db, $role, $what) = @_;
	is($node->safe_psql($db, q{
		SELECT to_regprocedure('tlbf_shared_create(text,interval,float8,bigint)') IS NULL
		   AND to_regclass('tlbf_shared_filters') IS NULL}),
		't', "$what: the extension was not created");
	is($node->safe_psql($db, qq{
		SELECT (SELECT count(*) FROM pg_class WHERE relacl::text LIKE '%$role%')
		     + (SELECT count(*) FROM pg_proc WHERE proacl::text LIKE '%$role%')
		     + (SELECT count(*) FROM pg_namespace WHERE nspacl::text LIKE '%$role%')
		     + (SELECT count(*) FROM pg_auth_members
		        WHERE member = (SELECT oid FROM pg_roles WHERE rolname = '$role')
		           OR roleid = (SELECT oid FROM pg_roles WHERE rolname = '$role')
		              AND grantor = (SELECT oid FROM pg_roles WHERE rolname = 'postgres')
		              AND member <> (SELECT oid FROM pg_roles WHERE rolname = 'squatter'))}),
		'0', "$what: nothing was granted to or through $role");
}

sub clean_up
{
	my ($db) = @_;
	$node->safe_psql($db, 'DROP EXTENSION IF EXISTS tlbf CASCADE');
	$node->safe_psql('postgres', q{
		DROP ROLE IF EXISTS tlbf_admin;
		DROP ROLE IF EXISTS tlbf_user;
	});
}

# 1. tlbf_admin squatted: created by the squatter (who has ADMIN on it on
#    16 and later), who also made itself a member.
$node->safe_psql('postgres', 'CREATE DATABASE v1');
as_squatter('CREATE ROLE tlbf_admin; GRANT tlbf_admin TO squatter;');
my ($ret, $out, $err) = $node->psql('v1', 'CREATE EXTENSION tlbf');
isnt($ret, 0, 'CREATE EXTENSION fails when tlbf_admin was created by someone else');
like($err, qr/ERROR: .*tlbf_admin/, '... with an error that names tlbf_admin');
nothing_granted('v1', 'tlbf_admin', 'tlbf_admin squatted');
clean_up('v1');

# 2. tlbf_user squatted (the squatter keeps ADMIN on 16 and later), with a
#    LOGIN and a password for good measure.
$node->safe_psql('postgres', 'CREATE DATABASE v2');
as_squatter(q{CREATE ROLE tlbf_user LOGIN PASSWORD 'squatted'; GRANT tlbf_user TO squatter;});
($ret, $out, $err) = $node->psql('v2', 'CREATE EXTENSION tlbf');
isnt($ret, 0, 'CREATE EXTENSION fails when tlbf_user was created by someone else');
like($err, qr/ERROR: .*tlbf_user/, '... with an error that names tlbf_user');
nothing_granted('v2', 'tlbf_user', 'tlbf_user squatted');
clean_up('v2');

# 3. Only ADMIN kept, no membership (16 and later: CREATEROLE alone gives it).
if ($pg16)
{
	$node->safe_psql('postgres', 'CREATE DATABASE v3');
	as_squatter('CREATE ROLE tlbf_admin');
	($ret, $out, $err) = $node->psql('v3', 'CREATE EXTENSION tlbf');
	isnt($ret, 0, 'CREATE EXTENSION fails when someone else holds ADMIN on tlbf_admin');
	like($err, qr/ERROR: .*tlbf_admin/, '... with an error that names tlbf_admin');
	nothing_granted('v3', 'tlbf_admin', 'ADMIN on tlbf_admin');
	clean_up('v3');
}

# What must keep working: the roles made by the extension serve a second
# database, also after GRANT tlbf_user TO app, and a drop and re-create.
$node->safe_psql('postgres', 'CREATE DATABASE w1; CREATE DATABASE w2; CREATE DATABASE w3;');
($ret, $out, $err) = $node->psql('w1', 'CREATE EXTENSION tlbf');
is($ret, 0, 'with no such roles, CREATE EXTENSION makes them') or diag($err);
($ret, $out, $err) = $node->psql('w2', 'CREATE EXTENSION tlbf');
is($ret, 0, 'a second database uses the roles the first one made') or diag($err);
$node->safe_psql('postgres', 'GRANT tlbf_user TO app');
($ret, $out, $err) = $node->psql('w3', 'CREATE EXTENSION tlbf');
is($ret, 0, '... also after GRANT tlbf_user TO app') or diag($err);
is($node->safe_psql('w3',
		q{SELECT has_function_privilege('app', 'tlbf_shared_add(text,"any",timestamptz)', 'EXECUTE')}),
	't', '... and app may use shared filters there');
($ret, $out, $err) = $node->psql('w1', 'DROP EXTENSION tlbf; CREATE EXTENSION tlbf;');
is($ret, 0, 'the extension can be dropped and created again') or diag($err);
if ($pg16)
{
	# once made by the extension, the squatter cannot take them over
	($ret, $out, $err) = $node->psql('postgres', 'GRANT tlbf_admin TO squatter',
		extra_params => [ '-U', 'squatter' ]);
	isnt($ret, 0, 'a CREATEROLE role cannot grant itself the real tlbf_admin');
}

$node->stop;
done_testing();
