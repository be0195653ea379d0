# test/t/017_readme.pl: the README's SQL examples run as written.
#
# Every ```sql block of README.md is run, in the README's order, in one psql
# session on a fresh database of a fresh cluster, except blocks whose
# preceding line is <!-- template -->.  When a ```text block follows a
# runnable block (only blank lines between), it is the block's expected
# output: psql's aligned output, errors included ("ERROR:  ..."), compared
# line by line with trailing white space ignored, so a changed output fails.
# A runnable block without an output block must not raise an error.
# (The convention is described in doc/contributing.md.)
#
# README.md is read from $TESTDIR (test/run.sh copies it there) or from the
# checkout this script lives in.
#
# Then: every function of the extension that PUBLIC may execute is named in
# the README's Reference, except the support functions of its types,
# operators, casts, aggregates, operator classes, access method and planner
# support (listed in doc/contributing.md): no internal helper is an SQL
# function executable by PUBLIC.
use strict;
use warnings;
use FindBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my ($readme) = grep { -r } ("$ENV{TESTDIR}/README.md", "$FindBin::Bin/../../README.md");
ok(defined $readme, 'README.md found') or done_testing(), exit;

# (line, section, sql, expected output or undef) for every runnable block
my @blocks;
{
	open my $fh, '<', $readme or die "$readme: $!";
	my @lines = <$fh>;
	chomp @lines;
	my ($section, $prev, $pending) = ('(top)', '', undef);
	for (my $i = 0; $i < @lines; $i++)
	{
		my $l = $lines[$i];
		$section = $1 if $l =~ /^#+\s+(.*)/;
		if ($l =~ /^```(\w*)/)
		{
			my ($lang, $start, @body) = ($1, $i + 2);
			push @body, $lines[$i] while ++$i < @lines && $lines[$i] !~ /^```\s*$/;
			if ($lang eq 'text' && defined $pending)
			{
				$blocks[$pending]{expected} = join("\n", @body);
				$pending = undef;
			}
			elsif ($lang eq 'sql' && $prev !~ /^<!--\s*template\s*-->$/)
			{
				push @blocks, { line => $start - 1, section => $section, sql => join("\n", @body) };
				$pending = $#blocks;
			}
			else
			{
				$pending = undef;
			}
			$prev = '```';
			next;
		}
		next if $l =~ /^\s*$/;
		# other text between a sql block and a text block detaches them
		$pending = undef;
		$prev = $l;
	}
}
cmp_ok(scalar @blocks, '>', 10, scalar(@blocks) . ' runnable SQL blocks');

my $node = PostgreSQL::Test::Cluster->new('readme');
$node->init;
$node->start;
# UTF-8 whatever the machine's locale, so that psql aligns CJK text as shown
$node->safe_psql('postgres',
	"CREATE DATABASE readme ENCODING 'UTF8' LOCALE 'C' TEMPLATE template0");
$ENV{PGCLIENTENCODING} = 'UTF8';

my $script = '';
for my $n (0 .. $#blocks)
{
	$script .= "\\echo '<<<readme block $n>>>'\n$blocks[$n]{sql}\n";
}
$script .= "\\echo '<<<readme block end>>>'\n";
my $out = '';
IPC::Run::run([ 'psql', '-X', '-q', '-d', $node->connstr('readme') ],
	'<', \$script, '>&', \$out);

my %got;
my $cur;
for my $l (split /\n/, $out)
{
	if ($l =~ /^<<<readme block (\d+|end)>>>$/) { $cur = $1; next; }
	$got{$cur} .= "$l\n" if defined $cur;
}

sub normalise
{
	my $s = shift // '';
	$s =~ s/[ \t]+$//mg;
	$s =~ s/^\n+//;
	$s =~ s/\n+$//;
	return $s;
}

for my $n (0 .. $#blocks)
{
	my $b = $blocks[$n];
	my $name = "README line $b->{line} ($b->{section})";
	my $got = normalise($got{$n});
	if (defined $b->{expected})
	{
		is($got, normalise($b->{expected}), "$name: output as shown");
	}
	else
	{
		unlike($got, qr/^(ERROR|FATAL|PANIC):/m, "$name: runs without error")
		  or diag($got);
	}
}

# the functions PUBLIC may execute that are not support functions, each
# named in the Reference (`name(` or `name`)
my $reference = '';
{
	open my $fh, '<', $readme or die "$readme: $!";
	local $/;
	my $text = <$fh>;
	($reference) = $text =~ /^## Reference\n(.*?)^## /ms;
}
ok(length($reference // '') > 1000, "the README's Reference found");
$node->safe_psql('postgres', 'CREATE EXTENSION simhash');
my ($public_sql) = grep { -r } ("$ENV{TESTDIR}/public_functions.psql",
	"$FindBin::Bin/../../sql/public_functions.psql");
ok(defined $public_sql, 'sql/public_functions.psql found') or done_testing(), exit;
my @public = split /\n/, $node->safe_psql('postgres', slurp_file($public_sql));
cmp_ok(scalar @public, '>', 20, scalar(@public) . ' user-level functions executable by PUBLIC');
my @undocumented = grep { $reference !~ /`\Q$_\E[`(]/ } @public;
is(join(', ', @undocumented), '', "every function executable by PUBLIC is in the README's Reference (no internal helper)");
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
	WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e' AND p.proname LIKE '%citus%'
	  AND d.refobjid = (SELECT e.oid FROM pg_extension e WHERE e.extname = 'simhash')}), '0',
	'no function of the extension is named for Citus (the plain names run on the workers)');

$node->stop;
done_testing();
