# snowflake.public_key, the key of public ids, as the server reads it from the
# configuration (what the setting accepts today): keys with characters other
# than hexadecimal digits, of a length that is no AES key's, more than four
# keys, a key id out of 0..3 or taken twice, or keys not separated by commas
# are refused with a message that names the setting, the rule broken and never
# the key: at reload the key before stays in effect; at start (a WARNING, as
# PostgreSQL gives for a preloaded library's setting) the server runs without
# a key, and the functions refuse (55000). 32, 48 and 64 digits (AES-128,
# -192, -256), either case, and up to four keys with key ids are accepted, at
# reload and at start, the first one encoding.
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

my $length = qr/a key is 32, 48 or 64 hexadecimal digits \(AES-128, AES-192, AES-256\)/;
my @bad = (
	[ 'a character that is no hexadecimal digit', substr($k128, 0, 31) . 'G', $length ],
	[ 'a character after the digits', "${k128}!", qr/keys are separated by commas/ ],
	[ 'a space inside the digits', substr($k128, 0, 16) . ' ' . substr($k128, 16), $length ],
	[ 'a non-ASCII character', substr($k128, 0, 31) . "\x{e9}", $length ],
	[ '30 digits', substr($k128, 0, 30), $length ],
	[ '40 digits', $k128 . '01234567', $length ],
	[ '66 digits', $k256 . '20', $length ],
	[ 'five keys', join(', ', "0:$k128", "1:$k128", "2:$k128", "3:$k128", $k128), qr/it holds more than 4 keys/ ],
	[ 'key id 4', "4:$k128", $length ],
	[ 'a key id taken twice', "0:$k128, 0:$k256", qr/two keys have one key id/ ],
	[ 'a key without its digits', "1:, 0:$k128", $length ]);
my @good = (
	[ 'AES-128, upper case', $k128 ],
	[ 'AES-192', $k192 ],
	[ 'AES-256, lower case', $k256 ],
	[ 'four keys with key ids', "3:$k256, 0:$k128, 1:$k192, 2:" . lc($k128) ]);

# the first character of a public id names its key id (0..3)
my @first_character = (qr/^[0-7]/, qr/^[89A-F]/, qr/^[G-HJKMNP-Q]/, qr/^[R-TV-Z]/);

my $node = snowflake_node('public_key', 1, "snowflake.public_key = '$k128'\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

sub query { return $node->safe_psql('postgres', $_[0]); }

my $public = query("SELECT snowflake_to_public($id)");
is($public, '47EC4SRMJGW8W', 'the key from postgresql.conf encodes as documented');

# At reload: refused, the log names the setting and the rule, never the key;
# the key before stays.
for my $case (@bad)
{
	my ($what, $value, $rule) = @$case;
	my $offset = -s $node->logfile;
	$node->adjust_conf('postgresql.conf', 'snowflake.public_key', "'$value'");
	reload_and_wait($node);
	my $log = slurp_file($node->logfile, $offset);
	like($log, qr/contains errors/, "reload with $what: the configuration is refused");
	like($log, qr/invalid value for parameter "snowflake\.public_key"\n.*DETAIL:  $rule/,
		"reload with $what: the log names the setting and the rule");
	my ($digits) = $value =~ /([0-9A-Fa-f]{16,})/;
	unlike($log, qr/\Q$digits\E/i, "reload with $what: the log does not quote the key");
	is(query("SELECT snowflake_to_public($id)"), $public, "reload with $what: the key before stays");
}

# Good keys at reload: in effect, each encoding and decoding under its key id.
for my $case (@good)
{
	my ($what, $value) = @$case;
	$node->adjust_conf('postgresql.conf', 'snowflake.public_key', "'$value'");
	reload_and_wait($node);
	is(query("SELECT current_setting('snowflake.public_key')"), $value, "reload with $what: in effect");
	my $text = query("SELECT snowflake_to_public($id)");
	is(query("SELECT snowflake_from_public('$text')"), $id, "reload with $what: round trip");
	my ($key_id, $hex) = $value =~ /^(?:(\d):)?([0-9A-Fa-f]+)/;
	like($text, $first_character[ $key_id // 0 ], "reload with $what: the public id names the first key's id");
	is(query("SELECT snowflake_to_public($id, decode('$hex', 'hex'))"), $text,
		"reload with $what: the first key encodes") unless $key_id;
}

# At start: the value is refused, the server runs without a key.
$node->stop;
for my $case (@bad)
{
	my ($what, $value, $rule) = @$case;
	my $offset = -s $node->logfile;
	$node->adjust_conf('postgresql.conf', 'snowflake.public_key', "'$value'");
	$node->start;
	my $log = slurp_file($node->logfile, $offset);
	like($log, qr/invalid value for parameter "snowflake\.public_key"\n.*DETAIL:  $rule/,
		"start with $what: the log names the setting and the rule");
	my ($digits) = $value =~ /([0-9A-Fa-f]{16,})/;
	unlike($log, qr/\Q$digits\E/i, "start with $what: the log does not quote the key");
	my ($rc, $out, $err) = $node->psql('postgres', "SELECT snowflake_to_public($id)", on_error_stop => 1,
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($err, qr/ERROR:  55000: parameter "snowflake\.public_key" is not set/,
		"start with $what: no key in effect, snowflake_to_public refuses (55000)");
	$node->stop;
}
$node->adjust_conf('postgresql.conf', 'snowflake.public_key', "'1:$k256, 0:$k128'");
$node->start;
is(query("SELECT snowflake_from_public('$public')"), $id, 'start with two keys: the old key decodes');
like(query("SELECT snowflake_to_public($id)"), $first_character[1], 'start with two keys: the first (key id 1) encodes');
$node->stop;

done_testing();
