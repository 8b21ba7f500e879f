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

# The lease file of a node (or another file in its format, such as
# pg_snowflake/fence) as a hash { epoch_unix_ms, lease_ms, clock_ms, worker_id },
# undef when there is none; dies when it is not exactly what the extension writes.
sub read_lease
{
	my ($node, $file) = @_;
	my $path = $node->data_dir . '/pg_snowflake/' . ($file // 'lease');
	return undef unless -e $path;
	my $text = slurp_file($path);
	# one 512-byte block: the text, then NULs (overwritten in place)
	length($text) == 512
	  && $text =~ /\Asnowflake lease 3\nepoch_unix_ms (\d+)\nlease_ms (\d+)\nclock_ms (\d+)\nworker_id (\d+|none)\n\0+\z/
	  or die "unexpected lease file contents: \"$text\"";
	return { epoch_unix_ms => $1, lease_ms => $2, clock_ms => $3, worker_id => $4 };
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
