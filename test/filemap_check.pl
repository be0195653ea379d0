#!/usr/bin/perl
# test/filemap_check.pl: keeps the file map of doc/contributing.md true.
#
#   test/filemap_check.pl [ROOT]       check the tree at ROOT (default: this
#                                      checkout); prints the errors, exits 1
#   test/filemap_check.pl --self-test  check that a file added under src/ and
#                                      a row removed from the map are refused
#
# The file map is the section "## File map" of doc/contributing.md (up to the
# next "## " heading): tables whose cells name files in backquotes.  Every
# file under src/ must be named there, and every path named there (a
# backquoted word containing a "/", outside src/ too) must exist; a name with
# a "*" must match at least one file.  test/run.sh runs it (result line
# "file map: doc/contributing.md").
use strict;
use warnings;
use File::Basename qw(dirname);
use File::Copy qw(copy);
use File::Find;
use File::Path qw(make_path);
use File::Temp qw(tempdir);
use Cwd qw(abs_path);

# The paths named in the "## File map" section of ROOT/doc/contributing.md.
sub map_paths
{
	my ($root) = @_;
	my $doc = "$root/doc/contributing.md";
	open my $fh, '<', $doc or return (undef, "cannot read $doc: $!");
	my ($in, %paths) = (0);
	while (my $l = <$fh>)
	{
		if ($l =~ /^## /)
		{
			$in = $l =~ /^## File map\s*$/;
			next;
		}
		next unless $in && $l =~ /^\|/;
		$paths{$1} = 1 while $l =~ /`([^`\s]*\/[^`\s]*)`/g;
	}
	return (undef, "$doc has no \"## File map\" section") unless %paths;
	return (\%paths);
}

# The files under ROOT/src, as paths relative to ROOT.
sub src_files
{
	my ($root) = @_;
	my @files;
	find({ no_chdir => 1, wanted => sub {
		push @files, substr($File::Find::name, length($root) + 1) if -f $_;
	} }, "$root/src");
	return sort @files;
}

# The errors of the tree at ROOT: files of src/ missing from the map, and
# paths of the map that do not exist.
sub check
{
	my ($root) = @_;
	my ($paths, $err) = map_paths($root);
	return ($err) unless $paths;
	my @e;
	for my $f (src_files($root))
	{
		push @e, "$f is not in the file map of doc/contributing.md"
		  unless $paths->{$f};
	}
	for my $p (sort keys %$paths)
	{
		# "src/dedup/" names a folder; "sql/*.sql" must match something
		my @hits = $p =~ /\*/ ? glob("$root/$p") : ("$root/$p");
		push @e, "doc/contributing.md's file map names $p, which does not exist"
		  unless @hits && -e $hits[0];
	}
	return @e;
}

# Copies the file map's document and src/ of ROOT into a new directory.
sub copy_tree
{
	my ($root) = @_;
	my $dir = tempdir(CLEANUP => 1);
	for my $f (src_files($root), 'doc/contributing.md')
	{
		make_path(dirname("$dir/$f"));
		copy("$root/$f", "$dir/$f") or die "copy $f: $!";
	}
	# the paths the map names outside src/ (bench/, test/, ...) as they are
	my ($paths) = map_paths($root);
	for my $p (grep { !/^src\// } keys %$paths)
	{
		for my $hit ($p =~ /\*/ ? glob("$root/$p") : ("$root/$p"))
		{
			next unless -e $hit;
			my $rel = substr($hit, length($root) + 1);
			make_path(-d $hit ? "$dir/$rel" : dirname("$dir/$rel"));
			copy($hit, "$dir/$rel") if -f $hit;
		}
	}
	return $dir;
}

my $root = abs_path(dirname(__FILE__) . '/..');
if (@ARGV && $ARGV[0] eq '--self-test')
{
	my $fail = 0;
	my $expect = sub {
		my ($name, $want_errors, @e) = @_;
		my $ok = $want_errors ? @e > 0 : @e == 0;
		printf "%s  self-test: %s%s\n", $ok ? 'ok  ' : 'FAIL', $name,
		  @e ? " ($e[0])" : '';
		$fail++ unless $ok;
	};
	$expect->('the tree as it is passes', 0, check(copy_tree($root)));

	my $dir = copy_tree($root);
	open my $fh, '>', "$dir/src/core/added.c" or die $!;
	close $fh;
	$expect->('a file added under src/ without a row is refused', 1, check($dir));

	$dir = copy_tree($root);
	my $doc = "$dir/doc/contributing.md";
	open $fh, '<', $doc or die $!;
	my $text = do { local $/; <$fh> };
	close $fh;
	$text =~ s/^\| `src\/types\/type\.c` \|.*\n//m or die 'no row for src/types/type.c';
	$text =~ s/^\| `src\/join\/path\.c` \|/| `src\/join\/path.c`, `src\/join\/gone.c` |/m
	  or die 'no row for src/join/path.c';
	open $fh, '>', $doc or die $!;
	print $fh $text;
	close $fh;
	my @e = check($dir);
	$expect->('a removed row is refused', 1, grep { /src\/types\/type\.c/ } @e);
	$expect->('a row naming a missing file is refused', 1, grep { /gone\.c/ } @e);
	exit($fail ? 1 : 0);
}

$root = abs_path($ARGV[0]) if @ARGV;
my @e = check($root);
print STDERR "filemap_check: $_\n" for @e;
exit(@e ? 1 : 0);
