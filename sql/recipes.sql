-- the README's dedup recipes (SnaPy parity, incremental grouping), run on a
-- small table with planted near-duplicates; every recipe uses the index
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
CREATE TABLE docs (id bigint PRIMARY KEY, body text NOT NULL, h simhash64);
INSERT INTO docs VALUES
	(1, 'the quick brown fox jumps over the lazy dog near the river bank today', NULL),
	(2, 'the quick brown fox jumps over the lazy dog near the river bank today!', NULL),
	(3, 'the quick brown fox leaps over the lazy dog near the river bank today', NULL),
	(4, 'an entirely different text about databases and near duplicate detection', NULL),
	(5, 'an entirely different text about databases and near-duplicate detection.', NULL),
	(6, 'something unrelated: cooking pasta with garlic olive oil and chili', NULL);
UPDATE docs SET h = simhash(body);
CREATE INDEX docs_h ON docs USING simhash (h);
SET enable_seqscan = off;

-- edge list, weighted by distance and similarity 1 - d/64
SELECT a.id AS a, b.id AS b, a.h <~> b.h AS distance,
       round(1 - (a.h <~> b.h)::numeric / 64, 4) AS similarity
FROM docs a JOIN docs b ON a.h <~> b.h <= 6 AND a.id < b.id
ORDER BY a, b;

-- adjacency list, empty arrays included
SELECT d.id, coalesce(array_agg(n.id ORDER BY n.id) FILTER (WHERE n.id IS NOT NULL), '{}') AS neighbours
FROM docs d
LEFT JOIN LATERAL (SELECT x.id FROM docs x WHERE x.h <~> d.h <= 6 AND x.id <> d.id) n ON true
GROUP BY d.id ORDER BY d.id;

-- query by an existing row's id; nearest first
SELECT x.id, x.h <~> d.h AS distance
FROM docs d JOIN LATERAL (SELECT id, h FROM docs x WHERE x.h <~> d.h <= 6 AND x.id <> d.id
                          ORDER BY x.h <~> d.h, x.id) x ON true
WHERE d.id = 1;

-- contains (exact and near), remove, insert
SELECT EXISTS (SELECT 1 FROM docs WHERE h = simhash('an entirely different text about databases and near duplicate detection')) AS exact,
       EXISTS (SELECT 1 FROM docs WHERE h <~> simhash('An entirely different text about DATABASES and near duplicate detection!') <= 3) AS near;
DELETE FROM docs WHERE id = 5;
SELECT count(*) FROM docs WHERE h <~> simhash('an entirely different text about databases and near duplicate detection') <= 6;

RESET enable_seqscan;
DROP TABLE docs;

-- The README's incremental "leader" recipe gives exactly the
-- groups of simhash_groups(..., 'leader') under inserts (also with ids out
-- of order), updates of the body and deletes; NULL bodies are groups of
-- their own.  The recipe below is the README's, verbatim.
CREATE TABLE docs (id bigint PRIMARY KEY, body text,
                   h simhash64 GENERATED ALWAYS AS (simhash(body)) STORED);
CREATE INDEX docs_h ON docs USING simhash (h);
INSERT INTO docs (id, body) VALUES (1, 'seed row'), (2, NULL);
ALTER TABLE docs ADD COLUMN group_id bigint;
UPDATE docs d SET group_id = g.group_id
FROM simhash_groups('docs', 'id', 'h', 3, 'leader') g WHERE d.id = g.id;

-- regroup the rows from from_id on, in id order: each joins the nearest
-- earlier leader within 3 bits (ties: the least id), or leads a new group
CREATE FUNCTION docs_regroup(from_id bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	r record;
	leader bigint;
BEGIN
	-- many rows to regroup: one pass of simhash_groups over the table is cheaper
	IF (SELECT count(*) FROM docs WHERE id >= from_id) > 1000 THEN
		UPDATE docs d SET group_id = g.group_id
		FROM simhash_groups('docs', 'id', 'h', 3, 'leader') g
		WHERE d.id = g.id AND d.group_id IS DISTINCT FROM g.group_id;
		RETURN;
	END IF;
	FOR r IN SELECT id, h, group_id FROM docs WHERE id >= from_id ORDER BY id LOOP
		SELECT d.id INTO leader FROM docs d
		WHERE d.h <~> r.h <= 3 AND d.id < r.id AND d.group_id = d.id
		ORDER BY d.h <~> r.h, d.id LIMIT 1;
		leader := coalesce(leader, r.id);
		IF r.group_id IS DISTINCT FROM leader THEN
			UPDATE docs SET group_id = leader WHERE id = r.id;
		END IF;
	END LOOP;
END $$;

CREATE FUNCTION docs_group() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	from_id bigint;
BEGIN
	IF pg_trigger_depth() > 1 THEN
		RETURN NULL;		-- docs_regroup's own updates
	END IF;
	-- one regrouping at a time, so that concurrent writers see each other
	PERFORM pg_advisory_xact_lock('docs'::regclass::oid::bigint);
	IF TG_OP = 'INSERT' THEN
		SELECT min(id) INTO from_id FROM new_rows;
	ELSIF TG_OP = 'DELETE' THEN
		SELECT min(id) INTO from_id FROM old_rows;
	ELSE			-- rows whose id or fingerprint changed
		SELECT min(id) INTO from_id FROM (
			(SELECT id, h FROM new_rows EXCEPT SELECT id, h FROM old_rows) UNION ALL
			(SELECT id, h FROM old_rows EXCEPT SELECT id, h FROM new_rows)) changed;
	END IF;
	IF from_id IS NOT NULL THEN
		PERFORM docs_regroup(from_id);
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER docs_group_insert AFTER INSERT ON docs REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION docs_group();
CREATE TRIGGER docs_group_update AFTER UPDATE ON docs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION docs_group();
CREATE TRIGGER docs_group_delete AFTER DELETE ON docs REFERENCING OLD TABLE AS old_rows
	FOR EACH STATEMENT EXECUTE FUNCTION docs_group();
CREATE FUNCTION leader_mismatches() RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*) FROM docs d FULL JOIN simhash_groups('docs', 'id', 'h', 3, 'leader') g USING (id)
	WHERE d.group_id IS DISTINCT FROM g.group_id $$;
SELECT id, group_id FROM docs ORDER BY id;
-- the issue's chain: B is 1 bit from A, C 3 bits from B and 4 from A: C
-- leads its own group (A is the only leader, 4 bits away)
CREATE TEMP TABLE abc AS
SELECT a.body AS a, b.body AS b, c.body AS c
FROM (SELECT 'w' || g || ' common words of a sentence about foxes and dogs' AS body FROM generate_series(1, 400) g) a,
     LATERAL (SELECT a.body || ' x' || g AS body FROM generate_series(1, 60) g) b,
     LATERAL (SELECT b.body || ' y' || g AS body FROM generate_series(1, 60) g) c
WHERE simhash(a.body) <~> simhash(b.body) = 1 AND simhash(b.body) <~> simhash(c.body) = 3
  AND simhash(a.body) <~> simhash(c.body) = 4
LIMIT 1;
SELECT count(*) AS found FROM abc;
INSERT INTO docs (id, body) SELECT 10, a FROM abc;
INSERT INTO docs (id, body) SELECT 11, b FROM abc;
INSERT INTO docs (id, body) SELECT 12, c FROM abc;
SELECT id, group_id FROM docs WHERE id >= 10 ORDER BY id;
-- updating the leader's body regroups the rows after it
UPDATE docs SET body = 'something else entirely' WHERE id = 10;
SELECT id, group_id FROM docs WHERE id >= 10 ORDER BY id;
SELECT leader_mismatches();
DELETE FROM docs;
SELECT setseed(0.17);
CREATE FUNCTION random_body() RETURNS text LANGUAGE sql AS
$$ SELECT string_agg('w' || floor(random() * 400)::int, ' ') FROM generate_series(1, 60) $$;
CREATE FUNCTION mutate(body text, edits int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE w text[] := string_to_array(body, ' ');
BEGIN
	IF coalesce(array_length(w, 1), 0) = 0 THEN
		RETURN random_body();
	END IF;
	FOR i IN 1..edits LOOP
		w[1 + floor(random() * array_length(w, 1))::int] := 'w' || floor(random() * 400)::int;
	END LOOP;
	RETURN array_to_string(w, ' ');
END $$;
-- one edit chosen by k alone, so that a statement over many rows gives the
-- same bodies whatever order it visits them in
CREATE FUNCTION edit_at(body text, k bigint) RETURNS text LANGUAGE plpgsql AS $$
DECLARE w text[] := string_to_array(body, ' ');
BEGIN
	IF coalesce(array_length(w, 1), 0) = 0 THEN
		RETURN 'w' || k % 400;
	END IF;
	w[1 + k % array_length(w, 1)] := 'w' || (k * 7919) % 400;
	RETURN array_to_string(w, ' ');
END $$;
-- random choices pick rows by their rank in id order, never by where they lie
-- in the heap, which vacuum and pruning may change
DO $$
DECLARE
	op float8; n int; target bigint; src text; bad bigint; ops int := 0;
BEGIN
	FOR step IN 1..400 LOOP
		op := random();
		SELECT count(*) INTO n FROM docs;
		SELECT body INTO src FROM docs WHERE body IS NOT NULL
		ORDER BY id OFFSET floor(random() * (SELECT count(body) FROM docs)) LIMIT 1;
		IF op < 0.55 OR n < 5 THEN
			-- insert 1-3 rows, mostly after the last id, sometimes into a gap
			INSERT INTO docs (id, body)
			SELECT CASE WHEN random() < 0.8 THEN coalesce((SELECT max(id) FROM docs), 0) + 1 + 2 * g
			            ELSE 2 * floor(random() * 200)::int END,
			       CASE WHEN random() < 0.05 THEN NULL WHEN random() < 0.05 THEN ''
			            WHEN src IS NULL OR random() < 0.3 THEN random_body()
			            ELSE mutate(src, 1 + floor(random() * 2)::int) END
			FROM generate_series(0, floor(random() * 3)::int) g
			ON CONFLICT (id) DO NOTHING;
		ELSIF op < 0.85 THEN
			SELECT id INTO target FROM docs ORDER BY id OFFSET floor(random() * n) LIMIT 1;
			UPDATE docs SET body = CASE WHEN random() < 0.1 THEN NULL WHEN src IS NULL THEN random_body()
			                            ELSE mutate(coalesce(body, src), 1 + floor(random() * 2)::int) END
			WHERE id = target;
		ELSE
			DELETE FROM docs WHERE id IN (SELECT id FROM docs ORDER BY id
		                              OFFSET floor(random() * n) LIMIT 1 + floor(random() * 2)::int);
		END IF;
		bad := leader_mismatches();
		IF bad <> 0 THEN
			RAISE EXCEPTION 'step %: % rows differ from simhash_groups(..., ''leader'')', step, bad;
		END IF;
	END LOOP;
END $$;
SELECT count(*) AS rows, count(DISTINCT group_id) AS groups, count(*) FILTER (WHERE id <> group_id) AS members,
       count(*) FILTER (WHERE h IS NULL) AS null_bodies FROM docs;
SELECT count(*) AS leader_differs_from_connected FROM simhash_groups('docs', 'id', 'h', 3, 'leader') l
JOIN simhash_groups('docs', 'id', 'h', 3) c USING (id) WHERE l.group_id <> c.group_id;
-- bulk changes (more than 1000 rows to regroup) take the simhash_groups path
INSERT INTO docs (id, body)
SELECT 1000 + g, CASE WHEN g % 3 = 0 THEN mutate(d.body, 1) ELSE random_body() END
FROM generate_series(1, 1200) g
JOIN LATERAL (SELECT body FROM docs WHERE body IS NOT NULL AND id < 1000 ORDER BY id OFFSET g % 50 LIMIT 1) d ON true;
SELECT leader_mismatches();
UPDATE docs SET body = edit_at(body, id) WHERE id >= 1000 AND id % 2 = 0;
SELECT leader_mismatches();
DELETE FROM docs WHERE id % 7 = 3;
SELECT leader_mismatches();
SELECT count(*) AS rows, count(*) FILTER (WHERE id <> group_id) AS members FROM docs;
DROP TABLE docs;
DROP FUNCTION docs_group, docs_regroup, leader_mismatches, random_body, mutate, edit_at;
