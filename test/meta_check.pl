#!/usr/bin/perl
# test/meta_check.pl: checks META.json against the PGXN Meta Spec 1.0.0 and
# against the rest of the tree.
#
#   test/meta_check.pl [META.json]     check; prints the errors, exits 1 on any
#   test/meta_check.pl --self-test     check that broken variants are refused
#
# Debian packages no PGXN validator (PGXN::Meta::Validator is only on CPAN), so
# this implements the spec's rules with core Perl (JSON::PP): the mandatory
# fields (name, abstract, maintainer, license, provides, version, meta-spec),
# the type of every known field (Term, SemVer, Version Range, License strings,
# Tags, URIs), that unknown fields start with x_ or X_, and that the files named
# by provides exist.  It then checks that the versions agree: META.json's
# version, provides.simhash.version, simhash.control's default_version, the
# Makefile's EXTVERSION, the latest debian/changelog entry and CHANGELOG.md's
# latest section (1.1 and 1.1.0 are the same version).
use strict;
use warnings;
use JSON::PP;
use File::Basename qw(dirname);
use Cwd qw(abs_path);

my $root = abs_path(dirname(__FILE__) . '/..');

my $term_re = qr/^[^\/\\\s\p{Cntrl}]{2,}$/;
my $semver_re = qr/^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)
	(?:-(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?
	(?:\+[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*)?$/x;
my %licenses = map { $_ => 1 } qw(agpl_3 apache_1_1 apache_2_0 artistic_1
	artistic_2 bsd freebsd gfdl_1_2 gfdl_1_3 gpl_1 gpl_2 gpl_3 lgpl_2_1
	lgpl_3_0 mit mozilla_1_0 mozilla_1_1 openssl perl_5 postgresql qpl_1_0
	ssleay sun zlib open_source restricted unrestricted unknown);
my %phases = map { $_ => 1 } qw(configure build test runtime develop);
my %relations = map { $_ => 1 } qw(requires recommends suggests conflicts);

# Returns the list of spec violations of a decoded META.json.
sub spec_errors {
	my ($m) = @_;
	my @e;
	my $is_str = sub { defined $_[0] && !ref $_[0] && length $_[0] };
	my $is_uri = sub { $is_str->($_[0]) && $_[0] =~ m{^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$} };
	my $is_range = sub {
		my $v = shift;
		return 1 if defined $v && !ref $v && $v eq '0';
		return 0 unless $is_str->($v);
		for my $part (split /,\s*/, $v) {
			my $ver = $part =~ s/^(?:[=!]=|[<>]=?)\s*//r;
			return 0 unless $ver =~ $semver_re;
		}
		return 1;
	};
	my $custom = sub { $_[0] =~ /^[xX]_./ };

	ref $m eq 'HASH' or return ('META.json is not a JSON object');
	for my $k (qw(name abstract maintainer license provides version meta-spec)) {
		push @e, "missing mandatory field '$k'" unless exists $m->{$k};
	}
	my %known = map { $_ => 1 } qw(name abstract description version maintainer
		license provides prereqs release_status generated_by no_index tags
		resources meta-spec);
	for my $k (sort keys %$m) {
		push @e, "unknown field '$k' (custom fields start with x_)"
			unless $known{$k} || $custom->($k);
	}
	push @e, "name: not a Term" if exists $m->{name}
		&& !($is_str->($m->{name}) && $m->{name} =~ $term_re);
	push @e, "version: not a SemVer" if exists $m->{version}
		&& !($is_str->($m->{version}) && $m->{version} =~ $semver_re);
	for my $k (qw(abstract description generated_by)) {
		push @e, "$k: not a non-empty string" if exists $m->{$k} && !$is_str->($m->{$k});
	}
	if (exists $m->{maintainer}) {
		my $v = $m->{maintainer};
		push @e, "maintainer: not a string or a non-empty list of strings"
			unless $is_str->($v)
			|| (ref $v eq 'ARRAY' && @$v && !grep { !$is_str->($_) } @$v);
	}
	if (exists $m->{license}) {
		my $v = $m->{license};
		my $ok = (!ref $v && defined $v && $licenses{$v})
			|| (ref $v eq 'ARRAY' && @$v && !grep { ref $_ || !defined $_ || !$licenses{$_} } @$v)
			|| (ref $v eq 'HASH' && %$v && !grep { !$is_uri->($v->{$_}) } keys %$v);
		push @e, "license: not a known license string, a list of them, or a map of names to URIs"
			unless $ok;
	}
	if (exists $m->{provides}) {
		my $p = $m->{provides};
		if (ref $p ne 'HASH' || !%$p) {
			push @e, "provides: not a non-empty object";
		} else {
			for my $ext (sort keys %$p) {
				my $x = $p->{$ext};
				push @e, "provides: '$ext' is not a Term" unless $ext =~ $term_re;
				if (ref $x ne 'HASH') { push @e, "provides.$ext: not an object"; next; }
				for my $k (qw(file version)) {
					push @e, "provides.$ext: missing mandatory field '$k'" unless exists $x->{$k};
				}
				for my $k (sort keys %$x) {
					push @e, "provides.$ext: unknown field '$k'"
						unless $k =~ /^(file|version|abstract|docfile)$/ || $custom->($k);
				}
				push @e, "provides.$ext.version: not a SemVer"
					if exists $x->{version} && !($is_str->($x->{version}) && $x->{version} =~ $semver_re);
				push @e, "provides.$ext.abstract: not a non-empty string"
					if exists $x->{abstract} && !$is_str->($x->{abstract});
				for my $k (qw(file docfile)) {
					next unless exists $x->{$k};
					if (!$is_str->($x->{$k}) || $x->{$k} =~ m{^/|\\}) {
						push @e, "provides.$ext.$k: not a relative unix path";
					} elsif (!-f "$root/$x->{$k}") {
						push @e, "provides.$ext.$k: $x->{$k} does not exist";
					}
				}
			}
		}
	}
	if (exists $m->{prereqs}) {
		my $p = $m->{prereqs};
		if (ref $p ne 'HASH') { push @e, "prereqs: not an object"; }
		else {
			for my $ph (sort keys %$p) {
				push @e, "prereqs: unknown phase '$ph'" unless $phases{$ph} || $custom->($ph);
				next unless ref $p->{$ph} eq 'HASH' or (push(@e, "prereqs.$ph: not an object"), 0);
				for my $rel (sort keys %{ $p->{$ph} }) {
					push @e, "prereqs.$ph: unknown relationship '$rel'" unless $relations{$rel} || $custom->($rel);
					my $r = $p->{$ph}{$rel};
					if (ref $r ne 'HASH') { push @e, "prereqs.$ph.$rel: not an object"; next; }
					for my $dep (sort keys %$r) {
						push @e, "prereqs.$ph.$rel.$dep: not a Version Range" unless $is_range->($r->{$dep});
					}
				}
			}
		}
	}
	push @e, "release_status: not one of stable, testing, unstable"
		if exists $m->{release_status}
		&& !(defined $m->{release_status} && !ref $m->{release_status}
			&& $m->{release_status} =~ /^(stable|testing|unstable)$/);
	if (exists $m->{tags}) {
		my $t = $m->{tags};
		push @e, "tags: not a non-empty list of tags (1-255 characters, no slash, backslash or control character)"
			unless ref $t eq 'ARRAY' && @$t
			&& !grep { !$is_str->($_) || length($_) > 255 || /[\/\\\p{Cntrl}]/ } @$t;
	}
	if (exists $m->{no_index}) {
		my $n = $m->{no_index};
		if (ref $n ne 'HASH') { push @e, "no_index: not an object"; }
		else {
			for my $k (sort keys %$n) {
				push @e, "no_index: unknown field '$k'" unless $k =~ /^(file|directory)$/ || $custom->($k);
				my $v = $n->{$k};
				push @e, "no_index.$k: not a string or list of strings"
					unless $is_str->($v) || (ref $v eq 'ARRAY' && !grep { !$is_str->($_) } @$v);
			}
		}
	}
	if (exists $m->{resources}) {
		my $r = $m->{resources};
		if (ref $r ne 'HASH') { push @e, "resources: not an object"; }
		else {
			my %sub = (bugtracker => [qw(web mailto)], repository => [qw(url web type)]);
			for my $k (sort keys %$r) {
				if ($k eq 'homepage') {
					push @e, "resources.homepage: not a URI" unless $is_uri->($r->{$k});
				} elsif ($sub{$k}) {
					if (ref $r->{$k} ne 'HASH' || !%{ $r->{$k} }) { push @e, "resources.$k: not a non-empty object"; next; }
					for my $f (sort keys %{ $r->{$k} }) {
						my $v = $r->{$k}{$f};
						if (!grep { $_ eq $f } @{ $sub{$k} }) {
							push @e, "resources.$k: unknown field '$f'" unless $custom->($f);
						} elsif ($f eq 'type') {
							push @e, "resources.$k.type: not a lower-case word" unless $is_str->($v) && $v =~ /^[a-z]+$/;
						} elsif ($f eq 'mailto') {
							push @e, "resources.$k.mailto: not an e-mail address" unless $is_str->($v) && $v =~ /^[^@\s]+@[^@\s]+$/;
						} else {
							push @e, "resources.$k.$f: not a URI" unless $is_uri->($v);
						}
					}
				} else {
					push @e, "resources: unknown field '$k'" unless $custom->($k);
				}
			}
		}
	}
	if (exists $m->{'meta-spec'}) {
		my $s = $m->{'meta-spec'};
		if (ref $s ne 'HASH') { push @e, "meta-spec: not an object"; }
		else {
			push @e, "meta-spec.version: not 1.0.0" unless ($s->{version} // '') eq '1.0.0';
			push @e, "meta-spec.url: not a URI" if exists $s->{url} && !$is_uri->($s->{url});
			for my $k (sort keys %$s) {
				push @e, "meta-spec: unknown field '$k'" unless $k =~ /^(version|url)$/ || $custom->($k);
			}
		}
	}
	return @e;
}

# 1.1 -> 1.1.0, so that PostgreSQL's and Debian's versions compare with SemVer.
sub semver_of {
	my ($v) = @_;
	my @p = split /\./, $v;
	push @p, 0 while @p < 3;
	return join '.', @p;
}

sub slurp {
	my ($f) = @_;
	open my $fh, '<', $f or return undef;
	local $/;
	return scalar <$fh>;
}

# Returns the disagreements between META.json and the other files of the tree.
sub tree_errors {
	my ($m) = @_;
	my @e;
	my $v = $m->{version} // '';
	my %found;
	my $control = slurp("$root/simhash.control") // '';
	$found{'simhash.control default_version'} = $1 if $control =~ /^default_version\s*=\s*'([^']+)'/m;
	my $make = slurp("$root/Makefile") // '';
	$found{'Makefile EXTVERSION'} = $1 if $make =~ /^EXTVERSION\s*=\s*(\S+)/m;
	$found{'provides.simhash.version'} = $m->{provides}{simhash}{version}
		if ref $m->{provides} eq 'HASH' && ref $m->{provides}{simhash} eq 'HASH';
	my $dch = slurp("$root/debian/changelog");
	$found{'debian/changelog'} = $1 if defined $dch && $dch =~ /^simhash \(([^)-]+)(?:-[^)]*)?\)/;
	my $cl = slurp("$root/CHANGELOG.md") // '';
	$found{'CHANGELOG.md latest section'} = $1 if $cl =~ /^## \[?(\d+(?:\.\d+)+)/m;
	for my $k ('simhash.control default_version', 'Makefile EXTVERSION',
		'provides.simhash.version', 'CHANGELOG.md latest section', 'debian/changelog') {
		next if $k eq 'debian/changelog' && !defined $dch;
		if (!defined $found{$k}) { push @e, "$k: not found"; next; }
		push @e, "$k is $found{$k}, META.json version is $v"
			unless semver_of($found{$k}) eq $v;
	}
	my $lic = slurp("$root/LICENSE") // '';
	push @e, "license is postgresql but LICENSE is not the PostgreSQL Licence"
		if ($m->{license} // '') eq 'postgresql'
		&& $lic !~ /Permission to use, copy, modify, and distribute this software/;
	return @e;
}

my $meta_file = "$root/META.json";
if (@ARGV && $ARGV[0] eq '--self-test') {
	# each broken variant of the real META.json must be refused
	my $good = decode_json(slurp($meta_file));
	my @e = (spec_errors($good), tree_errors($good));
	die "META.json itself fails: @e\n" if @e;
	my %variants = (
		'no license'        => sub { delete $_[0]{license} },
		'unknown license'   => sub { $_[0]{license} = 'PostgreSQL Licence' },
		'version not SemVer' => sub { $_[0]{version} = '1.1' },
		'name with a space' => sub { $_[0]{name} = 'sim hash' },
		'provides no file'  => sub { delete $_[0]{provides}{simhash}{file} },
		'missing file'      => sub { $_[0]{provides}{simhash}{file} = 'sql/nothing.sql' },
		'bad prereq range'  => sub { $_[0]{prereqs}{runtime}{requires}{PostgreSQL} = '15' },
		'unknown phase'     => sub { $_[0]{prereqs}{running} = {} },
		'unknown field'     => sub { $_[0]{homepage} = 'https://example.org/' },
		'tag with a slash'  => sub { $_[0]{tags} = ['a/b'] },
		'wrong meta-spec'   => sub { $_[0]{'meta-spec'}{version} = '2.0.0' },
		'bad release_status' => sub { $_[0]{release_status} = 'final' },
		'version disagrees' => sub { $_[0]{version} = '9.9.9'; },
		'provides version disagrees' => sub { $_[0]{provides}{simhash}{version} = '1.0.0' },
	);
	my $bad = 0;
	for my $name (sort keys %variants) {
		my $m = decode_json(encode_json($good));
		$variants{$name}->($m);
		my @errs = (spec_errors($m), tree_errors($m));
		if (@errs) { print "refused: $name ($errs[0])\n"; }
		else { print "NOT refused: $name\n"; $bad++; }
	}
	exit($bad ? 1 : 0);
}

$meta_file = $ARGV[0] if @ARGV;
my $text = slurp($meta_file) // die "cannot read $meta_file\n";
my $m = eval { decode_json($text) };
if (!$m) { print "$meta_file is not valid JSON: $@"; exit 1; }
my @errors = (spec_errors($m), tree_errors($m));
if (@errors) {
	print "$meta_file is invalid:\n", map { "  $_\n" } @errors;
	exit 1;
}
print "$meta_file is OK (PGXN Meta Spec 1.0.0, version $m->{version})\n";
exit 0;
