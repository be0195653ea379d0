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

--------------------------------------------------------------------------
-- issue #15: Citus: dedup jobs whose pair search runs on the workers.
-- simhash_pairs_citus / simhash_groups_citus repartition the rows of a
-- distributed table by (table group, the group's block) into a distributed
-- work table (Citus moves the rows between workers), search each part on
-- the worker holding it (simhash_group_pairs, pushed down by GROUP BY on
-- the work table's distribution column) and return the pairs, or groups
-- computed from them on the coordinator.  Design: src/dedup_citus.c.
--------------------------------------------------------------------------

CREATE FUNCTION simhash_group_block(h simhash64, grp integer, blocks integer, max_distance integer)
	RETURNS bigint
	AS 'MODULE_PATHNAME', 'simhash_group_block'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_group_block(simhash64, integer, integer, integer) IS 'the bits of block grp of h (the partition key of table group grp)';

CREATE FUNCTION simhash_group_pairs(ids bigint[], hashes simhash64[], grp integer, blocks integer, max_distance integer)
	RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
	AS 'MODULE_PATHNAME', 'simhash_group_pairs'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 100;
COMMENT ON FUNCTION simhash_group_pairs(bigint[], simhash64[], integer, integer, integer) IS 'the pairs among these rows that table group grp reports (a part of simhash_pairs)';

CREATE FUNCTION simhash_pairs_citus(relation regclass, id_column name, hash_column name,
		max_distance integer DEFAULT 3, blocks integer DEFAULT NULL)
	RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
	LANGUAGE plpgsql AS $fn$
DECLARE
	nblocks integer := coalesce(blocks, greatest(least(max_distance + 2, 64), 1));
	part text;
BEGIN
	IF to_regproc('pg_catalog.create_distributed_table') IS NULL THEN
		RAISE EXCEPTION 'simhash_pairs_citus: Citus is not installed in this database'
			USING ERRCODE = 'feature_not_supported', HINT = 'Use simhash_pairs().';
	END IF;
	IF relation IS NULL OR id_column IS NULL OR hash_column IS NULL OR max_distance IS NULL THEN
		RAISE EXCEPTION 'simhash_pairs_citus: arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	PERFORM simhash_group_block('0000000000000000', 0, nblocks, max_distance);	-- checks blocks
	-- the work table, in the relation's schema: one per session
	part := format('%I.%I', (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	                         WHERE c.oid = relation), 'simhash_part_' || pg_backend_pid());
	EXECUTE format('CREATE TABLE %s (bk bigint, grp integer, id bigint, h simhash64)', part);
	PERFORM create_distributed_table(part::regclass, 'bk');
	FOR g IN 0 .. max_distance LOOP
		EXECUTE format('INSERT INTO %s SELECT simhash_group_block(%I, %s, %s, %s), %s, %I::bigint, %I FROM %s WHERE %I IS NOT NULL',
		               part, hash_column, g, nblocks, max_distance, g, id_column, hash_column, relation, hash_column);
	END LOOP;
	RETURN QUERY EXECUTE format(
		'SELECT p.id_a, p.id_b, p.distance FROM (SELECT grp, array_agg(id) AS ids, array_agg(h) AS hs FROM %s GROUP BY bk, grp) s,'
		' LATERAL simhash_group_pairs(s.ids, s.hs, s.grp, %s, %s) p', part, nblocks, max_distance);
	EXECUTE format('DROP TABLE %s', part);
END $fn$;
COMMENT ON FUNCTION simhash_pairs_citus(regclass, name, name, integer, integer) IS 'simhash_pairs of a Citus distributed table, searched on the workers';

CREATE FUNCTION simhash_groups_citus(relation regclass, id_column name, hash_column name,
		max_distance integer DEFAULT 3, linkage text DEFAULT 'connected', blocks integer DEFAULT NULL)
	RETURNS TABLE (id bigint, group_id bigint)
	LANGUAGE plpgsql AS $fn$
DECLARE
	x bigint;
	leader bigint;
BEGIN
	IF linkage IS NULL OR linkage NOT IN ('connected', 'leader') THEN
		RAISE EXCEPTION 'simhash_groups_citus: linkage must be ''connected'' or ''leader'''
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	CREATE TEMP TABLE simhash_citus_pairs AS
		SELECT * FROM simhash_pairs_citus(relation, id_column, hash_column, max_distance, blocks);
	-- every row's id (ids are unique; a DISTINCT here makes Citus hash the
	-- merged ids on the coordinator, which is slow for millions of rows)
	EXECUTE format('CREATE TEMP TABLE simhash_citus_rows AS SELECT %I::bigint AS id FROM %s', id_column, relation);
	ANALYZE simhash_citus_pairs;
	ANALYZE simhash_citus_rows;
	IF linkage = 'connected' THEN
		-- connected components: each pair is a key shared by its two rows
		CREATE TEMP TABLE simhash_citus_keys AS
			SELECT r.id, coalesce(array_agg(e.n) FILTER (WHERE e.n IS NOT NULL), '{}') AS keys
			FROM simhash_citus_rows r
			LEFT JOIN (SELECT n, unnest(ARRAY[p.id_a, p.id_b]) AS id
			           FROM (SELECT row_number() OVER () AS n, * FROM simhash_citus_pairs) p) e USING (id)
			GROUP BY r.id;
		RETURN QUERY SELECT g.id, g.group_id FROM shared_key_groups('simhash_citus_keys', 'id', 'keys', 1, 2) g;
		DROP TABLE simhash_citus_keys;
	ELSE
		-- leaders: rows in id order join the nearest earlier leader (ties:
		-- the least id), else lead; rows without an earlier pair lead
		CREATE INDEX ON simhash_citus_pairs (id_b);
		CREATE TEMP TABLE simhash_citus_followers (id bigint PRIMARY KEY, group_id bigint);
		FOR x IN SELECT DISTINCT p.id_b FROM simhash_citus_pairs p ORDER BY 1 LOOP
			SELECT p.id_a INTO leader FROM simhash_citus_pairs p
			WHERE p.id_b = x AND NOT EXISTS (SELECT 1 FROM simhash_citus_followers f WHERE f.id = p.id_a)
			ORDER BY p.distance, p.id_a LIMIT 1;
			IF FOUND THEN
				INSERT INTO simhash_citus_followers VALUES (x, leader);
			END IF;
		END LOOP;
		RETURN QUERY SELECT r.id, coalesce(f.group_id, r.id) FROM simhash_citus_rows r
			LEFT JOIN simhash_citus_followers f USING (id);
		DROP TABLE simhash_citus_followers;
	END IF;
	DROP TABLE simhash_citus_pairs, simhash_citus_rows;
END $fn$;
COMMENT ON FUNCTION simhash_groups_citus(regclass, name, name, integer, text, integer) IS 'simhash_groups of a Citus distributed table: pairs searched on the workers, groups on the coordinator';
