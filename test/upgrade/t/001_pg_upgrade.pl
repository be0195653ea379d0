# test/upgrade/t/001_pg_upgrade.pl: pg_upgrade of a PostgreSQL 15 cluster
# with simhash data to PostgreSQL 18 (run by test/run.sh with 18's TAP
# modules; $PG15_BIN names 15's binaries, both servers have the extension).
#
# The old cluster holds fingerprints, MinHash signatures and sentence hashes
# computed under 15, and simhash indexes: one freshly built, one with
# pending inserts and dead entries (rows deleted after the build, not
# vacuumed), an expression index and a partial one.  pg_upgrade copies the
# files as they are, so the new server reads pages written by the old one.
# Afterwards, on 18:
#   - every index answers radius queries (index and bitmap scans) and
#     ordered scans exactly as a sequential scan does;
#   - every index passes simhash_index_check(…, true);
#   - inserts go into every index and are found; VACUUM works;
#   - every stored fingerprint, signature and sentence hash equals the one
#     computed by the new server from the same text.
use strict;
use warnings;
use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $old_bin = $ENV{PG15_BIN} || '/usr/lib/postgresql/15/bin';
plan skip_all => "PostgreSQL 15 not found in $old_bin" unless -x "$old_bin/postgres";

my $old = PostgreSQL::Test::Cluster->new('old', install_path => dirname($old_bin));
$old->init(extra => [ '--locale=C.UTF-8', '--encoding=UTF8' ]);
$old->append_conf('postgresql.conf', "autovacuum = off\n");
$old->start;
is($old->safe_psql('postgres', 'SHOW server_version_num') =~ /^15/ ? 1 : 0, 1,
	'the old cluster runs PostgreSQL 15');

$old->safe_psql('postgres', q{
	CREATE EXTENSION simhash;
	CREATE TABLE docs (id int PRIMARY KEY, body text, h simhash64, m minhash_signature,
		s bigint[]);
	INSERT INTO docs (id, body)
	SELECT g, CASE WHEN g % 401 = 0 THEN NULL ELSE
		'Report number ' || (g % 1500) || ' on the state of the archive. ' ||
		repeat('A sentence about item ' || (g % 97) || ' and its neighbours. ', 1 + g % 4) ||
		CASE WHEN g % 3 = 0 THEN 'An edited line ' || g || '.' ELSE '' END ||
		CASE WHEN g % 50 = 0 THEN ' 中文文本的第' || g || '个例子。' ELSE '' END END
	FROM generate_series(1, 12000) g;
	UPDATE docs SET h = simhash(body), m = minhash(body, 5), s = sentence_hashes(body);
	CREATE INDEX docs_h ON docs USING simhash (h);
	CREATE INDEX docs_expr ON docs USING simhash (simhash(body, 3)) WITH (blocks = 5, max_distance = 2);
	CREATE INDEX docs_part ON docs USING simhash (h) WHERE id % 2 = 0;
	CREATE TABLE churn (id int, h simhash64);
	INSERT INTO churn SELECT g, simhash_hash((g % 4000)::text)::simhash64 FROM generate_series(1, 20000) g;
	CREATE INDEX churn_h ON churn USING simhash (h);
	-- pending inserts, and dead entries that no VACUUM removed
	INSERT INTO churn SELECT g, simhash_hash(g::text)::simhash64 FROM generate_series(20001, 20300) g;
	DELETE FROM churn WHERE id % 10 = 0;
	CHECKPOINT;
});
# PostgreSQL 15.20 records a version of every column in its options
# (pg_attver=N, a key reserved by the 15 branch); 18.6's pg_restore refuses
# that option, so pg_upgrade from 15.20 to 18.6 fails on any table, with or
# without simhash.  The key is taken out of the old catalog just before the
# upgrade, as nothing in it is simhash's.
$old->safe_psql('postgres', q{
	UPDATE pg_catalog.pg_attribute
	SET attoptions = (SELECT pg_catalog.array_agg(o) FROM pg_catalog.unnest(attoptions) o
	                  WHERE o NOT LIKE 'pg\_attver=%')
	WHERE attoptions::text LIKE '%pg\_attver=%';
});
my $old_counts = $old->safe_psql('postgres',
	'SELECT (SELECT count(*) FROM docs) || \' \' || (SELECT count(*) FROM churn)');
$old->stop;

my $new = PostgreSQL::Test::Cluster->new('new');
# 18's initdb enables data checksums; pg_upgrade needs both clusters alike
$new->init(extra => [ '--locale=C.UTF-8', '--encoding=UTF8' ], no_data_checksums => 1);
$new->append_conf('postgresql.conf', "autovacuum = off\n");

command_ok(
	[
		'pg_upgrade', '--no-sync',
		'-d', $old->data_dir, '-D', $new->data_dir,
		'-b', "$old_bin", '-B', $new->config_data('--bindir'),
		'-s', $new->host, '-p', $old->port, '-P', $new->port,
	],
	'pg_upgrade from 15 to 18');
$new->start;
is($new->safe_psql('postgres', 'SHOW server_version_num') =~ /^18/ ? 1 : 0, 1,
	'the new cluster runs PostgreSQL 18');
is($new->safe_psql('postgres',
	'SELECT (SELECT count(*) FROM docs) || \' \' || (SELECT count(*) FROM churn)'),
	$old_counts, 'the rows came across');

# the stored values equal those the new server computes
is($new->safe_psql('postgres', q{
	SELECT count(*) FROM docs
	WHERE h IS DISTINCT FROM simhash(body) OR m::text IS DISTINCT FROM minhash(body, 5)::text
	   OR s IS DISTINCT FROM sentence_hashes(body)}),
	'0', 'every stored fingerprint, signature and sentence hash equals a fresh one');

# compare(index, table, key expression, filter): radius and ordered queries
# through the index against a sequential scan, for several probes and radii
sub compare
{
	my ($index, $table, $key, $filter, $radii) = @_;
	my $bad = 0;
	my @probes = split /\n/, $new->safe_psql('postgres',
		"SELECT $key FROM $table WHERE $key IS NOT NULL AND $filter ORDER BY id LIMIT 6");
	push @probes, '0123456789abcdef';
	for my $q (@probes)
	{
		for my $r (@$radii)
		{
			my $sql = "SELECT string_agg(id::text, ',' ORDER BY id) FROM $table "
			  . "WHERE $key <~> '$q' <= $r AND $filter";
			my $seq = $new->safe_psql('postgres',
				"SET enable_indexscan = off; SET enable_bitmapscan = off; $sql");
			for my $mode ('enable_bitmapscan = off', 'enable_indexscan = off')
			{
				my $got = $new->safe_psql('postgres', "SET enable_seqscan = off; SET $mode; $sql");
				$bad++ if $got ne $seq;
			}
		}
		my $ord = "SELECT string_agg(d::text, ',') FROM (SELECT $key <~> '$q' AS d FROM $table "
		  . "WHERE $filter ORDER BY $key <~> '$q' LIMIT 9) s";
		$bad++ if $new->safe_psql('postgres', "SET enable_seqscan = off; $ord")
		  ne $new->safe_psql('postgres', "SET enable_indexscan = off; $ord");
	}
	like($new->safe_psql('postgres',
		"SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT id FROM $table WHERE $key <~> '0123456789abcdef' <= 2 AND $filter"),
		qr/Index Scan using $index|Bitmap Index Scan on $index/, "$index: the plan uses the index");
	is($bad, 0, "$index: index scans, bitmap scans and ordered scans equal a sequential scan");
	is($new->safe_psql('postgres', "SELECT simhash_index_check('$index', true) IS NOT NULL"),
		't', "$index: simhash_index_check passes");
}

my %indexes = (
	docs_h => [ 'docs', 'h', 'true', [ 0, 3, 6 ] ],
	docs_expr => [ 'docs', 'simhash(body, 3)', 'true', [ 0, 2, 4 ] ],
	docs_part => [ 'docs', 'h', 'id % 2 = 0', [ 0, 3 ] ],
	churn_h => [ 'churn', 'h', 'true', [ 0, 3, 6 ] ],
);
compare($_, @{ $indexes{$_} }) for sort keys %indexes;

# writes: inserts into every index, found again; VACUUM of the dead entries
$new->safe_psql('postgres', q{
	INSERT INTO docs (id, body) SELECT g, 'A new report ' || g || ' after the upgrade.'
		FROM generate_series(20001, 20400) g;
	UPDATE docs SET h = simhash(body), m = minhash(body, 5), s = sentence_hashes(body) WHERE id > 20000;
	INSERT INTO churn SELECT g, simhash_hash(g::text)::simhash64 FROM generate_series(30001, 33000) g;
	VACUUM docs, churn;
});
is($new->safe_psql('postgres', q{
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT count(*) FROM generate_series(30001, 33000, 97) g
	WHERE NOT EXISTS (SELECT 1 FROM churn WHERE h <~> simhash_hash(g::text)::simhash64 <= 0 AND id = g)}),
	'0', 'rows inserted after the upgrade are found through the index');
compare($_, @{ $indexes{$_} }) for sort keys %indexes;

$new->stop;
done_testing();
