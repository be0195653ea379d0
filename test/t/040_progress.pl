# test/t/040_progress.pl: a second session watches a running job's progress
# in simhash_progress, and a running CREATE INDEX ... USING simhash's
# tuples_done / tuples_total in pg_stat_progress_create_index.
#
# The job is held where it enters each phase (simhash.test_hold_phases:
# src/test_hold.c): the watcher holds the advisory locks of the phases, reads
# the views while the job waits on one, then releases it, so the counters are
# read at known points, whatever the load.  Also: the slot is cleared when a
# job ends or fails, and another role's job is hidden from a session without
# pg_read_all_stats.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('progress');
$node->init;
$node->append_conf('postgresql.conf', qq{
max_parallel_workers_per_gather = 0
max_parallel_maintenance_workers = 0
simhash.progress_interval = -1
});
$node->start;

my $rows = 5000;
$node->safe_psql('postgres', qq{
	CREATE EXTENSION simhash;
	CREATE TABLE docs (id bigint, h simhash64);
	-- $rows rows: every fingerprint twice (one pair each), 2500 pairs
	INSERT INTO docs SELECT g, simhash_hash('doc' || (g % 2500))::simhash64
		FROM generate_series(1, $rows) g;
	ANALYZE docs;
	CREATE ROLE other LOGIN;
	GRANT SELECT ON docs TO other;
});

my $BASE = 7000;				# simhash.test_hold_phases
my $holder = $node->background_psql('postgres');

# lock the keys of the phases; returns nothing
sub hold { $holder->query_safe(join '', map { "SELECT pg_advisory_lock($BASE + $_);" } @_) }
sub release { $holder->query_safe("SELECT pg_advisory_unlock($BASE + $_[0]);") }

# wait until backend $pid waits on the key of phase $phase
sub wait_at
{
	my ($pid, $phase) = @_;
	$node->poll_query_until('postgres', qq{
		SELECT count(*) = 1 FROM pg_locks
		WHERE pid = $pid AND locktype = 'advisory' AND NOT granted
		  AND objid = $BASE + $phase
	}) or die "backend $pid never reached phase $phase";
}

my $view = q{SELECT job, relation, phase, rows_done, rows_total, pairs_found,
	started <= now() FROM simhash_progress};

# ---- simhash_groups, held at each phase: reading, searching, grouping
hold(1, 2, 3);
my $job = $node->background_psql('postgres', on_error_stop => 0);
my $pid = $job->query_safe("SET simhash.test_hold_phases = $BASE; SELECT pg_backend_pid();");
chomp $pid;
$job->query_until(qr/started/, "\\echo started\nSELECT count(DISTINCT group_id) FROM simhash_groups('docs', 'id', 'h', 0);\n");

wait_at($pid, 1);
is($node->safe_psql('postgres', "$view WHERE pid = $pid"),
	"simhash_groups|docs|reading rows|0|$rows|0|t",
	'entering the read: the estimate as the total, nothing read');
release(1);
wait_at($pid, 2);
is($node->safe_psql('postgres', "$view WHERE pid = $pid"),
	"simhash_groups|docs|searching pairs|$rows|$rows|0|t",
	'entering the search: every row read, no pair yet');
release(2);
wait_at($pid, 3);
is($node->safe_psql('postgres', "$view WHERE pid = $pid"),
	"simhash_groups|docs|grouping|$rows|$rows|2500|t",
	'entering the grouping: the pairs found');
# a role without pg_read_all_stats sees its own jobs only
is($node->safe_psql('postgres', "SET ROLE other; SELECT count(*) FROM simhash_progress"),
	'0', "another role's job is hidden");
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_stat_progress_create_index"),
	'0', 'no pg_stat_progress_* view lists the job');
release(3);
$job->query_until(qr/done/, "\\echo done\n");
is($node->safe_psql('postgres', "SELECT count(*) FROM simhash_progress"), '0',
	'the slot is empty once the job has ended');

# ---- a job that fails is cleared too (cancelled while held)
hold(2);
$job->query_until(qr/started/, "\\echo started\nSELECT count(*) FROM simhash_pairs('docs', 'id', 'h', 0);\n");
wait_at($pid, 2);
is($node->safe_psql('postgres', "SELECT job, phase FROM simhash_progress WHERE pid = $pid"),
	'simhash_pairs|searching pairs', 'simhash_pairs reports too');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
release(2);
$job->query("SELECT 1");
is($node->safe_psql('postgres', "SELECT count(*) FROM simhash_progress"), '0',
	'a cancelled job leaves no row');

# ---- CREATE INDEX: tuples_done / tuples_total, held where the write starts
hold(3);
$job->query_until(qr/started/, "\\echo started\nCREATE INDEX docs_h ON docs USING simhash (h);\n");
wait_at($pid, 3);
is($node->safe_psql('postgres', qq{
	SELECT command, phase, tuples_done, tuples_total FROM pg_stat_progress_create_index
	WHERE pid = $pid}),
	"CREATE INDEX|building index: sorting tables and writing the run|$rows|$rows",
	'CREATE INDEX: every row collected, counted in tuples_done / tuples_total');
release(3);
$job->query("SELECT 1");
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_indexes WHERE indexname = 'docs_h'"),
	'1', 'the index was built');

$job->quit;
$holder->quit;
$node->stop;
done_testing();
