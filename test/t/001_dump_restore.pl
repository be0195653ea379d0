# test/t/001_dump_restore.pl: simhash64 and simhash_distance values survive
# pg_dump / pg_restore (custom and plain formats) bit for bit, and
# fingerprints computed after the restore equal those stored before.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION simhash;
	CREATE TABLE docs (id int PRIMARY KEY, body text, h simhash64, d simhash_distance);
	INSERT INTO docs
		SELECT g, md5(g::text) || ' ' || repeat('word' || (g % 7) || ' ', g % 50),
		       NULL, NULL
		FROM generate_series(1, 500) g;
	UPDATE docs SET h = simhash(body), d = simhash(body) <~> simhash('word1 word2');
	INSERT INTO docs VALUES (501, NULL, 'ffffffffffffffff', 64), (502, '', '8000000000000000', 0);
	CREATE INDEX ON docs (h);
});
my $before = $node->safe_psql('postgres',
	'SELECT string_agg(id || ' . "':'" . ' || h || ' . "':'" . ' || d, \',\' ORDER BY id) FROM docs');

my $dumpdir = PostgreSQL::Test::Utils::tempdir;
for my $format ('c', 'p')
{
	my $file = "$dumpdir/dump.$format";
	my $db = "restored_$format";
	$node->command_ok(
		[ 'pg_dump', '-F', $format, '-f', $file, '-d', $node->connstr('postgres') ],
		"pg_dump -F $format");
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	if ($format eq 'c')
	{
		$node->command_ok([ 'pg_restore', '-d', $node->connstr($db), $file ],
			'pg_restore');
	}
	else
	{
		$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', $file, '-d', $node->connstr($db) ],
			'psql restore of plain dump');
	}
	my $after = $node->safe_psql($db,
		'SELECT string_agg(id || ' . "':'" . ' || h || ' . "':'" . ' || d, \',\' ORDER BY id) FROM docs');
	is($after, $before, "values identical after restore (-F $format)");
	is($node->safe_psql($db,
		'SELECT count(*) FROM docs WHERE id <= 500 AND h <> simhash(body)'),
		'0', "fingerprints recomputed after restore (-F $format) equal the stored ones");
	is($node->safe_psql($db,
		"SET enable_seqscan = off; SELECT count(*) FROM docs WHERE h = 'ffffffffffffffff'"),
		'1', "btree index usable after restore (-F $format)");
}

$node->stop;
done_testing();
