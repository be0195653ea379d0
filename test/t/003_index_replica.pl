# test/t/003_index_replica.pl: a simhash index on a streaming replica.
# The primary inserts (flushes, merges, rows whose key is NULL), deletes,
# updates and vacuums; once the standby has caught up, its indexed queries
# use the index and return what the primary's return, and equal the
# sequential reference on the standby; simhash_index_check runs there.  Then the standby answers
# queries while it replays a concurrent workload, and finally it is
# promoted and its index takes more inserts.  wal_consistency_checking =
# generic makes the standby compare every page it replays with the
# primary's full page image.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use SimhashIndexTest;

my $t0 = time;
my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', q{
wal_consistency_checking = 'generic'
autovacuum = off
max_wal_size = 1GB
});
$primary->start;
$primary->safe_psql('postgres', index_setup_sql());
$primary->safe_psql('postgres', insert_sql(1, 400, 0, 7));
$primary->safe_psql('postgres',
	'CREATE INDEX t_h ON t USING simhash (h) WITH (blocks = 4, max_distance = 3)');
$primary->safe_psql('postgres', workload_sql());
$primary->safe_psql('postgres', q{
	-- for the standby: n queries (centers in turn, radii 0..5), each
	-- comparing the index scan with the sequential reference in one
	-- snapshot; raises on a difference, counts the queries that had to be
	-- retried because a page was recycled under them
	CREATE FUNCTION standby_probe(start int, n int, OUT queries int, OUT retried int)
		LANGUAGE plpgsql AS $$
	DECLARE
		qs simhash64[] := (SELECT array_agg(q ORDER BY q) FROM centers);
		q simhash64;
		r int;
		idx bigint[];
		ref bigint[];
	BEGIN
		queries := 0;
		retried := 0;
		FOR i IN start .. start + n - 1 LOOP
			q := qs[1 + i % cardinality(qs)];
			r := i % 6;
			BEGIN
				SELECT idx_ids(q, r), ref_ids(q, r) INTO idx, ref;
				queries := queries + 1;
			EXCEPTION WHEN serialization_failure THEN
				retried := retried + 1;
				CONTINUE;
			END;
			IF idx IS DISTINCT FROM ref THEN
				RAISE EXCEPTION 'standby: q=% r=%: index % <> reference %', q, r, idx, ref;
			END IF;
		END LOOP;
	END $$;
});

my $backup = 'bk';
$primary->backup($backup);
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, $backup, has_streaming => 1);
$standby->start;

# flushes, merges, deletes, updates, VACUUM on the primary
for my $b (1 .. 4)
{
	$primary->safe_psql('postgres', insert_sql(1, 400, 8 * $b, 8 * $b + 7));
}
$primary->safe_psql('postgres', 'DELETE FROM t WHERE id % 5 = 0');
$primary->safe_psql('postgres', 'VACUUM t');
$primary->safe_psql('postgres', q{UPDATE t SET h = flip(h, id::int, 1) WHERE id % 7 = 1});
$primary->safe_psql('postgres', 'VACUUM t');
$primary->safe_psql('postgres', insert_sql(1, 400, 100, 102));
# rows whose key is NULL: the nulls list, more than a page of it
$primary->safe_psql('postgres', 'INSERT INTO t (c, h) SELECT g, NULL FROM generate_series(1, 1100) g');
$primary->safe_psql('postgres', 'ANALYZE t');
note 'primary: ' . index_meta($primary, 'postgres', 't_h');
cmp_ok($primary->safe_psql('postgres', 'SELECT generation FROM index_meta($$t_h$$)'),
	'>=', 8, 'several flushes and merges happened on the primary');
$primary->wait_for_catchup($standby);

is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'the standby is in recovery');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM t'),
	$primary->safe_psql('postgres', 'SELECT count(*) FROM t'), 'the standby has the rows');

my $q = "SELECT id FROM t WHERE h <~> base(8) <= 3";
my $plan = $standby->safe_psql('postgres', "EXPLAIN (COSTS OFF) $q");
like($plan, qr/Index Scan using t_h on t|Bitmap Index Scan on t_h/, 'the standby plans the index')
  or diag($plan);
$plan = $standby->safe_psql('postgres',
	"SET enable_bitmapscan = off; SET enable_seqscan = off; EXPLAIN (COSTS OFF) $q");
like($plan, qr/Index Scan using t_h on t/, 'the standby plans an index scan') or diag($plan);
$plan = $standby->safe_psql('postgres',
	"SET enable_indexscan = off; SET enable_seqscan = off; EXPLAIN (COSTS OFF) $q");
like($plan, qr/Bitmap Index Scan on t_h/, 'the standby plans a bitmap index scan') or diag($plan);
cmp_ok($standby->safe_psql('postgres', "SELECT count(*) FROM ($q) x"), '>', 0,
	'the query finds rows on the standby');

my $pd = results_digest($primary, 'postgres', 5);
note "primary's answers: $pd";
is(results_digest($standby, 'postgres', 5), $pd, "the standby's answers equal the primary's");
check_index($primary, 'postgres', 'primary');
check_index($standby, 'postgres', 'standby', heapallindexed => 0, no_vacuum => 1);

# heapallindexed locks the table in ShareLock, which recovery forbids
my ($rc, $out, $err) = $standby->psql('postgres', "SELECT simhash_index_check('t_h', true)");
note "simhash_index_check('t_h', true) on the standby: rc $rc" . ($err ? ", $err" : '');
ok($rc == 0 || $err =~ /cannot acquire lock mode ShareLock on database objects while recovery is in progress/,
	'simhash_index_check(t_h, true) on the standby passes or is refused for its lock');

# the standby answers queries while it replays flushes, merges and the
# recycling of pages
my $work = $primary->background_psql('postgres');
$work->query_until(qr/started/, "\\echo started\nCALL workload(1, 400, 0.02);\n\\echo workdone\n");
my $vac = $primary->background_psql('postgres');
$vac->query_until(qr/vacuuming/,
	"\\echo vacuuming\n" . ("SELECT pg_sleep(0.3);\nVACUUM t;\n" x 25)
	  . "INSERT INTO progress VALUES (2, 1);\n\\echo vacdone\n");
my ($queries, $retried, $calls) = (0, 0, 0);
my $probe_ok = 1;
my $t_replay = time;
# probes until the workload and the VACUUMs are done, however long that
# takes (the first starts with the workload); a query that meets a page
# recycled under it fails with 40001 and is retried, any other answer must
# equal the reference
while (1)
{
	my $done = $primary->safe_psql('postgres',
		'SELECT coalesce((SELECT rounds FROM progress WHERE cycle = 1), 0) >= 400 '
		  . 'AND EXISTS (SELECT FROM progress WHERE cycle = 2)');
	my ($prc, $pout, $perr) = $standby->psql('postgres',
		"SELECT queries || ' ' || retried FROM standby_probe(" . (97 * $calls) . ", 60)");
	$calls++;
	if ($prc != 0)
	{
		$probe_ok = 0;
		diag("standby probe failed: $perr");
		last;
	}
	my ($nq, $nr) = split / /, $pout;
	$queries += $nq;
	$retried += $nr;
	last if $done eq 't';
}
ok($probe_ok, "the standby's indexed queries equal the reference during replay");
note sprintf("during replay (%.1f s): $calls probes, $queries queries compared, $retried retried (page recycled while read)", time - $t_replay);
$work->query_until(qr/workdone/, '');
$vac->query_until(qr/vacdone/, '');
$work->quit;
$vac->quit;

note 'primary: ' . index_meta($primary, 'postgres', 't_h');
$primary->wait_for_catchup($standby);
# with nothing left to replay, no page is recycled under a query: every
# query of a probe is compared, none retried
is($standby->safe_psql('postgres', "SELECT queries || ' ' || retried FROM standby_probe(0, 60)"), '60 0',
	'after replay: the standby compares every query of a probe, none retried');
$pd = results_digest($primary, 'postgres', 5);
is(results_digest($standby, 'postgres', 5), $pd, "after the workload: the standby's answers equal the primary's");
check_index($primary, 'postgres', 'after the workload, primary');
check_index($standby, 'postgres', 'after the workload, standby', heapallindexed => 0, no_vacuum => 1);

# a parallel CREATE INDEX on the primary (workers WAL-log and
# write the trees' pages themselves, past the buffers), replayed on the
# standby: there it equals a serial build of the same table page for page
# (but the page LSNs and checksums), passes the check, and answers as a
# sequential scan does
$primary->safe_psql('postgres', parallel_build_sql() . q{
	SET max_parallel_maintenance_workers = 2;
	CREATE INDEX pb_par_leader ON pb USING simhash (h) WITH (blocks = 6, max_distance = 3);
});
$primary->wait_for_catchup($standby);
for my $ix ('pb_par', 'pb_par_leader')
{
	my $diff = pages_differ($standby, 'postgres', 'pb_serial', $ix);
	like($diff, qr/^\d+ pages, 0 differ$/, "standby: the parallel build $ix equals the serial one page for page")
	  or diag($diff);
	cmp_ok((split / /, $diff)[0], '>', 150, "standby: $ix has its pages");
	index_check_ok($standby, 'postgres', $ix, 'standby', heapallindexed => 0);
}
pb_lookups_equal($standby, 'postgres', 'standby');

# promotion: the index takes inserts (flushes), deletes and VACUUM
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby was not promoted';
$standby->safe_psql('postgres', insert_sql(1, 400, 500, 507));
$standby->safe_psql('postgres', 'DELETE FROM t WHERE id % 9 = 2');
$standby->safe_psql('postgres', 'VACUUM t');
$standby->safe_psql('postgres', insert_sql(1, 400, 510, 511));
check_index($standby, 'postgres', 'promoted standby after inserts and VACUUM');

ok(!$standby->log_contains('inconsistent page found'), 'no WAL consistency failure on the standby');
$standby->stop;
$primary->stop;
note sprintf('003_index_replica: %.1f s', time - $t0);
done_testing();
