# test/t/030_index_standby_recycle.pl: a long standby scan while the primary
# recycles the index's pages, with hot_standby_feedback off.  A cursor on the
# standby has read the metapage and part of an ordered index scan; on the
# primary, DELETE and VACUUM rewrite the run the cursor is reading, and a
# later VACUUM recycles its pages.  Replaying the recycling must resolve the
# conflict the way PostgreSQL's own indexes do: the standby waits
# (max_standby_streaming_delay) and then cancels the cursor's session with
# the standard recovery-conflict error.  The cursor must never read a
# recycled page ("was reused while it was being read"). Without the conflict
# record the replay frees the pages under the cursor, and its next FETCH
# fails with that error.  Last, on the primary: VACUUM truncates the free
# pages at the end of an index.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "autovacuum = off\n");
$primary->start;
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->append_conf('postgresql.conf', qq{
hot_standby_feedback = off
max_standby_streaming_delay = 2s
});
$standby->start;

my $n = 20000;
$primary->safe_psql('postgres', qq{
	CREATE EXTENSION simhash;
	CREATE TABLE t (id int, h simhash64);
	INSERT INTO t SELECT g, simhash_hash('row' || g)::simhash64 FROM generate_series(1, $n) g;
	CREATE INDEX t_h ON t USING simhash (h);
});
$primary->wait_for_catchup($standby);

my $q = "(SELECT h FROM t WHERE id = 1)";
my $cursor = "SELECT id FROM t ORDER BY h <~> $q";
my $settings = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off; SET enable_indexonlyscan = off;';
my $plan = $standby->safe_psql('postgres', "$settings EXPLAIN (COSTS OFF) $cursor");
like($plan, qr/Index Scan using t_h/, 'the standby runs the cursor as an index scan') or diag($plan);

# repeat: each round, rows are deleted on the primary; then a standby cursor
# starts (its snapshot is newer than the DELETE, and the heap page it stays
# pinned on holds no deleted row, so the heap's own cleanup does not
# conflict with it) and reads the start of an
# ordered index scan; then the primary's VACUUM rewrites the run (25% dead,
# over VACUUM's 10%) and retires the old one, and a later VACUUM recycles
# its pages.  (Nothing is inserted meanwhile: VACUUM marking the new rows'
# pages all-visible would conflict with the cursor's snapshot by itself.)
my ($rows_ok, $conflicts, $reused, $other) = (0, 0, 0, 0);
for my $round (1 .. 3)
{
	my $lo = ($round - 1) * 4;
	$primary->safe_psql('postgres', "DELETE FROM t WHERE id % 16 IN ($lo, $lo + 1, $lo + 2, $lo + 3) AND id > 1000");
	$primary->wait_for_catchup($standby);

	my $s = $standby->background_psql('postgres', on_error_stop => 0, timeout => 60);
	$s->query_safe($settings);
	$s->query_safe("BEGIN ISOLATION LEVEL REPEATABLE READ");
	my $visible = $s->query_safe('SELECT count(*) FROM t WHERE id > 0');
	$s->query_safe("DECLARE c CURSOR FOR $cursor");
	my $first = $s->query_safe('FETCH 1 FROM c');
	is($first, '1', "round $round: the cursor returns the query's own row first");

	$primary->safe_psql('postgres', 'VACUUM t');
	$primary->safe_psql('postgres', 'SELECT txid_current()') for 1 .. 3;
	$primary->safe_psql('postgres', 'VACUUM t');
	$primary->wait_for_catchup($standby);

	# psql exits when the server ends the session: query() then dies
	my ($out, $ret) = ('', 1);
	eval { ($out, $ret) = $s->query('FETCH ALL FROM c'); };
	my $err = $s->{stderr} . ($@ // '');
	if ($ret == 0)
	{
		# the cursor's snapshot predates the VACUUMs: every row it
		# saw, each once, in order of distance
		my @ids = sort { $a <=> $b } (1, split(/\n/, $out));
		my %seen = map { $_ => 1 } @ids;
		my $ok = @ids == $visible && keys(%seen) == $visible;
		ok($ok, "round $round: the completed cursor returned its snapshot's $visible rows")
		  or diag('got ' . scalar(@ids) . ' rows, ' . scalar(keys %seen) . ' distinct');
		$rows_ok++ if $ok;
	}
	elsif ($err =~ /conflict with recovery/)
	{
		$conflicts++;
		note "round $round: $err";
	}
	elsif ($err =~ /was reused while it was being read/)
	{
		$reused++;
		diag "round $round: $err";
	}
	else
	{
		$other++;
		diag "round $round: $err";
	}
	eval { $s->quit; };
}
is($reused, 0, 'no standby scan read a recycled page (40001 "was reused")');
is($other, 0, 'no other error');
cmp_ok($rows_ok + $conflicts, '==', 3, 'each cursor completed or was cancelled by a recovery conflict');
note "cursors completed: $rows_ok, cancelled by recovery conflicts: $conflicts";

# VACUUM gives the free pages at the end of the index back: the run that a
# merge wrote at the end is replaced by one written into recycled pages
# further in, and recycled in turn
$primary->safe_psql('postgres', qq{
	CREATE TABLE tr (id int, h simhash64);
	INSERT INTO tr SELECT g, simhash_hash('tr' || g)::simhash64 FROM generate_series(1, 40000) g;
	CREATE INDEX tr_h ON tr USING simhash (h);
});
my $size = sub { $primary->safe_psql('postgres', "SELECT pg_relation_size('tr_h') / 8192") };
my $built = $size->();
# (txid_current(): the retired run is recyclable once an xid has passed)
my $vacuum_twice = sub {
	$primary->safe_psql('postgres', 'VACUUM tr; SELECT txid_current();');
	$primary->safe_psql('postgres', 'VACUUM tr');
};
$primary->safe_psql('postgres', 'DELETE FROM tr WHERE id % 4 = 0');
$vacuum_twice->();
my $grown = $size->();
$primary->safe_psql('postgres', 'DELETE FROM tr WHERE id % 4 = 1');
$vacuum_twice->();
my $final = $size->();
note "tr_h: $built blocks built, $grown after the first rewrite, $final after the second";
cmp_ok($final, '<', $grown, 'VACUUM truncated the free pages at the end of the index');
is($primary->safe_psql('postgres', "SELECT simhash_index_check('tr_h', true)"), '', 'the truncated index checks clean');
is($primary->safe_psql('postgres', q{
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT count(*) FROM tr a WHERE EXISTS (SELECT FROM tr b WHERE b.h <~> a.h <= 0 AND b.id = a.id)}),
	'20000', 'every remaining row is found through the truncated index');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', "SELECT pg_relation_size('tr_h') / 8192"), $final,
	'the standby replayed the truncation');

my $log = slurp_file($standby->logfile);
like($log, qr/User query might have needed to see row versions that must be removed/,
	'the standby resolved a snapshot conflict (the index\'s recycling horizon)');
$standby->stop;
$primary->stop;
done_testing();
