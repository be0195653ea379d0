# test/t/036_index_lane_affinity.pl: concurrent inserters keep to their own
# pending lanes (src/index/pending.c).  A backend whose
# lane is empty starts it, and one whose lane's tail page is full adds a
# page to it, instead of appending to a lane another backend is filling
# (before: the two backends then met on one tail page, and one slept on its
# lock).  No timing: the metapage (pageinspect) says which lanes hold what.
#
# Two sessions A and B on different lanes (a lane is the backend's
# pgprocno modulo 4, so each session's lane is found first: after a VACUUM,
# which flushes the lanes, its single insert starts its own lane).  Then,
# after another VACUUM: A inserts a row, B inserts a row: two lanes (one
# before the fix: B's went into A's lane).  After another VACUUM, A inserts
# 64 rows (its tail page, 64 entries, pending.c, is full), B one (B's lane
# starts), A one more: A adds a page to its own lane, whose count then says
# 64 entries before its tail (0 before the fix: A's row went to B's lane).
# Lookups and simhash_index_check afterwards.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('lanes');
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION simhash;
	CREATE EXTENSION pageinspect;
	CREATE TABLE t (id int, h simhash64) WITH (autovacuum_enabled = false);
	INSERT INTO t SELECT g, simhash_hash(g::text)::simhash64 FROM generate_series(1, 1000) g;
	CREATE INDEX t_h ON t USING simhash (h);
	-- pending[i] of the metapage (src/index/am.h): head at 24 + 32 + 24 * i,
	-- nentries (entries before the tail page) 8 bytes further
	CREATE FUNCTION u32(p bytea, o int) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
		SELECT get_byte(p, o)::bigint | (get_byte(p, o + 1)::bigint << 8)
		     | (get_byte(p, o + 2)::bigint << 16) | (get_byte(p, o + 3)::bigint << 24)
	$$;
	CREATE FUNCTION lanes(OUT lane int, OUT nentries bigint) RETURNS SETOF record
		LANGUAGE sql AS $$
		SELECT i, u32(p, 64 + 24 * i) FROM get_raw_page('t_h', 0) p, generate_series(0, 7) i
		WHERE u32(p, 56 + 24 * i) <> 4294967295 ORDER BY i
	$$;
});

my $id = 1000;
my @sessions = map { $node->background_psql('postgres') } 1 .. 4;

# the lane of each session: the one its insert starts when all are empty
my %lane_of;
for my $k (0 .. $#sessions)
{
	$node->safe_psql('postgres', 'VACUUM t');
	$id++;
	$sessions[$k]->query_safe("INSERT INTO t VALUES ($id, simhash_hash('$id')::simhash64)");
	$lane_of{$k} = $node->safe_psql('postgres', 'SELECT string_agg(lane::text, \',\') FROM lanes()');
	note "session $k: lane $lane_of{$k}";
}
my ($sa, $sb);
for my $k (1 .. $#sessions)
{
	if ($lane_of{$k} ne $lane_of{0})
	{
		($sa, $sb) = (0, $k);
		last;
	}
}

SKIP:
{
	skip 'the four sessions share one lane', 2 unless defined $sb;

	$node->safe_psql('postgres', 'VACUUM t');
	for my $k ($sa, $sb)
	{
		$id++;
		$sessions[$k]->query_safe("INSERT INTO t VALUES ($id, simhash_hash('$id')::simhash64)");
	}
	is($node->safe_psql('postgres', 'SELECT string_agg(lane::text, \',\') FROM lanes()'),
		join(',', sort { $a <=> $b } ($lane_of{$sa}, $lane_of{$sb})),
		'a backend whose lane is empty starts it (not another backend\'s lane)');

	# A fills its tail page (64 entries, pending.c); B starts its lane; A's
	# next insert adds a page to A's lane (before: it went to B's lane)
	$node->safe_psql('postgres', 'VACUUM t');
	my $first = $id + 1;
	$id += 64;
	$sessions[$sa]->query_safe("INSERT INTO t SELECT g, simhash_hash(g::text)::simhash64 "
		  . "FROM generate_series($first, $id) g");
	for my $k ($sb, $sa)
	{
		$id++;
		$sessions[$k]->query_safe("INSERT INTO t VALUES ($id, simhash_hash('$id')::simhash64)");
	}
	is($node->safe_psql('postgres', "SELECT nentries FROM lanes() WHERE lane = $lane_of{$sa}"),
		'64', 'a backend whose lane\'s tail is full adds a page to its own lane');
}
$_->quit for @sessions;

# the index answers as a sequential scan
my $seq = $node->safe_psql('postgres',
	"SELECT count(*) FROM t a, t b WHERE a.id > 995 AND hamming_distance(a.h, b.h) <= 3");
my $idx = $node->safe_psql('postgres',
	"SET enable_seqscan = off; SELECT count(*) FROM t a, t b WHERE a.id > 995 AND b.h <~> a.h <= 3");
is($idx, $seq, 'lookups through the index match a sequential scan');
is($node->safe_psql('postgres', "SELECT simhash_index_check('t_h', true)"), '', 'simhash_index_check is clean');

$node->stop;
done_testing();
