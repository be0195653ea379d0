# test/t/018_dedup_parallel.pl: the parallel search of simhash_pairs and
# simhash_groups, and CREATE INDEX ... USING simhash with its tables'
# trees built by parallel workers, when something goes wrong while
# the workers run; the same for the parallel table read of the jobs
# (src/dedup/read_parallel.c) and the parallel heap scan of CREATE INDEX
# (src/index/build_scan.c), on a table whose jobs have no other workers.
# The workers are held at their start (SimhashHold.pm) while the test acts
# on them.  A worker that fails (here: terminated by pg_terminate_backend, a
# FATAL in the worker) must fail the job in the leader with the worker's
# error; a cancelled job must stop its workers; neither may leave workers,
# temporary files or shared memory behind, and the session must go on.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SimhashHold;

my $node = PostgreSQL::Test::Cluster->new('dedup_parallel');
$node->init;
$node->append_conf('postgresql.conf', qq{
max_worker_processes = 8
max_parallel_workers = 8
max_parallel_maintenance_workers = 2
simhash.parallel_min_rows = 0
simhash.progress_interval = -1
maintenance_work_mem = '256MB'
});
$node->start;
# a search that takes seconds: 66 tables (max_distance 10, 12 blocks)
$node->safe_psql('postgres', q{
	CREATE EXTENSION simhash;
	CREATE TABLE t (id bigint, h simhash64);
	INSERT INTO t SELECT i, simhash_hash(i::text)::simhash64 FROM generate_series(1, 300000) i;
	ANALYZE t;
});
my $job = "SELECT count(*) FROM simhash_pairs('t', 'id', 'h', 10, 12)";
my $expected = $node->safe_psql('postgres',
	"SET max_parallel_maintenance_workers = 0; $job");

# start_held_job (SimhashHold.pm): the job runs in a session of its own
# and its parallel workers wait at their start until release_workers, so a
# test terminates or cancels them at a known point; the held workers end
# with their job, and the hold is released before the job runs again.
sub start_job
{
	my ($name, $sql) = @_;
	return start_held_job($node, $name, $sql);
}

# no worker of that leader left, no temporary file, and the session works
# (runs $sql, default the job above, and expects $want)
sub check_clean
{
	my ($name, $s, $pid, $sql, $want) = @_;
	$sql //= $job;
	$want //= $expected;
	ok($node->poll_query_until('postgres', qq{
		SELECT count(*) = 0 FROM pg_stat_activity
		WHERE backend_type = 'parallel worker' AND leader_pid = $pid
	}), "$name: no parallel worker left");
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_ls_dir('base/pgsql_tmp', true, false) f"),
		'0', "$name: no temporary file left");
	release_workers($node);
	is($s->query_safe($sql . ';'), $want, "$name: the session runs the job again, same result");
}

# after a failed build: no worker of that leader left, no index, no
# temporary file; the build then works in the session and checks
sub check_index_clean
{
	my ($name, $s, $pid, $index, $sql) = @_;
	ok($node->poll_query_until('postgres', qq{
		SELECT count(*) = 0 FROM pg_stat_activity
		WHERE backend_type = 'parallel worker' AND leader_pid = $pid
	}), "$name: no parallel worker left");
	is($node->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname = '$index'"), '0',
		"$name: no index left");
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_ls_dir('base/pgsql_tmp', true, false) f"),
		'0', "$name: no temporary file left");
	release_workers($node);
	$s->query_safe($sql . ';');
	is($s->query_safe("SELECT simhash_index_check('$index', false) IS NOT NULL;"), 't',
		"$name: a build afterwards works and checks");
	$s->quit;
}

# 1. a worker fails: the job fails with its error
my ($s, $pid) = start_job('worker error', $job);
terminate_held_worker($node, $pid);
my $out = $s->query('SELECT 1 AS done;');
like($s->{stderr}, qr/terminating background worker "parallel worker" due to administrator command/,
	'worker error: the leader raises the worker\'s error');
$s->{stderr} = '';
check_clean('worker error', $s, $pid);
$s->quit;

# 2. the job is cancelled while its workers search
($s, $pid) = start_job('cancel', $job);
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$out = $s->query('SELECT 1 AS done;');
like($s->{stderr}, qr/canceling statement due to user request/, 'cancel: the job is cancelled');
$s->{stderr} = '';
check_clean('cancel', $s, $pid);
$s->quit;

# 3. the same in simhash_groups, inside a transaction that goes on
($s, $pid) = start_job('groups cancel',
	"BEGIN; SAVEPOINT a; SELECT count(DISTINCT group_id) FROM simhash_groups('t', 'id', 'h', 10, 'connected', 12)");
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$out = $s->query('ROLLBACK TO SAVEPOINT a; SELECT 1 AS done;');
like($s->{stderr}, qr/canceling statement due to user request/, 'groups cancel: the job is cancelled');
$s->{stderr} = '';
is($s->query_safe('SELECT count(*) FROM t; COMMIT;'), '300000', 'groups cancel: the transaction goes on');
check_clean('groups cancel', $s, $pid);
$s->quit;

# 4. CREATE INDEX with its tables' trees built and written by workers
# (70 tables; the table's parallel_workers = 0 keeps its heap scan serial,
# so these are the only workers): a worker is terminated, then the build is
# cancelled; no index is left, and a build afterwards works
$node->safe_psql('postgres', 'ALTER TABLE t SET (parallel_workers = 0)');
my $build = 'CREATE INDEX t_h ON t USING simhash (h) WITH (blocks = 8, max_distance = 4)';
($s, $pid) = start_job('index worker error', $build);
terminate_held_worker($node, $pid);
$out = $s->query('SELECT 1 AS done;');
like($s->{stderr}, qr/terminating background worker "parallel worker" due to administrator command/,
	'index worker error: the build fails with the worker\'s error');
$s->{stderr} = '';
$s->quit;
release_workers($node);
($s, $pid) = start_job('index cancel', $build);
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$out = $s->query('SELECT 1 AS done;');
like($s->{stderr}, qr/canceling statement due to user request/, 'index cancel: the build is cancelled');
$s->{stderr} = '';
check_index_clean('index cancel', $s, $pid, 't_h', $build);
$node->safe_psql('postgres', 'ALTER TABLE t RESET (parallel_workers)');

# 5. the parallel read: a table whose job has one table group
# (max_distance 0: no search workers), so the only workers are the read's;
# a worker terminated while it reads fails the job with its error
$node->safe_psql('postgres', q{
	CREATE TABLE r (id bigint, h simhash64);
	INSERT INTO r SELECT i, simhash_hash((i % 1500000)::text)::simhash64 FROM generate_series(1, 2000000) i;
	ANALYZE r;
});
my $read_job = "SELECT count(*) FROM simhash_pairs('r', 'id', 'h', 0)";
my $read_expected = $node->safe_psql('postgres',
	"SET max_parallel_maintenance_workers = 0; $read_job");
is($read_expected, '500000', 'read: the serial job finds the planted copies');
($s, $pid) = start_job('read worker error', $read_job);
terminate_held_worker($node, $pid);
$out = $s->query('SELECT 1 AS done;');
like($s->{stderr}, qr/terminating background worker "parallel worker" due to administrator command/,
	'read worker error: the leader raises the worker\'s error');
$s->{stderr} = '';
check_clean('read worker error', $s, $pid, $read_job, $read_expected);
$s->quit;
# cancelled while its workers read
($s, $pid) = start_job('read cancel', $read_job);
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$out = $s->query('SELECT 1 AS done;');
like($s->{stderr}, qr/canceling statement due to user request/, 'read cancel: the job is cancelled');
$s->{stderr} = '';
check_clean('read cancel', $s, $pid, $read_job, $read_expected);
$s->quit;

# 6. the parallel heap scan of CREATE INDEX: one table (blocks = 1,
# max_distance = 0: no sort workers), a scan worker terminated
my $scan_build = 'CREATE INDEX r_h ON r USING simhash (h) WITH (blocks = 1, max_distance = 0)';
($s, $pid) = start_job('index scan worker error', $scan_build);
terminate_held_worker($node, $pid);
$out = $s->query('SELECT 1 AS done;');
like($s->{stderr}, qr/terminating background worker "parallel worker" due to administrator command/,
	'index scan worker error: the build fails with the worker\'s error');
$s->{stderr} = '';
check_index_clean('index scan worker error', $s, $pid, 'r_h', $scan_build);

# nothing leaked in the server's view either
$node->stop;
my $log = slurp_file($node->logfile);
unlike($log, qr/leak/i, 'no leak reported in the server log');
done_testing();
