-- MinHash and LSH: the minhash type, minhash(), jaccard(), band keys, the
-- LSH helpers.  Signatures are pinned: a change to any of them breaks
-- stored signatures and band indexes.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

-- pinned signatures (8 slots shown in full; 128 slots by md5 of the text form)
SELECT minhash('The quick brown fox jumps over the lazy dog', 9, 'char', 8, 0);
SELECT minhash('The quick brown fox jumps over the lazy dog', 2, 'term', 8, 42);
SELECT minhash(ARRAY['alpha', 'beta', 'gamma'], 8, -1);
SELECT n_gram_type, n, md5(minhash(body, n, n_gram_type)::text)
FROM (VALUES ('Jupiter is primarily composed of hydrogen with a quarter of its mass being helium')) b(body),
     (VALUES ('char', 9), ('char', 1), ('char', 5), ('term', 1), ('term', 3)) p(n_gram_type, n)
ORDER BY 1, 2;
SELECT md5(minhash('中文文本的最小哈希签名，以字符为单位。')::text) AS zh,
       md5(minhash('Ünïcödé ÇÀSE Straße', 3, 'char', 256, 7)::text) AS folded,
       md5(minhash(repeat('long text ', 10000), 200)::text) AS long_ngram;
-- the defaults are n_gram 9, 'char', 128 permutations, seed 0
SELECT minhash('some text')::text = minhash('some text', 9, 'char', 128, 0)::text AS defaults,
       minhash(ARRAY['x'])::text = minhash(ARRAY['x'], 128, 0)::text AS array_defaults;

-- shingles: the normalised text (case-folded, separators to one space)
SELECT minhash_shingles('Hello, World!', 5);
SELECT minhash_shingles('  Two   spaces, "quotes" & ＦＵＬＬ-width ', 40);
SELECT minhash_shingles('中文，字符', 2);
SELECT minhash_shingles('The cat, the hat.', 2, 'term');
SELECT minhash_shingles('abc', 9) AS shorter_than_n_gram, minhash_shingles('aab', 1) AS n_gram_1,
       minhash_shingles('', 3) AS empty, minhash_shingles('!?', 1, 'term') AS no_tokens;
-- normalisation: case, punctuation and spacing do not matter
SELECT minhash('Hello, World!')::text = minhash('hello world')::text AS same,
       jaccard('Hello, World!', E'HELLO\n\tworld...') AS exact;

-- a signature is the minhash of its shingle set: minhash(text[]) of the
-- shingles has the same slots; jaccard(text, text) is that of the sets
SELECT minhash_slots(minhash(b, 4, 'term')) = minhash_slots(minhash(minhash_shingles(b, 4, 'term'))) AS term,
       minhash_slots(minhash(b, 7)) = minhash_slots(minhash(minhash_shingles(b, 7))) AS char,
       minhash_slots(minhash(b, 7, 'char', 64, -5)) = minhash_slots(minhash(minhash_shingles(b, 7), 64, -5)) AS seeded
FROM (VALUES ('Theoretical models indicate that if Jupiter had much more mass than it does at present, it would shrink.')) v(b);
SELECT jaccard(a, b) = jaccard(minhash_shingles(a), minhash_shingles(b)) AS same,
       round(jaccard(a, b)::numeric, 4) AS char9, round(jaccard(a, b, 1, 'term')::numeric, 4) AS term1,
       jaccard(minhash_shingles(a, 1, 'term'), minhash_shingles(b, 1, 'term')) = jaccard(a, b, 1, 'term') AS terms
FROM (VALUES ('Jupiter is primarily composed of hydrogen with a quarter of its mass being helium',
              'Jupiter is primarily composed of hydrogen and a quarter of its mass being helium')) v(a, b);
SELECT jaccard(ARRAY['a', 'b', 'c', NULL], ARRAY['b', 'c', 'd', 'b']) AS half,
       jaccard('{}'::text[], '{}'::text[]) AS both_empty;

-- texts shorter than n_gram: one shingle, so every slot holds its value
SELECT count(DISTINCT s) AS distinct_slots FROM unnest(minhash_slots(minhash('abc'))) s;
SELECT minhash_slots(minhash('abc')) = minhash_slots(minhash(ARRAY['abc'])) AS one_shingle,
       minhash_jaccard(minhash('abc'), minhash('ABC!')) AS same_text,
       minhash_jaccard(minhash('abc'), minhash('abd')) AS other_text;
-- n_gram = 1, seed 0 is a seed like any other, negative seeds
SELECT minhash_jaccard(minhash('abcdefgh', 1), minhash('hgfedcba', 1)) AS same_characters,
       minhash_slots(minhash('abc', 1, 'char', 4, 0)) <> minhash_slots(minhash('abc', 1, 'char', 4, 1)) AS seeds_differ,
       minhash('abc', 1, 'char', 4, -9223372036854775808);
-- 1 and 8192 permutations
SELECT minhash('abc', 9, 'char', 1), cardinality(minhash_slots(minhash('some text', 9, 'char', 8192))) AS k8192;

-- large texts (10 MB, 100 MB) of a repeated phrase: the signature of its few distinct shingles
SELECT minhash(repeat('abc def ', 1250000))::text = minhash('abc def abc def abc def')::text AS ten_mb,
       minhash(repeat('Abc, def! ', 10000000), 3, 'term')::text = minhash('abc def abc def', 3, 'term')::text AS hundred_mb,
       jaccard(repeat('abc def ', 1250000), 'abc def abc def abc def') AS exact;

-- empty: no shingles gives an empty signature that matches nothing
SELECT minhash('') AS empty, minhash('.,;!', 3, 'term') AS no_tokens,
       minhash('{}'::text[]) AS empty_array, minhash(ARRAY[NULL, NULL]::text[]) AS null_elements;
SELECT minhash_jaccard(minhash(''), minhash('')) AS empty_empty,
       minhash_jaccard(minhash(''), minhash('abc')) AS empty_other,
       minhash_bands(minhash(''), 32) AS no_keys,
       minhash_shared_bands(minhash(''), minhash(''), 32) AS no_bands,
       minhash_slots(minhash('')) AS no_slots,
       jaccard('', '') AS exact_empty_empty, jaccard('', 'abc') AS exact_empty_other;
-- NULL elements are skipped; repeats and order do not matter
SELECT minhash(ARRAY['a', NULL, 'b'])::text = minhash(ARRAY['b', 'a', 'b'])::text AS set_semantics;

-- NULL in, NULL out
SELECT minhash(NULL::text) IS NULL AS a, minhash('x', NULL) IS NULL AS b, minhash(NULL::text[]) IS NULL AS c,
       minhash_jaccard(NULL, minhash('x')) IS NULL AS d, jaccard(NULL::text, 'x') IS NULL AS e,
       minhash_bands(NULL, 32) IS NULL AS f, minhash_bands(minhash('x'), NULL) IS NULL AS g;

-- text I/O round trip
SELECT minhash(b, n, t, k, s)::text::minhash_signature::text = minhash(b, n, t, k, s)::text AS round_trip, k
FROM (VALUES ('some text', 9, 'char', 128, 0::bigint), ('', 9, 'char', 128, 0), ('a b c d', 2, 'term', 7, -42),
             ('x', 1024, 'term', 8192, 9223372036854775807)) v(b, n, t, k, s) ORDER BY k;
SELECT minhash(ARRAY['x'], 3)::text::minhash_signature::text = minhash(ARRAY['x'], 3)::text AS feature_round_trip;
-- input is flexible about whitespace and the case of hex digits
SELECT ' v1  n_gram=3 n_gram_type=term   permutations=2 seed=-1 slots=0000ABCD,fffffffe '::minhash_signature;
SELECT 'v1 n_gram=9 n_gram_type=char permutations=3 seed=0 slots=empty'::minhash_signature;

-- binary I/O round trip (COPY BINARY through a file in the data directory)
CREATE TEMP TABLE bin (id int, sig minhash_signature);
INSERT INTO bin VALUES (1, minhash('some text')), (2, minhash('')), (3, minhash(ARRAY['a'], 5, 7)),
	(4, minhash('x', 3, 'term', 1, -1));
CREATE TEMP TABLE bin2 (LIKE bin);
DO $$
DECLARE f text := current_setting('data_directory') || '/minhash_regress.bin';
BEGIN
	EXECUTE format('COPY bin TO %L (FORMAT binary)', f);
	EXECUTE format('COPY bin2 FROM %L (FORMAT binary)', f);
END $$;
SELECT b.id, b.sig::text = c.sig::text AS same FROM bin b JOIN bin2 c USING (id) ORDER BY id;

-- malformed input: 22P02
\set VERBOSITY sqlstate
SELECT ''::minhash_signature;
SELECT 'v2 n_gram=9 n_gram_type=char permutations=1 seed=0 slots=00000000'::minhash_signature;
SELECT 'v1 n_gram=0 n_gram_type=char permutations=1 seed=0 slots=00000000'::minhash_signature;
SELECT 'v1 n_gram=9 n_gram_type=word permutations=1 seed=0 slots=00000000'::minhash_signature;
SELECT 'v1 n_gram=2 n_gram_type=feature permutations=1 seed=0 slots=00000000'::minhash_signature;
SELECT 'v1 n_gram=9 n_gram_type=char permutations=8193 seed=0 slots=empty'::minhash_signature;
SELECT 'v1 n_gram=9 n_gram_type=char permutations=2 seed=0 slots=00000000'::minhash_signature;
SELECT 'v1 n_gram=9 n_gram_type=char permutations=1 seed=0 slots=00000000,00000000'::minhash_signature;
SELECT 'v1 n_gram=9 n_gram_type=char permutations=1 seed=0 slots=0000000'::minhash_signature;
SELECT 'v1 n_gram=9 n_gram_type=char permutations=1 seed=0 slots=00000000x'::minhash_signature;
SELECT 'v1 n_gram=9 n_gram_type=char permutations=1 seed=9223372036854775808 slots=empty'::minhash_signature;
SELECT 'v1 n_gram=9 n_gram_type=char permutations=1 seed=1e3 slots=empty'::minhash_signature;
SELECT 'v1 n_gram_type=char n_gram=9 permutations=1 seed=0 slots=empty'::minhash_signature;
\set VERBOSITY default
SELECT 'v1 n_gram=9 n_gram_type=char permutations=2 seed=0 slots=00000000'::minhash_signature;
SELECT 'v1 n_gram=9 n_gram_type=char permutations=9000 seed=0 slots=empty'::minhash_signature;

-- bad parameters: 22023
\set VERBOSITY sqlstate
SELECT minhash('x', 0);
SELECT minhash('x', 1025);
SELECT minhash('x', 9, 'word');
SELECT minhash('x', 9, 'feature');
SELECT minhash('x', 9, 'char', 0);
SELECT minhash('x', 9, 'char', 8193);
SELECT minhash(ARRAY['x'], 0);
SELECT jaccard('x', 'y', 0);
SELECT jaccard('x', 'y', 9, 'CHAR');
SELECT minhash_shingles('x', 2000);
SELECT minhash_bands(minhash('x'), 0);
SELECT minhash_bands(minhash('x'), 129);
SELECT minhash_bands(minhash('x'), 32, 5);
SELECT minhash_bands(minhash('x'), 32, 0);
SELECT minhash_shared_bands(minhash('x'), minhash('y'), 200);
SELECT minhash_lsh_params(1.5);
SELECT minhash_lsh_params(0.5, 0);
SELECT minhash_lsh_params(0.5, 128, 0, 0);
SELECT minhash_lsh_params(0.5, 128, -1, 1);
SELECT minhash_lsh_probability('NaN', 1, 1);
SELECT minhash_lsh_probability(0.5, 0, 1);
SELECT minhash(ARRAY[['a', 'b']]);  -- 2202E, as simhash_compute
\set VERBOSITY default
SELECT minhash('x', 9, 'word');
SELECT minhash_bands(minhash('x'), 32, 5);
-- signatures with different parameters cannot be compared: 22023, naming both
SELECT minhash_jaccard(minhash('abc'), minhash('abc', 5));
SELECT minhash_jaccard(minhash('abc', 9, 'term'), minhash('abc', 9, 'char', 128, 1));
SELECT minhash_shared_bands(minhash('abc'), minhash(ARRAY['abc']), 32);
SELECT minhash_jaccard(minhash(''), minhash('', 9, 'char', 64));

-- the same text gives the same signature whatever the database encoding
SELECT md5(minhash('École, Straße: naïve café')::text) AS utf8,
       md5(minhash('École, Straße: naïve café', 2, 'term')::text) AS utf8_term,
       md5(minhash(ARRAY['é', 'ß'])::text) AS utf8_array;
CREATE DATABASE minhash_latin1 ENCODING 'LATIN1' TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C';
\c minhash_latin1
SET client_encoding = 'UTF8';
SET client_min_messages = warning;
CREATE EXTENSION simhash;
SELECT md5(minhash('École, Straße: naïve café')::text) AS latin1,
       md5(minhash('École, Straße: naïve café', 2, 'term')::text) AS latin1_term,
       md5(minhash(ARRAY['é', 'ß'])::text) AS latin1_array;
SELECT minhash_shingles('École, Straße', 4);
\c contrib_regression
DROP DATABASE minhash_latin1;

-- LSH helpers
SELECT round(minhash_lsh_probability(s, 32, 4)::numeric, 4) AS p_32x4, s
FROM unnest(ARRAY[0.0, 0.2, 0.4, 0.5, 0.6, 0.8, 1.0]) s;
SELECT t, bands, rows, round(false_positive::numeric, 5) AS false_positive,
       round(false_negative::numeric, 5) AS false_negative
FROM unnest(ARRAY[0.5, 0.8, 0.9]) t, minhash_lsh_params(t);
SELECT * FROM minhash_lsh_params(0.8, 256, 0.2, 0.8) p
	CROSS JOIN LATERAL (SELECT p.bands * p.rows <= 256 AS fits) f;
-- band keys: 32 keys, band number in the top 16 bits, tail slots unused
SELECT cardinality(k) AS n, (SELECT array_agg(x >> 48 ORDER BY x) FROM unnest(k) x) = (SELECT array_agg(g::bigint) FROM generate_series(0, 31) g) AS band_numbers
FROM (SELECT minhash_bands(minhash('some text'), 32) AS k) v;
SELECT minhash_bands(minhash('some text'), 20) = minhash_bands(minhash('some text'), 20, 6) AS default_rows,
       cardinality(minhash_bands(minhash('some text'), 1, 1)) AS one_band,
       minhash_bands(minhash('The quick brown fox', 9, 'char', 8), 4);
SELECT minhash_shared_bands(a, b, 32) AS shared, cardinality(ARRAY(SELECT unnest(minhash_bands(a, 32)) INTERSECT SELECT unnest(minhash_bands(b, 32)))) AS common_keys,
       round(minhash_jaccard(a, b)::numeric, 4) AS estimate
FROM (SELECT minhash('Jupiter is primarily composed of hydrogen with a quarter of its mass being helium') a,
             minhash('Jupiter is primarily composed of hydrogen and a quarter of its mass being helium') b) v;

-- statistical test: 600 pairs of texts (300 random words; 0-59% of the
-- words of the second replaced), exact Jaccard by jaccard(), estimate with
-- 128 permutations.  The standard deviation of the estimate is
-- sqrt(J (1 - J) / 128): up to 0.044, so about 75% of pairs at J = 0.5 and
-- 95% at J = 0.9 are within 0.05; the test fails if the estimator is
-- biased, noisier than that, or the slots are not independent.
CREATE TEMP TABLE pairs AS
SELECT p, a, b, jaccard(a, b) AS j9, minhash_jaccard(minhash(a), minhash(b)) AS e9,
       jaccard(a, b, 3, 'term') AS j3, minhash_jaccard(minhash(a, 3, 'term'), minhash(b, 3, 'term')) AS e3
FROM (SELECT p,
             string_agg('w' || substr(md5(p || ':' || i), 1, 6), ' ' ORDER BY i) AS a,
             string_agg(CASE WHEN ('x' || substr(md5('e' || p || ':' || i), 1, 8))::bit(32)::bigint < (p % 60) / 100.0 * 4294967296
                             THEN 'z' || substr(md5('r' || p || ':' || i), 1, 6)
                             ELSE 'w' || substr(md5(p || ':' || i), 1, 6) END, ' ' ORDER BY i) AS b
      FROM generate_series(1, 600) p, generate_series(1, 300) i GROUP BY p) t;
CREATE TEMP VIEW errors AS
	SELECT 'char 9' AS shingles, j9 AS j, e9 AS e FROM pairs
	UNION ALL SELECT 'term 3', j3, e3 FROM pairs;
SELECT shingles, count(*) AS pairs, round(min(j)::numeric, 3) AS min_j, round(max(j)::numeric, 3) AS max_j,
       round(avg((abs(e - j) <= 0.05)::int), 3) AS within_005,
       round(avg((abs(e - j) <= 0.05)::int) FILTER (WHERE j >= 0.8), 3) AS within_005_j_ge_08,
       round(max(abs(e - j))::numeric, 3) AS max_error, round(avg(e - j)::numeric, 4) AS mean_error,
       round(avg((abs(e - j) <= 2 * sqrt(j * (1 - j) / 128) + 1e-9)::int), 3) AS within_2sd
FROM errors GROUP BY shingles ORDER BY shingles;
SELECT bool_and(within_005 >= 0.80) AS within_005_ok, bool_and(within_high >= 0.95) AS high_j_ok,
       bool_and(max_error <= 0.20) AS max_error_ok, bool_and(abs(mean_error) <= 0.01) AS unbiased,
       bool_and(within_2sd >= 0.93) AS calibrated
FROM (SELECT shingles, avg((abs(e - j) <= 0.05)::int) AS within_005,
             avg((abs(e - j) <= 0.05)::int) FILTER (WHERE j >= 0.8) AS within_high,
             max(abs(e - j)) AS max_error, avg(e - j) AS mean_error,
             avg((abs(e - j) <= 2 * sqrt(j * (1 - j) / 128) + 1e-9)::int) AS within_2sd
      FROM errors GROUP BY shingles) s;

-- GIN band index: on a small corpus the index finds every pair that a
-- brute-force self-join finds above the threshold
CREATE TABLE mh_docs (id int PRIMARY KEY, body text, sig minhash_signature);
INSERT INTO mh_docs (id, body)
SELECT c * 4 + v, string_agg(CASE WHEN v > 0 AND ('x' || substr(md5('e' || c || ':' || v || ':' || i), 1, 8))::bit(32)::bigint < v * 0.08 * 4294967296
                                  THEN 'z' || substr(md5('r' || c || ':' || v || ':' || i), 1, 5)
                                  ELSE 'w' || substr(md5(c || ':' || i), 1, 5) END, ' ' ORDER BY i)
FROM generate_series(0, 59) c, generate_series(0, 3) v, generate_series(1, 40) i GROUP BY c, v;
UPDATE mh_docs SET sig = minhash(body);
CREATE INDEX mh_docs_bands ON mh_docs USING gin (minhash_bands(sig, 32));
ANALYZE mh_docs;
SET enable_seqscan = off;
PREPARE candidates(minhash_signature) AS SELECT id FROM mh_docs WHERE minhash_bands(sig, 32) && minhash_bands($1, 32);
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE candidates(minhash('w'));
RESET plan_cache_mode;
CREATE TEMP TABLE brute AS
	SELECT a.id AS a, b.id AS b, minhash_jaccard(a.sig, b.sig) AS e, jaccard(a.body, b.body) AS j
	FROM mh_docs a JOIN mh_docs b ON a.id < b.id;
CREATE TEMP TABLE via_index AS
	SELECT a.id AS a, b.id AS b, minhash_jaccard(a.sig, b.sig) AS e
	FROM mh_docs a CROSS JOIN LATERAL
		(SELECT id, sig FROM mh_docs x WHERE minhash_bands(x.sig, 32) && minhash_bands(a.sig, 32) AND x.id > a.id) b;
RESET enable_seqscan;
-- by estimate: with 32 bands of 4 rows, a pair with at most 31 unequal
-- slots (estimate > 0.75) shares a band, so from 0.76 up nothing is missed
SELECT t, (SELECT count(*) FROM brute WHERE e >= t) AS brute_force,
       (SELECT count(*) FROM via_index WHERE e >= t) AS via_index,
       (SELECT count(*) FROM (SELECT a, b FROM brute WHERE e >= t EXCEPT SELECT a, b FROM via_index) m) AS missed
FROM unnest(ARRAY[0.3, 0.5, 0.6, 0.76, 0.8, 0.9]) t ORDER BY t;
-- by exact Jaccard, candidates verified with jaccard()
SELECT t, (SELECT count(*) FROM brute WHERE j >= t) AS brute_force,
       (SELECT count(*) FROM via_index i JOIN brute USING (a, b) WHERE brute.j >= t) AS via_index
FROM unnest(ARRAY[0.5, 0.7, 0.8]) t ORDER BY t;
SELECT count(*) AS candidates, (SELECT count(*) FROM brute) AS all_pairs FROM via_index;
-- the whole table at once: shared_key_pairs over the band keys, then the estimate
CREATE TEMP VIEW mh_keys AS SELECT id, minhash_bands(sig, 32) AS keys FROM mh_docs;
SELECT count(*) AS pairs_076,
       count(*) = (SELECT count(*) FROM brute WHERE e >= 0.76) AS same_as_brute_force
FROM shared_key_pairs('mh_keys', 'id', 'keys') p
JOIN mh_docs a ON a.id = p.id_a JOIN mh_docs b ON b.id = p.id_b
WHERE minhash_jaccard(a.sig, b.sig) >= 0.76;

-- the dedup jobs: minhash_pairs equals the brute-force self-join on the
-- estimate (exact above 1 - bands/permutations = 0.75), minhash_groups its
-- connected components; a NULL and an empty signature pair with nothing
INSERT INTO mh_docs VALUES (1000, NULL, NULL), (1001, '', minhash(''));
SELECT t, (SELECT count(*) FROM brute WHERE e >= t) AS brute_force,
       (SELECT count(*) FROM minhash_pairs('mh_docs', 'id', 'sig', id_type => NULL::int, threshold => t)) AS job,
       (SELECT count(*) FROM (SELECT a, b, e FROM brute WHERE e >= t
                              EXCEPT SELECT * FROM minhash_pairs('mh_docs', 'id', 'sig', id_type => NULL::int, threshold => t)) m) AS missed
FROM unnest(ARRAY[0.76, 0.8, 0.9, 1.0]) t ORDER BY t;
-- below 0.75 candidates come from LSH: probably, not surely, all found
SELECT (SELECT count(*) FROM brute WHERE e >= 0.5) AS brute_force,
       (SELECT count(*) FROM minhash_pairs('mh_docs', 'id', 'sig', 0.5)) AS job_bigint_ids;
WITH RECURSIVE e AS (SELECT a AS x, b AS y FROM brute WHERE e >= 0.8 UNION ALL SELECT b, a FROM brute WHERE e >= 0.8),
reach(x, y) AS (SELECT id, id FROM mh_docs UNION SELECT reach.x, e.y FROM reach JOIN e ON e.x = reach.y),
ref AS (SELECT x AS id, min(y) AS group_id FROM reach GROUP BY x)
SELECT (SELECT count(*) FROM (SELECT * FROM minhash_groups('mh_docs', 'id', 'sig', id_type => NULL::int) EXCEPT SELECT * FROM ref) d) AS differ,
       (SELECT count(*) FILTER (WHERE id = group_id) FROM minhash_groups('mh_docs', 'id', 'sig', id_type => NULL::int)) AS groups;
SELECT * FROM minhash_groups('mh_docs', 'id', 'sig', id_type => NULL::int) WHERE id >= 1000 ORDER BY id;
-- errors
SELECT * FROM minhash_pairs('mh_docs', 'id', 'sig', 0);
SELECT * FROM minhash_pairs('mh_docs', 'id', 'sig', 0.8, 129);
SELECT * FROM minhash_pairs('mh_docs', 'id', 'body');
-- signatures of different parameters, in a table of its own: read in
-- insertion order (mh_docs's free space, after its UPDATE, depends on
-- when autovacuum ran)
CREATE TABLE mh_mixed (id int, sig minhash_signature);
INSERT INTO mh_mixed VALUES (1, minhash('other')), (2, minhash('other', n_gram => 3));
SELECT * FROM minhash_pairs('mh_mixed', 'id', 'sig');
DROP TABLE mh_mixed;
DELETE FROM mh_docs WHERE id >= 1000;

-- SnaPy parity (README): SnaPy's quickstart with labels 1-9
CREATE TABLE snapy (label text PRIMARY KEY, body text NOT NULL,
	sig minhash_signature GENERATED ALWAYS AS (minhash(body, 9, 'char', 100, 3)) STORED);
CREATE INDEX snapy_bands ON snapy USING gin (minhash_bands(sig, 50));
INSERT INTO snapy (label, body) VALUES
	('1', 'Jupiter is primarily composed of hydrogen with a quarter of its mass being helium'),
	('2', 'Jupiter moving out of the inner Solar System would have allowed the formation of inner planets.'),
	('3', 'A helium atom has about four times as much mass as a hydrogen atom, so the composition changes when described as the proportion of mass contributed by different atoms.'),
	('4', 'Jupiter is primarily composed of hydrogen and a quarter of its mass being helium'),
	('5', 'A helium atom has about four times as much mass as a hydrogen atom and the composition changes when described as a proportion of mass contributed by different atoms.'),
	('6', 'Theoretical models indicate that if Jupiter had much more mass than it does at present, it would shrink.'),
	('7', 'This process causes Jupiter to shrink by about 2 cm each year.'),
	('8', 'Jupiter is mostly composed of hydrogen with a quarter of its mass being helium'),
	('9', 'The Great Red Spot is large enough to accommodate Earth within its boundaries.');
SET enable_seqscan = off;
-- lsh.query(1, min_jaccard=0.5)
SELECT d.label, round(minhash_jaccard(d.sig, q.sig)::numeric, 2) AS estimate
FROM snapy q JOIN snapy d ON minhash_bands(d.sig, 50) && minhash_bands(q.sig, 50) AND d.label <> q.label
WHERE q.label = '1' AND minhash_jaccard(d.sig, q.sig) >= 0.5 ORDER BY estimate DESC, d.label;
-- the same with sensitivity=2 (at least 2 shared bands) and the exact Jaccard
SELECT d.label, minhash_shared_bands(d.sig, q.sig, 50) AS shared_bands,
       round(jaccard(d.body, q.body, 9, 'char')::numeric, 2) AS exact
FROM snapy q JOIN snapy d ON minhash_bands(d.sig, 50) && minhash_bands(q.sig, 50) AND d.label <> q.label
WHERE q.label = '1' AND minhash_shared_bands(d.sig, q.sig, 50) >= 2
  AND jaccard(d.body, q.body, 9, 'char') >= 0.5 ORDER BY d.label;
-- lsh.update(new_minhash, new_labels)
INSERT INTO snapy (label, body) VALUES
	('doc1', 'Jupiter is primarily composed of hydrogen with a quarter of its mass being helium'),
	('doc2', 'Jupiter moving out of the inner Solar System would have allowed the formation of inner planets.');
-- lsh.remove(5); lsh.contains()
DELETE FROM snapy WHERE label = '5';
SELECT array_agg(label ORDER BY label) AS contains FROM snapy;
-- lsh.adjacency_list(min_jaccard=0.55)
SELECT d.label, coalesce(array_agg(n.label ORDER BY n.label) FILTER (WHERE n.label IS NOT NULL), '{}') AS neighbours
FROM snapy d LEFT JOIN LATERAL
	(SELECT x.label FROM snapy x
	 WHERE minhash_bands(x.sig, 50) && minhash_bands(d.sig, 50) AND x.label <> d.label
	   AND minhash_jaccard(x.sig, d.sig) >= 0.55) n ON true
GROUP BY d.label ORDER BY d.label;
-- lsh.edge_list(min_jaccard=0.5, jaccard_weighted=True)
SELECT a.label AS a, b.label AS b, round(minhash_jaccard(a.sig, b.sig)::numeric, 2) AS weight
FROM snapy a JOIN snapy b ON minhash_bands(b.sig, 50) && minhash_bands(a.sig, 50) AND a.label < b.label
WHERE minhash_jaccard(a.sig, b.sig) >= 0.5 ORDER BY a, b;
EXPLAIN (COSTS OFF) SELECT d.label FROM snapy q JOIN snapy d ON minhash_bands(d.sig, 50) && minhash_bands(q.sig, 50) WHERE q.label = '1';
RESET enable_seqscan;
DROP TABLE snapy;
DROP VIEW mh_keys;
DROP TABLE mh_docs;
