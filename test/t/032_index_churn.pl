# test/t/032_index_churn.pl: the index's size under churn.  Rows inserted one
# per transaction (flushes and merges), then a DELETE of 10% and one VACUUM
# (in parallel, as PostgreSQL runs it for a table with two indexes): the
# index must be at most 1.2 times a fresh CREATE INDEX of the same rows
# (VACUUM's compaction and truncation), check clean, and answer lookups as a
# sequential scan does.  Before that, a cursor holds a snapshot from before
# the DELETE while VACUUM runs: the compaction must leave what the cursor
# may still read alone (the cursor completes with its snapshot's rows), and
# a later VACUUM compacts.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('churn');
$node->init;
$node->append_conf('postgresql.conf', qq{
autovacuum = off
min_parallel_index_scan_size = 0
max_parallel_maintenance_workers = 2
});
$node->start;

my $n = 10000;
$node->safe_psql('postgres', qq{
	CREATE EXTENSION simhash;
	CREATE TABLE t (id bigint PRIMARY KEY, h simhash64);
	INSERT INTO t SELECT g, simhash_hash('churn:' || g)::simhash64 FROM generate_series(1, $n) g;
	CREATE INDEX t_h ON t USING simhash (h);
	CREATE PROCEDURE ins(a bigint, b bigint) LANGUAGE plpgsql AS \$\$
	BEGIN
		FOR i IN a .. b LOOP
			INSERT INTO t VALUES (i, simhash_hash('churn:' || i)::simhash64);
			COMMIT;
		END LOOP;
	END \$\$;
});
$node->safe_psql('postgres', "CALL ins($n + 1, 2 * $n)");

# the size of t_h against a fresh build of the same rows
my $ratio = sub {
	return $node->safe_psql('postgres', q{
		CREATE INDEX t_fresh ON t USING simhash (h);
		SELECT round(pg_relation_size('t_h')::numeric / pg_relation_size('t_fresh'), 2);
		DROP INDEX t_fresh;});
};
my $grown = $ratio->();
note "after the inserts: $grown times a fresh build";
cmp_ok($grown, '>', 1.2, 'the inserts left the index larger than 1.2 times a fresh build');

# a cursor in an ordered index scan, its snapshot older than the DELETE
my $settings = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off; SET enable_indexonlyscan = off;';
my $s = $node->background_psql('postgres', on_error_stop => 0, timeout => 120);
$s->query_safe($settings);
$s->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
my $visible = $s->query_safe('SELECT count(*) FROM t');
$s->query_safe("DECLARE c CURSOR FOR SELECT id FROM t ORDER BY h <~> (SELECT h FROM t WHERE id = 1)");
is($s->query_safe('FETCH 1 FROM c'), '1', 'the cursor returns its own row first');

$node->safe_psql('postgres', "DELETE FROM t WHERE id % 10 = 3");
$node->safe_psql('postgres', 'VACUUM (PARALLEL 2) t');
my ($out, $ret) = ('', 1);
eval { ($out, $ret) = $s->query('FETCH ALL FROM c'); };
my $err = $s->{stderr} . ($@ // '');
is($ret, 0, 'the cursor completes after VACUUM') or diag($err);
my @ids = (1, split(/\n/, $out));
my %seen = map { $_ => 1 } @ids;
ok(@ids == $visible && keys(%seen) == $visible,
	"the cursor returned its snapshot's $visible rows, each once")
  or diag('got ' . scalar(@ids) . ' rows, ' . scalar(keys %seen) . ' distinct');
$s->query_safe('COMMIT');
$s->quit;
my $held = $ratio->();
note "after a VACUUM while the cursor's snapshot was held: $held times a fresh build";
cmp_ok($held, '>', 1.2, 'VACUUM did not compact what an older snapshot may read');

# with no older snapshot: one VACUUM compacts and truncates
$node->safe_psql('postgres', 'VACUUM (PARALLEL 2) t');
my $after = $ratio->();
note "after the DELETE and VACUUM: $after times a fresh build";
cmp_ok($after, '<=', 1.2, 'after the DELETE and VACUUM the index is at most 1.2 times a fresh build');
is($node->safe_psql('postgres', "SELECT simhash_index_check('t_h', true)"), '', 'the index checks clean');

# lookups at radius 0..6 through the index equal a sequential reference
my $lookups = q{
	CREATE TEMP TABLE q AS SELECT i, CASE WHEN i % 2 = 0 THEN (SELECT h FROM t WHERE id >= i * 300 ORDER BY id LIMIT 1)
		ELSE simhash_hash('q:' || i)::simhash64 END AS q, i % 7 AS r FROM generate_series(1, 40) i;
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	CREATE TEMP TABLE by_index AS SELECT i, array(SELECT id FROM t WHERE h <~> q <= r ORDER BY id) AS ids FROM q;
	RESET enable_seqscan; SET enable_indexscan = off;
	CREATE TEMP TABLE by_seq AS SELECT i, array(SELECT id FROM t WHERE hamming_distance(h, q) <= r ORDER BY id) AS ids FROM q;
	SELECT count(*) FILTER (WHERE a.ids IS DISTINCT FROM b.ids) || ' of ' || count(*) || ', rows ' || (sum(cardinality(a.ids)) >= 15)
		FROM by_index a JOIN by_seq b USING (i);
};
is($node->safe_psql('postgres', $lookups), '0 of 40, rows true', 'lookups through the index equal the sequential reference');

$node->stop;
done_testing();
