# test/t/045_vacuum_memory.pl: VACUUM reads a run's table-0 leaves in
# batches sized by its memory setting (src/index/vacuum.c,
# mark_tree_in_tid_order()), as PostgreSQL sizes its store of dead TIDs:
# autovacuum_work_mem in an autovacuum worker when it is set, else
# maintenance_work_mem.  The batch's size is read from the DEBUG2 line each
# run's marking logs: 24 bytes per entry, so 1MB holds 43690 entries, while
# a manual VACUUM at 64MB takes the whole 100,000-entry run in one batch.
# The test waits for the autovacuum by polling the table's autovacuum count
# (poll_query_until), not by sleeping.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('vacuum_memory');
$node->init;
$node->append_conf('postgresql.conf', qq{
autovacuum_naptime = 1
autovacuum_work_mem = '1MB'
maintenance_work_mem = '64MB'
log_min_messages = debug2
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION simhash;
	CREATE TABLE t (id int, h simhash64) WITH (autovacuum_enabled = false);
	INSERT INTO t SELECT g, simhash_hash(g::text)::simhash64 FROM generate_series(1, 100000) g;
	CREATE INDEX t_h ON t USING simhash (h);
	DELETE FROM t WHERE id % 10 = 0;
});

# autovacuum: batches of at most 1MB / 24 bytes
my $offset = -s $node->logfile;
$node->safe_psql('postgres', q{
	ALTER TABLE t SET (autovacuum_enabled = true, autovacuum_vacuum_threshold = 1000,
					   autovacuum_vacuum_scale_factor = 0, autovacuum_analyze_threshold = 1000000000)});
ok($node->poll_query_until('postgres',
	"SELECT autovacuum_count > 0 FROM pg_stat_user_tables WHERE relname = 't'"),
	'autovacuum vacuumed the table');
$node->safe_psql('postgres', 'ALTER TABLE t SET (autovacuum_enabled = false)');
my $log = slurp_file($node->logfile, $offset);
like($log, qr/simhash index "t_h": 100000 entries of a run asked in \d+ batches of at most 43690\b/,
	'autovacuum sizes its batches by autovacuum_work_mem');

# a manual VACUUM: maintenance_work_mem holds the whole run
$node->safe_psql('postgres', 'DELETE FROM t WHERE id % 10 = 1');
$offset = -s $node->logfile;
$node->safe_psql('postgres', 'VACUUM t');
$log = slurp_file($node->logfile, $offset);
like($log, qr/simhash index "t_h": 100000 entries of a run asked in 1 batches of at most 100000\b/,
	'VACUUM sizes its batches by maintenance_work_mem');

# the index still returns exactly the live rows
is($node->safe_psql('postgres', q{
	SET enable_seqscan = off;
	SELECT count(*) FROM t WHERE h <~> '0000000000000000'::simhash64 <= 64}),
	'80000', 'the index finds every live row');

$node->stop;
done_testing();
