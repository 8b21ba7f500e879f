# The README's SQL, executed (regression: an example that stops working fails
# CI). Every ```sql block of README.md and of docs/*.md runs here, in the
# order printed, on a preloaded server (worker id 1, TimeZone UTC), unless the
# line before its fence says otherwise:
#   <!-- not run: why -->            not runnable on its own, and why
#   <!-- run by test/t/NNN.pl -->   another test runs it as printed
#   <!-- new database -->            starts in a fresh database (the first
#                                    block of a file always does)
# Otherwise a block runs in the database of the blocks before it, each
# statement in turn in one psql session. Within a block:
#   -- ERROR:  message        after a statement (on its line or the next):
#                             it must fail with exactly this message
#   --> a | b                 its result rows, compared field by field
#   -- a | b / -- ---+--- / -- x | y
#                             a psql table: header and rows compared
#   anything else after --    prose
# and every statement without an ERROR line must succeed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $root = $ENV{TESTDIR} // '.';

my $node = snowflake_node('readme', 1, "timezone = 'UTC'\n");
$node->start;

# The ```sql blocks of a markdown file: { file, line, mark, lines => [[n, text]] }.
sub sql_blocks
{
	my ($file) = @_;
	my @lines = split /\n/, slurp_file("$root/$file"), -1;
	my (@blocks, $block);
	for my $i (0 .. $#lines)
	{
		my $line = $lines[$i];
		if ($block)
		{
			if ($line =~ /^```\s*$/) { push @blocks, $block; undef $block; }
			else { push @{ $block->{lines} }, [ $i + 1, $line ]; }
		}
		elsif ($line =~ /^```sql\s*$/)
		{
			my $mark = $i > 0 && $lines[ $i - 1 ] =~ /^<!--\s*(.*?)\s*-->\s*$/ ? $1 : '';
			$block = { file => $file, line => $i + 1, mark => $mark, lines => [] };
		}
	}
	die "$file: a ```sql block is not closed" if $block;
	return @blocks;
}

# A line's code and its trailing comment (text after the first -- outside quotes).
sub split_comment
{
	my ($line) = @_;
	my $quoted = 0;
	for my $i (0 .. length($line) - 2)
	{
		my $c = substr($line, $i, 1);
		$quoted = !$quoted if $c eq "'";
		return (substr($line, 0, $i), substr($line, $i + 2)) if !$quoted && substr($line, $i, 2) eq '--';
	}
	return ($line, undef);
}

# A row as compared: the fields between | with the spaces around them trimmed.
sub fields { return join ' | ', map { s/^\s+|\s+$//gr } split /\|/, $_[0], -1; }

# The statements of a block: { line, sql, error, rows => [], table => [header, rows...] }.
sub statements
{
	my ($block) = @_;
	my (@statements, $current, $last, @comments);
	# what the comment lines after a statement say about it
	my $annotate = sub {
		my ($statement, $comment) = @_;
		return unless $statement;
		if ($comment =~ /^\s*ERROR:\s+(.*?)\s*$/) { $statement->{error} = $1; }
		elsif ($comment =~ /^>\s*(.*?)\s*$/) { push @{ $statement->{rows} }, fields($1); }
	};
	my $close_comments = sub {
		for my $i (1 .. $#comments)
		{
			next unless $comments[$i] =~ /^\s*-+(\+-+)*\s*$/ && $comments[ $i - 1 ] =~ /\S/;
			my @table = (fields($comments[ $i - 1 ]));
			for my $row (@comments[ $i + 1 .. $#comments ])
			{
				last unless $row =~ /\|/;
				push @table, fields($row);
			}
			$last->{table} = \@table if $last;
		}
		@comments = ();
	};
	for (@{ $block->{lines} })
	{
		my ($n, $text) = @$_;
		if ($text =~ /^\s*--(.*)$/)
		{
			push @comments, $1;
			$annotate->($last, $1) unless $current;
			next;
		}
		next unless $text =~ /\S/;
		$close_comments->();
		my ($code, $comment) = split_comment($text);
		$current //= { line => $n, sql => '', rows => [] };
		$current->{sql} .= "$code\n";
		if ($code =~ /(;|\\gexec)\s*$/)
		{
			push @statements, $current;
			$last = $current;
			undef $current;
			$annotate->($last, $comment) if defined $comment;
		}
	}
	$close_comments->();
	die "$block->{file}:$block->{line}: a statement does not end" if $current;
	return @statements;
}

# Runs a block's statements in one psql session: for each, its output rows
# (a header first) and its error message, or undef.
sub run_block
{
	my ($database, @statements) = @_;
	my $script = "\\pset footer off\n\\pset tuples_only off\n\\pset fieldsep '|'\n";
	for my $i (0 .. $#statements)
	{
		$script .= "\\echo '\@\@\@ begin $i'\n$statements[$i]{sql}\\echo '\@\@\@ end $i' :ERROR :LAST_ERROR_MESSAGE\n";
	}
	my ($stdout, $stderr);
	$node->psql($database, $script, stdout => \$stdout, stderr => \$stderr, on_error_stop => 0);
	my @results;
	while ($stdout =~ /^\@\@\@ begin (\d+)\n(.*?)^\@\@\@ end \1 (true|false) ?(.*?)$/gms)
	{
		my @output = grep { $_ ne '' } split /\n/, $2;
		$results[$1] = { output => \@output, error => $3 eq 'true' ? $4 : undef };
	}
	return @results;
}

my @files = ('README.md', map { s{^\Q$root\E/}{}r } glob("$root/docs/*.md"));
my ($database, $databases) = ('', 0);
for my $file (@files)
{
	my $first = 1;
	for my $block (sql_blocks($file))
	{
		my $where = "$file:$block->{line}";
		if ($block->{mark} =~ /^not run:\s*(\S.*)$/)
		{
			pass("$where: not run ($1)");
			next;
		}
		if (my ($test) = $block->{mark} =~ m{^run by (test/t/\S+\.pl)$})
		{
			# it reads this page itself, or its blocks marked for it (SnowflakeTest::readme_blocks)
			my ($name) = $test =~ m{([^/]+)$};
			ok(-f "$root/$test" && slurp_file("$root/$test") =~ /\Q$file\E|readme_blocks\('\Q$name\E'\)/,
				"$where: run by $test, which reads $file");
			next;
		}
		die "$where: unknown mark <!-- $block->{mark} -->"
		  if $block->{mark} ne '' && $block->{mark} ne 'new database';
		my @statements = statements($block);
		if ($first || $block->{mark} eq 'new database')
		{
			$database = 'readme_' . ++$databases;
			$node->safe_psql('postgres', "CREATE DATABASE $database");
			$node->safe_psql($database, 'CREATE EXTENSION snowflake')
			  unless grep { $_->{sql} =~ /CREATE EXTENSION snowflake/ } @statements;
			$first = 0;
		}
		my @results = run_block($database, @statements);
		for my $i (0 .. $#statements)
		{
			my ($statement, $result) = ($statements[$i], $results[$i]);
			my $name = "$file:$statement->{line}: " . ($statement->{sql} =~ s/\s+/ /gr =~ s/^\s+|\s+$//gr);
			$name = substr($name, 0, 110) . '...' if length $name > 113;
			if (!$result)
			{
				fail("$name: ran");
				next;
			}
			if (defined $statement->{error})
			{
				is($result->{error}, $statement->{error}, "$name: fails as printed");
				next;
			}
			is($result->{error}, undef, "$name: succeeds");
			my @output = @{ $result->{output} };
			is_deeply([ map { fields($_) } @output[ 1 .. $#output ] ], $statement->{rows},
				"$name: the result printed")
			  if @{ $statement->{rows} };
			is_deeply([ map { fields($_) } @output ], $statement->{table}, "$name: the table printed")
			  if $statement->{table};
		}
	}
}

$node->stop;
done_testing();
