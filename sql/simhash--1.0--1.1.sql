/* sql/simhash--1.0--1.1.sql: upgrade of the simhash extension from 1.0 to 1.1
 *
 * 1.0 (sql/simhash--1.0.sql, tag v1.0) is frozen.  Every change to an SQL
 * object since then is made here, in sections named after the issue that made
 * it; the install script of 1.1 (sql/simhash--1.1.sql) is built by the Makefile
 * as 1.0 followed by this file, so a fresh install and an upgraded one have the
 * same objects by construction.  Statements must be valid both ways: on a
 * database being upgraded and right after the 1.0 script in a fresh install.
 */

\echo Use "ALTER EXTENSION simhash UPDATE TO '1.1'" to load this file. \quit

-- issue #11: distance histogram of a table's near pairs (to choose k)
--
-- Counts the pairs of rows (each once, by ctid) whose fingerprints are at most
-- max_distance bits apart, by distance 0..max_distance, with the running total
-- and a text bar (bar_width characters for the largest count, at least one
-- for any non-zero count).  Built on simhash_pairs, so it needs what that job
-- needs (maintenance_work_mem, temporary files); it finds simhash_pairs in the
-- extension's own schema, wherever the extension was created or moved.
CREATE FUNCTION simhash_distance_histogram(relation regclass, hash_column name,
		max_distance integer DEFAULT 8, bar_width integer DEFAULT 50)
	RETURNS TABLE (distance integer, pairs bigint, cumulative bigint, bar text)
	LANGUAGE plpgsql STABLE STRICT PARALLEL RESTRICTED ROWS 9
	AS $fn$
DECLARE
	ext_schema name;
BEGIN
	IF max_distance < 0 OR max_distance > 64 THEN
		RAISE EXCEPTION 'max_distance must be between 0 and 64, not %', max_distance
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF bar_width < 1 OR bar_width > 1000 THEN
		RAISE EXCEPTION 'bar_width must be between 1 and 1000, not %', bar_width
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	SELECT n.nspname INTO ext_schema
	FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'simhash';
	RETURN QUERY EXECUTE format($q$
		WITH counts AS (
			SELECT p.distance, pg_catalog.count(*) AS pairs
			FROM %I.simhash_pairs($1, 'ctid', $2, NULL::pg_catalog.tid, $3) p
			GROUP BY p.distance),
		hist AS (
			SELECT d AS distance, COALESCE(c.pairs, 0) AS pairs
			FROM pg_catalog.generate_series(0, $3) d LEFT JOIN counts c ON c.distance = d)
		SELECT h.distance, h.pairs,
			(pg_catalog.sum(h.pairs) OVER (ORDER BY h.distance))::bigint,
			pg_catalog.repeat('#', CASE WHEN h.pairs = 0 THEN 0 ELSE
				GREATEST(1, (h.pairs * $4 / GREATEST(pg_catalog.max(h.pairs) OVER (), 1))::integer) END)
		FROM hist h ORDER BY h.distance$q$, ext_schema)
	USING relation, hash_column, max_distance, bar_width;
END
$fn$;
COMMENT ON FUNCTION simhash_distance_histogram(regclass, name, integer, integer) IS 'pairs of rows by Hamming distance 0..max_distance, with a running total and a text bar chart';
