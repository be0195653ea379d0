# test/t/043_index_inner_cache.pl: a backend keeps a copy of every inner
# page its lookups descend through (src/index/inner_cache.c), also when
# the pages' block numbers collide in a table of 256 slots by block
# number.  No timing: the buffers a lookup touches (EXPLAIN BUFFERS) say
# what it read.
#
# 129,000 rows: four trees of height 1 (a root above the leaves), whose
# roots lie 256 blocks apart two by two (pageinspect says so below; tables
# 0 and 2, 1 and 3).  The same radius-3 lookup twice in one backend: the
# first reads the run header and each tree's root once, so the second must
# touch exactly 1 + (sum of the trees' heights) buffers fewer; the rest
# (metapage, leaves, heap) are the same pages both times.  When copies
# were kept direct-mapped by block modulo 256, a root evicted the one 256
# blocks before it, and the second lookup read all four roots again (1
# buffer fewer instead of 5).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('inner_cache');
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION simhash;
	CREATE EXTENSION pageinspect;
	CREATE TABLE t (id int, h simhash64) WITH (autovacuum_enabled = false);
	INSERT INTO t SELECT g, simhash_hash('ic' || g)::simhash64 FROM generate_series(1, 129000) g;
	CREATE INDEX t_h ON t USING simhash (h);
	VACUUM ANALYZE t;
	CREATE FUNCTION u32(p bytea, o int) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
		SELECT get_byte(p, o)::bigint | (get_byte(p, o + 1)::bigint << 8)
		     | (get_byte(p, o + 2)::bigint << 16) | (get_byte(p, o + 3)::bigint << 24)
	$$;
	-- the trees of the index's only run: the metapage's runs[0].header (at
	-- 24 + 440), the run header's trees[t] (root, height) at 48 + 8 t
	CREATE FUNCTION trees(OUT tbl int, OUT root bigint, OUT height bigint) RETURNS SETOF record
		LANGUAGE sql AS $$
		SELECT t, u32(p, 48 + 8 * t), u32(p, 52 + 8 * t) & 65535
		FROM get_raw_page('t_h', u32(get_raw_page('t_h', 0), 464)::int) p,
		     generate_series(0, u32(p, 40)::int - 1) t
	$$;
	-- shared buffers a radius-3 lookup of q touched
	CREATE FUNCTION bufs(q simhash64) RETURNS bigint LANGUAGE plpgsql AS $$
	DECLARE j json;
	BEGIN
		EXECUTE format('EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) SELECT id FROM t WHERE h <~> %L <= 3', q) INTO j;
		RETURN (j -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint + (j -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint;
	END $$;
});

is($node->safe_psql('postgres', q{SELECT u32(get_raw_page('t_h', 0), 44)}), '1', 'one run');
my ($ntrees, $heights, $collide) = split /\|/, $node->safe_psql('postgres', q{
	SELECT count(*), sum(height),
	       (SELECT count(*) FROM trees() a JOIN trees() b ON a.tbl < b.tbl AND (b.root - a.root) % 256 = 0)
	FROM trees()});
is($ntrees, 4, 'four trees');
is($heights, 4, 'each a root above its leaves');
is($collide, 2, 'two pairs of roots 256 blocks apart');

for my $q ("simhash_hash('ic77')", "simhash_hash('ic1000')", "simhash_hash('nothing')")
{
	# a fresh backend: the first lookup reads the run header and the roots
	my (undef, $cold, $warm, $again) = split /\n/, $node->safe_psql('postgres', qq{
		SET enable_seqscan = off;
		SELECT count(*) FROM t WHERE id = 0;
		SELECT bufs(${q}::simhash64);
		SELECT bufs(${q}::simhash64);
		SELECT bufs(${q}::simhash64);
	});
	is($cold - $warm, 1 + $heights, "$q: the second lookup reads no inner page ($cold, then $warm buffers)");
	is($again, $warm, "$q: nor the third");
	is($node->safe_psql('postgres', qq{
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) FROM t WHERE h <~> ${q}::simhash64 <= 3}),
		$node->safe_psql('postgres', qq{SELECT count(*) FROM t WHERE hamming_distance(h, ${q}::simhash64) <= 3}),
		"$q: the lookup finds what a sequential pass does");
}
$node->safe_psql('postgres', q{SELECT simhash_index_check('t_h', true)});
pass('simhash_index_check');

$node->stop;
done_testing();
