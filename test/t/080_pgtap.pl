# The pgTAP files of test/pgtap, each group against the instance it needs:
#   preloaded      shared_preload_libraries = snowflake, snowflake.worker_id = 7
#   no_worker      preloaded, snowflake.worker_id unset
#   not_preloaded  no preload (snowflake.worker_id = 7 all the same)
#   standby        a streaming hot standby of the preloaded instance
# Every file runs through pg_prove; one TAP test here per file.
use strict;
use warnings;
use File::Basename qw(basename);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $pgtap_dir = "$ENV{TESTDIR}/test/pgtap";
my %files;
for my $group (qw(preloaded no_worker not_preloaded standby)) {
    $files{$group} = [ sort glob("$pgtap_dir/$group/*.sql") ];
    BAIL_OUT("no pgTAP files in $pgtap_dir/$group") unless @{ $files{$group} };
}

my $preloaded = PostgreSQL::Test::Cluster->new('preloaded');
$preloaded->init(allows_streaming => 1);
$preloaded->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'snowflake'
snowflake.worker_id = 7
});
$preloaded->start;

my $no_worker = PostgreSQL::Test::Cluster->new('no_worker');
$no_worker->init;
$no_worker->append_conf('postgresql.conf', "shared_preload_libraries = 'snowflake'\n");
$no_worker->start;

my $not_preloaded = PostgreSQL::Test::Cluster->new('not_preloaded');
$not_preloaded->init;
$not_preloaded->append_conf('postgresql.conf', "snowflake.worker_id = 7\n");
$not_preloaded->start;

# The extensions are made on the primary before the backup, so that the
# standby has them from the start (the standby files cannot create them).
# A failure here is reported, and the group's files then fail on their own.
for my $node ($preloaded, $no_worker, $not_preloaded) {
    my ($rc, $stdout, $stderr) = $node->psql('postgres',
        'CREATE EXTENSION pgtap; CREATE EXTENSION snowflake; CREATE EXTENSION dblink;');
    is($rc, 0, 'CREATE EXTENSION pgtap, snowflake, dblink on ' . $node->name)
      or diag($stderr);
}
$preloaded->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($preloaded, 'base', has_streaming => 1);
$standby->start;
# Something replicated after the backup, so the standby is known to stream.
$preloaded->safe_psql('postgres', 'CREATE TABLE replicated AS SELECT snowflake_nextval() AS id');
$preloaded->wait_for_catchup($standby, 'replay', $preloaded->lsn('insert'));
is($standby->safe_psql('postgres', 'SELECT (snowflake_decode(id)).worker_id FROM replicated'),
    '7', 'the standby replays the primary and decodes its ids');

my %node = (
    preloaded     => $preloaded,
    no_worker     => $no_worker,
    not_preloaded => $not_preloaded,
    standby       => $standby);

for my $group (qw(preloaded no_worker not_preloaded standby)) {
    my $node = $node{$group};
    for my $file (@{ $files{$group} }) {
        my $name = "$group/" . basename($file);
        my $output;
        my $passed = IPC::Run::run(
            [ 'pg_prove', '--verbose', '-h', $node->host, '-p', $node->port,
              '-d', 'postgres', $file ],
            '<', \undef, '>&', \$output);
        ok($passed, "pgtap $name") or diag($output);
    }
}

done_testing();
