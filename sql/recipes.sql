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

-- incremental: each new row joins the group of its nearest stored row
-- within 6 bits (a "leader" grouping that does not chain through bridges)
ALTER TABLE docs ADD COLUMN group_id bigint;
-- existing rows: the smallest id within 6 bits (itself included)
UPDATE docs d SET group_id = (SELECT min(x.id) FROM docs x WHERE x.h <~> d.h <= 6);
CREATE FUNCTION docs_group() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	NEW.h := simhash(NEW.body);
	-- serialise concurrent inserts, so that two near-duplicates arriving
	-- together cannot both miss each other
	PERFORM pg_advisory_xact_lock('docs'::regclass::oid::bigint);
	SELECT coalesce(d.group_id, d.id) INTO NEW.group_id
	FROM docs d WHERE d.h <~> NEW.h <= 6
	ORDER BY d.h <~> NEW.h, d.id LIMIT 1;
	NEW.group_id := coalesce(NEW.group_id, NEW.id);
	RETURN NEW;
END $$;
CREATE TRIGGER docs_group BEFORE INSERT ON docs FOR EACH ROW EXECUTE FUNCTION docs_group();
INSERT INTO docs (id, body) VALUES
	(7, 'The quick brown fox jumps over the lazy dog near the river bank, today.'),
	(8, 'cooking pasta with garlic, olive oil and chili: something unrelated'),
	(9, 'a brand new document about something else entirely, with no twin');
SELECT id, group_id FROM docs ORDER BY id;
-- keep one row per group
SELECT DISTINCT ON (group_id) group_id, id FROM docs ORDER BY group_id, id;
RESET enable_seqscan;
DROP TABLE docs;
DROP FUNCTION docs_group;
