# A registry on one of the fleet's own nodes, the node claiming its worker id
# from itself (6 s windows renewed every 500 ms): its clean shutdown does not
# wait for itself, and a restart gets its worker id back.
# prove: sequential (measures latency)
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;

# ---------------------------------------------------------------------------
# 3. the registry on one of the fleet's own nodes
{
	my $self = registry_node('self', 'dbname=none');
	$self->append_conf('postgresql.conf', "snowflake.registry = '" . registry_conninfo($self, 'fleet') . "'\n");
	$self->start;
	$self->safe_psql('postgres', 'CREATE DATABASE fleet');
	$self->safe_psql('fleet', 'CREATE EXTENSION snowflake');
	registry_create_in($self, 'fleet', '[0,1024)', '10 min', '6s');
	$self->safe_psql('fleet', 'SELECT snowflake_registry_end_grace()');
	$self->safe_psql('postgres', FLEET_SCHEMA);
	my $w = wait_for_worker($self);
	my $max = $self->safe_psql('postgres', 'SELECT max(x) FROM snowflake_nextvals(1000) x');
	my $stopping = time;
	$self->stop;
	my $stop_s = time - $stopping;
	note sprintf('a node hosting its registry stopped in %.2f s', $stop_s);
	cmp_ok($stop_s, '<', 2.5, sprintf('its clean shutdown does not wait for itself (%.2f s; a call to the registry waits 3 s)', $stop_s));
	ok($self->log_contains(qr/snowflake: worker id $w is released at the next start: the registry .* is on this server/),
		'the release is left for the next start');
	my $release_file = $self->data_dir . '/pg_snowflake/registry_release';
	like(slurp_file($release_file),
		qr/\Asnowflake registry release 1\nworker_id $w\nfencing_epoch \d+\nholder [0-9a-f]{32}\nused_until_ms \d+\ncrc32c [0-9a-f]{8}\n\z/,
		'the release file: its version line, the release, its checksum');
	$self->start;
	is(wait_for_worker($self), $w, 'restarted: the same worker id back');
	ok($self->log_contains(qr/snowflake: worker id $w released to the registry .* at this start/), 'released at the start, then claimed');
	ok(!-e $self->data_dir . '/pg_snowflake/registry_release', 'the release file is gone');
	cmp_ok($self->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', $max, 'ids go on above the ones before');
	# a damaged release file is removed, said, and the worker id rests until its window ends
	$self->stop;
	my $text = slurp_file($release_file);
	$text =~ s/worker_id (\d)/worker_id 9$1/;
	open(my $fh, '>', $release_file) or die "could not write $release_file: $!";
	print $fh $text;
	close($fh);
	$self->start;
	ok(defined wait_for_worker($self), 'a damaged release file: the node claims a worker id all the same');
	ok($self->log_contains(qr/snowflake: the file "pg_snowflake\/registry_release" is damaged and removed/),
		'a damaged release file is said and removed');
	ok(!-e $release_file, 'the damaged release file is gone');
	$self->stop;
}

done_testing();
