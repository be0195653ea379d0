# test/t/004_index_concurrency.pl: concurrent clients (pgbench) insert,
# delete, update, query through the index, vacuum and check a simhash index
# (flushes and merges run while scans read); every query compares, in one
# snapshot, the index's answer with the sequential reference and fails if a
# returned row is farther than the radius.  Afterwards simhash_index_check
# passes and all answers equal the reference.  Bounded by a transaction
# count per client.  Then, held at known points (test_hold.c): an insert
# cancelled in its flush while another session queries, and a VACUUM
# cancelled while it marks; simhash_index_check(idx, false) during
# inserts; inserts under an old snapshot (the pending list must stay short).
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use SimhashIndexTest;
use SimhashHold;


my $t0 = time;
my $clients = 6;
my $per_client = 2500;

my $node = PostgreSQL::Test::Cluster->new('conc');
$node->init;
$node->append_conf('postgresql.conf', qq{
max_connections = 40
log_min_messages = warning
});
$node->start;
$node->safe_psql('postgres', index_setup_sql());
$node->safe_psql('postgres', insert_sql(1, 400, 0, 7));
$node->safe_psql('postgres', q{
	CREATE INDEX t_h ON t USING simhash (h) WITH (blocks = 4, max_distance = 3);
	-- VACUUM comes from the clients: autovacuum would be cancelled by
	-- simhash_index_check's ShareLock, which leaves a known false
	-- positive of the check (see SimhashIndexTest.pm), tested below
	ALTER TABLE t SET (autovacuum_enabled = false);
	-- the index's answer (index scan, or bitmap scan with bitmap) for a
	-- near-duplicate of cluster c, within r; a STABLE function: every
	-- statement in it sees the caller's snapshot, so the sequential
	-- reference must be equal
	CREATE FUNCTION probe(c int, n int, r int, bitmap boolean) RETURNS int
		LANGUAGE plpgsql STABLE AS $$
	DECLARE
		q simhash64 := near(c, n);
		got bigint[] := CASE WHEN bitmap THEN bmp_ids(q, r) ELSE idx_ids(q, r) END;
		ref bigint[] := ref_ids(q, r);
		far bigint[];
	BEGIN
		far := (SELECT array_agg(id) FROM t WHERE id = ANY (got) AND hamming_distance(h, q) > r);
		IF far IS NOT NULL THEN
			RAISE EXCEPTION 'q=% r=% bitmap=%: rows % are farther than the radius', q, r, bitmap, far;
		END IF;
		IF got IS DISTINCT FROM ref THEN
			RAISE EXCEPTION 'q=% r=% bitmap=%: index % <> reference %', q, r, bitmap, got, ref;
		END IF;
		RETURN cardinality(got);
	END $$;
});
my $rows0 = $node->safe_psql('postgres', 'SELECT count(*) FROM t');
my $gen0 = $node->safe_psql('postgres', 'SELECT generation FROM index_meta($$t_h$$)');
my $plan = $node->safe_psql('postgres',
	'SET enable_seqscan = off; SET enable_bitmapscan = off; EXPLAIN (COSTS OFF) SELECT id FROM t WHERE h <~> near(1, 1) <= 3');
like($plan, qr/Index Scan using t_h/, 'the probes can use the index') or diag($plan);

# Deletes and updates take 10 and 3 consecutive ids among the newest
# ~30,000, in id order (the primary key's), so they cannot deadlock.
my %scripts = (
	'004_insert@10' => q{
\set c random(1, 400)
\set n random(0, 1000000)
INSERT INTO t (c, h) SELECT :c, near(:c, :n + g) FROM generate_series(0, 9) g;
},
	'004_delete@4' => q{
\set k random(0, 30000)
DELETE FROM t WHERE id BETWEEN (SELECT max(id) FROM t) - :k AND (SELECT max(id) FROM t) - :k + 9;
},
	'004_update@2' => q{
\set k random(0, 30000)
\set s random(0, 63)
UPDATE t SET h = flip(h, :s, 1) WHERE id BETWEEN (SELECT max(id) FROM t) - :k AND (SELECT max(id) FROM t) - :k + 2;
},
	'004_probe@10' => q{
\set c random(1, 400)
\set n random(0, 60)
\set r random(0, 6)
\set b random(0, 1)
SELECT probe(:c, :n, :r, :b = 1);
},
	'004_vacuum@1' => q{
VACUUM t;
},
	'004_check@1' => q{
SELECT simhash_index_check('t_h', true);
},);

my $total = $clients * $per_client;
$node->pgbench(
	"-n -c $clients -j 2 -t $per_client --max-tries=10 --failures-detailed",
	0,
	[ qr{processed: $total/$total}, qr{number of failed transactions: 0 } ],
	[ qr{^$} ],
	'concurrent inserts, deletes, updates, index probes, VACUUM and checks',
	\%scripts);

my $rows1 = $node->safe_psql('postgres', 'SELECT count(*) FROM t');
my $gen1 = $node->safe_psql('postgres', 'SELECT generation FROM index_meta($$t_h$$)');
note "rows $rows0 -> $rows1, index generation $gen0 -> $gen1; " . index_meta($node, 'postgres', 't_h');
cmp_ok($gen1 - $gen0, '>=', 10, 'the index flushed and merged during the run');

# errors the clients saw (pgbench retries deadlocks, which should not
# happen, and serialization failures, which a recycled page would raise);
# autovacuum is cancelled by simhash_index_check's ShareLock
my $log = slurp_file($node->logfile);
my @errors = grep { !/deadlock detected|canceling autovacuum task/ }
  ($log =~ /^.*\b(?:ERROR|FATAL|PANIC):.*$/mg);
is(scalar(@errors), 0, 'no client error in the server log') or diag(join("\n", @errors[0 .. ($#errors < 9 ? $#errors : 9)]));
note 'deadlocks retried: ' . scalar(() = $log =~ /deadlock detected/g);

check_index($node, 'postgres', 'after the concurrent run', max_radius => 6);

# The cancels below are held at a known point (src/shared/test_hold.c,
# simhash.test_hold_phases; the points are in src/index/am.h): the holder
# session keeps the point's advisory lock, the statement waits there, the
# test cancels it and checks what it left, whatever the machine's speed.
my $HOLD = 8000;
my $FLUSH_WRITTEN = $HOLD + 8;		# SIMHASH_HOLD_FLUSH_WRITTEN
my $VACUUM_MARKED = $HOLD + 9;		# SIMHASH_HOLD_VACUUM_MARKED
my $hold = $node->background_psql('postgres');
$hold->set_query_timer_restart;	# it waits while the held statements run

# start $sql in a session of its own that waits at the hold point $key;
# returns (session, pid) once it waits there
sub start_held
{
	my ($name, $key, $sql) = @_;
	$hold->query_safe("SELECT pg_advisory_lock($key);");
	return start_waiting($node, $name, "SET simhash.test_hold_phases = $HOLD; ", $sql, q{
		count(*) > 0 FROM pg_stat_activity
		WHERE pid = $1 AND wait_event_type = 'Lock' AND wait_event = 'advisory'});
}

# cancel the held statement of (session, pid), release the hold point;
# returns the statement's error
sub cancel_held
{
	my ($s, $pid, $key) = @_;
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	$s->query('SELECT 1 AS done;');
	my $err = $s->{stderr};
	$s->quit;
	$hold->query_safe("SELECT pg_advisory_unlock($key);");
	return $err;
}

# the probes of a reader session: index scans equal the reference
my $probes = join('', map { "SELECT probe($_, 3, 4, false);\n" } 1 .. 100);

# an insert cancelled in the middle of a flush: the pending lanes are
# published as flushing lanes and the new run is written, but the metapage
# does not list it yet; another session queries meanwhile.  The flushing
# lanes stay behind, and the next flush must sort them (an insert of 4,000
# rows passes the 2,040 entries that start a flush).
my ($ins, $ipid) = start_held('insert in a flush', $FLUSH_WRITTEN, insert_sql(1, 400, 1010, 1019));
my $held_meta = index_meta($node, 'postgres', 't_h');
note "an insert held in its flush: $held_meta";
my ($prc, $pout, $perr) = $node->psql('postgres', $probes);
is($prc, 0, 'queries while a flush is held after writing its run equal the reference') or diag($perr);
like(cancel_held($ins, $ipid, $FLUSH_WRITTEN), qr/canceling statement due to user request/,
	'the insert is cancelled in its flush');
my $left = $node->safe_psql('postgres', 'SELECT flushing FROM index_meta($$t_h$$)');
cmp_ok($left, '>', 0, "the cancelled flush left its flushing lanes behind ($left entries)");
($prc, $pout, $perr) = $node->psql('postgres', $probes);
is($prc, 0, 'queries after the cancelled flush equal the reference') or diag($perr);
check_index($node, 'postgres', 'after an insert cancelled in a flush');
$node->safe_psql('postgres', insert_sql(1, 400, 1020, 1029));
is($node->safe_psql('postgres', 'SELECT flushing FROM index_meta($$t_h$$)'), '0',
	'the next flush sorted the flushing lanes left behind');
check_index($node, 'postgres', 'after the next flush');

# a VACUUM cancelled while it marks dead entries in a run's table 0:
# some leaves have their dead bits, the run's header does not count them
$node->safe_psql('postgres', q{
	CREATE TABLE cv WITH (autovacuum_enabled = false) AS
		SELECT g AS id, simhash_hash('cv' || g)::simhash64 AS h FROM generate_series(1, 100000) g;
	CREATE INDEX cv_h ON cv USING simhash (h) WITH (blocks = 6, max_distance = 3);
	DELETE FROM cv WHERE id % 3 = 0;
});
my ($vac, $vpid) = start_held('VACUUM marking', $VACUUM_MARKED, 'VACUUM cv');
like(cancel_held($vac, $vpid, $VACUUM_MARKED), qr/canceling statement due to user request(?s:.*)while vacuuming index "cv_h"/,
	'VACUUM is cancelled while it marks cv_h');
index_check_ok($node, 'postgres', 'cv_h', 'after a VACUUM cancelled while marking', heapallindexed => 0);
$hold->quit;
my $cv_sql = q{
	SELECT count(*) FILTER (WHERE a IS DISTINCT FROM b) FROM (
		SELECT (SELECT array_agg(id ORDER BY id) FROM cv WHERE h <~> q <= 4) AS a,
		       (SELECT array_agg(id ORDER BY id) FROM cv WHERE hamming_distance(h, q) <= 4) AS b
		FROM (SELECT flip(simhash_hash('cv' || g)::simhash64, g, g % 4) AS q
		      FROM generate_series(1, 300, 7) g) qs) x};
is($node->safe_psql('postgres', "SET enable_seqscan = off; $cv_sql"), '0',
	'after a cancelled VACUUM: indexed queries equal the reference');
$node->safe_psql('postgres', 'VACUUM cv');
index_check_ok($node, 'postgres', 'cv_h', 'after a complete VACUUM');
is($node->safe_psql('postgres', "SET enable_seqscan = off; $cv_sql"), '0',
	'after a complete VACUUM: indexed queries equal the reference');

# simhash_index_check without heapallindexed does not block inserts (only
# flushes, merges and VACUUM): it must not report the entries appended to
# the pending list while it reads as corruption
{
	$node->pgbench(
		'-n -c 4 -j 2 -t 400',
		0,
		[ qr{processed: 1600/1600} ],
		[ qr{^$} ],
		'simhash_index_check(t_h, false) during concurrent inserts',
		{
			'004_insert1@3' => q{
\set c random(1, 400)
\set n random(0, 1000000)
INSERT INTO t (c, h) VALUES (:c, near(:c, :n));
},
			'004_check1@1' => q{
SELECT simhash_index_check('t_h', false);
},
		});
}
# a long-running snapshot keeps VACUUM from recycling retired runs; inserts
# should still be sorted into runs rather than pile up in the pending list
# (which every scan reads in full)
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$holder->query_safe('SELECT count(*) FROM t');
my $wal0 = $node->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
my $unsorted = 0;
for my $b (1 .. 20)
{
	$node->safe_psql('postgres', insert_sql(1, 400, 2000 + 10 * $b, 2009 + 10 * $b));
	my $u = $node->safe_psql('postgres', 'SELECT pending + flushing FROM index_meta($$t_h$$)');
	$unsorted = $u if $u > $unsorted;
	$node->safe_psql('postgres', 'VACUUM t') if $b % 5 == 0;
}
note "after 80,000 inserts under an old snapshot: at most $unsorted unsorted entries; "
  . index_meta($node, 'postgres', 't_h')
  . '; WAL ' . $node->safe_psql('postgres', "SELECT pg_size_pretty(pg_current_wal_lsn() - '$wal0')");
{
	cmp_ok($unsorted, '<=', 10000, 'the pending list stays short under an old snapshot');
}
$holder->query_safe('COMMIT');
$holder->quit;
check_index($node, 'postgres', 'after inserts under an old snapshot');

$node->safe_psql('postgres', 'VACUUM t');
check_index($node, 'postgres', 'after more inserts and a final VACUUM');

$node->stop;
note sprintf('004_index_concurrency: %.1f s', time - $t0);
done_testing();
