# PostgreSQL's own regression suite (test/pg-regress-source), run twice on
# this leg's server: as it comes, and with snowflake preloaded and created in
# the suite's database (pg_regress --load-extension). Installing snowflake
# may change the results of two tests only, each changed line by design:
#   opr_sanity  the registry's functions that nodes call (and
#               snowflake_registry_identity, and its tables' trigger
#               _snowflake_registry_written) are SECURITY DEFINER, which no
#               built-in function is (docs/privileges.md says why); the type
#               reuses bigint's C functions, as xid8 does; snowflake to bigint
#               is a binary-coercible implicit cast
#   psql        \dAf lists snowflake in integer_ops
# Any other change — a plan, a label, a message, an error in a test that does
# not use the extension — fails, with the changed lines printed. The suite's
# minor version need not be the server's: only the two runs are compared.
use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $suite = $ENV{SNOWFLAKE_CORE_REGRESS};
plan skip_all => $ENV{SNOWFLAKE_CORE_REGRESS_SKIPPED}
  // "PostgreSQL's regression suite was not fetched for this leg (test/pg-regress-source)"
  unless $suite && -f "$suite/parallel_schedule";

my $expected = <<'END';
== opr_sanity
< oid | proname
< -+-
< (0 rows)
> oid | proname
> -+-
> <oid> | snowflake_registry_identity
> <oid> | snowflake_registry_life
> <oid> | snowflake_registry_claim
> <oid> | snowflake_registry_renew
> <oid> | snowflake_registry_present
> <oid> | snowflake_registry_release
> <oid> | _snowflake_registry_written
> (7 rows)
> bigint | snowflake
< (4 rows)
> (5 rows)
> bigint | snowflake
< (6 rows)
> (7 rows)
> bigint | snowflake
< (5 rows)
> (6 rows)
< (10 rows)
> snowflake | bigint | 0 | i
> (11 rows)
== psql
< List of operator families
< AM | Operator family | Applicable types
< -+-+-
< btree | integer_ops | smallint, integer, bigint
> List of operator families
> AM | Operator family | Applicable types
> -+-+-
> btree | integer_ops | smallint, integer, bigint, snowflake
END

my $tmp = PostgreSQL::Test::Utils::tempdir();
my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
my %dir = map { chomp(my $d = `$pg_config --$_`); ($_ => $d) } qw(includedir-server pkglibdir bindir);
PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $suite, "$tmp/src");
mkdir "$tmp/dl" or die $!;
# the suite's C functions (regress.so, as its makefile builds it) and contrib's spi modules
PostgreSQL::Test::Utils::system_or_bail('cc', '-O2', '-fPIC', '-shared', "-I$dir{'includedir-server'}",
	"$tmp/src/regress.c", '-o', "$tmp/dl/regress.so");
for my $module (qw(autoinc refint))
{
	symlink("$dir{pkglibdir}/$module.so", "$tmp/dl/$module.so") or die $!;
}
append_to_file("$tmp/snowflake.conf", "shared_preload_libraries = 'snowflake'\nsnowflake.worker_id = 1\n");

my @schedule = grep { /^test:/ } split /\n/, slurp_file("$tmp/src/parallel_schedule");
my $tests = () = join(' ', @schedule) =~ /\S+/g;
$tests -= @schedule;    # the "test:" words
for my $run ([ 'plain' ], [ 'snowflake', "--temp-config=$tmp/snowflake.conf", '--load-extension=snowflake' ])
{
	my ($name, @extra) = @$run;
	my ($out, $err) = ('', '');
	IPC::Run::run([ $ENV{PG_REGRESS}, "--temp-instance=$tmp/instance-$name", "--bindir=$dir{bindir}",
		"--inputdir=$tmp/src", "--outputdir=$tmp/$name", "--dlpath=$tmp/dl", '--max-concurrent-tests=20',
		"--schedule=$tmp/src/parallel_schedule", '--port=' . PostgreSQL::Test::Cluster::get_free_port(), @extra ],
		'>', \$out, '2>', \$err);
	my ($summary) = $out =~ /^ *((?:All \d+ tests passed|\d+ of \d+ tests failed)[^\n]*)/m;
	note "$name: " . ($summary // 'no summary');
	my @results = glob "$tmp/$name/results/*.out";
	is(scalar @results, $tests, "$name: every test of the suite ran ($tests)") or diag $out . $err;
}

# The two runs' results, compared test by test; each change normalized (an
# oid, the width of a column or a rule, a line number do not count).
my $changes = '';
for my $plain (sort glob "$tmp/plain/results/*.out")
{
	my ($test) = $plain =~ m{/([^/]+)\.out$};
	my ($diff, $err) = ('', '');
	IPC::Run::run([ 'diff', $plain, "$tmp/snowflake/results/$test.out" ], '>', \$diff, '2>', \$err);
	next if $diff eq '';
	$changes .= "== $test\n";
	for (grep { /^[<>]/ } split /\n/, $diff)
	{
		s/^([<>])\s+\d+\s+\|/$1 <oid> |/;
		s/-{2,}/-/g;
		s/\s+/ /g;
		s/ $//;
		$changes .= "$_\n";
	}
}
is($changes, $expected, 'installing snowflake changes the results of opr_sanity and psql only, each line by design');

done_testing();
