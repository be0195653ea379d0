# test/t/SimhashIndexTest.pm: shared set-up and checks of the TAP tests of
# the simhash index (002_index_crash.pl, 003_index_replica.pl,
# 004_index_concurrency.pl).  Not a test itself (prove runs t/*.pl only).
#
# Data: fingerprints are deterministic (simhash_hash of a text), in clusters:
# base(c) and near-duplicates of it at distances 1..6 (bits chosen from a
# seed), so that radius queries around base(c) find several rows.
package SimhashIndexTest;

use strict;
use warnings;
use Test::More;
use Exporter 'import';

our @EXPORT = qw(index_setup_sql workload_sql insert_sql index_meta index_check_ok check_index results_digest
  parallel_build_sql pages_differ pb_lookups_equal);

# SQL objects: table t (id, cluster c, fingerprint h), helper functions, and
# the query centers (table centers).  The tests create the index t_h.
sub index_setup_sql
{
	return qq{
	CREATE EXTENSION simhash;
	CREATE EXTENSION pageinspect;
	CREATE TABLE t (id bigserial PRIMARY KEY, c int, h simhash64);

	-- cluster c's base fingerprint
	CREATE FUNCTION base(c int) RETURNS simhash64 LANGUAGE sql IMMUTABLE
		AS \$\$ SELECT simhash_hash('base' || c)::simhash64 \$\$;
	-- h with d distinct bits flipped, chosen by seed (13 is coprime to 64)
	CREATE FUNCTION flip(h simhash64, seed int, d int) RETURNS simhash64
		LANGUAGE sql IMMUTABLE AS \$\$
		SELECT (h::bigint # coalesce((SELECT bit_or(1::bigint << ((seed * 7 + i * 13) % 64))
		                              FROM generate_series(1, d) i), 0))::simhash64
	\$\$;
	-- a near-duplicate of cluster c; n numbers the variants
	CREATE FUNCTION near(c int, n int) RETURNS simhash64 LANGUAGE sql IMMUTABLE
		AS \$\$ SELECT flip(base(c), c * 31 + n, n % 7) \$\$;

	-- rows of t within r of q: sequential reference, index scan, bitmap scan
	CREATE FUNCTION ref_ids(q simhash64, r int) RETURNS bigint[] LANGUAGE sql STABLE
		SET enable_indexscan = off SET enable_bitmapscan = off AS \$\$
		SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM t WHERE hamming_distance(h, q) <= r
	\$\$;
	CREATE FUNCTION idx_ids(q simhash64, r int) RETURNS bigint[] LANGUAGE sql STABLE
		SET enable_seqscan = off SET enable_bitmapscan = off AS \$\$
		SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM t WHERE h <~> q <= r
	\$\$;
	CREATE FUNCTION bmp_ids(q simhash64, r int) RETURNS bigint[] LANGUAGE sql STABLE
		SET enable_seqscan = off SET enable_indexscan = off AS \$\$
		SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM t WHERE h <~> q <= r
	\$\$;

	-- query centers: cluster bases, near-duplicates, values near nothing
	CREATE TABLE centers (q simhash64);
	INSERT INTO centers
		SELECT base(c) FROM generate_series(1, 400, 7) c
		UNION SELECT near(c, 3) FROM generate_series(1, 400, 11) c
		UNION SELECT flip(base(c), 99, 2) FROM generate_series(1, 400, 13) c
		UNION SELECT simhash_hash('lonely' || g)::simhash64 FROM generate_series(1, 10) g;

	-- every center and radius: how many matches, how many disagreements;
	-- the reference is one nested loop over centers and t (hamming_distance
	-- is never indexable), in the same snapshot as the index scans
	CREATE FUNCTION check_all(max_r int)
		RETURNS TABLE (queries bigint, matches bigint, wrong bigint, first_wrong text)
		LANGUAGE sql STABLE AS \$\$
		WITH qs AS (SELECT DISTINCT q FROM centers),
		dist AS MATERIALIZED (
			SELECT qs.q, t.id, hamming_distance(t.h, qs.q) AS d
			FROM qs, t WHERE hamming_distance(t.h, qs.q) <= max_r),
		ref AS (
			SELECT qs.q, r, coalesce(array_agg(dist.id ORDER BY dist.id)
			                         FILTER (WHERE dist.d <= r), '{}') AS ref
			FROM qs CROSS JOIN generate_series(0, max_r) r
			     LEFT JOIN dist ON dist.q = qs.q
			GROUP BY qs.q, r),
		x AS (SELECT q, r, ref, idx_ids(q, r) AS idx, bmp_ids(q, r) AS bmp FROM ref)
		SELECT count(*), sum(cardinality(ref)),
		       count(*) FILTER (WHERE ref <> idx OR ref <> bmp),
		       min(CASE WHEN ref <> idx OR ref <> bmp THEN
		           format('q=%s r=%s ref=%s idx=%s bitmap=%s', q, r, ref, idx, bmp) END)
		FROM x
	\$\$;

	-- the head of the metapage (pageinspect; the offsets of nruns,
	-- next_generation, pending[i].nentries and flushing[i].nentries of the
	-- 8 lanes in SimhashMetaPageData, src/index/am.h, after the 24-byte
	-- page header; a lane counts the entries before its tail page)
	CREATE FUNCTION u32(p bytea, o int) RETURNS bigint LANGUAGE sql IMMUTABLE AS \$\$
		SELECT get_byte(p, o)::bigint | (get_byte(p, o + 1)::bigint << 8)
		     | (get_byte(p, o + 2)::bigint << 16) | (get_byte(p, o + 3)::bigint << 24)
	\$\$;
	CREATE FUNCTION index_meta(idx text,
		OUT nruns bigint, OUT generation bigint, OUT pending bigint,
		OUT flushing bigint, OUT pages bigint)
		LANGUAGE sql AS \$\$
		SELECT u32(p, 44), u32(p, 48),
		       (SELECT sum(u32(p, 64 + 24 * i))::bigint FROM generate_series(0, 7) i),
		       (SELECT sum(u32(p, 256 + 24 * i))::bigint FROM generate_series(0, 7) i),
		       pg_relation_size(idx::regclass) / current_setting('block_size')::int
		FROM get_raw_page(idx, 0) p
	\$\$;
	};
}

# SQL inserting near-duplicates n = nfirst..nlast of clusters first..last
# the workload both crash and replica tests run: a table of committed
# rounds, and a procedure doing rounds of 50 inserts (near-duplicates of 10
# clusters), deleting some recent rows every 10th round, committing (and
# pausing) after each
sub workload_sql
{
	return q{
	CREATE TABLE progress (cycle int PRIMARY KEY, rounds int);
	CREATE PROCEDURE workload(cycle int, rounds int, pause float8 DEFAULT 0) LANGUAGE plpgsql AS $$
	BEGIN
		INSERT INTO progress VALUES (cycle, 0);
		COMMIT;
		FOR i IN 1 .. rounds LOOP
			INSERT INTO t (c, h)
				SELECT c, near(c, 1000 * cycle + 5 * i + n)
				FROM generate_series(((cycle * 1000 + i * 10) % 400) + 1,
				                     ((cycle * 1000 + i * 10) % 400) + 10) c,
				     generate_series(0, 4) n;
			IF i % 10 = 0 THEN
				DELETE FROM t WHERE id % 13 = i % 13
					AND id > (SELECT max(id) FROM t) - 1000;
			END IF;
			UPDATE progress SET rounds = i WHERE progress.cycle = workload.cycle;
			COMMIT;
			IF pause > 0 THEN
				PERFORM pg_sleep(pause);
			END IF;
		END LOOP;
	END $$;
	};
}

sub insert_sql
{
	my ($first, $last, $nfirst, $nlast) = @_;
	return "INSERT INTO t (c, h) SELECT c, near(c, n) FROM generate_series($first, $last) c, generate_series($nfirst, $nlast) n";
}

# The metapage as a string, for notes
sub index_meta
{
	my ($node, $db, $idx) = @_;
	return $node->safe_psql($db,
		"SELECT format('runs %s, generation %s, pending %s, flushing %s, pages %s', "
		  . "nruns, generation, pending, flushing, pages) FROM index_meta('$idx')");
}

# simhash_index_check($idx, $heapall) passes
sub index_check_ok
{
	my ($node, $db, $idx, $label, %opt) = @_;
	my $heapall = ($opt{heapallindexed} // 1) ? 'true' : 'false';
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my ($rc, $out, $err) = $node->psql($db, "SELECT simhash_index_check('$idx', $heapall)");
	return is($rc, 0, "$label: simhash_index_check($idx, $heapall) passes")
	  || diag("simhash_index_check: $err");
}

# simhash_index_check(t_h) passes (index_check_ok), and index and bitmap
# scans agree with the sequential reference for every center and radius
# 0..max_r.  Returns the number of matches (to check the queries found
# something).
sub check_index
{
	my ($node, $db, $label, %opt) = @_;
	my $max_r = $opt{max_radius} // 5;
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	index_check_ok($node, $db, 't_h', $label, %opt);
	my $res = $node->safe_psql($db,
		"SELECT queries || '|' || matches || '|' || wrong || '|' || coalesce(first_wrong, '') FROM check_all($max_r)");
	my ($queries, $matches, $wrong, $first) = split /\|/, $res, 4;
	note "$label: $queries queries (radius 0..$max_r), $matches matching rows, $wrong wrong; "
	  . index_meta($node, $db, 't_h') . "; rows "
	  . $node->safe_psql($db, 'SELECT count(*) FROM t');
	is($wrong, 0, "$label: index and bitmap scans equal the sequential reference")
	  or diag("first disagreement: $first");
	return $matches;
}

# A digest of the index's answers (ids per center and radius), to compare
# two servers
sub results_digest
{
	my ($node, $db, $max_r) = @_;
	return $node->safe_psql($db,
		"SELECT count(*) || ':' || sum(cardinality(ids)) || ':' || md5(string_agg(q::text || '/' || r || '=' || ids::text, ',' ORDER BY q, r)) "
		  . "FROM (SELECT q, r, idx_ids(q, r) AS ids FROM centers, generate_series(0, $max_r) r) x");
}


# the table pb (60,000 rows) indexed serially (pb_serial) and by
# a parallel build whose workers write the trees (pb_par, without the
# leader), with blocks = 6 (20 tables); $between runs after the serial build
sub parallel_build_sql
{
	my ($between) = @_;
	return q{
	CREATE EXTENSION IF NOT EXISTS pageinspect;
	CREATE TABLE pb AS SELECT i AS id, simhash_hash('pb' || (i % 40000))::simhash64 AS h
		FROM generate_series(1, 60000) i;
	SET max_parallel_maintenance_workers = 0;
	CREATE INDEX pb_serial ON pb USING simhash (h) WITH (blocks = 6, max_distance = 3);
	} . ($between // '') . q{;
	SET simhash.parallel_min_rows = 0;
	SET max_parallel_maintenance_workers = 2;
	SET parallel_leader_participation = off;
	CREATE INDEX pb_par ON pb USING simhash (h) WITH (blocks = 6, max_distance = 3);
	RESET parallel_leader_participation;
	};
}

# "N pages, M differ" between indexes $a and $b (pageinspect), but the page
# LSNs and checksums (the first 10 bytes); ", sizes differ" if they do
sub pages_differ
{
	my ($node, $db, $a, $b) = @_;
	return $node->safe_psql($db, qq{
	SELECT format('%s pages, %s differ', count(*),
		count(*) FILTER (WHERE substr(get_raw_page('$a', i), 11) <> substr(get_raw_page('$b', i), 11)))
		|| CASE WHEN pg_relation_size('$a') <> pg_relation_size('$b') THEN ', sizes differ' ELSE '' END
	FROM generate_series(0, (greatest(pg_relation_size('$a'), pg_relation_size('$b')) / 8192)::int - 1) i});
}

# pb's radius-2 pairs of its first 3,000 rows by index equal a sequential scan's
sub pb_lookups_equal
{
	my ($node, $db, $label) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $q = 'SELECT count(*) FROM pb a JOIN pb b ON b.h <~> a.h <= 2 AND a.id < b.id WHERE a.id <= 3000';
	return is($node->safe_psql($db, "SET enable_seqscan = off; $q"),
		$node->safe_psql($db, "SET enable_indexscan = off; SET enable_bitmapscan = off; $q"),
		"$label: lookups through the index equal a sequential scan");
}

1;
