-- hardening: hostile input sizes and out-of-domain values (issue #10)
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
