-- The per-backend copies of the index's inner pages and run
-- headers (src/index/inner_cache.c) must not leak when the relcache reloads the
-- index while it is open.  PostgreSQL 15 then frees only rd_amcache
-- (RelationReloadIndexInfo), so copies reached through it and kept in the
-- index's own context leaked, up to 2 MB per reload.  A cursor keeps the
-- index open while 100 (lookup; INSERT; ANALYZE) rounds each invalidate it
-- (ANALYZE updates its pg_class row); the memory of the contexts named after
-- the index must stay flat (it grew by about 4.8 kB a round, 480 kB here,
-- before the fix).  20,000 rows: every tree has a root inner page above its
-- leaves, so each lookup keeps copies.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

CREATE TABLE cct (id int, h simhash64);
INSERT INTO cct SELECT g, simhash_hash('cct' || g)::simhash64 FROM generate_series(1, 20000) g;
CREATE INDEX cct_h ON cct USING simhash (h);
CREATE FUNCTION cct_bytes() RETURNS bigint LANGUAGE sql AS $$
	SELECT coalesce(sum(total_bytes), 0)::bigint FROM pg_backend_memory_contexts WHERE ident = 'cct_h'
$$;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

BEGIN;
DECLARE c CURSOR FOR SELECT id FROM cct WHERE h <@ simhash_ball(simhash_hash('cct7')::simhash64, 3);
FETCH 1 FROM c;
CREATE TEMP TABLE cct_before AS SELECT cct_bytes() AS bytes;
DO $$
BEGIN
	FOR i IN 1..100 LOOP
		PERFORM count(*) FROM cct WHERE h <@ simhash_ball(simhash_hash('cct' || i)::simhash64, 3);
		INSERT INTO cct VALUES (-i, simhash_hash('cct' || i)::simhash64);
		ANALYZE cct;
	END LOOP;
END $$;
SELECT cct_bytes() - bytes < 32768 AS memory_flat FROM cct_before;
FETCH ALL FROM c;
COMMIT;

-- the lookups still answer as a sequential pass
SELECT count(*) AS index_rows FROM cct WHERE h <@ simhash_ball(simhash_hash('cct50')::simhash64, 3);
SET enable_indexscan = off;
SELECT count(*) AS seq_rows FROM cct WHERE hamming_distance(h, simhash_hash('cct50')::simhash64) <= 3;
RESET enable_indexscan;
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE cct;
DROP FUNCTION cct_bytes();
