# snowflake in core's integer_ops families, across the ways a database moves:
# the members the extension adds (rows of pg_amop and pg_amproc naming
# snowflake, each bound to snowflake's classes) are the same after CREATE
# EXTENSION and after pg_dump/pg_restore (after pg_upgrade: test/t/126);
# DROP EXTENSION leaves the family as core made it. Foreign keys between
# snowflake and bigint, integer and smallint, in both directions, check with
# the referencing side's index (auto_explain shows the RI queries' plans).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $conf = qq{
shared_preload_libraries = 'snowflake'
snowflake.worker_id = 5
};
my $node = PostgreSQL::Test::Cluster->new('family');
$node->init;
$node->append_conf('postgresql.conf', $conf);
$node->start;
my $tmp = PostgreSQL::Test::Utils::tempdir;

# every member of integer_ops naming snowflake, and what binds it (the class,
# or nothing: loose in the family)
my $members = q{
SELECT a.amname, 'operator', o.amopstrategy, o.amoplefttype::regtype::text, o.amoprighttype::regtype::text,
       o.amopopr::regoperator::text, (SELECT c.opcname FROM pg_depend d JOIN pg_opclass c ON c.oid = d.refobjid
                                 WHERE d.classid = 'pg_amop'::regclass AND d.objid = o.oid AND d.deptype = 'i')
  FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily JOIN pg_am a ON a.oid = f.opfmethod
 WHERE f.opfname = 'integer_ops' AND 'snowflake'::regtype IN (o.amoplefttype, o.amoprighttype)
UNION ALL
SELECT a.amname, 'function', p.amprocnum, p.amproclefttype::regtype::text, p.amprocrighttype::regtype::text,
       p.amproc::regprocedure::text, (SELECT c.opcname FROM pg_depend d JOIN pg_opclass c ON c.oid = d.refobjid
                                 WHERE d.classid = 'pg_amproc'::regclass AND d.objid = p.oid AND d.deptype = 'i')
  FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily JOIN pg_am a ON a.oid = f.opfmethod
 WHERE f.opfname = 'integer_ops' AND 'snowflake'::regtype IN (p.amproclefttype, p.amprocrighttype)
ORDER BY 1, 2, 4, 5, 3};
my $core_family = q{
SELECT a.amname, 'operator', o.amopstrategy, o.amopopr::regoperator::text FROM pg_amop o
  JOIN pg_opfamily f ON f.oid = o.amopfamily JOIN pg_am a ON a.oid = f.opfmethod WHERE f.opfname = 'integer_ops'
UNION ALL
SELECT a.amname, 'function', p.amprocnum, p.amproc::regprocedure::text FROM pg_amproc p
  JOIN pg_opfamily f ON f.oid = p.amprocfamily JOIN pg_am a ON a.oid = f.opfmethod WHERE f.opfname = 'integer_ops'
ORDER BY 1, 2, 4, 3};

$node->safe_psql('postgres', 'CREATE DATABASE fresh');
my $core_before = $node->safe_psql('fresh', $core_family);
$node->safe_psql('fresh', 'CREATE EXTENSION snowflake');
my $fresh = $node->safe_psql('fresh', $members);
my @fresh_rows = split /\n/, $fresh;
is(scalar @fresh_rows, 54, 'CREATE EXTENSION: 54 members of integer_ops name snowflake (42 operators, 12 functions)');
is(scalar(grep { /\|snowflake_ops$/ } @fresh_rows), 54, 'each bound to snowflake_ops (btree or hash)');
is($node->safe_psql('fresh', 'SELECT snowflake_repair_integer_ops()'), '0',
   'snowflake_repair_integer_ops(): nothing missing after CREATE EXTENSION');

# a schema whose foreign keys cross the types both ways, with data (the keys
# and indexes made after the rows, as pg_restore makes them: the keys' first
# check, one query over each table with the cross-type operator, instead of
# 800,000 checks of a row, a test's half minute)
my $schema = q{
CREATE EXTENSION snowflake;
CREATE TABLE sf_parent (id snowflake PRIMARY KEY, note text);
CREATE TABLE big_parent (id bigint PRIMARY KEY);
CREATE TABLE int_parent (id integer PRIMARY KEY);
CREATE TABLE big_child (parent bigint, pad integer);
CREATE TABLE int_child (parent integer, pad integer);
CREATE TABLE sf_child_of_big (parent snowflake, pad integer);
CREATE TABLE sf_child_of_int (parent snowflake, pad integer);
INSERT INTO sf_parent SELECT g, 'p' || g FROM generate_series(1, 20000) g;
INSERT INTO big_parent SELECT g FROM generate_series(1, 20000) g;
INSERT INTO int_parent SELECT g FROM generate_series(1, 20000) g;
INSERT INTO big_child SELECT g % 20000 + 1, g FROM generate_series(1, 200000) g;
INSERT INTO int_child SELECT g % 20000 + 1, g FROM generate_series(1, 200000) g;
INSERT INTO sf_child_of_big SELECT g % 20000 + 1, g FROM generate_series(1, 200000) g;
INSERT INTO sf_child_of_int SELECT g % 20000 + 1, g FROM generate_series(1, 200000) g;
ALTER TABLE big_child ADD FOREIGN KEY (parent) REFERENCES sf_parent (id) ON DELETE CASCADE;
ALTER TABLE int_child ADD FOREIGN KEY (parent) REFERENCES sf_parent (id) ON DELETE CASCADE;
ALTER TABLE sf_child_of_big ADD FOREIGN KEY (parent) REFERENCES big_parent (id) ON DELETE CASCADE;
ALTER TABLE sf_child_of_int ADD FOREIGN KEY (parent) REFERENCES int_parent (id) ON DELETE CASCADE;
CREATE INDEX ON big_child (parent);
CREATE INDEX ON int_child (parent);
CREATE INDEX ON sf_child_of_big (parent);
CREATE INDEX ON sf_child_of_int (parent);
ANALYZE;
};
$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', $schema);

# The RI queries of deletes from each parent, by auto_explain: each reads the
# referencing table by its index on the foreign key column.
sub ri_plans {
	my ($db, $id) = @_;
	my $log_offset = -s $node->logfile;
	$node->safe_psql($db, qq{
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_nested_statements = on;
DELETE FROM sf_parent WHERE id = $id;
DELETE FROM big_parent WHERE id = $id;
DELETE FROM int_parent WHERE id = $id;
});
	my $log = slurp_file($node->logfile, $log_offset);
	my %plan;
	# each nested plan: "Query Text: <RI statement>" then the plan's lines
	while ($log =~ /Query Text: (DELETE FROM ONLY "public"\."(\w+)" WHERE \$1[^\n]*OPERATOR[^\n]*)\n((?:\t[^\n]*\n)+)/g) {
		$plan{$2} = $3;
	}
	return \%plan;
}
my $plans = ri_plans('src', 100);
for my $child (qw(big_child int_child sf_child_of_big sf_child_of_int)) {
	like($plans->{$child} // 'no RI query logged', qr/Index (Only )?Scan|Bitmap Index Scan/,
		"the RI query of $child reads it by its index");
	unlike($plans->{$child} // 'Seq Scan', qr/Seq Scan/, "the RI query of $child reads no whole table");
}

# deleting 200 parents, each referenced by 10 rows: the time with the
# snowflake column's index, beside the bigint column's (shown, not asserted)
for my $pair ([ 'big_parent', 'sf_child_of_big' ], [ 'sf_parent', 'big_child' ]) {
	my ($parent, $child) = @$pair;
	$node->psql('src', qq{
DO \$\$ DECLARE t0 timestamptz := clock_timestamp(); BEGIN
  DELETE FROM $parent WHERE id BETWEEN 1000 AND 1199;
  RAISE NOTICE '%', extract(epoch FROM clock_timestamp() - t0) * 1000;
END \$\$;}, stderr => \my $notice, on_error_die => 1);
	$notice =~ /NOTICE:\s+([\d.]+)/;
	diag(sprintf('DELETE of 200 %s rows (%s referencing them): %.1f ms', $parent, $child, $1 // -1));
	is($node->safe_psql('src', "SELECT count(*) FROM $child WHERE parent BETWEEN 1000 AND 1199"), '0',
		"the cascade removed $child\'s rows");
}

# --- pg_dump / pg_restore: the same members as a fresh install
my $dump = "$tmp/src.dump";
$node->command_ok([ 'pg_dump', '-Fc', '-h', $node->host, '-p', $node->port, '-d', 'src', '-f', $dump ],
	'pg_dump -Fc');
$node->safe_psql('postgres', 'CREATE DATABASE dst');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-h', $node->host, '-p', $node->port, '-d', 'dst', $dump ],
	'pg_restore');
is($node->safe_psql('dst', $members), $fresh, 'after pg_restore: the members of a fresh install');
is($node->safe_psql('dst', 'SELECT count(*) FROM sf_child_of_big'), '197990', 'the data came along');

# --- DROP EXTENSION: core's family as it was
$node->safe_psql('fresh', 'DROP EXTENSION snowflake');
is($node->safe_psql('fresh', $core_family), $core_before, 'DROP EXTENSION leaves integer_ops as core made it');
$node->safe_psql('postgres', 'DROP DATABASE fresh');

done_testing();
