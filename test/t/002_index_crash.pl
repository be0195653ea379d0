# test/t/002_index_crash.pl: a simhash index survives crashes (immediate
# shutdown, then WAL replay): during an insert workload with flushes,
# merges, deletes and a VACUUM loop (after a checkpoint or not), right
# after committed inserts, and in the middle of one large insert that has
# flushed.  After each restart simhash_index_check(heapallindexed) passes
# and index and bitmap scans equal the sequential reference for many
# centers and radii 0..5; then more inserts, deletes and VACUUM, checked
# again.  wal_consistency_checking = generic makes replay compare every
# page rebuilt from a generic WAL record with the page as written.  Last,
# space: after crashes, VACUUM finds free and orphaned pages again, so the
# index stops growing.
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
my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
# wal_level replica (not the test cluster's minimal): every build, a
# parallel one's workers too, WAL-logs its pages, and recovery replays them
$node->append_conf('postgresql.conf', q{
wal_level = replica
wal_consistency_checking = 'generic'
autovacuum = off
max_wal_size = 1GB
});
$node->start;

$node->safe_psql('postgres', index_setup_sql());
$node->safe_psql('postgres', workload_sql());

# a pre-existing table indexed by CREATE INDEX (the build path), then
# batches of inserts (each ~3,200 rows: flushes every ~2,000, merges)
$node->safe_psql('postgres', insert_sql(1, 400, 0, 7));
$node->safe_psql('postgres',
	'CREATE INDEX t_h ON t USING simhash (h) WITH (blocks = 4, max_distance = 3)');
for my $b (1 .. 4)
{
	$node->safe_psql('postgres', insert_sql(1, 400, 8 * $b, 8 * $b + 7));
}
$node->safe_psql('postgres', 'DELETE FROM t WHERE id % 5 = 0');
$node->safe_psql('postgres', 'VACUUM t');
$node->safe_psql('postgres', insert_sql(1, 400, 100, 102));
note 'before the first crash: ' . index_meta($node, 'postgres', 't_h');
my $gen_before = $node->safe_psql('postgres', 'SELECT generation FROM index_meta($$t_h$$)');
cmp_ok($gen_before, '>=', 8, 'several flushes and merges happened before the crashes');

# One crash: start the workload (and optionally a VACUUM loop) in
# background sessions, wait until $rounds rounds are committed, stop
# immediately, restart, check.
sub crash_cycle
{
	my ($cycle, $rounds, %opt) = @_;
	my $label = "crash $cycle";

	$node->safe_psql('postgres', 'CHECKPOINT') if $opt{checkpoint};
	my $work = $node->background_psql('postgres', on_error_stop => 0);
	$work->query_until(qr/started/, "\\echo started\nCALL workload($cycle, 100000);\n");
	my $vac;
	if ($opt{vacuum})
	{
		$vac = $node->background_psql('postgres', on_error_stop => 0);
		$vac->query_until(qr/vacuuming/, "\\echo vacuuming\nVACUUM t \\watch 0.3\n");
	}
	$node->poll_query_until('postgres',
		"SELECT coalesce((SELECT rounds FROM progress WHERE cycle = $cycle), 0) >= $rounds")
	  or die "workload of cycle $cycle did not progress";
	my $seen = $node->safe_psql('postgres', "SELECT rounds FROM progress WHERE cycle = $cycle");
	$node->stop('immediate');
	note "$label: stopped immediately after $seen committed rounds";
	# the sessions lost their server: psql may have exited already
	eval { $_->quit } for grep { defined } ($work, $vac);

	$node->start;
	my $after = $node->safe_psql('postgres', "SELECT rounds FROM progress WHERE cycle = $cycle");
	cmp_ok($after, '>=', $seen, "$label: the committed rounds survived ($after >= $seen)");
	my $matches = check_index($node, 'postgres', "after $label");
	cmp_ok($matches, '>', 1000, "after $label: the queries found rows");
}

crash_cycle(1, 60, vacuum => 1);
crash_cycle(2, 90, checkpoint => 1);
crash_cycle(3, 45, vacuum => 1, checkpoint => 1);

# a crash right after committed inserts that flushed, and a VACUUM that
# recycled pages (no workload running)
$node->safe_psql('postgres', 'DELETE FROM t WHERE id % 7 = 3');
$node->safe_psql('postgres', 'VACUUM t');
$node->safe_psql('postgres', insert_sql(1, 400, 200, 206));
$node->safe_psql('postgres', 'VACUUM t');
$node->safe_psql('postgres', insert_sql(1, 400, 210, 211));
my $rows = $node->safe_psql('postgres', 'SELECT count(*) FROM t');
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), $rows,
	'crash 4: the committed rows are there');
check_index($node, 'postgres', 'after crash 4');

# a crash during one large insert (40,000 rows) in a transaction that is
# never committed, after it has flushed several times: its entries stay in
# the index, its rows are dead (the crash comes before the commit however
# fast the insert runs)
my $gen = $node->safe_psql('postgres', 'SELECT generation FROM index_meta($$t_h$$)');
my $big = $node->background_psql('postgres', on_error_stop => 0);
$big->query_until(qr/bigstarted/, "\\echo bigstarted\nBEGIN;\n" . insert_sql(1, 400, 600, 699) . ";\n");
$node->poll_query_until('postgres', "SELECT generation >= $gen + 6 FROM index_meta('t_h')")
  or die 'the large insert did not flush';
note 'crash 5, during a large insert: ' . index_meta($node, 'postgres', 't_h');
$node->stop('immediate');
eval { $big->quit };
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), $rows,
	'crash 5: the large insert was rolled back');
check_index($node, 'postgres', 'after crash 5');

# more inserts (flushes and merges), deletes and VACUUM after recovery
for my $b (0 .. 2)
{
	$node->safe_psql('postgres', insert_sql(1, 400, 300 + 8 * $b, 307 + 8 * $b));
}
$node->safe_psql('postgres', 'DELETE FROM t WHERE id % 11 = 4');
$node->safe_psql('postgres', 'VACUUM t');
$node->safe_psql('postgres', insert_sql(1, 400, 400, 401));
my $gen_after = $node->safe_psql('postgres', 'SELECT generation FROM index_meta($$t_h$$)');
cmp_ok($gen_after, '>', $gen_before, 'the index kept flushing and merging after the crashes');
check_index($node, 'postgres', 'after more inserts, deletes and VACUUM');

# and a clean restart replays nothing; the same answers
my $digest = results_digest($node, 'postgres', 5);
$node->restart;
is(results_digest($node, 'postgres', 5), $digest, 'same answers after a clean restart');

# space: pages of replaced runs are recycled through the free space map.
# That map is not crash-safe (as for every PostgreSQL index), so a crash
# right after each VACUUM keeps them from being reused in that cycle; the
# next VACUUM finds them again (and the pages of a run being written at the
# crash), so that afterwards the index stops growing.
$node->safe_psql('postgres', q{
	CREATE TABLE churn (id serial, h simhash64);
	CREATE INDEX churn_h ON churn USING simhash (h);
});
my @pages;
my $round = sub {
	my ($i, $crash) = @_;
	$node->safe_psql('postgres',
		"INSERT INTO churn (h) SELECT simhash_hash('$i-' || g)::simhash64 FROM generate_series(1, 5000) g");
	$node->safe_psql('postgres', "DELETE FROM churn WHERE id % 4 = $i % 4");
	$node->safe_psql('postgres', 'VACUUM churn');
	if ($crash)
	{
		$node->stop('immediate');
		$node->start;
	}
	push @pages, $node->safe_psql('postgres', q{SELECT pg_relation_size('churn_h') / 8192});
};
$round->($_, 1) for 1 .. 6;
$node->safe_psql('postgres', 'VACUUM churn');	# finds the free pages again
$round->($_, 0) for 7 .. 12;
note "churn_h pages after each round (crash after rounds 1-6): @pages";
# (the VACUUM may also truncate free pages at the end, so the size after
# round 7 can be a low point: compare with the largest of rounds 7..9)
my ($settled) = sort { $b <=> $a } @pages[6 .. 8];
cmp_ok($pages[11], '<=', 1.1 * $settled, 'after the crashes, a VACUUM lets later rounds reuse pages: no growth');
index_check_ok($node, 'postgres', 'churn_h', 'churn after crashes');
is($node->safe_psql('postgres', q{
	SET enable_seqscan = off;
	SELECT count(*) FROM churn WHERE h <~> simhash_hash('12-1')::simhash64 <= 5}),
	$node->safe_psql('postgres', q{
	SELECT count(*) FROM churn WHERE hamming_distance(h, simhash_hash('12-1')::simhash64) <= 5}),
	'churn_h: the index finds what a sequential scan finds');
is($node->safe_psql('postgres', q{SELECT count(*) FROM churn WHERE h = simhash_hash('12-1')::simhash64}),
	'1', 'churn: the probe row exists');

# a parallel CREATE INDEX (the workers WAL-log and write the
# trees' pages past the buffers) and a crash right after its commit: after
# recovery the index equals a serial build of the table page for page (but
# the LSNs and checksums) and answers as a sequential scan does
$node->safe_psql('postgres', parallel_build_sql('CHECKPOINT'));
$node->stop('immediate');
$node->start;
my $pbdiff = pages_differ($node, 'postgres', 'pb_serial', 'pb_par');
like($pbdiff, qr/^\d+ pages, 0 differ$/, 'crash after a parallel build: it equals the serial one page for page')
  or diag($pbdiff);
index_check_ok($node, 'postgres', 'pb_par', 'the parallel build after a crash');
$node->safe_psql('postgres', 'DROP INDEX pb_serial');
pb_lookups_equal($node, 'postgres', 'crash after a parallel build');

ok(!$node->log_contains('inconsistent page found'), 'no WAL consistency failure in the log');
$node->stop;
note sprintf('002_index_crash: %.1f s', time - $t0);
done_testing();
