# test/t/035_index_format.pl: an index of an on-disk format version this
# library does not read (a later one: it reads formats 1 and 2,
# SIMHASH_VERSION1 and SIMHASH_VERSION in src/index/am.h; format 1 is
# tested by t/037_index_format_upgrade.pl) is refused on every path, with
# SQLSTATE 55000 (object_not_in_prerequisite_state) and a hint naming
# REINDEX INDEX, and REINDEX makes it usable again.
#
# A real index (a run with inner pages, a pending list, NULLs, dead
# entries) gets its metapage's version field (offset 24 + 4) set to 3 with
# the server stopped; then an index scan, a bitmap scan, an ordered scan,
# an insert, VACUUM and simhash_index_check must each fail that way, and
# after REINDEX INDEX each must work, with the rows of a sequential scan.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('format');
# the metapage is edited on disk: without data checksums (18's initdb
# enables them), so that the index reads what was written
$node->init(no_data_checksums => 1);
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION simhash;
	CREATE TABLE t (id int, h simhash64);
	INSERT INTO t SELECT g, CASE WHEN g % 997 = 0 THEN NULL
		ELSE simhash_hash((g % 3000)::text)::simhash64 END FROM generate_series(1, 20000) g;
	CREATE INDEX t_h ON t USING simhash (h);
	INSERT INTO t SELECT g, simhash_hash(g::text)::simhash64 FROM generate_series(20001, 20100) g;
	DELETE FROM t WHERE id % 10 = 0;
	CHECKPOINT;
});

my $q = simhash_hash_of('17');
my %tests = (
	'index scan' => "SET enable_seqscan = off; SET enable_bitmapscan = off; "
	  . "SELECT string_agg(id::text, ',' ORDER BY id) FROM t WHERE h <~> '$q' <= 3",
	'bitmap scan' => "SET enable_seqscan = off; SET enable_indexscan = off; "
	  . "SELECT string_agg(id::text, ',' ORDER BY id) FROM t WHERE h <~> '$q' <= 3",
	'ordered scan' => "SET enable_seqscan = off; "
	  . "SELECT string_agg(d::text, ',') FROM (SELECT h <~> '$q' AS d FROM t ORDER BY h <~> '$q' LIMIT 7) s",
	'insert' => "INSERT INTO t VALUES (-1, '$q')",
	'VACUUM' => "DELETE FROM t WHERE id % 10 = 1; VACUUM t",
	'simhash_index_check' => "SELECT simhash_index_check('t_h', true)",
);
my @order = ('index scan', 'bitmap scan', 'ordered scan', 'insert', 'VACUUM', 'simhash_index_check');

# the rows a sequential scan gives
my %ref;
for my $name ('index scan', 'bitmap scan', 'ordered scan')
{
	(my $seq = $tests{$name}) =~ s/SET enable_\w+ = off; //g;
	$ref{$name} = $node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; $seq");
}
isnt($ref{'index scan'}, '', 'the query has rows');
for my $name ('index scan', 'bitmap scan', 'ordered scan')
{
	my $plan = $node->safe_psql('postgres', $tests{$name} =~ s/SELECT/EXPLAIN (COSTS OFF) SELECT/r);
	like($plan, $name eq 'bitmap scan' ? qr/Bitmap Index Scan on t_h/ : qr/ Index Scan using t_h/,
		"$name: the plan uses the index");
}

sub simhash_hash_of
{
	my ($s) = @_;
	return $node->safe_psql('postgres', "SELECT simhash_hash('$s')::simhash64");
}

# set the metapage's format version (block 0, contents at 24: magic, version)
my $path = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('t_h')");
$node->stop('fast');
open my $fh, '+<', $path or die "open $path: $!";
binmode $fh;
sysseek($fh, 24, 0) or die;
my $head = '';
sysread($fh, $head, 8) == 8 or die;
my ($magic, $version) = unpack('VV', $head);
is(sprintf('%08x', $magic), '53485831', 'the metapage has the magic number');
is($version, 2, 'a new index has format version 2');
sysseek($fh, 28, 0) or die;
syswrite($fh, pack('V', 3)) == 4 or die;
close $fh;
$node->start;

for my $name (@order)
{
	my ($rc, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$tests{$name}");
	isnt($rc, 0, "format 3: $name fails");
	like($err, qr/ERROR:  55000: simhash index "t_h" has on-disk format version 3, this version of the extension reads versions 1 to 2/,
		"format 3: $name: SQLSTATE 55000 and the versions");
	like($err, qr/HINT:  Rebuild it with REINDEX INDEX public\.t_h\./, "format 3: $name: the hint names REINDEX INDEX");
}

$node->safe_psql('postgres', 'REINDEX INDEX t_h');
for my $name (@order)
{
	my ($rc, $out, $err) = $node->psql('postgres', $tests{$name});
	is($rc, 0, "after REINDEX: $name works") or diag($err);
	is($out, $ref{$name}, "after REINDEX: $name gives the rows of a sequential scan")
	  if $ref{$name};
}
$node->stop;
done_testing();
