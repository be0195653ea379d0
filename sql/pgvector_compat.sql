-- Beside pgvector (issue #11).  pgvector declares <~>(bit, bit) and
-- hamming_distance(bit, bit) (both float8); it is not packaged for Debian 12,
-- so SQL functions with its signatures stand in for it.  Shows which of the
-- README's call forms resolve unambiguously with both extensions in one schema
-- (public, as default CREATE EXTENSION puts them) and the recipe for
-- CREATE EXTENSION simhash SCHEMA simhash.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
CREATE FUNCTION public.hamming_distance(bit, bit) RETURNS float8
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	AS $$ SELECT length(replace(($1 # $2)::text, '0', ''))::float8 $$;
CREATE OPERATOR public.<~> (
	LEFTARG = bit, RIGHTARG = bit, FUNCTION = public.hamming_distance, COMMUTATOR = <~>
);
SELECT e.extname, n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname = 'simhash';

CREATE TEMP TABLE docs (id int PRIMARY KEY, h simhash64);
INSERT INTO docs VALUES
	(1, '0123456789abcdef'), (2, '0123456789abcdee'), (3, 'f123456789abcdef'),
	(4, 'fedcba9876543210');

-- README forms that resolve to simhash's operator and function
SELECT '0123456789abcdef'::simhash64 <~> '0123456789abcdee' AS d,
	pg_typeof('0123456789abcdef'::simhash64 <~> '0123456789abcdee');
SELECT hamming_distance('0123456789abcdef'::simhash64, 'f123456789abcdef') AS d,
	pg_typeof(hamming_distance('0123456789abcdef'::simhash64, 'f123456789abcdef'));
SELECT id FROM docs WHERE h <~> '0123456789abcdef' <= 3 ORDER BY id;
SELECT id, h <~> '0123456789abcdef' AS d FROM docs ORDER BY h <~> '0123456789abcdef', id LIMIT 3;
SELECT id, hamming_distance(h, '0123456789abcdef') FROM docs ORDER BY id;
SELECT id, hamming_distance('0123456789abcdef', h) FROM docs ORDER BY id;
SELECT a.id, b.id, a.h <~> b.h AS bits FROM docs a JOIN docs b ON a.id < b.id
WHERE a.h <~> b.h <= 3 ORDER BY 1, 2;
SELECT id FROM docs WHERE simhash_within(h, '0123456789abcdef', 3) ORDER BY id;
SELECT id FROM docs WHERE h <@ simhash_ball('0123456789abcdef', 3) ORDER BY id;
SELECT 64 - (a.h <~> b.h) AS similar_bits FROM docs a, docs b WHERE a.id = 1 AND b.id = 2;
PREPARE q AS SELECT id FROM docs WHERE h <~> $1 <= $2 ORDER BY id;
EXECUTE q('0123456789abcdef', 1);
DEALLOCATE q;

-- README forms with two untyped literals: ambiguous beside pgvector
-- (write '...'::simhash64 on one side, as above)
SELECT hamming_distance('0123456789abcdef', 'f123456789abcdef');
SELECT '0123456789abcdef' <~> '0123456789abcdee';

-- pgvector's calls keep resolving to pgvector's functions
SELECT B'1010' <~> B'1001' AS d, pg_typeof(B'1010' <~> B'1001'),
	hamming_distance(B'1010', B'1001') AS f;
-- h::bit(64) gives pgvector the same bits, and the same distance
SELECT '0123456789abcdef'::simhash64::bit(64);
SELECT count(*) FILTER (WHERE (a.h::bit(64) <~> b.h::bit(64)) = hamming_distance(a.h, b.h)) AS same,
	count(*) AS pairs
FROM docs a, docs b;

-- the simhash index and the planner rewrite are unaffected
CREATE INDEX docs_h ON docs USING simhash (h);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> '0123456789abcdef' <= 3;
SELECT id FROM docs WHERE h <~> '0123456789abcdef' <= 3 ORDER BY id;
RESET enable_seqscan;
DROP TABLE docs;
DROP OPERATOR public.<~> (bit, bit);
DROP FUNCTION public.hamming_distance(bit, bit);

-- Recipe: the extension in its own schema, pgvector's stand-ins in public
SELECT current_database() AS regress_db \gset
CREATE DATABASE simhash_schema_recipe;
\c simhash_schema_recipe
CREATE SCHEMA simhash;
CREATE EXTENSION simhash SCHEMA simhash;
CREATE FUNCTION public.hamming_distance(bit, bit) RETURNS float8
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	AS $$ SELECT length(replace(($1 # $2)::text, '0', ''))::float8 $$;
CREATE OPERATOR public.<~> (
	LEFTARG = bit, RIGHTARG = bit, FUNCTION = public.hamming_distance, COMMUTATOR = <~>
);
-- every object of the extension is in schema simhash
SELECT DISTINCT n.nspname
FROM pg_depend d
JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid
CROSS JOIN LATERAL pg_identify_object(d.classid, d.objid, 0) o
JOIN pg_namespace n ON n.nspname = o.schema
WHERE e.extname = 'simhash' AND d.deptype = 'e';
CREATE TABLE docs (id int PRIMARY KEY, h simhash.simhash64);
INSERT INTO docs SELECT i, simhash.simhash('document ' || i) FROM generate_series(1, 200) i;
INSERT INTO docs VALUES (1001, '0123456789abcdef'), (1002, '0123456789abcdee');
CREATE INDEX docs_h ON docs USING simhash (h);   -- the default operator class is found
SET enable_seqscan = off;
-- plan(query): EXPLAIN (COSTS OFF) without the "Disabled: true" lines
-- PostgreSQL 18 adds under a node that enable_* = off disables (here: the
-- sequential scans these queries must fall back to)
CREATE FUNCTION plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF line !~ '^\s*Disabled: true$' THEN
			RETURN NEXT line;
		END IF;
	END LOOP;
END
$$;

-- not on the search_path: qualify the operators, both <~> and the comparison
SELECT id FROM docs
WHERE h OPERATOR(simhash.<~>) '0123456789abcdef' OPERATOR(simhash.<=) 1 ORDER BY id;
EXPLAIN (COSTS OFF) SELECT id FROM docs
WHERE h OPERATOR(simhash.<~>) '0123456789abcdef' OPERATOR(simhash.<=) 1;
SELECT id, simhash.hamming_distance(h, '0123456789abcdef') FROM docs WHERE id > 1000 ORDER BY id;
SELECT id FROM docs ORDER BY h OPERATOR(simhash.<~>) '0123456789abcdef', id LIMIT 2;
-- an unqualified <= compares integers (implicit cast): right answer, no index
SELECT plan($$SELECT id FROM docs
	WHERE (h OPERATOR(simhash.<~>) '0123456789abcdef') <= 1$$);
-- an unqualified <~> finds only pgvector's
SELECT id FROM docs WHERE h <~> '0123456789abcdef' <= 1;

-- on the search_path (after public): everything as in the README
SET search_path = public, simhash;
SELECT id FROM docs WHERE h <~> '0123456789abcdef' <= 1 ORDER BY id;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> '0123456789abcdef' <= 1;
SELECT id, hamming_distance(h, '0123456789abcdef') FROM docs WHERE id > 1000 ORDER BY id;
SELECT hamming_distance('0123456789abcdef', 'f123456789abcdef');   -- still ambiguous
SELECT hamming_distance('0123456789abcdef'::simhash64, 'f123456789abcdef');
SELECT count(*) FROM simhash_pairs('docs', 'id', 'h', 1);
RESET enable_seqscan;
RESET search_path;
DROP FUNCTION plan(text);

\c :regress_db
DROP DATABASE simhash_schema_recipe;
