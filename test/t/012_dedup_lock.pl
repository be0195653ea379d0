# test/t/012_dedup_lock.pl: the dedup jobs lock the relation before they
# check its column types.  A session changes the
# type of the hash column in an open transaction; a job started meanwhile
# must wait for it and then see the new type (a clean 42804), not check
# the old type and then read the new one (a text pointer taken for a
# fingerprint: wrong rows, or a crash for other types).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('dedup_lock');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION simhash;
	CREATE TABLE t (id bigint, h simhash64);
	INSERT INTO t SELECT i, simhash_hash('row' || (i % 50))::simhash64 FROM generate_series(1, 200) i;
	CREATE TABLE k (id bigint, keys bigint[]);
	INSERT INTO k SELECT i, ARRAY[i % 7, i % 11]::bigint[] FROM generate_series(1, 200) i;
});

# job: the SQL of a dedup job; alter: what changes the column's type
sub job_during_alter
{
	my ($name, $alter, $job, $expect) = @_;
	my $alterer = $node->background_psql('postgres', on_error_stop => 0);
	$alterer->query_safe("BEGIN; $alter;");
	my $jobber = $node->background_psql('postgres', on_error_stop => 0);
	$jobber->query_until(qr/started/, "\\echo started\n$job;\n");
	# the job waits for the lock, whatever it had checked
	$node->poll_query_until('postgres', q{
		SELECT count(*) > 0 FROM pg_locks WHERE NOT granted AND relation IS NOT NULL
	}) or die "$name: the job does not wait for the lock";
	$alterer->query_safe('COMMIT;');
	$alterer->quit;
	# psql prints the error on stderr; wait for the job to finish
	my $out = $jobber->query('SELECT 1 AS done;');
	my $err = $jobber->{stderr};
	$jobber->quit;
	like($err, $expect, "$name: the job sees the new type") or diag("stdout: $out");
}

job_during_alter('simhash_pairs',
	'ALTER TABLE t ALTER COLUMN h TYPE text USING h::text',
	"SELECT count(*) FROM simhash_pairs('t', 'id', 'h', 3)",
	qr/column "h" is of type text, not simhash64/);

job_during_alter('shared_key_pairs',
	'ALTER TABLE k ALTER COLUMN keys TYPE text USING keys::text',
	"SELECT count(*) FROM shared_key_pairs('k', 'id', 'keys')",
	qr/column "keys" is of type text/);

# the jobs still work, and still report a missing relation cleanly
$node->safe_psql('postgres', q{
	CREATE TABLE t2 (id bigint, h simhash64);
	INSERT INTO t2 SELECT i, simhash_hash('row' || (i % 50))::simhash64 FROM generate_series(1, 200) i;
});
is($node->safe_psql('postgres', "SELECT count(*) FROM simhash_pairs('t2', 'id', 'h', 0)"),
	'300', 'simhash_pairs after the change');
my ($rc, $out, $err) = $node->psql('postgres', "SELECT * FROM simhash_pairs(12345::oid::regclass, 'id', 'h')");
like($err, qr/relation with OID 12345 does not exist/, 'a missing relation: 42P01');

$node->stop;
done_testing();
