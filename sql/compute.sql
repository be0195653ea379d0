-- fingerprint functions: simhash_hash, simhash_compute (text[], weighted,
-- bigint[]), simhash(text), simhash(tsvector).  Values are pinned: a change
-- to any of them breaks stored fingerprints.

-- XXH3-64 seed 0 over UTF-8 bytes (known answer for the empty input)
SELECT simhash_hash('') = x'2D06800538D394C2'::bigint AS xxh3_empty,
       simhash_hash('a'), simhash_hash('simhash'), simhash_hash('中文');

-- a naive reference of the vote, in SQL
CREATE FUNCTION ref_vote(hashes bigint[]) RETURNS simhash64 LANGUAGE sql AS $$
	SELECT string_agg(CASE WHEN s > 0 THEN '1' ELSE '0' END, '' ORDER BY i DESC)::bit(64)::simhash64
	FROM (SELECT i, coalesce(sum(CASE WHEN (h >> i) & 1 = 1 THEN 1 ELSE -1 END), 0) AS s
		  FROM generate_series(0, 63) i LEFT JOIN unnest(hashes) h ON h IS NOT NULL
		  GROUP BY i) v
$$;

CREATE TEMP TABLE f AS
	SELECT n, array_agg(simhash_hash(md5(n::text || '/' || k::text)) ORDER BY k) AS hashes,
	       array_agg(md5(n::text || '/' || k::text) ORDER BY k) AS features
	FROM generate_series(1, 40) n, generate_series(1, n * 3) k GROUP BY n;
SELECT count(*) AS agree FROM f WHERE simhash_compute(hashes) = ref_vote(hashes);
SELECT count(*) AS agree FROM f WHERE simhash_compute(features) = simhash_compute(hashes);
SELECT count(*) AS agree FROM f
	WHERE simhash_compute(features, array_fill(1::real, ARRAY[cardinality(features)])) = simhash_compute(features);
-- integer weights equal repeating the feature
SELECT count(*) AS agree FROM f
	WHERE simhash_compute(features, array_fill(3::real, ARRAY[cardinality(features)])) = simhash_compute(features || features || features);
SELECT simhash_compute(features) FROM f WHERE n IN (1, 2, 40) ORDER BY n;

-- pinned fingerprints of small inputs
SELECT simhash_compute(ARRAY['a']), simhash_compute(ARRAY['a', 'b', 'c']),
       simhash_compute(ARRAY[1, 2, 3]::bigint[]), simhash_compute(ARRAY[-1]::bigint[]);
-- a single feature: its hash
SELECT simhash_compute(ARRAY['simhash'])::bigint = simhash_hash('simhash');
-- weights: a heavy feature wins
SELECT simhash_compute(ARRAY['a', 'b'], ARRAY[10, 1]::real[])::bigint = simhash_hash('a'),
       simhash_compute(ARRAY['a', 'b'], ARRAY[1, 10]::real[])::bigint = simhash_hash('b'),
       simhash_compute(ARRAY['a', 'b', 'c'], ARRAY[0.5, 0.25, 0.125]::real[]),
       simhash_compute(ARRAY['a', 'b', 'c'], ARRAY[0, 0, 1]::real[])::bigint = simhash_hash('c');
-- order of features does not matter
SELECT simhash_compute(ARRAY['x', 'y', 'z']) = simhash_compute(ARRAY['z', 'x', 'y']),
       simhash_compute(ARRAY['x', 'y', 'z'], ARRAY[0.1, 0.2, 0.3]::real[])
         = simhash_compute(ARRAY['z', 'y', 'x'], ARRAY[0.3, 0.2, 0.1]::real[]);

-- empty and NULL inputs: no features gives 0000000000000000
SELECT simhash_compute('{}'::text[]), simhash_compute('{}'::bigint[]),
       simhash_compute(ARRAY[NULL]::text[]), simhash_compute(ARRAY[NULL, NULL]::bigint[]),
       simhash_compute('{}'::text[], '{}'::real[]);
SELECT simhash_compute(ARRAY['a', NULL, 'b', NULL, 'c']) = simhash_compute(ARRAY['a', 'b', 'c']),
       simhash_compute(ARRAY[1, NULL, 2, 3]::bigint[]) = simhash_compute(ARRAY[1, 2, 3]::bigint[]),
       simhash_compute(ARRAY['a', 'b', 'c', 'd'], ARRAY[1, NULL, 1, 1]::real[]) = simhash_compute(ARRAY['a', 'c', 'd']),
       simhash_compute(ARRAY['a', NULL, 'c'], ARRAY[1, 5, 1]::real[]) = simhash_compute(ARRAY['a', 'c']);
SELECT simhash_compute(NULL::text[]), simhash_compute(NULL::bigint[]), simhash_compute(ARRAY['a'], NULL),
       simhash(NULL::text), simhash(NULL::tsvector), simhash_hash(NULL);
-- bounds of an array do not matter
SELECT simhash_compute('[5:7]={a,b,c}'::text[]) = simhash_compute(ARRAY['a', 'b', 'c']);

-- simhash(text, window): each distinct shingle votes once with weight
-- bitlen(n^2) = 1 + floor(2 log2 n) for n occurrences.  A reference in SQL:
CREATE FUNCTION ref_simhash(body text, w int) RETURNS simhash64 LANGUAGE sql AS $$
	SELECT coalesce(simhash_compute(array_agg(f),
	                array_agg(length(ltrim((n * n)::bit(64)::text, '0'))::real)), '0000000000000000')
	FROM (SELECT f, count(*) AS n FROM unnest(simhash_shingle(simhash_tokens(body), w)) f GROUP BY f) s
$$;
CREATE TEMP TABLE texts (id int, body text);
INSERT INTO texts VALUES
	(1, 'The quick brown fox jumps over the lazy dog.'),
	(2, 'the QUICK brown fox -- jumps over the lazy dog!!!'),
	(3, '我们在数据库里面查找近似重复的文档。'),
	(4, 'PostgreSQL 扩展 simhash: 近似重复检测, near-duplicate detection.'),
	(5, ''),
	(6, E'  \t\n  '),
	(7, 'word'),
	(8, 'ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ'),
	(9, 'にほんごのテキストです'),
	(10, repeat('Lorem ipsum dolor sit amet, consectetur adipiscing elit. ', 2000) || 'The end.'),
	(11, 'a a a a b b c the the the the the the the the the the the the the the the the the');
SELECT id, w FROM texts, generate_series(1, 6) w WHERE simhash(body, w) <> ref_simhash(body, w);
SELECT count(*) FROM texts, generate_series(1, 6) w WHERE simhash(body, w) = ref_simhash(body, w);
-- simhash_features lists exactly what is voted
SELECT count(*) FROM texts, generate_series(1, 4) w
	WHERE simhash(body, w) = coalesce((SELECT simhash_compute(array_agg(feature), array_agg(weight)::real[])
	                                   FROM simhash_features(body, w)), '0000000000000000');
SELECT * FROM simhash_features('a a a a b b c the the the the the the the the the the the the the the the the the');
SELECT * FROM simhash_features('The cat saw the other cat', 2);
SELECT * FROM simhash_features('');
-- weight 1 for every feature seen once: then simhash equals the unweighted vote
SELECT simhash('one two three four', 2) = simhash_compute(simhash_shingle(simhash_tokens('one two three four'), 2));

-- pinned fingerprints: English, same text reformatted, Chinese, mixed, empty,
-- whitespace-only, one word, Thai, Japanese, very long (about 110 KB), repeats
SELECT id, simhash(body) AS default_window, simhash(body, 2) AS w2, simhash(body, 4) AS w4
	FROM texts ORDER BY id;
SELECT simhash(body) = simhash(body, 1) FROM texts WHERE id = 1;
SELECT simhash(repeat('Lorem ipsum ', 1)) <~> simhash(repeat('Lorem ipsum ', 3)) AS repetition,
       simhash('Lorem ipsum') <~> simhash('Lorem ipsum', 2) AS windows;
SELECT a.id, b.id, simhash(a.body) <~> simhash(b.body) AS d FROM texts a JOIN texts b ON a.id < b.id
	WHERE a.id IN (1, 3) ORDER BY 1, 2;

-- simhash(tsvector): lexemes weighted by their number of positions
SELECT simhash(to_tsvector('simple', 'a b b c c c')),
       simhash(to_tsvector('simple', 'a b b c c c')) = simhash_compute(ARRAY['a', 'b', 'c'], ARRAY[1, 2, 3]::real[]),
       simhash(strip(to_tsvector('simple', 'a b b c c c'))) = simhash_compute(ARRAY['a', 'b', 'c']),
       simhash(''::tsvector),
       simhash(to_tsvector('english', 'The quick brown foxes jumped over the lazy dogs'));
