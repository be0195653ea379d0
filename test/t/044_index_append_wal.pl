# test/t/044_index_append_wal.pl: an append to a pending lane is WAL-logged
# as the delta of its tail page (src/index/pending.c, simhash_log_pages()
# in pages.c): a generic WAL record of a few dozen bytes, not an image of the
# page.  pg_waldump reads the index's records of 500 appends made after a
# checkpoint (fewer than a flush; no checkpoint comes between:
# checkpoint_timeout is 1h and max_wal_size large): every append is logged,
# none as a full-page image record (XLOG/FPI), and the index's WAL is at most
# 100 bytes per append (about 600 when each append logged the used part of
# the tail page).  A crash then replays those records: the rows are found
# through the index as by a sequential scan, and the index checks clean.
# (A streaming replica replays them under wal_consistency_checking: t/003.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $rows = 500;
my $node = PostgreSQL::Test::Cluster->new('append_wal');
$node->init;
$node->append_conf('postgresql.conf', qq{
autovacuum = off
checkpoint_timeout = '1h'
max_wal_size = '4GB'
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION simhash;
	CREATE TABLE t (id int, h simhash64) WITH (autovacuum_enabled = false);
	CREATE INDEX t_h ON t USING simhash (h);
	CHECKPOINT;
});
my $rel = $node->safe_psql('postgres', q{
	SELECT (SELECT oid FROM pg_tablespace WHERE spcname = 'pg_default') || '/'
	    || (SELECT oid FROM pg_database WHERE datname = current_database()) || '/'
	    || pg_relation_filenode('t_h')});
my $start = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
$node->safe_psql('postgres',
	"INSERT INTO t SELECT g, simhash_hash(g::text)::simhash64 FROM generate_series(1, $rows) g");
my $end = $node->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()');

my ($stdout, $stderr) = run_command([
	'pg_waldump', '-p', $node->data_dir . '/pg_wal',
	'-s', $start, '-e', $end, "--relation=$rel" ]);
my ($records, $bytes, $images, $generic) = (0, 0, 0, 0);
for my $line (split /\n/, $stdout)
{
	next unless $line =~ m{^rmgr: (\S+)\s+len \(rec/tot\):\s*\d+/\s*(\d+),.*desc: (\S*)};
	$records++;
	$bytes += $2;
	$generic++ if $1 eq 'Generic';
	$images++ if $1 eq 'XLOG' && $3 eq 'FPI';
}
note "the index's WAL of $rows appends: $records records, $bytes bytes, $generic generic, $images full-page images";
cmp_ok($generic, '>=', $rows, 'every append is logged, by a generic record');
is($images, 0, 'no append is logged as a full-page image record');
cmp_ok($bytes / $rows, '<=', 100, 'the index\'s WAL is at most 100 bytes per append');

# recovery replays the deltas
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', q{
	SET enable_seqscan = off;
	SELECT count(*) FROM t WHERE h <@ simhash_ball('0000000000000000', 64)}),
	$rows, 'after a crash, every row is found through the index');
my $seq = $node->safe_psql('postgres',
	"SELECT count(*) FROM t a, t b WHERE a.id <= 50 AND hamming_distance(a.h, b.h) <= 6");
my $idx = $node->safe_psql('postgres',
	"SET enable_seqscan = off; SELECT count(*) FROM t a, t b WHERE a.id <= 50 AND b.h <~> a.h <= 6");
is($idx, $seq, 'after a crash, lookups through the index match a sequential scan');
is($node->safe_psql('postgres', "SELECT simhash_index_check('t_h', true)"), '',
	'after a crash, simhash_index_check is clean');

$node->stop;
done_testing();
