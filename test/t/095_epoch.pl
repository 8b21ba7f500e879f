# Decoding and generation under a non-default snowflake.epoch set in
# postgresql.conf at server start, with and without shared_preload_libraries.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $epoch = '2023-01-01 00:00:00+00';

my $node = PostgreSQL::Test::Cluster->new('epoch');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'snowflake'
snowflake.worker_id = 5
snowflake.epoch = '$epoch'
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

# Decoding checks that hold with or without preload; $label tells them apart.
sub check_decoding {
    my ($label) = @_;
    is($node->safe_psql('postgres', 'SHOW snowflake.epoch'), $epoch, "$label: SHOW snowflake.epoch");
    is($node->safe_psql('postgres', q{SELECT snowflake_to_timestamp(0) = '2023-01-01 00:00:00+00'}), 't',
        "$label: snowflake_to_timestamp(0) is the configured epoch");
    is($node->safe_psql('postgres', q{SELECT ts = '2023-01-01 00:00:00+00' FROM snowflake_decode('0'::snowflake)}),
        't', "$label: snowflake_decode(0) is the configured epoch");
    is($node->safe_psql('postgres', q{SELECT snowflake_from_timestamp('2023-01-01 00:00:00.001+00')}),
        4194304, "$label: the first millisecond after the epoch is 1 << 22");
    # the default epoch, 2024-01-01, is 365 days = 31536000000 ms after this one
    is($node->safe_psql('postgres', q{SELECT snowflake_from_timestamp('2024-01-01 00:00:00+00')}),
        31536000000 << 22, "$label: 2024-01-01 is 365 days into this epoch");
    is($node->safe_psql('postgres', q{
        SELECT count(*) FROM (VALUES ('2023-01-01 00:00:00+00'::timestamptz), ('2023-06-15 12:34:56.789+00'),
                                     ('2024-02-29 23:59:59.999+00'), ('2090-12-31 00:00:00+00')) v(t)
         WHERE snowflake_to_timestamp(snowflake_from_timestamp(t)) = t
           AND snowflake_to_timestamp(snowflake_from_timestamp(t)::snowflake) = t}),
        '4', "$label: from_timestamp / to_timestamp round trip");
    my ($rc, $stdout, $stderr) = $node->psql('postgres',
        q{SELECT snowflake_from_timestamp('2022-12-31 23:59:59.999+00')});
    like($stderr, qr/before snowflake\.epoch "2023-01-01 00:00:00\+00"/,
        "$label: a timestamp just before the configured epoch is refused");
    is($node->safe_psql('postgres', q{SELECT epoch = '2023-01-01 00:00:00+00' FROM snowflake_status}), 't',
        "$label: snowflake_status shows the configured epoch");
}

check_decoding('preloaded');

# ids made now decode to now under this epoch (under the default one they
# would decode to about a year later)
$node->safe_psql('postgres', q{
CREATE TABLE made AS
    SELECT snowflake_nextval() AS id, clock_timestamp() AS at FROM generate_series(1, 3);
INSERT INTO made SELECT id, clock_timestamp() FROM snowflake_nextvals(3) AS id;
});
is($node->safe_psql('postgres', q{
    SELECT count(*) FROM made
     WHERE abs(extract(epoch FROM snowflake_to_timestamp(id) - at)) < 5
       AND (snowflake_decode(id)).worker_id = 5}),
    '6', 'generated ids decode to the time they were made, worker 5');
is($node->safe_psql('postgres', q{
    SELECT count(*) FROM made
     WHERE abs((id >> 22) - (extract(epoch FROM at - '2023-01-01 00:00:00+00') * 1000)::bigint) < 5000}),
    '6', 'the time bits count milliseconds since the configured epoch');
my $decoded = $node->safe_psql('postgres', 'SELECT id, snowflake_to_timestamp(id) FROM made ORDER BY id');

# the same node without the preload: decoding only, same epoch
$node->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
$node->restart;
is($node->safe_psql('postgres', 'SHOW shared_preload_libraries'), '', 'restarted without preload');
# loading the library in a backend must work (the type and decoding need it)
my ($rc, $stdout, $stderr) = $node->psql('postgres', 'SELECT snowflake_to_timestamp(0)');
if (!is($rc, 0, 'not preloaded: the library loads in a backend')) {
    diag($stderr);
    done_testing();
    exit;
}
check_decoding('not preloaded');
is($node->safe_psql('postgres', 'SELECT id, snowflake_to_timestamp(id) FROM made ORDER BY id'), $decoded,
    'not preloaded: stored ids decode to the same times as before');
($rc, $stdout, $stderr) = $node->psql('postgres', 'SELECT snowflake_nextval()');
like($stderr, qr/shared_preload_libraries/, 'not preloaded: generation is refused');

done_testing();
