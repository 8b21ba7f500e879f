# The README's SQL, executed: an example that stops working fails CI. Every ```sql block of README.md and of docs/*.md runs here, in the
# order printed, on a preloaded server (worker id 1, TimeZone UTC), unless the
# line before its fence says otherwise:
#   <!-- not run: why -->            not runnable on its own, and why
#   <!-- run by test/t/NNN.pl -->   another test runs it as printed
#   <!-- new database -->            starts in a fresh database (the first
#                                    block of a file always does)
#   <!-- every layout -->            runs as the others, then also on servers
#                                    generating js53 and 41/8/14, each in a
#                                    fresh database after its page's first block
# Otherwise a block runs in the database of the blocks before it, each
# statement in turn in one psql session. Within a block:
#   -- ERROR:  message        after a statement (on its line or the next):
#                             it must fail with exactly this message
#   --> a | b                 its result rows, compared field by field
#   -- a | b / -- ---+--- / -- x | y
#                             a psql table: header and rows compared
#   anything else after --    prose
# and every statement without an ERROR line must succeed. Then every link of
# those pages to a page or a heading leads somewhere.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $root = $ENV{TESTDIR} // '.';

my $node = snowflake_node('readme', 1, "timezone = 'UTC'\n");
$node->start;
# the other layouts, for the blocks marked <!-- every layout -->
my %layout_nodes = map {
	my ($name, $layout) = @$_;
	my $other = snowflake_node("readme_$name", 1, "timezone = 'UTC'\nsnowflake.layout = '$layout'\n");
	$other->start;
	($layout => $other)
} [ 'js53', 'js53' ], [ 'wide', 'time=41 worker=8 sequence=14' ];

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
		if ($code =~ /(;|\\gexec|\\gset)\s*$/)
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
	my ($node, $database, @statements) = @_;
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

my ($database, $databases) = ('', 0);

# Runs a block's statements on a node and checks each as printed.
sub check_block
{
	my ($on, $label, $database, @statements) = @_;
	my @results = run_block($on, $database, @statements);
	for my $i (0 .. $#statements)
	{
		my ($statement, $result) = ($statements[$i], $results[$i]);
		my $name = "$label$statement->{file}:$statement->{line}: " . ($statement->{sql} =~ s/\s+/ /gr =~ s/^\s+|\s+$//gr);
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
	return;
}

sub new_database
{
	my ($on, @statements) = @_;
	my $name = 'readme_' . ++$databases;
	$on->safe_psql('postgres', "CREATE DATABASE $name");
	$on->safe_psql($name, 'CREATE EXTENSION snowflake')
	  unless grep { $_->{sql} =~ /CREATE EXTENSION snowflake/ } @statements;
	return $name;
}

my @files = ('README.md', map { s{^\Q$root\E/}{}r } glob("$root/docs/*.md"));
for my $file (@files)
{
	my $first = 1;
	my @setup;    # the page's first block
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
		  if $block->{mark} !~ /^(|new database|every layout)$/;
		my @statements = map { +{ %$_, file => $file } } statements($block);
		my @before = @setup;    # what runs before it on the other layouts' servers
		if ($first || $block->{mark} eq 'new database')
		{
			$database = new_database($node, @statements);
			@setup = @statements if $first;
			@before = ();
			$first = 0;
		}
		check_block($node, '', $database, @statements);
		next unless $block->{mark} eq 'every layout';
		for my $layout (sort keys %layout_nodes)
		{
			my $on = $layout_nodes{$layout};
			my $fresh = new_database($on, @before, @statements);
			check_block($on, "[$layout] ", $fresh, @before, @statements);
		}
	}
}

# The README's Quick start: the SQL its psql lines run, in their order, in a
# fresh database of this server (its other lines install and configure it as
# the servers here are).
{
	my ($quick) = slurp_file("$root/README.md") =~ /^## Quick start\n.*?^```sh\n(.*?)^```/ms
	  or die 'README.md has no Quick start block';
	my @sql;
	for my $line (split /\n/, $quick)
	{
		push @sql, $2 while $line =~ /\bpsql\b/ && $line =~ /-c (['"])(.*?)\1/g;
	}
	ok(@sql >= 3, 'the Quick start runs ' . scalar(@sql) . ' statements through psql');
	$node->safe_psql('postgres', 'CREATE DATABASE quick_start');
	for my $statement (@sql)
	{
		my ($rc, $out, $err) = $node->psql('quick_start', $statement);
		is($rc, 0, "Quick start: $statement") or diag($err);
	}
}

$_->stop for values %layout_nodes;
$node->stop;

# Every relative link of README.md and docs/*.md to a page, or to a heading of
# one (#anchor, as GitHub makes it from the heading's text), leads somewhere.
sub headings
{
	my ($file) = @_;
	my (%seen, %anchors, $fence);
	for (split /\n/, slurp_file($file))
	{
		$fence = !$fence, next if /^\s*(```|~~~)/;
		next if $fence || !/^#{1,6}\s+(.*?)\s*#*\s*$/;
		(my $text = $1) =~ s/`//g;
		$text =~ s/\[([^\]]*)\]\([^)]*\)/$1/g;
		(my $slug = lc $text) =~ s/[^\w\- ]//g;
		$slug =~ s/ /-/g;
		my $n = $seen{$slug}++;
		$anchors{ $n ? "$slug-$n" : $slug } = 1;
	}
	return \%anchors;
}
my ($links, @broken) = (0);
for my $file ("$root/README.md", sort glob "$root/docs/*.md")
{
	my ($fence, $number) = (0, 0);
	for my $line (split /\n/, slurp_file($file))
	{
		$number++;
		$fence = !$fence, next if $line =~ /^\s*(```|~~~)/;
		next if $fence;
		(my $text = $line) =~ s/`[^`]*`//g;
		while ($text =~ /\]\(([^)\s]+)\)/g)
		{
			my ($path, $anchor) = split /#/, $1, 2;
			next if $path =~ /^[a-z]+:/ || ($path ne '' && $path !~ /\.md$/);
			$links++;
			my $target = $path eq '' ? $file : ($file =~ s{[^/]+$}{}r) . $path;
			(my $where = "$file:$number: $1") =~ s{^\Q$root\E/}{};
			if (!-f $target) { push @broken, "$where: no such page"; }
			elsif (defined $anchor && !headings($target)->{$anchor}) { push @broken, "$where: no such heading"; }
		}
	}
}
is(scalar(@broken), 0, "the docs' $links links to pages and headings all lead somewhere") or diag(join "\n", @broken);
done_testing();
