#!/usr/bin/perl
# test/load_files.pl: prints files as CSV rows (name, body) for psql's \copy.
# HTML is reduced to text; bytes that are not UTF-8 are replaced (U+FFFD).
use strict;
use warnings;
use Encode qw(decode encode);

binmode STDOUT, ':raw';
for my $path (@ARGV) {
	open(my $fh, '<:raw', $path) or next;
	local $/;
	my $bytes = <$fh>;
	close $fh;
	my $text = decode('UTF-8', $bytes);
	if ($path =~ /\.html?$/) {
		$text =~ s{<(script|style)\b.*?</\1>}{ }gis;
		$text =~ s{<[^>]*>}{ }gs;
		$text =~ s{&nbsp;|&#160;}{ }g;
		$text =~ s{&lt;}{<}g; $text =~ s{&gt;}{>}g;
		$text =~ s{&quot;}{"}g; $text =~ s{&amp;}{&}g;
	}
	$text =~ s/\0//g;
	$text =~ s/"/""/g;
	(my $name = $path) =~ s/"/""/g;
	print encode('UTF-8', qq{"$name","$text"\n});
}
