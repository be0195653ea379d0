# test/t/019_dedup_keys_parallel.pl: the shared-key and MinHash jobs in
# parallel workers when something goes wrong while the workers
# run: a worker of the parallel read (src/dedup/keys_parallel.c) or of the
# pairing by key partition (src/dedup/keys_split.c) terminated
# (pg_terminate_backend, a FATAL in the worker) must fail the job in the
# leader with the worker's error; a cancelled job must stop its workers;
# neither may leave workers, temporary files (the partition files live in a
# SharedFileSet of a segment of their own) or shared memory behind, and the
# session must go on and get the serial result.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SimhashHold;

my $node = PostgreSQL::Test::Cluster->new('dedup_keys_parallel');
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
# 200,000 rows of 8 keys, 2 of them from a pool of 200,000 (about 400,000
# pairs): seconds of work
$node->safe_psql('postgres', q{
	CREATE EXTENSION simhash;
	CREATE TABLE k (id bigint, keys bigint[]);
	INSERT INTO k SELECT i, ARRAY(SELECT CASE WHEN j <= 2 THEN (hashint8(i * 16 + j)::bigint & 2147483647) % 200000
	                                          ELSE hashint8(i * 16 + j)::bigint END
	                              FROM generate_series(1, 8) j)
	FROM generate_series(1, 200000) i;
	ANALYZE k;
});
# bigint ids: read by workers, then paired by workers; text ids: read
# through SPI, so the only workers are the pairing's
my $job_read = "SELECT count(*) FROM shared_key_pairs('k', 'id', 'keys', 1)";
my $job_split = "SELECT count(*) FROM shared_key_pairs('k', 'id', 'keys', NULL::text, 1)";
my $expected = $node->safe_psql('postgres',
	"SET max_parallel_maintenance_workers = 0; $job_read");
ok($expected > 100000, "the serial job finds $expected pairs");

# start the job in a session with parallel_leader_participation off and
# its parallel workers held at their start (SimhashHold.pm); with $kill,
# one of them is terminated there.  Returns (session, its pid).
sub start_job
{
	my ($name, $sql, $kill) = @_;
	my ($s, $pid) = start_held_job($node, $name, $sql, 'SET parallel_leader_participation = off; ');
	terminate_held_worker($node, $pid) if $kill;
	return ($s, $pid);
}

# no worker of that leader left, no temporary file, and the session runs
# the job again with the serial result
sub check_clean
{
	my ($name, $s, $pid, $sql) = @_;
	ok($node->poll_query_until('postgres', qq{
		SELECT count(*) = 0 FROM pg_stat_activity
		WHERE backend_type = 'parallel worker' AND leader_pid = $pid
	}), "$name: no parallel worker left");
	is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_ls_dir('base/pgsql_tmp', true, false) f"),
		'0', "$name: no temporary file left");
	release_workers($node);
	is($s->query_safe($sql . ';'), $expected, "$name: the session runs the job again, same result");
}

for my $case (['read worker', $job_read], ['pairing worker', $job_split])
{
	my ($name, $sql) = @$case;
	my ($s, $pid) = start_job($name, $sql, 1);
	$s->query('SELECT 1 AS done;');
	like($s->{stderr}, qr/terminating background worker "parallel worker" due to administrator command/,
		"$name terminated: the leader raises the worker's error");
	$s->{stderr} = '';
	check_clean("$name terminated", $s, $pid, $sql);
	$s->quit;
}

# a cancel while the pairing's workers run, inside a transaction that goes on
my ($s, $pid) = start_job('cancel', "BEGIN; SAVEPOINT a; $job_split");
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$s->query('ROLLBACK TO SAVEPOINT a; SELECT 1 AS done;');
like($s->{stderr}, qr/canceling statement due to user request/, 'cancel: the job is cancelled');
$s->{stderr} = '';
is($s->query_safe('SELECT count(*) FROM k; COMMIT;'), '200000', 'cancel: the transaction goes on');
check_clean('cancel', $s, $pid, $job_split);
$s->quit;

done_testing();
