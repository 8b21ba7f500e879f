# The keys of public ids, in the file snowflake.public_key_file names (as
# ssl_key_file): read at start and at reload, refused — naming the file, the
# line and the rule, never the key — when it may be read by others than the
# server's user, cannot be read, or is malformed; then at reload the keys
# before stay, at start (a WARNING, as PostgreSQL gives for a preloaded
# library's setting) the server runs without keys and the functions refuse
# (55000). The forms are pinned (NIST's sample key), rotation keeps old public
# ids decoding, a key id once bound to a key is refused with another (at
# reload and at start) until retired on purpose; a key id is bound when a key
# file is assigned, never when it is only checked (ALTER SYSTEM).
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $k128 = '2B7E151628AED2A6ABF7158809CF4F3C';    # NIST SP 800-38G's FF1 test key
my $k192 = '2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F';
my $k256 = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';
my $id   = 382741621101301760;

# the first character of a public id names its key id (0..3)
my @first_character = (qr/^[0-7]/, qr/^[89A-F]/, qr/^[G-HJKMNP-Q]/, qr/^[R-TV-Z]/);

my $node = snowflake_node('public_key', 1, "snowflake.public_key_file = 'public_keys'\n");
my $key_file = $node->data_dir . '/public_keys';

# Writes the key file, with the mode given (0600 unless said).
sub write_keys
{
	my ($text, $mode) = @_;
	unlink $key_file;
	open my $fh, '>', $key_file or die "$key_file: $!";
	print $fh $text;
	close $fh;
	chmod($mode // 0600, $key_file) or die "$key_file: $!";
	return;
}

sub query { return $node->safe_psql('postgres', $_[0]); }

# The error of a statement, verbose (with its SQLSTATE).
sub error_of
{
	my ($rc, $out, $err) = $node->psql('postgres', $_[0], extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	return $err;
}

write_keys("# keys of public ids: the first encodes\n0 $k128\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

# NIST's AES-128 sample key: the forms are pinned (the docs give them).
is( query(
		"SELECT string_agg(snowflake_to_public(id), ' ' ORDER BY id) FROM unnest(ARRAY[0, 1, 2, 382741621101301760, 382741621101301761, 9223372036854775807]::bigint[]) id"
	),
	'6DK2SGWF676WD 0TV5WV06VX97E 0ZWPK864YYPZM 47EC4SRMJGW8W 2W85RVFDDYXDE 3EQNHFHSJNVMP',
	'the key from the key file encodes as documented');
my $public = query("SELECT snowflake_to_public($id)");
is(query("SELECT snowflake_from_public(lower('$public'))"), $id, 'decoded in any case');
is(query("SELECT snowflake_to_public($id, 0) = '$public' AND snowflake_from_public('$public', 0) = $id"),
	't', 'the forms given key id 0 are the same');
is(query("SELECT current_setting('snowflake.public_key_file')"), 'public_keys', 'the setting shows the path');

# The docs' example (docs/layouts-and-text-forms.md), in a database of its own:
# each `-->` result as given, each `-- ERROR:` as given.
{
	my ($block) = readme_blocks('062_public_key.pl');
	$node->safe_psql('postgres', 'CREATE DATABASE docs');
	$node->safe_psql('docs', 'CREATE EXTENSION snowflake');
	my @lines = split /\n/, $block;
	for my $i (0 .. $#lines)
	{
		my $line = $lines[$i];
		next if $line =~ /^--/ || $line !~ /\S/;
		my ($sql, $result) = $line =~ /^(.*?;)\s*(?:-->\s*(\S+))?$/ or die "docs: $line";
		my ($rc, $out, $err) = $node->psql('docs', $sql);
		if (defined $result) { is($out, $result, "docs: $sql gives $result"); }
		elsif (($lines[ $i + 1 ] // '') =~ /^-- (ERROR:  .*)$/) { like($err, qr/\Q$1\E/, "docs: $sql gives $1"); }
		else { is($rc, 0, "docs: $sql runs"); }
	}
}

# round trips over 100,000 consecutive ids and random ones; no two alike; no
# visible order (Spearman's rank correlation; the docs give it)
is( query(
		"SELECT count(DISTINCT p) = 100000 AND bool_and(snowflake_from_public(p) = id) FROM (SELECT id, snowflake_to_public(id) AS p FROM generate_series($id, $id + 99999) id) s"
	),
	't',
	'100,000 consecutive ids: distinct forms that round-trip');
is( query(
		"SELECT bool_and(snowflake_from_public(snowflake_to_public(id)) = id) FROM (SELECT (random() * 9223372036854775807)::bigint AS id FROM generate_series(1, 10000)) s"
	),
	't',
	'10,000 random ids round-trip');
my $rho = query(
	"SELECT round(corr(id_rank, public_rank)::numeric, 4) FROM (SELECT rank() OVER (ORDER BY id) AS id_rank, rank() OVER (ORDER BY p COLLATE \"C\") AS public_rank FROM (SELECT id, snowflake_to_public(id) AS p FROM generate_series($id, $id + 99999) id) s) r"
);
ok(abs($rho) < 0.01, "no visible order: rank correlation $rho below 0.01");
is($rho, '0.0018', 'the rank correlation the docs give');

# a lookup by public id reads the primary key
query("CREATE TABLE accounts (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), name text);
       INSERT INTO accounts (name) SELECT 'a' || g FROM generate_series(1, 1000) g; ANALYZE accounts");
like(query("EXPLAIN (COSTS OFF) SELECT name FROM accounts WHERE id = snowflake_from_public('$public')"),
	qr/Index Scan using accounts_pkey/, 'a lookup by public id is a primary key scan');

# Bad key files at reload: refused, naming the file and the rule, never the
# key; the keys before stay.
my @bad = (
	[ 'group read (0640)', "0 $k128\n", 0640, qr/public key file "public_keys" has group or world access/ ],
	[ 'world read (0604)', "0 $k128\n", 0604, qr/has group or world access/ ],
	[ 'a character that is no hexadecimal digit', '0 ' . substr($k256, 0, 31) . "G\n", 0600,
		qr/invalid public key file "public_keys"\n.*DETAIL:  Line 1: a key is 32, 48 or 64 hexadecimal digits/ ],
	[ '30 digits', "# c\n\n0 " . substr($k256, 0, 30) . "\n", 0600, qr/DETAIL:  Line 3: a key is 32, 48 or 64/ ],
	[ 'a key id out of 0..3', "4 $k256\n", 0600, qr/DETAIL:  Line 1: a line is a key id 0..3 and its key/ ],
	[ "1.0's form", "0:$k256\n", 0600, qr/DETAIL:  Line 1: a line is a key id 0..3 and its key/ ],
	[ 'a key id taken twice', "2 $k256\n2 $k192\n", 0600, qr/DETAIL:  Line 2: two keys have one key id/ ],
	[ 'five keys', join('', map { "$_ $k256\n" } 0, 1, 2, 3, 0), 0600, qr/DETAIL:  Line 5: the file holds more than 4 keys/ ],
	[ 'no key', "# nothing\n", 0600, qr/DETAIL:  The file holds no key/ ],
	[ 'no file', undef, undef, qr/could not open public key file "public_keys": No such file or directory/ ]);
for my $case (@bad)
{
	my ($what, $text, $mode, $rule) = @$case;
	my $offset = -s $node->logfile;
	if (defined $text) { write_keys($text, $mode); }
	else               { unlink $key_file; }
	reload_and_wait($node);
	my $log = slurp_file($node->logfile, $offset);
	like($log, qr/contains errors/, "reload with $what: the configuration is refused");
	like($log, $rule, "reload with $what: the log names the file and the rule");
	unlike($log, qr/2B7E1516|00010203040506/i, "reload with $what: the log does not quote a key");
	is(query("SELECT snowflake_to_public($id)"), $public, "reload with $what: the keys before stay");
}

# Rotation: the new key first (key id 1), the old one after it; old public ids
# decode, new ones name key id 1.
write_keys("1 $k256\n0 $k128\n");
reload_and_wait($node);
query("CREATE TABLE old_forms AS SELECT id, snowflake_to_public(id, 0) AS p FROM generate_series(1, 1000) id");
is(query('SELECT bool_and(snowflake_from_public(p) = id) FROM old_forms'), 't', 'rotation: old public ids decode');
is( query(
		"SELECT bool_and(snowflake_to_public(id) ~ '^[89A-F]' AND snowflake_from_public(snowflake_to_public(id)) = id) FROM generate_series(1, 1000) id"
	),
	't',
	'rotation: the first key (key id 1) encodes');
# another key gives unrelated forms
is( query(
		"SELECT count(*) FILTER (WHERE substr(a, 2) = substr(b, 2)) = 0 AND abs(corr(ra, rb)) < 0.02 FROM (SELECT a, b, rank() OVER (ORDER BY a COLLATE \"C\") AS ra, rank() OVER (ORDER BY b COLLATE \"C\") AS rb FROM (SELECT snowflake_to_public(id, 0) AS a, snowflake_to_public(id, 1) AS b FROM generate_series(1, 50000) id) s) r"
	),
	't',
	'another key gives unrelated forms');

# The old key dropped: its public ids are refused, naming the key id.
write_keys("1 $k256\n");
reload_and_wait($node);
like(error_of("SELECT snowflake_from_public('$public')"),
	qr/ERROR:  22P02: public snowflake id "$public" names key id 0, which the public key file does not hold/,
	'a public id under a dropped key id is refused (22P02)');
like(error_of('SELECT snowflake_to_public(1, 0)'), qr/ERROR:  55000: the public key file holds no key id 0/,
	'the form given a dropped key id refuses (55000)');

# A key id bound to another key: refused at reload, naming the key id; the keys before stay.
my $offset = -s $node->logfile;
write_keys("1 $k256\n0 $k192\n");
reload_and_wait($node);
my $log = slurp_file($node->logfile, $offset);
like($log, qr/key id 0 of public key file "public_keys" is bound to another key/,
	'reload with key id 0 bound to another key: refused, naming the key id');
like($log, qr/snowflake_retire_public_key_id\(0\)/, 'the hint names the way to retire it');
unlike($log, qr/2B7E1516|00010203040506/i, 'the refusal quotes no key');
like(error_of("SELECT snowflake_from_public('$public')"), qr/names key id 0, which the public key file does not hold/,
	'reload with key id 0 bound to another key: the keys before stay');
my $bindings = slurp_file($node->data_dir . '/pg_snowflake/public_keys');
unlike($bindings, qr/2B7E1516|00010203040506/i, 'the bindings hold no key');
is(join(' ', $bindings =~ /^([0-3]) [0-9a-f]{32}$/mg), '0 1', 'the bindings: key ids 0 and 1, a 16-byte fingerprint each');

# ... and at start: the server runs without keys.
$node->stop;
$offset = -s $node->logfile;
$node->start;
like(slurp_file($node->logfile, $offset), qr/WARNING:  key id 0 of public key file "public_keys" is bound to another key/,
	'start with key id 0 bound to another key: refused, naming the key id');
like(error_of("SELECT snowflake_to_public($id)"), qr/ERROR:  55000: no key of public ids is loaded/,
	'start with key id 0 bound to another key: no key, snowflake_to_public refuses (55000)');

# Bad files at start: a WARNING, no key.
for my $case (@bad[ 0, 2 ])
{
	my ($what, $text, $mode, $rule) = @$case;
	$node->stop;
	write_keys($text, $mode);
	$offset = -s $node->logfile;
	$node->start;
	$log = slurp_file($node->logfile, $offset);
	like($log, $rule, "start with $what: the log names the file and the rule");
	unlike($log, qr/2B7E1516|00010203040506/i, "start with $what: the log does not quote a key");
	like(error_of("SELECT snowflake_to_public($id)"), qr/ERROR:  55000: no key of public ids is loaded/,
		"start with $what: no key, snowflake_to_public refuses (55000)");
}

# Retiring key id 0 on purpose: refused while the file holds it; then a new
# key may take it, and its old public ids decode to other ids.
write_keys("0 $k128\n1 $k256\n");
reload_and_wait($node);
is(query("SELECT snowflake_from_public('$public')"), $id, 'key id 0 back with its key: its public ids decode');
like(error_of('SELECT snowflake_retire_public_key_id(0)'), qr/ERROR:  55000: the public key file holds key id 0/,
	'a key id the file holds cannot be retired (55000)');
write_keys("1 $k256\n");
reload_and_wait($node);
is(query('SELECT snowflake_retire_public_key_id(0)'), 't', 'key id 0 retired');
is(query('SELECT snowflake_retire_public_key_id(0)'), 'f', 'retiring it again: it was not bound');
write_keys("1 $k256\n0 $k192\n");
reload_and_wait($node);
isnt(query("SELECT snowflake_from_public('$public')"), $id,
	'a new key under the retired key id: accepted, old public ids decode to another id');
like(query("SELECT snowflake_to_public($id)"), $first_character[1], 'the first key (key id 1) encodes');
$node->stop;
$offset = -s $node->logfile;
$node->start;
unlike(slurp_file($node->logfile, $offset), qr/bound to another key/, 'the new binding holds at start');
isnt(query("SELECT snowflake_from_public('$public')"), $id, 'after a restart: the new key of key id 0');

# The bindings file has a version line and a checksum: one digit of a
# fingerprint changed, it is refused at start as corrupt, and no key serves
# until it is restored.
my $bindings_path = $node->data_dir . '/pg_snowflake/public_keys';
my $good = slurp_file($bindings_path);
like($good, qr/\Asnowflake public key bindings 1\n(?:.*\n)*crc32c [0-9a-f]{8}\n\z/,
	'the bindings file: its version first, its checksum last');
(my $damaged = $good) =~ s/^(0 [0-9a-f]{31})([0-9a-f])$/$1 . ($2 eq '0' ? '1' : '0')/me or die 'no binding of key id 0';
sub write_bindings
{
	open my $fh, '>', $bindings_path or die "$bindings_path: $!";
	print $fh $_[0];
	close $fh;
	return;
}
$node->stop;
write_bindings($damaged);
$offset = -s $node->logfile;
$node->start;
like(slurp_file($node->logfile, $offset), qr/WARNING:  file "pg_snowflake\/public_keys" is corrupt/,
	'a damaged bindings file at start: refused as corrupt, naming it');
like(error_of("SELECT snowflake_to_public($id)"), qr/ERROR:  55000: no key of public ids is loaded/,
	'a damaged bindings file: no key serves');
$node->stop;
write_bindings($good);
$node->start;
like(query("SELECT snowflake_to_public($id)"), $first_character[1], 'the bindings file restored: the keys serve');

# A new key id the postmaster cannot bind (pg_snowflake read-only, as on a
# full or read-only disk): the reload says so, the new key id is left out and
# the keys bound before serve; once writable, a reload binds it.
my $bound_public = query("SELECT snowflake_to_public($id)");
my $snowflake_dir = $node->data_dir . '/pg_snowflake';
chmod 0500, $snowflake_dir or die "chmod: $!";
write_keys("2 $k128\n1 $k256\n0 $k192\n");
$offset = -s $node->logfile;
reload_and_wait($node);
like(slurp_file($node->logfile, $offset),
	qr/LOG:  snowflake: could not write file "pg_snowflake\/public_keys": Permission denied\n.*DETAIL:  The public key file's new key ids are not loaded\./,
	'a new key id that cannot be bound: the reload logs why');
is(query("SELECT snowflake_to_public($id)"), $bound_public, '... it is left out: the first bound key (key id 1) encodes');
like(error_of("SELECT snowflake_to_public($id, 2)"), qr/ERROR:  [0-9A-Z]{5}: the public key file holds no key id 2/,
	'... and key id 2 is not loaded');
unlike($good, qr/^2 /m, '... nor bound on disk');
chmod 0700, $snowflake_dir or die "chmod: $!";
reload_and_wait($node);
like(query("SELECT snowflake_to_public($id)"), $first_character[2], 'writable again: a reload binds key id 2, which encodes');
like(slurp_file($bindings_path), qr/^2 /m, '... bound on disk');
write_keys("1 $k256\n0 $k192\n");
reload_and_wait($node);

# 1.0's setting left in postgresql.conf: refused at start and at reload, naming
# the key file's setting and never quoting the key; the key file's keys serve.
my $encoded = query("SELECT snowflake_to_public($id)");
$node->append_conf('postgresql.conf', "snowflake.public_key = '$k128'\n");
$node->stop;
$offset = -s $node->logfile;
$node->start;
reload_and_wait($node);
$log = slurp_file($node->logfile, $offset);
like($log, qr/WARNING:  parameter "snowflake\.public_key" is no longer supported\n(?:.*\n)*?.*HINT:  .*"snowflake\.public_key_file"/,
	"1.0's setting at start: refused, naming snowflake.public_key_file");
like($log, qr/LOG:  parameter "snowflake\.public_key" is no longer supported/, "1.0's setting at reload: refused");
unlike($log, qr/2B7E1516/i, "1.0's setting: the log does not quote the key");
is(query("SELECT snowflake_to_public($id)"), $encoded, "1.0's setting: the key file's keys serve");
$node->stop;

# A server without shared_preload_libraries, whose backends bind new key ids:
# ALTER SYSTEM checks a key file (a check hook's run for a value not assigned)
# and binds nothing; the key file once in effect is bound where it is loaded.
my $plain = PostgreSQL::Test::Cluster->new('public_key_plain');
$plain->init;
$plain->start;
$plain->safe_psql('postgres', 'CREATE EXTENSION snowflake');
my $plain_keys = $plain->data_dir . '/plain_keys';
open my $fh, '>', $plain_keys or die "$plain_keys: $!";
print $fh "2 $k192\n";
close $fh;
chmod 0600, $plain_keys or die "chmod: $!";
my $plain_bindings = $plain->data_dir . '/pg_snowflake/public_keys';
$plain->safe_psql('postgres', "LOAD 'snowflake'; ALTER SYSTEM SET snowflake.public_key_file = 'plain_keys'");
ok(!-e $plain_bindings, 'not preloaded: ALTER SYSTEM naming a key file binds nothing (its check hook only checks)');
$plain->reload;
like($plain->safe_psql('postgres', 'SELECT snowflake_to_public(42)'), qr/^\w{13}$/, 'reloaded: its key encodes');
like(slurp_file($plain_bindings), qr/^2 /m, '... bound where it was assigned');
$plain->stop;

done_testing();
