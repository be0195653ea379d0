-- hardening: hostile input sizes and out-of-domain values
\set SHOW_CONTEXT never

-- 1. simhash(text) streams long texts through a bounded buffer (chunks end
-- at token boundaries): the fingerprint equals the vote over
-- simhash_features for a text of several chunks, in every script
CREATE TEMP TABLE long_texts AS
SELECT w, string_agg(
		CASE i % 7
			WHEN 0 THEN md5(i::text) || ' '
			WHEN 1 THEN 'Été, naïve café! '
			WHEN 2 THEN '中文字符' || (i % 13)
			WHEN 3 THEN 'e' || repeat(U&'\0301', i % 3) || ' '
			WHEN 4 THEN repeat('x', i % 2000) || ', '
			WHEN 5 THEN 'ＡＢＣ' || i
			ELSE ' พิมพ์ ' END, '') AS body
FROM generate_series(1, 40000) i, (VALUES (1), (3), (8)) v(w)
GROUP BY w;
SELECT w, length(body) > 2000000 AS several_chunks,
	simhash(body, w) = (SELECT simhash_compute(array_agg(feature), array_agg(weight::real))
						FROM simhash_features(body, w)) AS equal
FROM long_texts ORDER BY w;
-- two distinct words, 3 MB: both vote with the same weight
SELECT simhash(repeat('ab cd ', 500000), 1) = (simhash_hash('ab') & simhash_hash('cd'))::simhash64;

-- 2. results measured before they are allocated: 54000 above 1 GB
CREATE FUNCTION sqlstate_of(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE query;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
SELECT sqlstate_of($$SELECT simhash_shingle(array_fill('x'::text, ARRAY[3000000]), 1024)$$);
SELECT sqlstate_of($$SELECT minhash_shingles(repeat('abcdefghij ', 2000000), 1024, 'char')$$);
SELECT sqlstate_of($$SELECT minhash_shingles(repeat('abcdefghij ', 400000), 256, 'term')$$);
-- below the limit, the same results as before
SELECT simhash_tokens('Hello, World! Ünïcödé 中文'), simhash_tokens(''), simhash_tokens(' ,. ');
SELECT simhash_shingle('{a,b,NULL,c}'::text[], 2), simhash_shingle('{a,b}'::text[], 5),
	simhash_shingle('{}'::text[], 2), simhash_shingle('{NULL}'::text[], 2);
SELECT minhash_shingles('abcd', 2, 'char'), minhash_shingles('Ab cd, EF', 2, 'term'),
	minhash_shingles('', 2, 'char');
SELECT cardinality(simhash_tokens(repeat('ab ', 100000))),
	cardinality(minhash_shingles(repeat('ab ', 100000), 9, 'char'));

-- 3. domains in every input path
-- simhash_distance: 0..64 from text, from integer, and in binary
SELECT '0'::simhash_distance, ' 64 '::simhash_distance, '+7'::simhash_distance, 12::simhash_distance;
SELECT sqlstate_of($$SELECT '-7'::simhash_distance$$);
SELECT sqlstate_of($$SELECT '99999'::simhash_distance$$);
SELECT sqlstate_of($$SELECT '99999999999999999999'::simhash_distance$$);
SELECT sqlstate_of($$SELECT '65'::simhash_distance$$);
SELECT sqlstate_of($$SELECT 'seven'::simhash_distance$$);
SELECT sqlstate_of($$SELECT ''::simhash_distance$$);
SELECT sqlstate_of($$SELECT (-3)::simhash_distance$$);
SELECT sqlstate_of($$SELECT 65::simhash_distance$$);
CREATE TEMP TABLE dist (d simhash_distance);
SELECT sqlstate_of($$INSERT INTO dist VALUES (99)$$);
INSERT INTO dist VALUES (64), ('3');
-- the operator and comparisons are unchanged
SELECT '0123456789abcdef'::simhash64 <~> 'fedcba9876543210'::simhash64 AS d,
	('0123456789abcdef'::simhash64 <~> '0123456789abcdef'::simhash64) <= 3 AS near;

-- binary input: a COPY file written from other types' binary forms
CREATE FUNCTION binary_into(tab text, val text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	f text := '/tmp/simhash_hardening_' || pg_backend_pid() || '.bin';
BEGIN
	EXECUTE format('COPY (SELECT %s) TO %L (FORMAT binary)', val, f);
	-- the program removes the file once read (the data fits a pipe)
	EXECUTE format('COPY %I FROM PROGRAM %L (FORMAT binary)', tab,
				   format('cat %s; rm -f %s', f, f));
	RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
SELECT binary_into('dist', '2147483647'), binary_into('dist', '-1'), binary_into('dist', '65'),
	binary_into('dist', '64'), binary_into('dist', '0');
SELECT d FROM dist ORDER BY d;

-- simhash_ball: radius -1..64 in text and binary
CREATE TEMP TABLE balls (b simhash_ball);
SELECT sqlstate_of($$SELECT '(0123456789abcdef,65)'::simhash_ball$$);
SELECT sqlstate_of($$SELECT '(0123456789abcdef,-2)'::simhash_ball$$);
SELECT binary_into('balls', $$'\x0123456789abcdef00000041'::bytea$$),
	binary_into('balls', $$'\x0123456789abcdeffffffffe'::bytea$$),
	binary_into('balls', $$'\x0123456789abcdef0000'::bytea$$),
	binary_into('balls', $$'\x0123456789abcdefffffffff'::bytea$$),
	binary_into('balls', $$'\x0123456789abcdef00000040'::bytea$$);
SELECT b FROM balls ORDER BY b::text;

-- minhash_signature: no slot may be the empty-slot marker ffffffff (a
-- densified signature has none; the empty signature has no slots)
CREATE TEMP TABLE sigs (s minhash_signature);
SELECT sqlstate_of($$SELECT 'v1 n_gram=9 n_gram_type=char permutations=2 seed=0 slots=ffffffff,ffffffff'::minhash_signature$$);
SELECT sqlstate_of($$SELECT 'v1 n_gram=9 n_gram_type=char permutations=2 seed=0 slots=00000001,ffffffff'::minhash_signature$$);
SELECT 'v1 n_gram=9 n_gram_type=char permutations=2 seed=0 slots=fffffffe,00000000'::minhash_signature,
	'v1 n_gram=9 n_gram_type=char permutations=2 seed=0 slots=empty'::minhash_signature;
-- binary: version 1, char, flags, n_gram 9, permutations 2, seed 0, slots
SELECT binary_into('sigs', $$'\x010000000900020000000000000000ffffffffffffffff'::bytea$$),
	binary_into('sigs', $$'\x010000000900020000000000000000fffffffe00000000'::bytea$$),
	binary_into('sigs', $$'\x010001000900020000000000000000'::bytea$$),
	binary_into('sigs', $$'\x010000000900020000000000000000fffffffe'::bytea$$),
	binary_into('sigs', $$'\x010001000900020000000000000000ffffffff'::bytea$$);
SELECT s FROM sigs ORDER BY s::text;
-- a binary round trip of every kind
SELECT binary_into('sigs', $$minhash('some text', 3, 'term', 8)$$),
	binary_into('sigs', $$minhash(ARRAY['a','b'], 4)$$), binary_into('sigs', $$minhash('', 3)$$);
SELECT count(*) FROM sigs;

-- The functions PUBLIC may execute (test/t/017_readme.pl checks that the
-- README's Reference names each).  No internal helper.
\i sql/public_functions.psql
-- and the ones PUBLIC may not execute
SELECT p.oid::regprocedure FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
  AND d.refobjid = (SELECT e.oid FROM pg_extension e WHERE e.extname = 'simhash')
  AND NOT has_function_privilege('public', p.oid, 'EXECUTE') ORDER BY 1;
