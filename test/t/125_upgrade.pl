# Upgrade scripts: for every sql/snowflake--A--B.sql the tree ships, the
# extension installed at A and updated with ALTER EXTENSION snowflake UPDATE
# TO 'B' has the catalog of a fresh install of B (test/upgrade/catalog.sql:
# every member with its definition, operator-family members, casts, comments
# and privileges); every released version reaches default_version; the
# released install scripts are byte for byte the ones released
# (sql/released.sha256). The comparison is checked to see what it must: a
# changed label, comment, privilege or operator-family member. META.json and
# debian/changelog name default_version.
use strict;
use warnings FATAL => 'all';

use Digest::SHA qw(sha256_hex);
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $root = $ENV{TESTDIR} // '.';
my $catalog = slurp_file("$root/test/upgrade/catalog.sql");
my ($default) = slurp_file("$root/snowflake.control") =~ /^default_version = '([^']+)'/m
  or die 'no default_version in snowflake.control';
my @scripts = map { m{/snowflake--([^/]+)\.sql$} ? $1 : () } glob "$root/sql/snowflake--*.sql";
my @installs = grep { !/--/ } @scripts;
my @updates = map { [ split /--/ ] } grep { /--/ } @scripts;
# default_version is installed by the newest install script and the updates
# from it (a version after 1.1 has no install script of its own: a fresh
# installation and an updated one run the same statements)
my ($newest) = sort { version_key($b) cmp version_key($a) } @installs;
sub version_key { return join '.', map { sprintf '%05d', $_ } split /\./, $_[0]; }
ok($newest eq $default || (grep { $_->[0] eq $newest } @updates), "default_version $default: installed from $newest");
# what PGXN and the Debian package are told is that version
my $meta = JSON::PP->new->decode(slurp_file("$root/META.json"));
is($meta->{version}, "$default.0", "META.json's version is default_version ($default.0)");
is_deeply([ @{ $meta->{provides}{snowflake} }{qw(version file)} ], [ "$default.0", "sql/snowflake--$newest.sql" ],
	"META.json provides default_version, from its install script");
like(slurp_file("$root/debian/changelog"), qr/\Asnowflake \(\Q$default\E\)/, "debian/changelog's first entry is $default");

my $k128 = '2B7E151628AED2A6ABF7158809CF4F3C';
my $node = snowflake_node('upgrade', 1, "snowflake.public_key_file = 'public_keys'\n");
{
	my $file = $node->data_dir . '/public_keys';
	open my $fh, '>', $file or die "$file: $!";
	print $fh "0 $k128\n";    # the key 1.0's forms were given below, under key id 0
	close $fh;
	chmod 0600, $file or die "$file: $!";
}
$node->start;

my $databases = 0;
# A new database with the extension created at $version (and updated to $to).
sub installed
{
	my ($version, $to) = @_;
	my $db = 'db' . ++$databases;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, "CREATE EXTENSION snowflake VERSION '$version'");
	$node->safe_psql($db, "ALTER EXTENSION snowflake UPDATE TO '$to'") if defined $to;
	return $db;
}
sub catalog_of { return [ split /\n/, $node->safe_psql($_[0], $catalog) ]; }

# What the comparison must see: each change to a fresh install shows.
my $fresh = catalog_of(installed($default));
cmp_ok(scalar @$fresh, '>', 200, sprintf('the catalog of %s: %d objects', $default, scalar @$fresh));
is_deeply(catalog_of(installed($default)), $fresh, 'two fresh installs: the same catalog');
for my $change (
	[ 'a function\'s label', 'ALTER FUNCTION snowflake_to_base32(bigint) VOLATILE', qr/^function snowflake_to_base32\(bigint\) \|/ ],
	[ 'a comment', "COMMENT ON FUNCTION snowflake_nextval() IS 'changed'", qr/snowflake_nextval\(\).*\| changed$/ ],
	[ 'a privilege', 'GRANT EXECUTE ON FUNCTION snowflake_adopt_worker_id(timestamptz) TO PUBLIC', qr/snowflake_adopt_worker_id.*=X/ ],
	[ 'a member of a core operator family',
	  'ALTER EXTENSION snowflake DROP OPERATOR CLASS snowflake_ops USING btree; DROP OPERATOR CLASS snowflake_ops USING btree',
	  qr/^operator 1 \(bigint, snowflake\) of operator family integer_ops/ ])
{
	my ($what, $sql, $line) = @$change;
	my $db = installed($default);
	$node->safe_psql($db, $sql);
	my %before = map { $_ => 1 } @$fresh;
	my %after = map { $_ => 1 } @{ catalog_of($db) };
	my @differing = ((grep { !$after{$_} } keys %before), (grep { !$before{$_} } keys %after));
	ok((grep { $_ =~ $line } @differing), "the comparison sees $what changed");
}

# Every shipped upgrade script.
note scalar(@updates) . ' upgrade scripts shipped';
for my $update (@updates)
{
	my ($from, $to) = @$update;
	my $updated = catalog_of(installed($from, $to));
	my $new = catalog_of(installed($to));
	is_deeply($updated, $new, "$from updated to $to: the catalog of a fresh $to");
}

# 1.0's forms given the key: the update to 1.1 refuses while an index uses
# them (55000, naming it); the documented way (docs/public-id-keys.md): drop it,
# update, create it on the key id's form, which gives the same public ids.
{
	my $db = installed('1.0');
	$node->safe_psql($db, "CREATE TABLE t (id bigint PRIMARY KEY); INSERT INTO t SELECT generate_series(1, 100);
		CREATE INDEX t_public ON t (snowflake_to_public(id, '\\x$k128'::bytea));
		CREATE TABLE old_forms AS SELECT id, snowflake_to_public(id, '\\x$k128'::bytea) AS p FROM t");
	my ($rc, $out, $err) = $node->psql($db, 'ALTER EXTENSION snowflake UPDATE', extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($err, qr/ERROR:  55000: snowflake 1.1 drops snowflake_to_public\(bigint, bytea\) and snowflake_from_public\(text, bytea\), which index t_public uses/,
		'1.0 to 1.1 with an index on a form given the key: refused (55000), naming the index');
	like($err, qr/HINT:  Drop what uses them, update/, 'the hint gives the way');
	$node->safe_psql($db, 'DROP INDEX t_public; ALTER EXTENSION snowflake UPDATE; CREATE INDEX t_public ON t (snowflake_to_public(id, 0))');
	is($node->safe_psql($db, 'SELECT count(*) FROM old_forms o JOIN t ON snowflake_to_public(t.id, 0) = o.p AND snowflake_from_public(o.p, 0) = t.id'),
		'100', 'the index on the key id\'s form: the same public ids as 1.0\'s form given the key');
	unlike($node->safe_psql($db, "SELECT indexdef FROM pg_indexes WHERE indexname = 't_public'"), qr/2B7E/i,
		'the new index holds no key');
}

# A 1.0 registry made by a role that is not a superuser, the role its nodes
# connect as, holding a 1.0 node's grant: ALTER EXTENSION UPDATE brings it to
# the shape of a fresh registry of default_version, keeps the grant (its node
# renews it), and leaves its owner the functions nodes call, and no one else.
{
	my $old = installed('1.0');
	my $fresh = installed($default);
	$node->safe_psql('postgres', "CREATE ROLE reg_owner LOGIN; CREATE ROLE reg_other LOGIN; GRANT CREATE ON DATABASE $old TO reg_owner");
	$node->safe_psql($old, "SET ROLE reg_owner; SELECT snowflake_registry_create('[0,4)', '10 min')");
	$node->safe_psql($fresh, "SELECT snowflake_registry_create('[0,4)', '10 min')");
	my $claim = sub {
		my ($holder) = @_;
		return split /\|/, $node->safe_psql($old, "SET ROLE reg_owner; SELECT worker_id, fencing_epoch, until_ms FROM "
			  . "snowflake_registry_claim('$holder', 'node $holder', NULL, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12')");
	};
	my ($w, $epoch, $until) = $claim->('one');
	$node->safe_psql($old, "ALTER EXTENSION snowflake UPDATE TO '$default'");

	my $shape = q{
		SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, coalesce(pg_get_expr(d.adbin, d.adrelid), '')
		  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		  LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
		 WHERE c.relnamespace = 'snowflake_registry'::regnamespace
		UNION ALL
		SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid), NULL, '' FROM pg_constraint
		 WHERE connamespace = 'snowflake_registry'::regnamespace
		UNION ALL
		SELECT 'view claims', pg_get_viewdef('snowflake_registry.claims'), '', NULL, ''
		 ORDER BY 1, 2};
	my @fresh_shape = split /\n/, $node->safe_psql($fresh, $shape);
	cmp_ok(scalar @fresh_shape, '>', 30, 'a fresh registry: ' . scalar(@fresh_shape) . ' columns, constraints and a view');
	is_deeply([ split /\n/, $node->safe_psql($old, $shape) ], \@fresh_shape,
		'a 1.0 registry, updated: its tables, constraints and view are a fresh registry\'s');
	is($node->safe_psql($old, "SELECT registry_id IS NOT NULL AND life IS NOT NULL FROM snowflake_registry.grants WHERE worker_id = $w"),
		't', '... its grant kept, recorded under the registry\'s first life');
	cmp_ok($node->safe_psql($old, "SET ROLE reg_owner; SELECT until_ms FROM snowflake_registry_renew($w, $epoch, 'one', 60000)"),
		'>=', $until, 'its 1.0 node renews the grant, as its owner');
	my ($w2) = $claim->('two');
	isnt($w2, $w, 'a claim after the update gets another worker id');
	is($node->safe_psql($old, "SELECT string_agg(p.oid::regprocedure::text, ', ' ORDER BY p.oid::regprocedure::text)
		FROM pg_proc p WHERE p.proname LIKE 'snowflake_registry%' AND has_function_privilege('reg_owner', p.oid, 'EXECUTE')"),
		'snowflake_registry_claim(text,text,integer,integer,bigint,bigint,text), snowflake_registry_life(), '
		  . 'snowflake_registry_present(integer,bigint,text,text,bigint,bigint,bigint,text,text), '
		  . 'snowflake_registry_release(integer,bigint,text,bigint), snowflake_registry_renew(integer,bigint,text,bigint)',
		'its owner may call the functions nodes call, and no other registry function');
	is($node->safe_psql($old, "SELECT count(*) FROM pg_proc p WHERE p.proname LIKE 'snowflake_registry%'
		AND has_function_privilege('reg_other', p.oid, 'EXECUTE')"), '0', 'another role, none');
}

# Every released version reaches default_version.
my %reaches = map { split /\|/ } split /\n/,
  $node->safe_psql('postgres', "SELECT source, path IS NOT NULL FROM pg_extension_update_paths('snowflake') WHERE target = '$default'");
for my $version (grep { $_ ne $default } @installs)
{
	is($reaches{$version}, 't', "$version updates to $default");
}

# Released install scripts are never edited.
my %released = map { /^([0-9a-f]{64})  (\S+)$/ ? ($2 => $1) : () } split /\n/, slurp_file("$root/sql/released.sha256");
note scalar(keys %released) . ' released install scripts recorded';
for my $file (sort keys %released)
{
	is(sha256_hex(slurp_file("$root/$file")), $released{$file}, "$file is as released");
}

$node->stop;
done_testing();
