# test/t/031_index_insert_soak.pl: 8 pgbench clients for
# a fixed time (SIMHASH_INSERT_SECONDS, default 30; 600 is the 10-minute
# soak) insert single rows (some with a NULL key) into a simhash index's
# pending lanes while others look recent rows up through the index (index
# and bitmap scans, which must find every committed row: a lane that scans
# missed, or an entry a flush lost, fails here), compare radius queries with
# the sequential reference, delete, VACUUM (which flushes the lanes) and run
# simhash_index_check(t_h, false).  No client may see an error (a deadlock
# would be one, or would hang the run past its time).  Afterwards, and again
# after a crash (immediate stop, WAL replay): simhash_index_check(t_h, true)
# passes, the index returns as many rows as a sequential scan, and each row
# of a sample is found by an exact lookup.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SimhashIndexTest;

my $seconds = $ENV{SIMHASH_INSERT_SECONDS} // 30;
my $clients = 8;

my $node = PostgreSQL::Test::Cluster->new('inserts');
$node->init;
$node->append_conf('postgresql.conf', qq{
max_connections = 40
log_min_messages = warning
autovacuum = off
});
$node->start;
$node->safe_psql('postgres', index_setup_sql());
$node->safe_psql('postgres', insert_sql(1, 400, 0, 4));
$node->safe_psql('postgres', q{
	CREATE INDEX t_h ON t USING simhash (h);
	-- the row k rows below the newest one must be found by an index scan
	-- and a bitmap scan of its own key (radius 0); one snapshot (STABLE)
	CREATE FUNCTION lookup(k int) RETURNS int LANGUAGE plpgsql STABLE AS $$
	DECLARE
		rid bigint;
		rh simhash64;
	BEGIN
		SELECT id, h INTO rid, rh FROM t
			WHERE id <= (SELECT max(id) FROM t) - k AND h IS NOT NULL
			ORDER BY id DESC LIMIT 1;
		IF rid IS NULL THEN
			RETURN 0;
		END IF;
		IF NOT rid = ANY (idx_ids(rh, 0)) OR NOT rid = ANY (bmp_ids(rh, 0)) THEN
			RAISE EXCEPTION 'row % (h %) is not found through the index: index %, bitmap %',
				rid, rh, idx_ids(rh, 0), bmp_ids(rh, 0);
		END IF;
		RETURN 1;
	END $$;
	-- a radius query through the index against the sequential reference
	CREATE FUNCTION probe(c int, n int, r int) RETURNS int LANGUAGE plpgsql STABLE AS $$
	DECLARE
		q simhash64 := near(c, n);
	BEGIN
		IF idx_ids(q, r) IS DISTINCT FROM ref_ids(q, r) OR
		   bmp_ids(q, r) IS DISTINCT FROM ref_ids(q, r) THEN
			RAISE EXCEPTION 'q=% r=%: index % bitmap % <> reference %', q, r,
				idx_ids(q, r), bmp_ids(q, r), ref_ids(q, r);
		END IF;
		RETURN 1;
	END $$;
	-- non-empty pending lanes of the metapage (8 lanes of 24 bytes from 56)
	CREATE FUNCTION lanes_used() RETURNS bigint LANGUAGE sql AS $$
		SELECT count(*) FROM get_raw_page('t_h', 0) p, generate_series(0, 7) i
		WHERE u32(p, 56 + 24 * i) <> 4294967295
	$$;
});

my %scripts = (
	'031_insert@40' => q{
\set c random(1, 400)
\set n random(0, 100000000)
INSERT INTO t (c, h) VALUES (:c, CASE WHEN :n % 50 = 0 THEN NULL ELSE near(:c, :n) END);
},
	'031_lookup@10' => q{
\set k random(0, 3000)
SELECT lookup(:k);
},
	'031_probe@1' => q{
\set c random(1, 400)
\set n random(0, 60)
\set r random(0, 4)
SELECT probe(:c, :n, :r);
},
	'031_delete@2' => q{
\set k random(0, 20000)
DELETE FROM t WHERE id BETWEEN (SELECT max(id) FROM t) - :k AND (SELECT max(id) FROM t) - :k + 4;
},
	'031_vacuum@1' => q{
VACUUM t;
},
	'031_check@1' => q{
SELECT simhash_index_check('t_h', false);
},);

$node->pgbench(
	"-n -c $clients -j $clients -T $seconds --random-seed=31",
	0,
	[ qr{number of failed transactions: 0 }, qr{processed: [1-9]} ],
	[ qr{^(?:pgbench: setting random seed to 31\n)?$} ],
	"$clients clients for ${seconds}s: single-row inserts, lookups, probes, deletes, VACUUM, checks",
	\%scripts);

my $log = slurp_file($node->logfile);
my @errors = ($log =~ /^.*\b(?:ERROR|FATAL|PANIC):.*$/mg);
is(scalar(@errors), 0, 'no error in the server log')
  or diag(join("\n", @errors[0 .. ($#errors < 9 ? $#errors : 9)]));
note 'after the run: ' . index_meta($node, 'postgres', 't_h') . ', lanes in use '
  . $node->safe_psql('postgres', 'SELECT lanes_used()');

# every row findable: as many through the index (a ball of radius 64, and
# a key-less ordered scan with the NULL keys) as through a sequential scan;
# an exact lookup of every 37th row
sub all_found
{
	my ($label) = @_;
	my $seq = $node->safe_psql('postgres',
		'SELECT count(*) FILTER (WHERE h IS NOT NULL), count(*) FROM t');
	my $via = $node->safe_psql('postgres', q{
		SET enable_seqscan = off;
		SELECT (SELECT count(*) FROM t WHERE h <@ simhash_ball('0000000000000000', 64)),
		       (SELECT count(*) FROM (SELECT id FROM t ORDER BY h <~> '0000000000000000') o);
	});
	$via =~ s/\n/|/;
	is($via, $seq, "$label: the index returns every row (with keys | all, NULLs included)");
	is($node->safe_psql('postgres', q{
		SELECT count(*) FROM t WHERE id % 37 = 0 AND h IS NOT NULL
			AND NOT (id = ANY (idx_ids(h, 0)) AND id = ANY (bmp_ids(h, 0)))
	}), '0', "$label: exact lookups find every sampled row");
	index_check_ok($node, 'postgres', 't_h', $label);
}

all_found('after the concurrent inserts');
my $plan = $node->safe_psql('postgres',
	"SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT id FROM t ORDER BY h <~> '0000000000000000'");
like($plan, qr/Index Scan using t_h/, 'the key-less ordered scan reads the index');

# the lanes after a crash: WAL replay of appends, new pages and flushes
$node->safe_psql('postgres', insert_sql(1, 400, 5, 6));
$node->stop('immediate');
$node->start;
all_found('after a crash and WAL replay');

$node->stop;
done_testing();
