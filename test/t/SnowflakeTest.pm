# Helpers shared by the TAP tests in test/t: a preloaded node, the lease file
# and the id layout (SPEC §1).
package SnowflakeTest;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;

our @EXPORT = qw(snowflake_node read_lease time_of log_count lease_writer_pid DEFAULT_EPOCH_MS);

use constant DEFAULT_EPOCH_MS => 1704067200000;    # 2024-01-01 00:00:00 UTC

# A node with snowflake preloaded, the given worker id (undef: unset) and any
# further postgresql.conf lines; the extension is created once it runs.
# %init goes to Cluster::init (allows_streaming and the like).
sub snowflake_node
{
	my ($name, $worker_id, $extra_conf, %init) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%init);
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'snowflake'\n"
		  . "log_statement = none\n"
		  # every statement that can wait is bounded: a wait bug fails, not hangs
		  . "statement_timeout = '120s'\n"
		  . (defined $worker_id ? "snowflake.worker_id = $worker_id\n" : '')
		  . ($extra_conf // ''));
	return $node;
}

# The lease file of a node as a hash { epoch_unix_ms, lease_ms, clock_ms,
# worker_id, fenced (a list), directory_host, directory_inode, layout, crc32c, text },
# undef when there is none; dies when it is not in the form the extension
# writes (the checksum is the extension's to check).
sub read_lease
{
	my ($node) = @_;
	my $path = $node->data_dir . '/pg_snowflake/lease';
	return undef unless -e $path;
	my $text = slurp_file($path);
	# one 512-byte block: the text, then NULs (overwritten in place)
	length($text) == 512
	  && $text =~ /\A(snowflake\ lease\ 5\nepoch_unix_ms\ (\d+)\nlease_ms\ (\d+)\nclock_ms\ (\d+)\n
	               worker_id\ (\d+|none)\nfenced\ (none|\d+(?:\ \d+)*)\ndirectory\ (\d+)\ (\d+)\n
	               layout\ ([a-z0-9= ]+)\ncrc32c\ ([0-9a-f]{8})\n)\0+\z/x
	  or die "unexpected lease file contents: \"$text\"";
	return {
		epoch_unix_ms   => $2,
		lease_ms        => $3,
		clock_ms        => $4,
		worker_id       => $5,
		fenced          => [ $6 eq 'none' ? () : split / /, $6 ],
		directory_host  => $7,
		directory_inode => $8,
		layout          => $9,
		crc32c          => $10,
		text            => $1
	};
}

# The pid of a node's running lease writer (a background worker with no
# database connection, so not in pg_stat_activity), or undef.
sub lease_writer_pid
{
	my ($node) = @_;
	my ($postmaster) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');
	for my $stat (glob '/proc/[0-9]*/stat')
	{
		open my $fh, '<', $stat or next;
		my $line = <$fh>;
		close $fh;
		next unless defined $line && $line =~ /^(\d+) \(.*\) ([^Z]) (\d+) / && $3 == $postmaster;
		my $pid = $1;
		open my $cmd, '<', "/proc/$pid/cmdline" or next;
		my $cmdline = <$cmd> // '';
		close $cmd;
		return $pid if $cmdline =~ /snowflake lease worker/;
	}
	return undef;
}

# The time field of an id (SPEC §1), ms since the epoch; Perl integers are 64-bit.
sub time_of { return $_[0] >> 22; }

# How many lines of a node's log, from byte $offset on, match $regexp.
sub log_count
{
	my ($node, $regexp, $offset) = @_;
	my $log = slurp_file($node->logfile, $offset // 0);
	my $count = () = $log =~ /$regexp/gm;
	return $count;
}

1;
